"""How much faster can a quick S4 training step run on ONE CPU thread? (issue 19, item 1)

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.cpu_step_speed                   # the settled recipe (7-9 min)
    OMP_NUM_THREADS=1 .venv/bin/python -m bench.cpu_step_speed --config fixed    # the plain fixed-T config (~7 min)
    OMP_NUM_THREADS=1 .venv/bin/python -m bench.cpu_step_speed --mix             # recompiles, lengths 2..8 (~8 min)
    OMP_NUM_THREADS=1 .venv/bin/python -m bench.cpu_step_speed --mix --warm-cache --variants A,B  # twice: warm compile

Times are for a 2-core machine shared with other processes (load average 3-5 while measured: the
settled run took 10 min with 7 rounds at load 4; the default is now 6 rounds).

Every variant runs the real `step.train_step` (forward, loss, finite check, backward, clip_grad_norm_,
AdamW, the run's bookkeeping) on the same batches, drawn with `step.draw_batch` from a RunProgress whose
curriculum stands at length 8 (past warmup, so the learning rate is the recipe's). Each variant starts
from the same initial weights and a fresh optimiser; what a variant changes lives in this file only
(monkeypatches on its own model instance: lib/ is untouched):

  eager                   train()'s step as it is (forward = the model)
  +fused / +foreach       AdamW(fused=True) / AdamW(foreach=True) (CPU AdamW defaults to the per-tensor loop)
  compile_model           forward = torch.compile(model): what train(compile=True) does; it unrolls the
                          loops, so every distinct (n, T) is a new graph (settled: opt-in, --whole-model)
  compile_step            model.step (ONE loop: injection, the layers, the outer norm) compiled; T stays a
                          Python loop, so only n changes its shapes
  compile_layer           each Layer compiled on its own
  bcast                   attention as broadcast products + masked softmax (q k^T and a v written as
                          elementwise products summed over the head width) instead of
                          F.scaled_dot_product_attention; the same maths, for inductor to fuse
  dyn / static            torch.compile(dynamic=True) / dynamic=False

Two replays give the account of what bounds the step (rows marked "replay", timed in the same rounds):
  GEMM replay             only the step's matrix products (forward, input and weight gradients of every
                          linear map at every loop, the readout), on preallocated tensors: the floor for a
                          step that keeps torch's GEMMs and the model's FLOPs
  attention replay        only the step's F.scaled_dot_product_attention calls, forward and backward

Timing: every round runs each variant once over the same K batches, interleaved step by step (batch i
on every variant, in an order rotated each round, then batch i + 1). ms/step is process CPU time
(time.process_time, robust to other processes taking the core away, though not to their cache and
memory traffic), wall time beside it, median over rounds; "speedup" is the median (and quartiles)
over all (round, batch) of eager's step time over the variant's on the same batch. The first pass of
each variant (its compile pass) starts from the same weights as eager's: |loss diff| compares its K
losses with eager's (step 1: the forward alone; later steps include the optimiser's trajectory),
|param diff| the weights after those K steps. Compile times are measured with a fresh inductor cache (--warm-cache keeps the
user's cache) and inductor compiling on one thread.

Writes bench/results/step_speed.json (not cpu-*.json: those are bench/run.py's machine files) (one key per mode: settled, fixed, mix, mix_warm_cache).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
import types
from dataclasses import dataclass, replace
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
FRESH_CACHE = None
if __name__ == "__main__" and "--warm-cache" not in sys.argv:
    FRESH_CACHE = os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="cpu_step_speed_inductor_")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from lib.config import RunConfig  # noqa: E402
from lib.model import LoopedTransformer  # noqa: E402
from lib.paths import atomic_write_text  # noqa: E402
from lib.sections.common import QUICK_BASE  # noqa: E402
from lib.step import draw_batch, loops_for, train_step  # noqa: E402
from lib.train import RunProgress, _param_groups  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "step_speed.json"
DEFAULT_RECOMPILE_LIMIT = 8          # torch._dynamo.config.recompile_limit's default (checked at start)

CONFIGS = {
    "settled": replace(QUICK_BASE, T_train=8, seed=0, schedule="proportional", T_jitter=2.0, outer_norm=True,
                       loss_loops="tail"),
    "fixed": replace(QUICK_BASE, T_train=8),
}


# ------------------------------------------------------------------------------------------------
# variants

@dataclass(frozen=True)
class Variant:
    name: str
    compile: str | None = None        # None, "model", "step", "layer"
    dynamic: bool | None = None
    attention: str = "sdpa"           # "sdpa" (the model's), "bcast"
    adamw: str | None = None          # None (torch's CPU default), "fused", "foreach"
    mode: str | None = None           # torch.compile mode


VARIANTS = {v.name: v for v in [
    Variant("eager"),
    Variant("eager+fused", adamw="fused"),
    Variant("eager+foreach", adamw="foreach"),
    Variant("eager+bcast", attention="bcast"),
    Variant("compile_model", compile="model"),
    Variant("compile_model+bcast", compile="model", attention="bcast"),
    Variant("compile_step_static", compile="step", dynamic=False),
    Variant("compile_step_dyn", compile="step", dynamic=True),
    Variant("compile_layer_dyn", compile="layer", dynamic=True),
    Variant("compile_step_static+bcast", compile="step", dynamic=False, attention="bcast"),
    Variant("compile_step_dyn+bcast", compile="step", dynamic=True, attention="bcast"),
    Variant("compile_layer_dyn+bcast", compile="layer", dynamic=True, attention="bcast"),
    Variant("compile_step_dyn+bcast+fused", compile="step", dynamic=True, attention="bcast", adamw="fused"),
    Variant("compile_step_static+bcast+fused", compile="step", dynamic=False, attention="bcast", adamw="fused"),
    Variant("compile_step_static+bcast+autotune", compile="step", dynamic=False, attention="bcast",
            mode="max-autotune-no-cudagraphs"),
]}
DEFAULT = {
    "settled": ["eager", "eager+fused", "eager+foreach", "eager+bcast", "compile_step_static", "compile_step_dyn",
                "compile_step_static+bcast", "compile_step_dyn+bcast",
                "compile_layer_dyn+bcast", "compile_step_dyn+bcast+fused", "compile_step_static+bcast+fused"],
    "fixed": ["eager", "eager+fused", "compile_model", "compile_model+bcast", "compile_step_static",
              "compile_step_dyn",
              "compile_step_static+bcast", "compile_step_dyn+bcast", "compile_step_dyn+bcast+fused"],
    "mix": ["compile_step_static+bcast", "compile_step_dyn+bcast", "compile_layer_dyn+bcast"],
}
RECOMMENDED = "compile_step_dyn+bcast+fused"


def bcast_attend(self, x: torch.Tensor) -> torch.Tensor:
    """Layer.attend with the attention written as broadcast products (same maths as the model's causal
    SDPA, no rotary: the quick configs use NoPE). (B, H, N, N, dh) temporaries are small at N = 9."""
    N, D = x.shape[-2:]
    dh = D // self.n_heads
    q, k, v = self.lin(self.qkv, x).view(-1, N, 3, self.n_heads, dh).permute(2, 0, 3, 1, 4)
    s = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1) * (1.0 / math.sqrt(dh))          # (B, H, N, N)
    if self.causal:
        s = s.masked_fill(~torch.ones(N, N, dtype=torch.bool, device=x.device).tril(), float("-inf"))
    a = (s.softmax(-1).unsqueeze(-1) * v.unsqueeze(-3)).sum(-2)                      # (B, H, N, dh)
    return self.lin(self.attn_out, a.transpose(1, 2).reshape(x.shape))


class State:
    """One variant's model, optimiser, forward and run."""

    def __init__(self, v: Variant, cfg, init_state: dict, length: int):
        if v.attention == "bcast" and cfg.pos == "rotary":
            raise ValueError("bcast attention here has no rotary branch")
        self.v = v
        self.model = LoopedTransformer(cfg.model_config())
        self.model.load_state_dict(init_state)
        kw = {"fused": True} if v.adamw == "fused" else {"foreach": True} if v.adamw == "foreach" else {}
        self.opt = torch.optim.AdamW(_param_groups(self.model, cfg.weight_decay), lr=cfg.lr, betas=(0.9, 0.98), **kw)
        if v.attention == "bcast":
            for layer in self.model.block:
                layer.attend = types.MethodType(bcast_attend, layer)
        self.forward = self.model
        ckw = {"dynamic": v.dynamic, "mode": v.mode}
        if v.compile == "model":
            self.forward = torch.compile(self.model, **ckw)
        elif v.compile == "step":
            self.model.step = torch.compile(self.model.step, **ckw)
        elif v.compile == "layer":
            for layer in self.model.block:
                layer.compile(**ckw)
        self.run = fresh_run(cfg, length)

    def step(self, batch) -> float:
        (loss,) = train_step(self.model, self.opt, [self.run], [batch], self.forward)
        return loss


def fresh_run(cfg, length: int) -> RunProgress:
    run = RunProgress(cfg)
    run.curriculum.length = length
    run.step = cfg.warmup                 # past warmup: the recipe's learning rate
    return run


def batches_at(cfg, length: int, count: int) -> list:
    """`count` batches of the run's data stream with the curriculum at `length` (draw_batch, seeded)."""
    run, gen = fresh_run(cfg, length), torch.Generator().manual_seed(cfg.seed)
    return [draw_batch(cfg, run, cfg.task_obj(), gen) for _ in range(count)]


def graphs() -> int:
    from torch._dynamo.utils import counters
    return int(counters["stats"]["unique_graphs"])


# ------------------------------------------------------------------------------------------------
# replays: the step's GEMMs alone, its attention calls alone

def _linears(cfg) -> list[tuple[int, int, bool]]:
    """(in, out, bias) of every linear map one loop applies."""
    d, L = cfg.d_model, cfg.n_layers
    layer = [(d, 3 * d, True), (d, d, True), (d, 4 * d, True), (4 * d, d, True)]
    return ([(2 * d, d, False)] if cfg.injection == "adapter" else []) + layer * L


class GemmReplay:
    """The matrix products of one train_step, as autograd issues them for F.linear: forward
    addmm(b, X, W^T), input gradient dY @ W, weight gradient X^T @ dY; readout on every loop's
    state for the tail loss, on the last for the final loss."""

    def __init__(self, cfg, batches):
        self.plan = []
        B, d, C = cfg.batch, cfg.d_model, cfg.task_obj().n_classes
        bufs = {}

        def mats(M, i, o, bias):
            key = (M, i, o, bias)
            if key not in bufs:
                bufs[key] = (torch.randn(M, i), torch.randn(o, i), torch.randn(o) if bias else None,
                             torch.randn(M, o), torch.empty(M, o), torch.empty(M, i), torch.empty(i, o))
            return bufs[key]
        for b in batches:
            M = B * b.tokens.shape[1]
            ops = [mats(M, i, o, bias) for i, o, bias in _linears(cfg)] * b.T
            R = M * (b.T if cfg.loss_loops == "tail" else 1)
            ops.append(mats(R, d, C, True))
            self.plan.append(ops)
        self.flops = sum(2 * 3 * X.shape[0] * X.shape[1] * W.shape[0] for ops in self.plan for X, W, *_ in ops)

    def __call__(self, batch_index: int):
        for X, W, bias, dY, Y, dX, dWt in self.plan[batch_index]:
            if bias is None:
                torch.mm(X, W.t(), out=Y)
            else:
                torch.addmm(bias, X, W.t(), out=Y)
            torch.mm(dY, W, out=dX)
            torch.mm(X.t(), dY, out=dWt)


class AttentionReplay:
    """The step's causal SDPA calls (n_layers per loop), forward and backward, on permuted views of
    a (B, N, 3, H, dh) tensor as the model makes them."""

    def __init__(self, cfg, batches):
        H, dh = cfg.n_heads, cfg.d_model // cfg.n_heads
        self.calls = [(torch.randn(cfg.batch, b.tokens.shape[1], 3, H, dh, requires_grad=True),
                       cfg.n_layers * b.T) for b in batches]

    def __call__(self, batch_index: int):
        qkv, count = self.calls[batch_index]
        for _ in range(count):
            q, k, v = qkv.permute(2, 0, 3, 1, 4)
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            out.backward(torch.ones_like(out))
        qkv.grad = None


# ------------------------------------------------------------------------------------------------
# profile

CATEGORIES = ("matmul", "attention", "gelu", "layernorm", "loss (readout CE)", "copies/cat/alloc",
              "optimizer+clip (foreach/elementwise)", "compiled graphs (unnamed kernels + wrapper)",
              "inductor fused kernels (other)",
              "other ops + dispatch")


def category(name: str) -> str:
    n = name.lower()
    if n in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"):
        return "matmul"
    if "scaled_dot_product" in n or ("softmax" in n and "log_softmax" not in n):
        return "attention"
    if "gelu" in n:
        return "gelu"
    if "layer_norm" in n:
        return "layernorm"
    if "log_softmax" in n or "nll_loss" in n:
        return "loss (readout CE)"
    if n in ("aten::copy_", "aten::cat", "aten::clone", "aten::contiguous", "aten::fill_", "aten::zero_",
             "aten::empty", "aten::empty_strided", "aten::stack", "aten::zeros", "aten::ones_like",
             "aten::zeros_like"):
        return "copies/cat/alloc"
    if "_foreach" in n or "adam" in n or "optimizer" in n or "clip_grad" in n or n in (
            "aten::lerp_", "aten::addcdiv_", "aten::addcmul_", "aten::sqrt", "aten::_fused_adamw_"):
        return "optimizer+clip (foreach/elementwise)"
    if "cpp_fused" in n:
        return "inductor fused kernels (other)"
    if "compiledfxgraph" in n or "compiled region" in n or "compiledfunction" in n:
        return "compiled graphs (unnamed kernels + wrapper)"
    return "other ops + dispatch"


def profile_shares(state: State, batches) -> dict:
    """Self CPU time of a pass over the batches, by category (torch.profiler). Compiled code shows as
    "compiled graphs (unnamed kernels + wrapper)" unless compiled with kernel profiling (then each fused
    kernel is named by its ops and counted under the first of softmax -> attention, gelu, layer_norm
    that its name holds)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for b in batches:
            state.step(b)
    shares = dict.fromkeys(CATEGORIES, 0.0)
    top = []
    for e in prof.key_averages():
        shares[category(e.key)] += e.self_cpu_time_total
        top.append((e.self_cpu_time_total, e.key, e.count))
    total = sum(shares.values())
    top.sort(reverse=True)
    return {"ms_per_step_profiled": total / 1e3 / len(batches),
            "shares": {k: round(v / total, 4) for k, v in shares.items()},
            "top_ops": [{"op": k[:90], "ms_per_step": round(t / 1e3 / len(batches), 2),
                         "calls_per_step": c / len(batches)} for t, k, c in top[:12]]}


def optimizer_ms(cfg, init_state, batch, adamw: str | None, reps: int = 20) -> dict:
    """clip_grad_norm_ and AdamW.step alone (grads from one backward), ms each."""
    st = State(Variant("x", adamw=adamw), cfg, init_state, 8)
    st.step(batch)
    out = {}
    for name, fn in (("clip_grad_norm_", lambda: torch.nn.utils.clip_grad_norm_(st.model.parameters(), cfg.clip)),
                     ("adamw_step", st.opt.step)):
        fn()
        t = time.process_time()
        for _ in range(reps):
            fn()
        out[name] = (time.process_time() - t) / reps * 1e3
    return out


# ------------------------------------------------------------------------------------------------
# modes

def time_variants(mode: str, cfg, names: list[str], K: int, rounds: int, profile: bool) -> dict:
    torch.manual_seed(cfg.seed)
    init_state = {k: v.clone() for k, v in LoopedTransformer(cfg.model_config()).state_dict().items()}
    batches = batches_at(cfg, cfg.n_train, K)
    print(f"[{mode}] batches (n, T_min, T): {[(b.n, b.T_min, b.T) for b in batches]}", flush=True)
    states, first, eager_losses, eager_params = {}, {}, None, None
    for name in names:                          # compile pass (= loss check) of each variant, eager first
        v = VARIANTS[name]
        st = State(v, cfg, init_state, cfg.n_train)
        g0, t0 = graphs(), time.perf_counter()
        losses = [st.step(b) for b in batches]
        wall = time.perf_counter() - t0
        params = torch.cat([p.detach().flatten() for p in st.model.parameters()])
        if name == "eager":
            eager_losses, eager_params = losses, params
        diffs = [abs(a - b) for a, b in zip(losses, eager_losses)]
        first[name] = {"first_pass_s": wall, "graphs": graphs() - g0, "loss_diff_step1": diffs[0],
                       "loss_diff_max": max(diffs), "param_diff_max": float((params - eager_params).abs().max()),
                       "losses": losses}
        states[name] = st
        print(f"  {name:38s} first pass {wall:7.1f} s, graphs {graphs() - g0:2d}, |loss diff| step1 {diffs[0]:.1e} "
              f"max {max(diffs):.1e}", flush=True)
    gemm, attn = GemmReplay(cfg, batches), AttentionReplay(cfg, batches)
    rows = names + ["GEMM replay", "attention replay"]

    def run_one(name, i):
        if name == "GEMM replay":
            gemm(i)
        elif name == "attention replay":
            attn(i)
        else:
            states[name].step(batches[i])
    for name in ("GEMM replay", "attention replay"):
        for i in range(K):
            run_one(name, i)                    # warm-up
    cpu = {r: [[0.0] * K for _ in range(rounds)] for r in rows}
    wall = {r: [[0.0] * K for _ in range(rounds)] for r in rows}
    g_before = graphs()
    t_start = time.perf_counter()
    for r in range(rounds):
        order = rows[r % len(rows):] + rows[:r % len(rows)]      # rotate, so no variant always follows another
        for i in range(K):                      # interleaved step by step: eager and a variant run seconds apart
            for name in order:
                w0, c0 = time.perf_counter(), time.process_time()
                run_one(name, i)
                cpu[name][r][i] = (time.process_time() - c0) * 1e3
                wall[name][r][i] = (time.perf_counter() - w0) * 1e3
        print(f"  round {r + 1}/{rounds}: eager {statistics.mean(cpu['eager'][r]):.0f} ms/step, "
              f"{time.perf_counter() - t_start:.0f} s", flush=True)
    new_graphs = graphs() - g_before
    table = []
    for name in rows:
        ratios = sorted(e / x for er, xr in zip(cpu["eager"], cpu[name]) for e, x in zip(er, xr))
        q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
        row = {"variant": name, "ms_per_step_cpu": statistics.median(statistics.mean(x) for x in cpu[name]),
               "ms_per_step_wall": statistics.median(statistics.mean(x) for x in wall[name]),
               "speedup_vs_eager": statistics.median(ratios), "speedup_q25": q[0], "speedup_q75": q[2],
               "cpu_ms_rounds": [round(statistics.mean(x), 1) for x in cpu[name]]}
        if name in first:
            f = first[name]
            row.update(compile_s=max(0.0, f["first_pass_s"] - K * row["ms_per_step_wall"] / 1e3), graphs=f["graphs"],
                       loss_diff_step1=f["loss_diff_step1"], loss_diff_max=f["loss_diff_max"],
                       param_diff_max=f["param_diff_max"])
        table.append(row)
    out = {"batches": [[b.n, b.T_min, b.T] for b in batches], "rounds": rounds, "steps_per_round": K,
           "gemm_replay_gflop_per_step": gemm.flops / K / 1e9, "graphs_compiled_during_timing": new_graphs,
           "table": table, "eager_losses": eager_losses}
    if profile:
        out["profile"] = {}
        for name in ("eager", RECOMMENDED if RECOMMENDED in states else names[-1]):
            out["profile"][name] = profile_shares(states[name], batches)
        out["optimizer_ms"] = {a or "default": optimizer_ms(cfg, init_state, batches[0], a) for a in (None, "fused")}
        if RECOMMENDED in states:               # inductor's kernels named in the profile: a fresh compile, last
            import torch._inductor.config as icfg
            torch._dynamo.reset()
            icfg.cpp.enable_kernel_profile = True
            st = State(VARIANTS[RECOMMENDED], cfg, init_state, cfg.n_train)
            for b in batches:
                st.step(b)
            icfg.cpp.enable_kernel_profile = False
            out["profile"][RECOMMENDED + " (kernel names)"] = profile_shares(st, batches)
    return out


def mix(cfg, names: list[str]) -> dict:
    """Graphs and compile time over a whole curriculum: one step at each length 2..n_train (T drawn
    by the recipe), per compiled variant, from fresh models."""
    torch.manual_seed(cfg.seed)
    init_state = {k: v.clone() for k, v in LoopedTransformer(cfg.model_config()).state_dict().items()}
    lengths = list(range(cfg.curriculum_start, cfg.n_train + 1))
    per_length = {n: batches_at(cfg, n, 1)[0] for n in lengths}
    out = {"lengths": lengths, "T": {n: per_length[n].T for n in lengths}, "variants": {}}
    for name in names:
        st = State(VARIANTS[name], cfg, init_state, cfg.n_train)
        g0, t0, rows = graphs(), time.perf_counter(), []
        for n in lengths:
            t = time.perf_counter()
            st.step(per_length[n])
            rows.append({"n": n, "graphs_so_far": graphs() - g0, "s": round(time.perf_counter() - t, 2)})
        total = graphs() - g0
        out["variants"][name] = {"graphs": total, "compile_pass_s": time.perf_counter() - t0, "per_length": rows,
                                 "exceeds_default_recompile_limit": total > DEFAULT_RECOMPILE_LIMIT}
        print(f"  {name:38s} graphs over lengths {lengths[0]}..{lengths[-1]}: {total:2d}, "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    # whole-model compile: one graph per distinct (n, T) a run draws (computed, not compiled)
    for s in ("settled", "fixed"):
        c, ps = CONFIGS[s], set()
        for n in lengths:
            T_min, _ = loops_for(c, n, torch.Generator().manual_seed(0))
            T_max = math.ceil(c.T_jitter * T_min - 1e-9)
            ps |= {(n, T) for T in range(T_min, T_max + 1)}
        out[f"compile_model_distinct_n_T_{s}"] = len(ps)
    return out


def print_table(res: dict, mode: str) -> None:
    print(f"\n[{mode}] one thread; {res['rounds']} rounds x {res['steps_per_round']} batches, variants "
          f"interleaved step by step; ms/step: median over rounds; speedup: median [quartiles] of "
          f"eager/variant on the same batch and round (cores shared with other processes: ratios are the "
          f"figure). graphs 0 on a compiled variant: it reused code an earlier variant compiled in this process")
    print(f"{'variant':38s} {'ms/step cpu':>11s} {'wall':>7s} {'speedup':>8s} {'[q25,q75]':>13s} {'compile s':>9s} "
          f"{'graphs':>6s} {'|dloss| 1':>9s} {'|dloss| max':>11s} {'|dparam|':>9s}")
    for r in res["table"]:
        extra = (f"{r['compile_s']:9.1f} {r['graphs']:6d} {r['loss_diff_step1']:9.1e} {r['loss_diff_max']:11.1e} "
                 f"{r['param_diff_max']:9.1e}") if "graphs" in r else f"{'':9s} {'':6s} {'(replay)':>9s}"
        print(f"{r['variant']:38s} {r['ms_per_step_cpu']:11.1f} {r['ms_per_step_wall']:7.1f} "
              f"{r['speedup_vs_eager']:7.2f}x [{r['speedup_q25']:.2f},{r['speedup_q75']:.2f}] {extra}")
    print(f"GEMM replay: {res['gemm_replay_gflop_per_step']:.2f} GFLOP per step; graphs compiled during timing: "
          f"{res['graphs_compiled_during_timing']}")
    for name, p in res.get("profile", {}).items():
        print(f"profile {name} ({p['ms_per_step_profiled']:.0f} ms/step under the profiler): "
              + ", ".join(f"{k} {v:.0%}" for k, v in p["shares"].items() if v >= 0.005))
    for a, o in res.get("optimizer_ms", {}).items():
        print(f"optimizer ({a} AdamW): clip_grad_norm_ {o['clip_grad_norm_']:.2f} ms, step {o['adamw_step']:.2f} ms")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", choices=sorted(CONFIGS), default="settled")
    ap.add_argument("--variants", default="", help="comma-separated names (default: per mode); known: "
                    + ", ".join(VARIANTS))
    ap.add_argument("--whole-model", action="store_true", help="settled: add compile_model (~100 s per distinct T)")
    ap.add_argument("--mix", action="store_true", help="graphs and compile time over lengths 2..n_train instead")
    ap.add_argument("--steps", type=int, default=8, help="batches per round (K)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--warm-cache", action="store_true", help="keep the user's inductor cache (compile times low)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)

    torch.set_num_threads(1)
    import torch._dynamo.config as dcfg
    import torch._inductor.config as icfg
    limit0 = dcfg.recompile_limit
    dcfg.recompile_limit = 64       # variants share code objects (model.step, Layer.forward); graphs counted per variant
    icfg.compile_threads = 1
    cfg = CONFIGS[args.config]
    mode = ("mix" + ("_warm_cache" if args.warm_cache else "")) if args.mix else args.config
    names = [s for s in args.variants.split(",") if s] or list(DEFAULT["mix" if args.mix else mode])
    if args.whole_model and "compile_model" not in names:
        names.append("compile_model")
    if args.mix and args.config != "settled":
        raise SystemExit("--mix: measured on the settled recipe only")
    if not args.mix and names[0] != "eager":
        names = ["eager"] + [n for n in names if n != "eager"]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"--variants: unknown {unknown}; known: {list(VARIANTS)}")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "machine": f"{platform.machine()} {os.cpu_count()} cpu",
            "torch": torch.__version__, "threads": torch.get_num_threads(),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "loadavg_start": os.getloadavg(), "default_recompile_limit": limit0,
            "inductor_cache": "fresh" if not args.warm_cache else "user's",
            "config": {k: v for k, v in cfg.to_dict().items() if v != getattr(RunConfig(), k)}}
    print(f"{meta['machine']}, torch {meta['torch']}, {meta['threads']} thread(s), "
          f"load average {meta['loadavg_start']}", flush=True)
    t0 = time.perf_counter()
    if args.mix:
        res = mix(cfg, names)
    else:
        res = time_variants(mode, cfg, names, args.steps, args.rounds, not args.no_profile)
        print_table(res, mode)
    meta.update(loadavg_end=os.getloadavg(), script_s=round(time.perf_counter() - t0))
    res["meta"] = meta
    if not args.no_write:
        all_res = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        all_res[mode] = res
        atomic_write_text(RESULTS, json.dumps(all_res, indent=1, default=str))
        print(f"wrote {RESULTS} [{mode}] ({meta['script_s']} s)")


if __name__ == "__main__":
    try:
        main()
    finally:
        if FRESH_CACHE:
            import shutil
            shutil.rmtree(FRESH_CACHE, ignore_errors=True)
