# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-papermill,-execution,-ExecuteTime
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -papermill,-widgets,-varInspector
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 · Portability: budget annealing (Paper A §7)
#
# **Claims.**
# 1. Warm-starting a trained model from one budget contract into another **transfers the
#    algorithm in every seed** (the paper: 4/4) ...
# 2. ... **re-pricing its speed** to the new contract (v-hat follows the new demand n/T), and
# 3. ... **bypasses the seed lottery** that defeats most from-scratch runs of the harder contract.
#
# **Schedule** (`profiles.annealing`): at fixed `n`, `T = n → n/2 → n/4`; each step starts from the
# previous step's stored weights (`config.warm_start`: weights only, a fresh AdamW, warmup and
# polish, full-length words from the first step, and the from-scratch runs' step budget, so that at
# the final contract both train equally long), and the store records the lineage. From-scratch runs
# of the same contracts are the budget-law runs of each seed.
#
# **Transfer, per seed and contract** (our criterion, `lib/instruments/portability.py`; the paper does not state one): the annealed
# run is *learned* (in-distribution whole-word accuracy ≥ 0.9 after `T_train` loops) and its speed
# is *re-priced*: v-hat(tau) is closer to the new demand `n/T` than to the old one (in log ratio).

# %% tags=["parameters"]
PROFILE = "quick"
SEEDS = None          # None: the profile's seeds (quick: 0, 1; paper: 0-3, the paper's four)
DEVICE = "auto"
TRAIN_IF_MISSING = True
PROGRESS = False

# %%
import matplotlib.pyplot as plt
import numpy as np

from lib import claims, plots, profiles, store
from lib.instruments import portability

profiles.check_params(PROFILE, SEEDS, DEVICE)
device = profiles.resolve_device(DEVICE)
plan = profiles.annealing(PROFILE, SEEDS)
seeds = [c.seed for c in plan.start]
opts = dict(progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)
start = store.get_or_train_many(plan.start, **opts)                  # seeds of one config: one population
scratch = [store.get_or_train_many(col, **opts) for col in zip(*plan.scratch)]   # per later contract
chains = []
for chain in plan.chains:                                             # warm starts: one after another
    chains.append([store.get_or_train(cfg, **opts) for cfg in chain])


rows = []
for i, seed in enumerate(seeds):
    m0 = portability.contract_reading(start[i], plan.eval_count)
    prev = m0
    for k, run in enumerate(chains[i]):
        ma = portability.contract_reading(run, plan.eval_count)
        ms = portability.contract_reading(scratch[k][i], plan.eval_count)
        rows.append(dict(seed=seed, T=run.config.T_train, demand=ma["demand"], v_before=prev["v"], v_after=ma["v"],
                         v_frontier_after=ma["v_frontier"], acc=ma["acc"],
                         transferred=portability.transferred(ma, prev["demand"], plan.learned_acc),
                         scratch_acc=ms["acc"], scratch_v=ms["v"], steps=run.metrics["steps"],
                         scratch_steps=scratch[k][i].metrics["steps"], lineage=run.metrics.get("lineage", {}).get("init_from")))
        prev = ma
    print(f"seed {seed}: start T={plan.start[i].T_train}: solved {m0['acc']:.2f}, v {m0['v']:.2f}")

print(f"{'seed':>4s} {'T':>3s} {'demand':>6s} {'v before':>8s} {'v after':>7s} {'solved':>6s} {'transfer':>8s} "
      f"{'steps':>6s} | {'scratch solved':>14s} {'scratch v':>9s} {'steps':>6s}  parent")
for r in rows:
    print(f"{r['seed']:4d} {r['T']:3d} {r['demand']:6.2f} {r['v_before']:8.2f} {r['v_after']:7.2f} {r['acc']:6.2f} "
          f"{str(r['transferred']):>8s} {r['steps']:6d} | {r['scratch_acc']:14.2f} {r['scratch_v']:9.2f} "
          f"{r['scratch_steps']:6d}  {r['lineage']}")

# %% [markdown]
# Speed before and after each annealing step, per seed (dashed: the budget law's v = n/T).

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for seed in seeds:
    rs = [r for r in rows if r["seed"] == seed]
    d = [plan.start[0].demand] + [r["demand"] for r in rs]
    v = [rs[0]["v_before"]] + [r["v_after"] for r in rs]
    axes[0].plot(d, v, "o-", label=f"annealed, seed {seed}")
    axes[1].plot([r["demand"] for r in rs], [r["scratch_acc"] for r in rs], "x--", label=f"scratch, seed {seed}")
    axes[1].plot([r["demand"] for r in rs], [r["acc"] for r in rs], "o-", label=f"annealed, seed {seed}")
grid = np.array(sorted({r["demand"] for r in rows} | {plan.start[0].demand}))
axes[0].plot(grid, grid, "k--", lw=0.8, label="v = n/T")
axes[0].set_xlabel("demand n/T")
axes[0].set_ylabel("v-hat (tau)")
axes[0].set_title("speed re-priced by annealing")
axes[1].set_xlabel("demand n/T")
axes[1].set_ylabel("solved fraction (in distribution)")
axes[1].set_ylim(-0.02, 1.02)
axes[1].set_title("annealed vs from scratch")
for ax in axes:
    ax.legend(fontsize=6)
fig.tight_layout()
plots.save(fig, "06_portability_annealing")
plt.show()

# %% [markdown]
# ## Summary and verdict

# %%
final_T = min(r["T"] for r in rows)
final = [r for r in rows if r["T"] == final_T]
results = {
    "anneal_transfer_fraction": round(float(np.mean([r["transferred"] for r in final])), 3),
    "anneal_transfer_count": f"{sum(r['transferred'] for r in final)}/{len(final)}",
    "scratch_learned_fraction": round(float(np.mean([r["scratch_acc"] >= plan.learned_acc for r in final])), 3),
    "anneal_minus_scratch": round(float(np.mean([r["acc"] >= plan.learned_acc for r in final])
                                        - np.mean([r["scratch_acc"] >= plan.learned_acc for r in final])), 3),
    # every annealing step, not only the final contract: where does transfer stop?
    "transfer_by_T": {str(T): f"{sum(r['transferred'] for r in rows if r['T'] == T)}/{sum(r['T'] == T for r in rows)}"
                      for T in sorted({r["T"] for r in rows}, reverse=True)},
    # optimiser steps to learn a contract: annealed / from scratch, where both learned it
    "steps_ratio_where_both_learned": [round(r["steps"] / r["scratch_steps"], 3) for r in rows
                                       if r["acc"] >= plan.learned_acc and r["scratch_acc"] >= plan.learned_acc],
    "per_step": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
}
claims.record("06_portability", results, PROFILE)
print(f"PROFILE {PROFILE}; final contract T = {final_T}")
for key in ("anneal_transfer_fraction", "anneal_minus_scratch"):
    cl = claims.claim(key)
    print(f"{key:26s} ours {results[key]!s:6s} paper {cl.paper:18s} -> {claims.verdict(cl, results[key])}")
print(f"final contract: transferred {results['anneal_transfer_count']}; from scratch learned: {results['scratch_learned_fraction']}")
print(f"transfer by contract T: {results['transfer_by_T']}; steps annealed/scratch where both learned: "
      f"{results['steps_ratio_where_both_learned']}")
