# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-papermill,-execution,-ExecuteTime
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -papermill,-widgets,-varInspector
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 · The walls are not where circuit complexity says (Paper A §6.3)
#
# **Claims.**
# 1. *NC1-completeness costs nothing*: prefix products over **A5** (non-solvable, its word problem
#    NC1-complete, order 60) are learned and **generalize fully**.
# 2. *Group order does*: **S5**'s 120 × 120 operator **deadlocks joint learning** of the operator
#    and its iteration.
# 3. An **operator-first curriculum** dissolves the wall **in every seed**.
# 4. *Imposing seriality through the input schedule* (streaming: token i revealed at loop i − 1)
#    **fails where free training succeeds**.
#
# **The two curricula** (`profiles.CURRICULA`).
# - *operator first*: words of length 2 only — the Cayley table `g1 ∘ g2` (position 1 is the copy
#   `g1`) — until the windowed accuracy at position 2 reaches 0.98 over 20 batches; then one more
#   position whenever the windowed last-position accuracy reaches 0.95; up to `n_train`.
# - *joint*: every batch at the full training length from the first step.
#
# **A deadlock is measured, not assumed from a step count** (`lib/instruments/deadlock.py`): the
# loss has stopped improving (< 2 % over the last 2,000 logged steps, no promotion), it sits near
# the cost of knowing only position 1, `((n − 1)/n) ln |G|`, and the accuracy at positions ≥ 2 is
# stuck below 0.2. Joint runs stop early once their loss has not improved by 2 % in 4,000 steps
# (`plateau_stop`), which saves CPU and is itself the plateau measurement; operator-first runs get
# every step up to `max_steps`.

# %% tags=["parameters"]
PROFILE = "quick"
SEEDS = [0, 1]
DEVICE = "auto"
TRAIN_IF_MISSING = True
PROGRESS = False

# %%
import matplotlib.pyplot as plt
import numpy as np

from lib import claims, plots, profiles, store
from lib.instruments import deadlock, head

profiles.check_params(PROFILE, SEEDS, DEVICE)
device = profiles.resolve_device(DEVICE)   # where missing runs train; instruments run on the CPU
plan = profiles.operator_wall(PROFILE, SEEDS)
get_many = lambda cfgs: store.get_or_train_many(cfgs, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING,
                                                device=device)
wall = {key: get_many(cfgs) for key, cfgs in plan.runs.items()}
for (group, curriculum), runs in wall.items():
    cfg = runs[0].config
    print(f"{group} {curriculum:14s}: n={cfg.n_train} T={cfg.T_train}, {cfg.n_layers} layers d={cfg.d_model}, "
          f"curriculum from length {cfg.curriculum_start}, max {cfg.max_steps} steps, seeds {[r.config.seed for r in runs]}")


# %% [markdown]
# ## 1–3. The wall: per run, what it learned and whether it deadlocked

# %%
def loops_for_length(cfg, n):
    return int(np.ceil(cfg.T_train * n / cfg.n_train))


rows = {}
for (group, curriculum), runs in wall.items():
    for run in runs:
        cfg = run.config
        task = cfg.task_obj()
        acc_in = head.accuracy_by_loops(run.model, task, cfg.n_train, cfg.T_train, count=plan.eval_count, seed=1000 + cfg.seed)
        pos_acc = acc_in.position_acc[-1]
        reading = deadlock.deadlock(run.metrics, task.n_classes, pos_acc)
        ood = {n: head.accuracy_by_loops(run.model, task, n, loops_for_length(cfg, n), count=plan.eval_count,
                                         seed=4000 + n).seq_acc[-1] for n in plan.long_ns}
        rows[(group, curriculum, cfg.seed)] = dict(cfg=cfg, run=run, seq_acc=acc_in.at(cfg.T_train), pos_acc=pos_acc,
                                                   reading=reading, ood=ood)

print(f"{'group':5s} {'curriculum':14s} {'seed':>4s} {'steps':>6s} {'length':>6s} {'plateau':>7s} {'loss':>6s} "
      f"{'entropy':>7s} {'acc@i>=2':>8s} {'deadlock':>8s} {'seq acc':>7s} " + " ".join(f"{'n=' + str(n):>6s}" for n in plan.long_ns))
for (group, curriculum, seed), r in rows.items():
    d = r["reading"]
    print(f"{group:5s} {curriculum:14s} {seed:4d} {d.steps:6d} {d.reached_length:6d} {str(d.plateau):>7s} {d.loss:6.3f} "
          f"{d.entropy_level:7.3f} {d.later_position_acc:8.3f} {str(d.deadlocked):>8s} {r['seq_acc']:7.3f} "
          + " ".join(f"{r['ood'][n]:6.3f}" for n in plan.long_ns))

# %% [markdown]
# Training loss against step for every run (dashed: the loss of a model that knows only position 1,
# at the full length); a deadlock is a flat line on the dashed level.

# %%
groups = sorted({g for g, _ in wall})
fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 3.8), squeeze=False)
for ax, group in zip(axes[0], groups):
    for (g, curriculum, seed), r in rows.items():
        if g != group:
            continue
        log = r["run"].metrics["log"]
        ax.plot([e["step"] for e in log], [e["loss"] for e in log], ls="-" if curriculum == "operator_first" else "--",
                label=f"{curriculum} seed {seed}")
    n_classes = rows[next(k for k in rows if k[0] == group)]["cfg"].task_obj().n_classes
    n_train = rows[next(k for k in rows if k[0] == group)]["cfg"].n_train
    ax.axhline(deadlock.operator_entropy_level(n_classes, n_train), color="k", ls=":", lw=0.8)
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (final loop)")
    ax.set_title(f"{group}: joint (dashed) vs operator-first (solid)")
    ax.legend(fontsize=7)
fig.tight_layout()
plots.save(fig, "05_operator_wall_loss")
plt.show()

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
for (group, curriculum, seed), r in rows.items():
    label = f"{group} {curriculum} s{seed}"
    axes[0].plot(np.arange(1, len(r["pos_acc"]) + 1), r["pos_acc"], "o-", ms=3, label=label)
    lengths = [r["cfg"].n_train] + list(plan.long_ns)
    axes[1].plot(lengths, [r["seq_acc"]] + [r["ood"][n] for n in plan.long_ns], "o-", ms=3, label=label)
axes[0].set_xlabel("position i")
axes[0].set_ylabel("accuracy after T_train loops")
axes[0].set_title("per-position accuracy at n_train")
axes[1].set_xlabel("test length n (loops T_train · n / n_train)")
axes[1].set_ylabel("whole-word accuracy")
axes[1].set_title("accuracy against length")
for ax in axes:
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=6)
fig.tight_layout()
plots.save(fig, "05_operator_wall_accuracy")
plt.show()

# %% [markdown]
# ## 4. Forced seriality: streaming against free training
# Pairs of the same task and length: the streaming schedule (`T = n + 2`, token i revealed at loop
# i − 1) against the free model at `T = n`. Both are tested in distribution and at longer lengths
# (streaming keeps its schedule, `T = n + 2`; the free model gets `T = n` loops).

# %%
pairs = []
for free_cfg, stream_cfg in zip(plan.free, plan.streaming):
    out = {}
    for kind, cfg in (("free", free_cfg), ("streaming", stream_cfg)):
        run = store.get_or_train(cfg, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)
        task = cfg.task_obj()
        accs = {}
        for n in (cfg.n_train,) + tuple(plan.long_ns):
            T = n + 2 if cfg.streaming else loops_for_length(cfg, n)
            accs[n] = head.accuracy_by_loops(run.model, task, n, T, count=plan.eval_count, seed=4000 + n,
                                             streaming=cfg.streaming).seq_acc[-1]
        out[kind] = accs
    pairs.append((free_cfg.task, out))
    print(f"{free_cfg.task}: " + "; ".join(f"{kind} " + ", ".join(f"n={n}: {a:.3f}" for n, a in accs.items())
                                          for kind, accs in out.items()))

fig, ax = plt.subplots(figsize=(6, 3.8))
for task_name, out in pairs:
    for kind, accs in out.items():
        ax.plot(list(accs), list(accs.values()), "o-" if kind == "free" else "s--", label=f"{task_name} {kind}")
ax.set_xlabel("test length n")
ax.set_ylabel("whole-word accuracy")
ax.set_ylim(-0.02, 1.02)
ax.set_title("free training vs imposed seriality (streaming)")
ax.legend(fontsize=7)
plots.save(fig, "05_operator_wall_streaming")
plt.show()

# %% [markdown]
# ## Summary and verdict

# %%
def runs_of(group, curriculum):
    return [r for (g, c, _), r in rows.items() if g == group and c == curriculum]


first, second = list(dict.fromkeys(g for g, _ in wall))   # the plan names the NC1 group first
learned = lambda r: r["seq_acc"] >= plan.learned_acc
a5 = runs_of(first, "operator_first")
results = {
    "a5_ood_acc": round(float(min(min([r["seq_acc"]] + [r["ood"][plan.long_ns[-1]]]) for r in a5)), 3),
    "a5_learned_fraction": {c: round(float(np.mean([learned(r) for r in runs_of(first, c)])), 3) for c in profiles.CURRICULA},
    "s5_joint_deadlock_fraction": round(float(np.mean([r["reading"].deadlocked for r in runs_of(second, "joint")])), 3),
    "s5_operator_first_fraction": round(float(np.mean([learned(r) for r in runs_of(second, "operator_first")])), 3),
    "s5_learned_fraction": {c: round(float(np.mean([learned(r) for r in runs_of(second, c)])), 3) for c in profiles.CURRICULA},
    "deadlocked": {f"{g} {c} seed {s}": r["reading"].deadlocked for (g, c, s), r in rows.items()},
    "seq_acc": {f"{g} {c} seed {s}": round(float(r["seq_acc"]), 3) for (g, c, s), r in rows.items()},
    "streaming_pairs": {t: {k: {str(n): round(float(a), 3) for n, a in accs.items()} for k, accs in out.items()}
                        for t, out in pairs},
    # the largest accuracy gap (free minus streaming) over tasks and test lengths where free training learned
    "streaming_gap": round(float(max(out["free"][n] - out["streaming"][n] for _, out in pairs for n in out["free"]
                                     if out["free"][n] >= plan.learned_acc)), 3)
    if any(a >= plan.learned_acc for _, out in pairs for a in out["free"].values()) else None,
}
claims.record("05_operator_wall", results, PROFILE)
print(f"PROFILE {PROFILE}; groups {first} (claim 1) and {second} (claims 2-3)")
for key in ("a5_ood_acc", "s5_joint_deadlock_fraction", "s5_operator_first_fraction", "streaming_gap"):
    cl = claims.claim(key)
    print(f"{key:27s} ours {results[key]!s:6s} paper {cl.paper:22s} -> {claims.verdict(cl, results[key])}")
print(f"learned fraction by curriculum: {first} {results['a5_learned_fraction']}, {second} {results['s5_learned_fraction']}")
