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
# **How we test it.** A population of one task family: S4 models of the settled-loops recipe
# (`profiles.SETTLED`: loops drawn above the budget, loss on every loop from the budget on, so a loop
# is asked to keep its answer), seeds x contracts, whose length generalization differs widely; the
# fixed-T models (one `T`, loss at the last loop) are the contrast. For each model: convergence of
# the loop by three criteria, the tail metrics read past its fixed point tau* (and, for the
# contrast, at its budget), OOD accuracy at twice the training length, rank correlations with
# bootstrap intervals, and Proposition 1 checked numerically. Definitions:
# `lib/instruments/tail.py`, `lib/instruments/fixedpoint.py`.
#
# **Which fixed point.** Verdicts use the *raw* relative step `||h^{t+1} - h^t|| / ||h^t|| <= 1e-3`
# from some loop on (Proposition 1 is about a fixed point of the loop map itself); the normalised
# state the readout sees and Paper B's consecutive cosine (> 0.99) are shown beside it.

# %% tags=["parameters"]
PROFILE = "quick"
SEEDS = None             # None: the profile's (profiles.TAIL_SEEDS); seeds 3 and up skip demand 0.5
DEVICE = "auto"
TRAIN_IF_MISSING = True
PROGRESS = False

# %%
import matplotlib.pyplot as plt

from lib import claims, plots, profiles, store
from lib.sections.s01_tail_saturation import figures, read as saturation

profiles.check_params(PROFILE, SEEDS, DEVICE)
device = profiles.resolve_device(DEVICE)   # where missing runs train; instruments run on the CPU
plan = profiles.tail_saturation(PROFILE, SEEDS)
settled = store.get_or_train_many(plan.settled, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)
fixed = store.get_or_train_many(plan.fixed, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)
print(f"profile {PROFILE}: {len(settled)} settled-recipe models, {len(fixed)} fixed-T contrasts")

# %% [markdown]
# ## Tail metrics and OOD accuracy per model
# In distribution (`n_train`): solved fraction at `T_train`; the share of inputs whose loop converges
# within `conv_factor × T_train` loops by each criterion; tau* (raw criterion: the loop by which 90 %
# of the inputs that settle have settled; a model reaches a fixed point when at least half its inputs
# settle); past tau*, on the inputs settled by then: skip-1 preservation on solved inputs, Jacobian
# alignment (mean cos(J_t u, J_{t+1} u) over loops from tau*), cross-step cosine and CKA of the last
# two states, asymptotic alignment. OOD: the best
# whole-word accuracy at `2 n_train` over a scan of loops (4x the loops the run's schedule gives that
# length), so a model is not penalised for needing more loops on a longer input. Each row is kept beside
# its run (`kept_population_row`: read again when the weights or the reader change;
# `LOOPS_RECOMPUTE_READINGS=1` recomputes every kept reading and fails on any difference beyond float32
# rounding).

# %%
rows = [saturation.kept_population_row(r, recipe, plan.ood_factor, plan.long_factor, plan.conv_factor,
                                       plan.eval_count, plan.probes) for recipe, rs in (("settled", settled), ("fixed", fixed)) for r in rs]
print(saturation.rows_table(rows))

# %% [markdown]
# ## Does any tail metric track OOD accuracy?
# Spearman's rho with 95 % bootstrap intervals over the settled models that solve their training
# distribution (in acc ≥ 0.9: the question is which models that fit the data generalize) and reach
# a fixed point. With few models the intervals are wide: an interval that covers 0 means "no
# evidence of tracking". The same metrics read at the budget `T_train` of the same models are shown
# beside: a loop read before it settles is not the saturated tail the paper speaks of.

# %%
fitted, corr = saturation.correlations(rows)
print(f"{len(fitted)} settled models solve their training distribution and reach a fixed point")
budget_fit = saturation.correlations(rows, metrics_at="budget")
for m, e in corr.items():
    print(f"{m:10s} rho vs OOD accuracy past tau*: {e}   read at T_train instead: {budget_fit[1][m]}")
fig = figures.metrics_vs_ood(fitted, corr, n_ood=plan.ood_factor * plan.settled[0].n_train)
plots.save(fig, "01_tail_saturation_metrics_vs_ood", PROFILE)
plt.show()

# %% [markdown]
# ## Proposition 1 on the trained models
# Run `conv_factor × T_train` loops on 64 inputs, keep those whose state comes to move by less than
# 0.1 % per loop and the loop tau* by which (nearly) all of them have, and check on them: skipping the
# remaining loops preserves every output; the step Jacobian (probed) no longer changes; PCA features
# of the state no longer change.

# %%
checks = saturation.proposition1_checks(settled + fixed, plan.conv_factor)
print(saturation.proposition1_table(checks))

# %% [markdown]
# ## Summary and verdict

# %%
results = saturation.saturation_results(rows, fitted, corr, checks, at_budget=budget_fit)
claims.print_verdicts("01_tail_saturation", results, PROFILE)
print("OOD accuracy range over the learned settled models:", results["ood_acc_range"])
print("fixed points (raw):", results["fixed_points_reached"], "| share of inputs converged by criterion:",
      results["converged_by_criterion"], "| fixed-T contrast:", results["contrast_fixed_points_reached"])
print("Proposition 1 holds on:", results["prop1_holds"], "of the settled models with a fixed point")
print(f"At the operating point T_train: Proposition 1's premise (tau* <= T_train - {results['premise_k']}) holds on",
      results["premise_met"], "learned models; tau*/T_train:", results["tau_star_over_T_train"])
print("skip-1 at T_train over the learned models:", results["skip1_range_at_T_train"],
      "| metrics whose rho interval excludes 0 at T_train:", results["at_T_train_significant"],
      "of", len(results["at_T_train_rho"]), "on", results["at_T_train_correlated_models"], "models")

# %% [markdown]
# ## Reading the result (committed quick profile: seeds 0-6 of the settled recipe, 17 models)
#
# Every number this reading relies on is printed above.
# - **Loops trained to hold their answer settle, where the budget leaves room**: every demand-0.5
#   and demand-1 model reaches a raw fixed point (92-100 % of inputs, tau* 20-45 loops); no demand-2
#   model does (at most 43 % of inputs settle, in seeds 3, 4 and 6; the others' states still move
#   2-9 % a loop at loop 32 while consecutive states are nearly parallel: the `cosine` share). 10 of
#   17 in all (`fixed_point_fraction` 0.59: *partly*). No fixed-T model has a fixed point (state
#   norms grow 45x to overflow).
# - **Past the fixed point the tail saturates**, as Proposition 1 says: skip-1, Jacobian alignment,
#   cosine and CKA read 1.000 on all 10 settled models with a fixed point, and Proposition 1's three
#   statements hold on all 10.
# - **The population spans the range the paper describes**: OOD whole-word accuracy at 2 n_train from
#   0.00 to 0.98 among learned models, and seeds of one contract differ widely (demand 1: 0.39-0.98;
#   demand 2: 0.00-0.60).
# - **Past tau* the null cannot fail.** Over the 9 models that learned and reach a fixed point, four of
#   the five tail metrics are constant there (no rank to correlate: rho undefined) and the fifth
#   (asymptotic alignment) has an interval covering 0. A null over constant metrics is not a test: the
#   ledger reads this as the check of Proposition 1 (saturation past tau* is true by construction), not
#   as the paper's claim.
# - **The paper's claim is about the operating point, and its premise fails here.** Proposition 1
#   needs the fixed point by the budget, tau* <= T_train - 1; our settled models reach theirs at 1.6x to
#   7.5x T_train (`tau_star_over_T_train`), so the premise holds on 0 of 16 learned models and the
#   tail claims read *not measured* at T_train. What the tail reads there is printed: skip-1 ranges
#   0.19-1.00, and four of five metrics rank the 16 learned models with OOD accuracy (intervals above 0;
#   rho 0.59-0.74). Much of that is the contract (the demand-2 models read low on both). A loop read
#   before it settles is not the saturated tail the paper speaks of; models trained to settle by their
#   budget are what a confirmatory test of these claims needs.

# %% [markdown]
# ## Confirmatory: the tail population of C41-contests
# The same claims on fresh models (`paper/PREREGISTRATION.md`, entry C41-contests): every learned run of
# the seed contests on reserved seeds. Fixed points as above (raw relative step ≤ 1e-3 on ≥ 50 % of the
# inputs within 8·T_train loops; within 128 loops beside); the tail metrics at T_train over the models
# whose fixed point comes by T_train − 1 (Proposition 1's premise), with at least 10 such models; their
# Spearman ρ with whole-word accuracy at n = 16 after exactly `loops_at(16)` loops, by permutation,
# Holm-corrected over the five metrics.

# %%
from lib.sections.s01_tail_saturation import confirm as population_confirm

confirm = population_confirm.show(PROFILE)
