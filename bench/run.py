"""Benchmarks (not tests): each prints its figures and writes bench/results/<machine>.json.

    OMP_NUM_THREADS=2 .venv/bin/python bench/run.py [--quick]
    OMP_NUM_THREADS=1 .venv/bin/python bench/run.py --population-only [--update [--note TEXT]]   (section 3 alone)

1. fp32 matmul peak (GFLOP/s) at the thread count in use.
2. Training throughput of our LoopedTransformer against a reference built from
   torch.nn.TransformerEncoderLayer(norm_first=True) looped T times (same sizes, same optimiser),
   timed interleaved in the same process; tokens/s, achieved GFLOP/s and the ratio.
3. Population: P seeds as one batched step against P sequential single-run steps; both sides are
   `step.train_step` (the one training step), with and without the model's population axis.
4. Instrument cost as multiples of one plain forward at T_max: tau (all positions and loops),
   the damage-cone grid, the tail metrics.
5. End-to-end: the quick notebook suite from cached runs (python -m lib.run_all), and the sum of
   the recorded training wall times of the quick runs (what an empty cache costs).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.readme_blocks import kept_blocks  # noqa: E402
from lib import tasks  # noqa: E402
from lib.instruments import head, patching, tail  # noqa: E402
from lib.model import LoopConfig, LoopedTransformer  # noqa: E402
from lib.paths import atomic_write_text  # noqa: E402
from lib.population import StackedAdamW  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def timeit(fn, repeat: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def matmul_peak(n: int = 1024) -> dict:
    a, b = torch.randn(n, n), torch.randn(n, n)
    t = timeit(lambda: a @ b, 10)
    m, k, o = 1152, 128, 512                      # model-shaped: (B*N, d) x (d, 4d)
    x, w = torch.randn(m, k), torch.randn(k, o)
    t2 = timeit(lambda: x @ w, 50)
    return {"gemm_1024_gflops": 2 * n ** 3 / t / 1e9, "gemm_model_shaped_gflops": 2 * m * k * o / t2 / 1e9}


class Reference(nn.Module):
    """The same looped computation built from torch's own TransformerEncoderLayer."""

    def __init__(self, cfg: LoopConfig):
        super().__init__()
        d = cfg.d_model
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.block = nn.ModuleList(nn.TransformerEncoderLayer(d, cfg.n_heads, cfg.mlp_ratio * d, dropout=0.0,
                                                              activation="gelu", batch_first=True, norm_first=True)
                                   for _ in range(cfg.n_layers))
        self.adapter = nn.Linear(2 * d, d, bias=False)
        self.ln_out, self.readout = nn.LayerNorm(d), nn.Linear(d, cfg.n_classes)

    def forward(self, tokens, T):
        e = self.embed(tokens)
        h = e
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        for _ in range(T):
            x = self.adapter(torch.cat([h, e], -1))
            for layer in self.block:
                x = layer(x, src_mask=mask, is_causal=True)
            h = x
        return self.readout(self.ln_out(h))


def train_flops(cfg: LoopConfig, B: int, N: int, T: int) -> float:
    d = cfg.d_model
    per_token_layer = 2 * (3 * d * d + d * d + 2 * cfg.mlp_ratio * d * d) + 2 * 2 * N * d / 2   # causal half
    per_token_loop = cfg.n_layers * per_token_layer + 2 * (2 * d * d)                          # + adapter
    return 3 * B * N * (T * per_token_loop + 2 * d * cfg.n_classes)                             # fwd + bwd


def step_fn(model, tokens, labels, T):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        logits = model(tokens, T)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


# the shapes the quick profile trains (layers, width, heads, n, T), batch 128, one thread
QUICK_SHAPES = [(1, 32, 2, 8, 8), (1, 64, 4, 8, 8), (2, 64, 4, 8, 2), (2, 64, 4, 8, 4), (2, 64, 4, 8, 8),
                (2, 64, 4, 8, 16), (2, 64, 4, 16, 16)]


def throughput(size, n: int, T: int, B: int, repeat: int) -> dict:
    """size: a PRESETS name or a dict of n_layers, d_model, n_heads."""
    from lib.model import PRESETS
    task = tasks.make_task("S4")
    dims = PRESETS[size] if isinstance(size, str) else size
    cfg = LoopConfig(vocab_size=task.vocab_size, n_classes=task.n_classes, **dims)
    tokens, labels = task.sample(B, n, torch.Generator().manual_seed(0))
    ours, ref = LoopedTransformer(cfg), Reference(cfg)
    s_ours, s_ref = step_fn(ours, tokens, labels, T), step_fn(ref, tokens, labels, T)
    t_ours, t_ref = [], []
    for _ in range(repeat):                         # interleaved, so drifting machine speed hits both
        t_ours.append(timeit(s_ours, 1, warmup=1 if not t_ours else 0))
        t_ref.append(timeit(s_ref, 1, warmup=1 if not t_ref else 0))
    a, b = statistics.median(t_ours), statistics.median(t_ref)
    flops = train_flops(cfg, B, n + 1, T)
    size = size if isinstance(size, str) else f"{dims['n_layers']}L d={dims['d_model']}"
    return {"size": size, "n": n, "T": T, "batch": B, "ours_s_per_step": a, "reference_s_per_step": b,
            "ours_tokens_per_s": B * (n + 1) / a, "ours_gflops": flops / a / 1e9, "speedup_vs_reference": b / a}


def population(P: int, n: int, T: int, B: int, repeat: int) -> dict:
    """One population step of P seeds against P single-run steps, both `step.train_step` (forward,
    loss, finite check, backward, clipping per seed, AdamW, each run's bookkeeping), the population
    on `LoopedTransformer.stack` of the same P models; timed interleaved."""
    from lib.config import RunConfig
    from lib.step import Batch, train_step
    from lib.train import RunProgress, decays
    cfg = RunConfig(task="S4", n_train=n, T_train=T, n_layers=2, d_model=64, n_heads=4, batch=B, curriculum_start=n,
                    max_steps=10 ** 9)
    models = [LoopedTransformer(cfg.model_config()) for _ in range(P)]
    tokens, labels = cfg.task_obj().sample(B, n, torch.Generator().manual_seed(0))
    batch = Batch(n, tokens, labels, T, T)
    singles = [(m, torch.optim.AdamW(m.parameters(), lr=cfg.lr, betas=(0.9, 0.98)), RunProgress(cfg)) for m in models]
    stacked = LoopedTransformer.stack(models)
    opt = StackedAdamW(stacked.parameters(), [decays(k, p) for k, p in models[0].named_parameters()],
                       weight_decay=cfg.weight_decay)
    runs = [RunProgress(cfg) for _ in range(P)]

    def sequential():
        for m, o, r in singles:
            train_step(m, o, [r], [batch])
    t_seq, t_pop = [], []
    for i in range(repeat):                         # interleaved, so drifting machine speed hits both
        t_seq.append(timeit(sequential, 1, warmup=1 if i == 0 else 0))
        t_pop.append(timeit(lambda: train_step(stacked, opt, runs, [batch] * P), 1, warmup=1 if i == 0 else 0))
    a, b = statistics.median(t_seq), statistics.median(t_pop)
    return {"P": P, "n": n, "T": T, "batch": B, "model": "2 layers d=64", "sequential_s": a, "population_s": b,
            "speedup": a / b, "harness": "step.train_step, interleaved", "date": time.strftime("%Y-%m-%d %H:%M")}


@torch.no_grad()
def instrument_cost(repeat: int) -> dict:
    task = tasks.make_task("S4")
    cfg = LoopConfig(vocab_size=task.vocab_size, n_classes=task.n_classes, n_layers=2, d_model=64, n_heads=4)
    model = LoopedTransformer(cfg).eval()
    n, T = 8, 16
    tokens, labels = tasks.test_set(task, n, 512, 0)
    donors, _ = tasks.test_set(task, n, 32, 1)
    plain = timeit(lambda: model(tokens, T), repeat)
    t_tau = timeit(lambda: head.measure(head.loop_predictions(model, tokens, T).numpy(), labels[:, 1:].numpy()), repeat)
    t_cone = timeit(lambda: patching.damage_cones(model, tokens[:32], labels[:32], donors, T), max(1, repeat // 3))
    with torch.enable_grad():
        t_tail = timeit(lambda: (tail.jacobian_alignment(model, tokens[:32], T, probes=4),
                                 tail.cross_step_similarity(model, tokens, T),
                                 tail.asymptotic_alignment(model, tokens[:64], 4 * T)), max(1, repeat // 3))
    return {"n": n, "T_max": T, "inputs": 512, "plain_forward_s": plain, "tau_x_forward": t_tau / plain,
            "damage_cone_grid_x_forward": t_cone / plain, "damage_cone_grid": f"{n} positions x {T} loops x 32 inputs",
            "tail_metrics_x_forward": t_tail / plain}


def end_to_end() -> dict:
    root = Path(__file__).resolve().parent.parent
    t = time.time()
    subprocess.run([sys.executable, "-m", "lib.run_all", "--profile", "quick"], cwd=root, check=True,
                   env={**os.environ, "LOOPS_HEADLESS": "1", "LOOPS_OUTPUTS": os.environ.get("LOOPS_OUTPUTS", str(root / "outputs"))},
                   stdout=subprocess.DEVNULL)
    cached = time.time() - t
    from lib import profiles, store
    cal = profiles.calibration("quick")
    walls = [json.loads((store.run_dir(c) / "DONE").read_text()).get("train_wall_s")
             for c in profiles.budget_law("quick").configs() + cal.streaming + cal.shortcut if store.is_done(c)]
    # runs stored before DONE recorded wall times have none: then the sum is unknown (None)
    train_s = sum(walls) if walls and all(w is not None for w in walls) else None
    return {"quick_suite_from_cached_runs_s": cached, "quick_runs_training_s_sum": train_s}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats (a smoke run)")
    ap.add_argument("--skip-e2e", action="store_true")
    ap.add_argument("--population-only", action="store_true", help="only the population section: measure and print it")
    ap.add_argument("--update", action="store_true", help="with --population-only: also replace the population figures "
                                                          "in this machine's results file and README.md")
    ap.add_argument("--quick-shapes", action="store_true", help="only the quick profile's shapes (batch 128): measure, "
                                                               "print, and with --update write them")
    ap.add_argument("--note", default="", help="with --update: a remark kept with the figures (e.g. what else ran)")
    a = ap.parse_args(argv)
    threads = torch.get_num_threads()
    repeat = 3 if a.quick else 7
    if a.population_only:
        return population_only(repeat, (8,) if a.quick else (8, 16), a.note, a.update)
    if a.quick_shapes:
        return quick_shapes(repeat, a.note, a.update)
    out = {"machine": f"{platform.machine()} {os.cpu_count()} cpu", "host": socket.gethostname(), "threads": threads,
           "torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M")}
    out["matmul"] = matmul_peak()
    print(json.dumps(out["matmul"]), flush=True)
    grid = [("s", 16, 4), ("s", 16, 16)] if a.quick else \
        [(s, n, T) for s in ("s", "m") for n in (16, 32) for T in (n // 4, n)]
    out["throughput"] = []
    for size, n, T in grid:
        r = throughput(size, n, T, 64, repeat)
        r["share_of_gemm_peak"] = r["ours_gflops"] / out["matmul"]["gemm_1024_gflops"]
        out["throughput"].append(r)
        print(json.dumps(r), flush=True)
    out["population"] = [population(P, 8, 8, 128, repeat) for P in ((8,) if a.quick else (8, 16))]
    print(json.dumps(out["population"]), flush=True)
    out["instruments"] = instrument_cost(repeat)
    print(json.dumps(out["instruments"]), flush=True)
    if not a.skip_e2e:
        out["end_to_end"] = end_to_end()
        print(json.dumps(out["end_to_end"]), flush=True)
    RESULTS.mkdir(exist_ok=True)
    path = results_path(threads)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    write_readme()


def results_path(threads: int) -> Path:
    name = f"cpu-{os.cpu_count()}core-{threads}thread" if not torch.cuda.is_available() else "gpu-" + torch.cuda.get_device_name(0).replace(" ", "_")
    return RESULTS / f"{name}.json"


def quick_shapes(repeat: int, note: str, update: bool) -> None:
    """The shapes the quick profile trains: ours against the reference, GFLOP/s and share of the matmul peak
    measured in the same process, steps per second."""
    peak = matmul_peak()
    rows = []
    for L, d, H, n, T in QUICK_SHAPES:
        r = throughput(dict(n_layers=L, d_model=d, n_heads=H), n, T, 128, repeat)
        r.update(share_of_gemm_peak=r["ours_gflops"] / peak["gemm_1024_gflops"], steps_per_s=1 / r["ours_s_per_step"],
                 note=note)
        rows.append(r)
        print(json.dumps(r), flush=True)
    if update:
        path = results_path(torch.get_num_threads())
        out = json.loads(path.read_text()) if path.exists() else {}
        out["quick_shapes"], out["quick_shapes_peak"] = rows, peak
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"updated the quick shapes in {path}")
        write_readme()


def population_only(repeat: int, sizes, note: str, update: bool) -> None:
    """Re-measure the population section alone; `update`: put it into this machine's results file."""
    rows = [population(P, 8, 8, 128, repeat) for P in sizes]
    for r in rows:
        r["note"] = note
        print(json.dumps(r), flush=True)
    if not update:
        return
    path = results_path(torch.get_num_threads())
    if not path.exists():
        print(f"no {path} to update (run the whole bench first)")
        return
    out = json.loads(path.read_text())
    out["population"] = rows
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"updated the population figures in {path}")
    write_readme()


TARGETS = """## Targets (issue: performance)
- training throughput >= 1.0x the nn.TransformerEncoderLayer reference at every measured size;
- achieved GFLOP/s >= 80 % of the measured matmul peak at s-size, n=16, T=16 on CPU;
- population of 8 seeds >= 1.2x sequential on CPU (16 seeds >= 8x on a GPU);
- tau for all positions and loops <= 1.5x one plain forward at T_max;
- the quick notebook suite from cached runs <= 10 minutes on a 2-core machine.
"""


def write_readme() -> None:
    """bench/README.md: one table per results file, generated from the JSON (so they always agree)."""
    lines = ["# Benchmarks", "", "Generated by `bench/run.py` from `bench/results/*.json`; the command behind every",
             "figure: `OMP_NUM_THREADS=<threads> .venv/bin/python bench/run.py` (see each file's header).", "",
             TARGETS]
    lines += targets_table()
    for f in sorted(RESULTS.glob("*.json")):
        r = json.loads(f.read_text())
        if f.stem == "e2e-empty-cache":   # written by bench/e2e_empty_cache.py
            ident = [x["identical_to_committed"] for x in r["runs"]]
            lines += [f"## End to end from an empty run cache ({r['date']})", "",
                      f"`{r['command']}` with OMP_NUM_THREADS={r['threads']}: exit code {r['rc']}, "
                      f"**{r['wall_s'] / 60:.0f} min** wall in all (set-up, training every quick run, every notebook); "
                      f"per notebook (s): " + ", ".join(f"{k} {v:.0f}" for k, v in r["notebooks_s"].items()) + ". "
                      f"{len(r['runs'])} runs trained; identical weights to the committed runs: "
                      f"{sum(1 for x in ident if x)} of {sum(1 for x in ident if x is not None)}. {r.get('note', '')}", ""]
            continue
        if f.stem == "e2e-cached":        # written by bench/e2e_empty_cache.py --cached
            lines += [f"## The suite from cached runs ({r['date']})", "",
                      f"`{r['command']}`, OMP_NUM_THREADS={r['threads'] or 'not recorded'}"
                      + (f", {r['jobs']} notebooks at a time" if r.get("jobs") else "")
                      + f": exit code {r['rc']}, **{r['wall_s']:.0f} s** wall "
                      f"({r['wall_s'] / 60:.1f} min; target <= 600 s: {'met' if r['wall_s'] <= 600 else 'NOT met'}) "
                      f"including the virtualenv set-up; runs trained: {r['runs_trained']}; per notebook (s, in the "
                      f"order they finished): " + ", ".join(f"{k} {v:.0f}" for k, v in r["notebooks_s"].items())
                      + f"; their sum {sum(r['notebooks_s'].values()):.0f} s"
                      + ("" if "tracked_outputs_changed" not in r else
                         f"; committed outputs the run changed: {', '.join(r['tracked_outputs_changed']) or 'none'}")
                      + f". {r.get('note', '')}", ""]
            continue
        if "device" in r:                 # written by bench/gpu_check.py
            lines += gpu_section(f.stem, r)
            continue
        if "matmul" not in r:
            continue
        peak = r["matmul"]["gemm_1024_gflops"]
        lines += [f"## {f.stem} ({r['machine']}, {r['threads']} threads, torch {r['torch']}, {r['date']})", "",
                  f"fp32 matmul peak: {peak:.0f} GFLOP/s (1024^3); model-shaped GEMM "
                  f"{r['matmul']['gemm_model_shaped_gflops']:.0f} GFLOP/s.", "",
                  "| size | n | T | batch | ours s/step | reference s/step | ours / reference speed | ours GFLOP/s | share of peak |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for t in r["throughput"]:
            lines.append(f"| {t['size']} | {t['n']} | {t['T']} | {t['batch']} | {t['ours_s_per_step']:.3f} | "
                         f"{t['reference_s_per_step']:.3f} | {t['speedup_vs_reference']:.2f}x | {t['ours_gflops']:.0f} | "
                         f"{100 * t['share_of_gemm_peak']:.0f} % |")
        lines += ["", "| population | model | n, T | sequential s | population s | speed-up |", "|---|---|---|---|---|---|"]
        for p in r["population"]:
            lines.append(f"| {p['P']} seeds | {p['model']} | {p['n']}, {p['T']} | {p['sequential_s']:.3f} | "
                         f"{p['population_s']:.3f} | {p['speedup']:.2f}x |")
        remeasured = [p for p in r["population"] if p.get("date")]
        if remeasured:
            p = remeasured[0]
            lines += ["", f"Population figures re-measured {p['date']} (`--population-only`; both sides "
                      f"{p['harness']}){': ' + p['note'] if p.get('note') else ''}."]
        if r.get("quick_shapes"):
            q, qpeak = r["quick_shapes"], r["quick_shapes_peak"]["gemm_1024_gflops"]
            lines += ["", f"The quick profile's shapes (`--quick-shapes`, batch 128; matmul peak measured alongside: "
                      f"{qpeak:.0f} GFLOP/s){': ' + q[0]['note'] if q[0].get('note') else ''}.", "",
                      "| model | n | T | ours s/step | reference s/step | ours / reference | steps/s | GFLOP/s | share of peak |",
                      "|---|---|---|---|---|---|---|---|---|"]
            for t in q:
                lines.append(f"| {t['size']} | {t['n']} | {t['T']} | {t['ours_s_per_step']:.4f} | "
                             f"{t['reference_s_per_step']:.4f} | {t['speedup_vs_reference']:.2f}x | {t['steps_per_s']:.1f} | "
                             f"{t['ours_gflops']:.0f} | {100 * t['share_of_gemm_peak']:.0f} % |")
        i = r["instruments"]
        lines += ["", f"Instrument cost at n={i['n']}, T_max={i['T_max']}, {i['inputs']} inputs, as multiples of one "
                  f"plain forward ({i['plain_forward_s'] * 1e3:.1f} ms): tau {i['tau_x_forward']:.2f}x; damage-cone grid "
                  f"({i['damage_cone_grid']}) {i['damage_cone_grid_x_forward']:.1f}x; tail metrics "
                  f"{i['tail_metrics_x_forward']:.1f}x."]
        if "end_to_end" in r:
            e = r["end_to_end"]
            train = e["quick_runs_training_s_sum"]
            train = (f"{train:.0f} s of single-thread training (sum of recorded wall times)" if train is not None
                     else "not in this file (the committed runs predate wall times in DONE); measured end to end by "
                          "bench/e2e_empty_cache.py, see its section")
            lines += ["", f"End to end: quick notebook suite from cached runs {e['quick_suite_from_cached_runs_s']:.0f} s; "
                      f"training every quick run from an empty cache: {train}."]
        lines.append("")
    gpu_files = [f for f in RESULTS.glob("gpu-*.json")]
    if not gpu_files:
        lines += ["## GPU", "", "No GPU figures yet: `bench/gpu_check.py` is the prepared script for a session lent a GPU",
                  "(`python bench/gpu_check.py --device cpu --tiny` dry-runs its code path on a CPU).", ""]
    readme = RESULTS.parent / "README.md"
    # keep the sections other tools write between their own markers (bench/readme_blocks.py)
    old = readme.read_text() if readme.exists() else ""
    kept = kept_blocks(old)
    atomic_write_text(readme, "\n".join(lines).rstrip() + "".join("\n\n" + k for k in kept) + "\n")


def targets_table() -> list[str]:
    """Each target against the measured figures of every results file: met or not, with the number."""
    rows = ["| target | " + " | ".join(f.stem for f in sorted(RESULTS.glob("*.json")) if f.stem.startswith(("cpu", "gpu")))
            + " |"]
    files = [(f.stem, json.loads(f.read_text())) for f in sorted(RESULTS.glob("*.json")) if f.stem.startswith(("cpu", "gpu"))]
    rows.append("|---|" + "---|" * len(files))

    def cell(value, ok, fmt):
        return "not measured" if value is None else f"{fmt.format(value)} ({'met' if ok(value) else 'NOT met'})"

    def get(r, what):
        if what == "ref":
            return min(t["speedup_vs_reference"] for t in r["throughput"]) if r.get("throughput") else None
        if what == "share":
            hit = [t for t in r.get("throughput", []) if t["size"] == "s" and t["n"] == 16 and t["T"] == 16
                   and "share_of_gemm_peak" in t]
            return hit[0]["share_of_gemm_peak"] if hit else None
        if what == "pop8":
            hit = [p for p in r.get("population", []) if p["P"] == 8]
            return hit[0]["speedup"] if hit and "device" not in r else None
        if what == "pop16gpu":
            hit = [p for p in r.get("population", []) if p["P"] == 16]
            return hit[0]["speedup"] if hit and "device" in r and r["device"] != "cpu-dry-run" else None
        if what == "tau":
            return r.get("instruments", {}).get("tau_x_forward")
        if what == "suite":
            return r.get("end_to_end", {}).get("quick_suite_from_cached_runs_s")
    spec = [("ours / reference, slowest size (>= 1.0x)", "ref", lambda v: v >= 1.0, "{:.2f}x"),
            ("share of matmul peak, s-size n=16 T=16 (>= 80 %)", "share", lambda v: v >= 0.8, "{:.0%}"),
            ("population of 8 seeds on CPU (>= 1.2x)", "pop8", lambda v: v >= 1.2, "{:.2f}x"),
            ("population of 16 seeds on a GPU (>= 8x)", "pop16gpu", lambda v: v >= 8, "{:.2f}x"),
            ("tau / plain forward (<= 1.5x)", "tau", lambda v: v <= 1.5, "{:.2f}x"),
            ("quick suite from cached runs (<= 600 s)", "suite", lambda v: v <= 600, "{:.0f} s")]
    for text, what, ok, fmt in spec:
        rows.append(f"| {text} | " + " | ".join(cell(get(r, what), ok, fmt) for _, r in files) + " |")
    cached = RESULTS / "e2e-cached.json"
    if cached.exists():               # the README's `make all` on a fresh clone, set-up included (its own section)
        r = json.loads(cached.read_text())
        rows += ["", f"The quick suite as a new user meets it (`{r['command']}`, set-up included, {r['date']}): "
                 f"{cell(r['wall_s'], lambda v: v <= 600, '{:.0f} s')}; the per-file row above times "
                 "`lib.run_all` alone, when it was measured with those files."]
    return ["## Targets against the measurements", ""] + rows + [""]


def gpu_section(stem: str, r: dict) -> list[str]:
    m = r["matmul"]
    lines = [f"## {stem} ({r['device']}, torch {r['torch']}, {r['date']}; `{r['command']}`, {r['wall_s']:.0f} s)", "",
             f"matmul peak: fp32 {m['gemm_fp32_tflops']:.1f} TFLOP/s, bf16 {m['gemm_bf16_tflops']:.1f} TFLOP/s.", "",
             "| size | n | T | batch | ours s/step | reference s/step | ours / reference speed | ours TFLOP/s |",
             "|---|---|---|---|---|---|---|---|"]
    for t in r["throughput"]:
        lines.append(f"| {t['size']} | {t['n']} | {t['T']} | {t['batch']} | {t['ours_s_per_step']:.4f} | "
                     f"{t['reference_s_per_step']:.4f} | {t['speedup_vs_reference']:.2f}x | {t['ours_tflops']:.1f} |")
    lines += ["", "| population | model | n, T | sequential s | population s | speed-up |", "|---|---|---|---|---|---|"]
    for p in r["population"]:
        lines.append(f"| {p['P']} seeds | {p['model']} | {p['n']}, {p['T']} | {p['sequential_s']:.4f} | "
                     f"{p['population_s']:.4f} | {p['speedup']:.2f}x |")
    if "compile" in r:
        c = r["compile"]
        lines += ["", f"torch.compile ({c['size']}, n={c['n']}, T={c['T']}): {c['speedup_vs_eager']:.2f}x eager after "
                      f"a {c['compile_s']:.0f} s first step."]
    t = r["real_training"]
    lines += ["", f"Real training on the device ({t['config']}): {t['steps']} steps at {t['s_per_step'] * 1e3:.1f} ms/step, "
                  f"checkpoint written: {t['checkpoint_written']}.", ""]
    return lines


if __name__ == "__main__":
    main()
