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
# # 02 · Calibrating the head instrument tau(n, i) (Paper A §5)
#
# **Claims.** The convergence time `tau(n, i)` reads the mechanism a loop runs:
# 1. *Positive control.* Streaming (token i revealed only at loop i−1, `T = n + 2`) forces a serial
#    computation; tau must read it: slope **1.0** loop per position.
# 2. *Shortcut control.* A task with a constant-depth solution must read **flat**: slope ≈ 0.
# 3. *Scaling class.* Free-trained looped models read `tau ∝ n` (a serial frontier).
# 4. *Causal check.* Damage cones from activation patching spread at the speed tau reports: the
#    cone's slope reproduces v-hat.
#
# Choices where the paper is silent: the shortcut control is LSB-first binary increment
# (`y_i = x_i xor [x_1 = … = x_{i−1} = 1]`, one attention read away from every output); patches
# replace the state (α = 1) with a random donor word's state; damage "arrives" at a position when
# ≥ 50 % of 32 inputs flip their decoded output (the change in p(correct) is drawn too).

# %% tags=["parameters"]
PROFILE = "quick"
SEEDS = [0]
DEVICE = "auto"
TRAIN_IF_MISSING = True
PROGRESS = False
INTERACTIVE = True  # sliders in JupyterLab (skipped when LOOPS_HEADLESS=1: papermill, nbval)

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from lib import claims, explore, plots, profiles, store, tasks
from lib.instruments import head, patching

profiles.check_params(PROFILE, SEEDS, DEVICE)
device = profiles.resolve_device(DEVICE)   # where missing runs train; instruments run on the CPU
plan = profiles.calibration(PROFILE, SEEDS)
get = lambda cfg: store.get_or_train(cfg, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)
print(f"profile {PROFILE}: {len(plan.streaming)} streaming, {len(plan.shortcut)} shortcut, {len(plan.free)} free runs")

# %% [markdown]
# ## 1–2. The two controls: tau against position

# %%
controls = {}
for cfg in plan.streaming + plan.shortcut:
    run = get(cfg)
    r = head.tau(run.model, cfg.task_obj(), cfg.n_train, cfg.T_train, count=plan.eval_count,
                 seed=1000 + cfg.seed, streaming=cfg.streaming)
    kind = "streaming" if cfg.streaming else "shortcut"
    controls[(kind, cfg.seed)] = (cfg, r)
    print(f"{kind:9s} {cfg.task:9s} n={cfg.n_train} T={cfg.T_train} seed {cfg.seed}: solved {r.solved_fraction:.2f}, "
          f"slope {r.v_tau.slope:+.2f} loops/position (R² {r.v_tau.r2:.2f}), tau {np.round(r.tau_curve, 1).tolist()}")

fig, ax = plt.subplots(figsize=(6, 4))
plots.tau_curves({f"{k} seed {s}": r for (k, s), (_, r) in controls.items()}, ax=ax,
                 title="controls: streaming (serial forced) and increment (shortcut)")
plots.save(fig, "02_tau_calibration_controls")
plt.show()

# %% [markdown]
# ## The shortcut's tau is flat in n as well
# tau at the last position for test lengths up to the training length (the shortcut control is
# trained at `2 n_train` so every length here is in distribution).

# %%
shortcut_class = {}
for (kind, seed), (cfg, _) in controls.items():
    if kind != "shortcut":
        continue
    run = get(cfg)
    last = [head.tau(run.model, cfg.task_obj(), n, cfg.T_train, count=plan.eval_count, seed=3000 + n).tau_curve[-1]
            for n in plan.test_ns]
    shortcut_class[seed] = head.scaling_class(plan.test_ns, last)
    print(f"shortcut seed {seed}: tau at last position {np.round(last, 2).tolist()} -> {shortcut_class[seed].cls}")

# %% [markdown]
# ## 3. Free models: tau against n, and 4. damage cones
# For each budget-law model, tau at the last position for each test length, run with the
# contract's loops (`max(T_train, ceil(T_train · n / n_train))`: T_train inside the training range,
# where the quick models live; they do not extrapolate in length); then the damage-cone grid at the
# training contract.

# %%
free = {}
for cfg in plan.free:
    run = get(cfg)
    t_in = head.tau(run.model, cfg.task_obj(), cfg.n_train, cfg.T_train, count=plan.eval_count, seed=1000 + cfg.seed)
    if t_in.solved_fraction < 0.9:
        print(f"{profiles.contract_label(cfg)}: not learned (solved {t_in.solved_fraction:.2f}), skipped")
        continue
    ns, last = [], []
    for n in plan.test_ns:
        T = max(cfg.T_train, int(np.ceil(cfg.T_train * n / cfg.n_train)))
        r = head.tau(run.model, cfg.task_obj(), n, T, count=plan.eval_count, seed=3000 + n)
        if r.n_solved >= head.MIN_SOLVED:
            ns.append(n)
            last.append(r.tau_curve[-1])
    fit = head.scaling_class(ns, last) if len(ns) >= 3 else None
    task = cfg.task_obj()
    tokens, labels = tasks.test_set(task, cfg.n_train, plan.patch_inputs, seed=5000)
    donors, _ = tasks.test_set(task, cfg.n_train, plan.patch_inputs, seed=6000)
    cones = patching.damage_cones(run.model, tokens, labels, donors, cfg.T_train,
                                  alpha=plan.alpha, threshold=plan.threshold)
    free[cfg] = dict(tau=t_in, ns=ns, last=last, fit=fit, cones=cones)
    print(f"{profiles.contract_label(cfg)}: tau(last) over n={ns}: {np.round(last, 1).tolist()} -> "
          f"{fit.cls if fit else 'too few lengths solved'}; v(tau) {t_in.v_tau.v:.2f}, v(cone) {cones.v_cone:.2f}")

# %%
if free:
    fig, axes = plt.subplots(1, 1 + len(free), figsize=(4.2 * (1 + len(free)), 3.6))
    for cfg, f in free.items():
        axes[0].plot(f["ns"], f["last"], "o-", label=profiles.contract_label(cfg))
    axes[0].set_xlabel("input length n")
    axes[0].set_ylabel("tau at the last position")
    axes[0].set_title("free models: tau against n")
    axes[0].legend(fontsize=7)
    for ax, (cfg, f) in zip(axes[1:], free.items()):
        c = f["cones"]
        p = c.grid.index((1, 1))
        plots.loop_position_map(c.flip[p], ax=ax, title=f"damage from (pos 1, loop 1)\n{profiles.contract_label(cfg)}")
    plots.save(fig, "02_tau_calibration_free_and_cones")
    plt.show()

# %% [markdown]
# ## Explore: the controls and the free models at any T and n
# The streaming control drawn by the render function the sliders below use (JupyterLab only): its
# frontier is the reveal schedule itself, one position per loop.

# %%
stream_run = get(plan.streaming[0])
fig, readout = plots.render_frontier(stream_run, T=stream_run.config.T_train, n=stream_run.config.n_train)
plots.save(fig, "02_tau_calibration_frontier_view")
plt.show()
print(readout)

# %%
if INTERACTIVE and not explore.headless():
    pool = {f"{c.task} {c.schedule} n={c.n_train} T={c.T_train} seed {c.seed}": get(c)
            for c in plan.streaming + plan.shortcut + tuple(free)}
    first = next(iter(pool.values())).config
    display(explore.explorer(pool, first.T_train, first.n_train, plots.render_frontier))

# %% [markdown]
# ## Summary and verdict

# %%
stream_slopes = [r.v_tau.slope for (k, _), (_, r) in controls.items() if k == "streaming"]
short_slopes = [r.v_tau.slope for (k, _), (_, r) in controls.items() if k == "shortcut"]
results = {
    "streaming_slope": round(float(np.mean(stream_slopes)), 3),
    "shortcut_slope": round(float(np.mean(short_slopes)), 3),
    "shortcut_class": ",".join(sorted({f.cls for f in shortcut_class.values()})),
    "free_scaling_classes": {profiles.contract_label(c): (f["fit"].cls if f["fit"] else None) for c, f in free.items()},
    "free_linear_fraction": round(float(np.mean([f["fit"] is not None and f["fit"].cls == "linear"
                                                 for f in free.values()])), 3) if free else None,
    "cone_to_tau_ratio": {profiles.contract_label(c): round(f["cones"].v_cone / f["tau"].v_tau.v, 2) for c, f in free.items()},
    "cone_ratio_median": round(float(np.median([f["cones"].v_cone / f["tau"].v_tau.v for f in free.values()])), 3)
    if free else None,
}
claims.record("02_tau_calibration", results, PROFILE)
print(f"PROFILE {PROFILE}")
for key in ("streaming_slope", "shortcut_slope", "free_linear_fraction", "cone_ratio_median"):
    cl = claims.claim(key)
    print(f"{key:20s} ours {results[key]!s:6s} paper {cl.paper:16s} -> {claims.verdict(cl, results[key])}")
print("shortcut scaling class in n:", results["shortcut_class"])
print("damage-cone v / tau v per free model:")
for label, ratio in results["cone_to_tau_ratio"].items():
    print(f"  {label:28s} {ratio}")
