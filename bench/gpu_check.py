"""The GPU check (performance issue, item 3): ONE prepared script for a session that is lent a GPU.

    .venv/bin/python bench/gpu_check.py                       # on the device machine (about 5 minutes)
    .venv/bin/python bench/gpu_check.py --device cpu --tiny   # a dry run of the same code path, here

It records, on the device, under the GPU path the project uses (bf16 autocast, fused attention):
1. the bf16 and fp32 matmul peaks;
2. training throughput of our model against the nn.TransformerEncoderLayer reference, interleaved,
   at sizes s and m, n in {16, 32}, T in {n/4, n}, with a batch that fills the device;
3. population training: 16 s-size seeds as one stacked program against 16 sequential single-seed
   steps (the target: >= 8x);
4. torch.compile on one configuration (speed-up and compile time);
5. a real training run of the quick profile's contract on the device (`lib.train.train`,
   device "cuda"), a few hundred steps, so the whole path (data on the CPU, bf16 loss, checkpoint)
   is exercised, with its seconds per step.
Results go to bench/results/gpu-<device name>.json (`bench/run.py` renders bench/README.md from it).
Every part has a time budget, so the script finishes well inside one device call.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from run import RESULTS, Reference, train_flops, write_readme  # noqa: E402

from lib import tasks  # noqa: E402
from lib.model import PRESETS, LoopConfig, LoopedTransformer  # noqa: E402
from lib.population import StackedAdamW  # noqa: E402
from lib.train import decays  # noqa: E402
from lib.step import autocast  # noqa: E402


def timed(fn, device, repeat: int, warmup: int = 2) -> float:
    """Median seconds per call; synchronises the device around every call."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for _ in range(warmup):
        fn()
    sync()
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        sync()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def matmul_peaks(device, n: int) -> dict:
    res = {}
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
        res[f"gemm_{name}_tflops"] = 2 * n ** 3 / timed(lambda: a @ b, device, 10) / 1e12
    return res


def train_step(model, tokens, labels, T, device):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")

    def step():
        with autocast(device):
            logits = model(tokens, T)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def throughput(device, size, n, T, B, repeat) -> dict:
    task = tasks.make_task("S4")
    cfg = LoopConfig(vocab_size=task.vocab_size, n_classes=task.n_classes, **PRESETS[size])
    tokens, labels = (x.to(device) for x in task.sample(B, n, torch.Generator().manual_seed(0)))
    ours, ref = LoopedTransformer(cfg).to(device), Reference(cfg).to(device)
    s_ours, s_ref = train_step(ours, tokens, labels, T, device), train_step(ref, tokens, labels, T, device)
    a, b = [], []
    for i in range(repeat):                         # interleaved
        a.append(timed(s_ours, device, 1, warmup=2 if i == 0 else 0))
        b.append(timed(s_ref, device, 1, warmup=2 if i == 0 else 0))
    a, b = statistics.median(a), statistics.median(b)
    flops = train_flops(cfg, B, n + 1, T)
    return {"size": size, "n": n, "T": T, "batch": B, "ours_s_per_step": a, "reference_s_per_step": b,
            "ours_tokens_per_s": B * (n + 1) / a, "ours_tflops": flops / a / 1e12, "speedup_vs_reference": b / a}


def population(device, P, size, n, T, B, repeat) -> dict:
    task = tasks.make_task("S4")
    cfg = LoopConfig(vocab_size=task.vocab_size, n_classes=task.n_classes, **PRESETS[size])
    models = [LoopedTransformer(cfg).to(device) for _ in range(P)]
    tokens, labels = (x.to(device) for x in task.sample(B, n, torch.Generator().manual_seed(0)))
    singles = [train_step(m, tokens, labels, T, device) for m in models]
    stacked = LoopedTransformer.stack(models).to(device)           # one model with a population axis
    params = list(stacked.parameters())
    opt = StackedAdamW(params, [decays(k, p) for k, p in models[0].named_parameters()])
    tok_p, lab_p = tokens.expand(P, -1, -1).contiguous(), labels.expand(P, -1, -1).contiguous()
    lr = torch.full((P,), 1e-4, device=device)

    def pop_step():
        with autocast(device):
            logits = stacked(tok_p, T)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), lab_p.reshape(-1), ignore_index=-100) * P
        for w in params:
            w.grad = None
        loss.backward()
        opt.step(lr)
    t_seq = timed(lambda: [s() for s in singles], device, repeat)
    t_pop = timed(pop_step, device, repeat)
    return {"P": P, "model": size, "n": n, "T": T, "batch": B, "sequential_s": t_seq, "population_s": t_pop,
            "speedup": t_seq / t_pop}


def compiled(device, size, n, T, B, repeat) -> dict:
    task = tasks.make_task("S4")
    cfg = LoopConfig(vocab_size=task.vocab_size, n_classes=task.n_classes, **PRESETS[size])
    tokens, labels = (x.to(device) for x in task.sample(B, n, torch.Generator().manual_seed(0)))
    eager = LoopedTransformer(cfg).to(device)
    comp = LoopedTransformer(cfg).to(device)
    comp.load_state_dict(eager.state_dict())
    s_eager = train_step(eager, tokens, labels, T, device)
    s_comp = train_step(torch.compile(comp), tokens, labels, T, device)
    t0 = time.perf_counter()
    s_comp()
    compile_s = time.perf_counter() - t0
    return {"size": size, "n": n, "T": T, "batch": B, "compile_s": compile_s,
            "speedup_vs_eager": timed(s_eager, device, repeat) / timed(s_comp, device, repeat)}


def real_training(device, steps: int) -> dict:
    from lib.profiles import budget_law
    from lib.train import train
    demand_1 = next(c for c in budget_law("quick", [0]).runs if c.T_train == c.n_train)
    cfg = replace(demand_1, max_steps=steps, checkpoint_every=max(1, steps // 2))
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        _, metrics = train(cfg, Path(d), device=str(device))
        wall = time.perf_counter() - t
        wrote = (Path(d) / "checkpoint.pt").exists()
    return {"config": f"{cfg.task} n={cfg.n_train} T={cfg.T_train} {cfg.n_layers}L d={cfg.d_model} batch {cfg.batch}",
            "steps": metrics["steps"], "s_per_step": wall / metrics["steps"], "checkpoint_written": wrote,
            "reached_length": metrics["reached_length"]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--tiny", action="store_true", help="smallest sizes and repeats (a dry run of the code path)")
    ap.add_argument("--no-compile", action="store_true")
    a = ap.parse_args(argv)
    if a.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device: 'cuda' requested but no GPU is visible; allowed here: --device cpu (dry run)")
    device = torch.device(a.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    repeat = 2 if a.tiny else 7
    name = torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu-dry-run"
    out = {"device": name, "torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M"),
           "command": "python bench/gpu_check.py" + (" --tiny" if a.tiny else "") + f" --device {a.device}"}
    t_all = time.time()
    out["matmul"] = matmul_peaks(device, 512 if a.tiny else 8192)
    print(json.dumps(out["matmul"]), flush=True)
    B = 16 if a.tiny else 256
    grid = [("s", 16, 4)] if a.tiny else [(s, n, T) for s in ("s", "m") for n in (16, 32) for T in (n // 4, n)]
    out["throughput"] = []
    for size, n, T in grid:
        out["throughput"].append(throughput(device, size, n, T, B, repeat))
        print(json.dumps(out["throughput"][-1]), flush=True)
    P = 2 if a.tiny else 16
    out["population"] = [population(device, P, "s", 16, 16 if not a.tiny else 4, 128 if not a.tiny else 8, repeat)]
    print(json.dumps(out["population"]), flush=True)
    if not a.no_compile:
        out["compile"] = compiled(device, "s", 16, 16 if not a.tiny else 2, B, repeat)
        print(json.dumps(out["compile"]), flush=True)
    out["real_training"] = real_training(device, 20 if a.tiny else 400)
    print(json.dumps(out["real_training"]), flush=True)
    out["wall_s"] = time.time() - t_all
    if not a.tiny:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"gpu-{name.replace(' ', '_')}.json"
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {path}")
        write_readme()
    print(f"gpu check done in {out['wall_s']:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
