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
# # 01 · Tail instruments saturate at the fixed point (Paper A §4, App. C)
#
# **Claim.** A trained loop converges to a fixed point, and every instrument that reads the end of
# the loop saturates there (Proposition 1): skipping loops after the fixed point changes nothing,
# the step Jacobian stops changing, a fixed feature dictionary reads identical features. So tail
# metrics cannot see the algorithm: single-step skip preservation is exact, Jacobian alignment is
# uniformly high, and **no tail metric tracks out-of-distribution accuracy**.
#
# **How we test it.** A population of trained models from the store (the budget-law contracts and
# the two calibration controls: different tasks, contracts and schedules, so their length
# generalization differs widely). For each: the tail metrics in distribution, the OOD accuracy at
# twice the training length (with twice the loops), their rank correlations with bootstrap
# intervals, and Proposition 1 checked numerically. Definitions: `lib/instruments/tail.py`.

# %% tags=["parameters"]
PROFILE = "quick"
SEEDS = [0]
DEVICE = "auto"
TRAIN_IF_MISSING = True
PROGRESS = False

# %%
import matplotlib.pyplot as plt

from lib import claims, plots, profiles, store
from lib.instruments import saturation

profiles.check_params(PROFILE, SEEDS, DEVICE)
device = profiles.resolve_device(DEVICE)   # where missing runs train; instruments run on the CPU
plan = profiles.tail_saturation(PROFILE, SEEDS)
runs = store.get_or_train_many(plan.population, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)
print(f"profile {PROFILE}: population of {len(runs)} models")

# %% [markdown]
# ## Tail metrics and OOD accuracy per model
# In distribution (`n_train`, `T_train`): skip-1 preservation on solved inputs; Jacobian alignment
# (mean over loops of cos(J_t u, J_{t+1} u)); cross-step cosine and CKA of h^t, h^{t+1} at the last
# step; asymptotic alignment after `long_factor × T_train` loops. OOD: the best sequence accuracy
# at `2 n_train` over any test-time loop budget up to `max(4 T_train, 2 n_train + 2)` (so a model is
# not penalised for needing more loops on a longer input).

# %%
rows = [saturation.population_row(r, plan.ood_factor, plan.long_factor, plan.eval_count, plan.probes) for r in runs]
print(f"{'model':34s} {'in acc':>6s} {'OOD acc':>7s} {'skip-1':>6s} {'J-align':>7s} {'cos':>6s} {'CKA':>6s} {'AA':>6s}")
for r in rows:
    print(f"{r['model']:34s} {r['in_acc']:6.2f} {r['ood_acc']:7.3f} {r['skip1']:6.2f} {r['jac_align']:7.3f} "
          f"{r['cosine']:6.3f} {r['cka']:6.3f} {r['aa']:6.3f}")

# %% [markdown]
# ## Does any tail metric track OOD accuracy?
# Spearman's rho with 95 % bootstrap intervals over the models that solve their training
# distribution (in acc ≥ 0.9: the question is which of the models that fit the data generalize).
# With few models the intervals are wide: an interval that covers 0 means "no evidence of tracking".

# %%
fitted, corr = saturation.correlations(rows)
print(f"{len(fitted)} of {len(rows)} models solve their training distribution (in acc >= 0.9)")
for m, e in corr.items():
    print(f"{m:10s} rho vs OOD accuracy: {e}")
fig = plots.metrics_vs_ood(fitted, corr)
plots.save(fig, "01_tail_saturation_metrics_vs_ood")
plt.show()

# %% [markdown]
# ## Proposition 1 on the trained models
# Run `long_factor × T_train` loops, find the loop tau* after which the state moves by less than
# 0.1 % per loop, and check: skipping the remaining loops preserves every output; the step
# Jacobian (probed) no longer changes; PCA features of the state no longer change.

# %%
checks = saturation.proposition1_checks(runs, plan.long_factor)
for c, check in checks:
    if check.tau_star is None:
        print(f"{c.task} n={c.n_train} T={c.T_train}: no fixed point within {check.T} loops: last relative step "
              f"{check.last_step:.3f}, state norm grew {check.norm_growth:.3g}x -> premise of Prop. 1 absent")
    else:
        print(f"{c.task} n={c.n_train} T={c.T_train}: fixed point from loop {check.tau_star} of {check.T}; "
              f"skip preservation {check.skip_preservation:.2f}, Jacobian change {check.jacobian_change:.4f}, "
              f"feature change {check.feature_change:.4f} -> {'holds' if check.holds else 'does not hold'}")

# %% [markdown]
# ## Summary and verdict

# %%
results = saturation.saturation_results(rows, fitted, corr, checks)
claims.print_verdicts("01_tail_saturation", results, PROFILE)
print("OOD accuracy range over the population:", results["ood_acc_range"])
print("Proposition 1 holds on:", results["prop1_holds"], "| fixed point reached by:", results["fixed_points_reached"])

# %% [markdown]
# ## Reading the result (committed quick profile)
#
# The premise of the section fails at this scale: **none of these trained loops reaches a fixed
# point** (the Proposition 1 lines above: no fixed point within the loops run, relative steps far
# above 0.1 %, state norms growing by orders of magnitude). Run past their budget, the fixed-T
# models' outputs degrade ("overthinking", see 00 and 03). The budget-priced models also finish
# *at* their budget, so dropping one loop at `T_train` breaks them: skip-1 preservation is exact
# only for the models with slack. With no fixed point the tail is not the tail the paper speaks
# of, so the ledger reads the skip-one, Jacobian-alignment, tail-vs-OOD and Proposition 1 rows as
# *not measured* (their precondition: a model that reaches a fixed point), and the fixed-point row
# itself as *not reproduced* for this recipe. Proposition 1 itself is checked exactly on a
# constructed contraction and a constructed serial propagator (`tests/`); the settled-loops recipe
# search (`bench/settle_search.py`) looks for a training recipe whose loops do settle.
