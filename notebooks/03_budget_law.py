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
# # 03 · The budget law (Paper A §6.1)
#
# **Claim.** A weight-tied looped transformer trained under the contract `(n_train, T_train)`
# installs a linear computation frontier whose speed is priced by the contract:
# `v ≈ n_train / T_train` positions per loop. Fitted exponent of v against the demand
# `n_train / T_train`: **0.98 ± 0.04, R² = 0.99**; exactly **1.00** when `T = n`.
# More test-time loops than trained rescue late positions at a fixed length, and the halting
# rule `T* = ceil(n / v-hat)` says how many loops a longer input needs.
#
# **How we test it.** Train S4 prefix products (non-abelian, so no commutative shortcut) under
# contracts of demand 0.5, 1 and 2 (seeds: `profiles.BUDGET_SEEDS`, 0-2 in the quick profile), read
# `tau(n, i)` on solved inputs, estimate
# v-hat two ways (1/slope of tau against position; slope of the solved-prefix frontier against
# loops), fit the exponent with an interval from the seeds, then test extra loops and the halting
# rule at twice the training length.
#
# **The recipe** (`profiles.SETTLED`, from `searches/settle_search.py` under a rule written before any
# candidate trained; no candidate kept the law by that rule (every exponent interval over seeds
# excluded 1), so by its fallback this is the best settler; the comment at `profiles.SETTLED` has the
# figures): the loops at each curriculum length hold the contract's demand, each batch
# draws its loops in `[T, 2T]`, an outer norm bounds the state, and the loss averages every loop
# from `T` on, so the loop must keep its answer past the budget. The contract stays
# `(n_train, T_train)`, the fewest loops a word of length `n_train` gets. The fixed-T recipe (one
# `T`, loss at the last loop) is read beside it as a contrast and does not enter the fit.
#
# What we chose where the paper is silent: S4 with a start token; the operator-first length
# curriculum (length 2 = the Cayley table, then +1 per promotion); tau = mean over solved inputs;
# frontier threshold q = 0.9 (see `lib/instruments/head.py`); demand 4 (T = 2) is left out: the
# quick model size does not learn it (the fixed-T contrast shows it).

# %% tags=["parameters"]
PROFILE = "quick"        # "quick" (2-core CPU, cached runs) or "paper" (the paper's grid, GPU)
SEEDS = None             # None: the profile's seeds (profiles.BUDGET_SEEDS); or a list, e.g. [0, 1, 2]
SIZES = None             # paper profile model sizes (None: s and m); ["s", "m", "l"] adds the large size
                         # (hours more on one H200, see make paper-plan)
DEVICE = "auto"
TRAIN_IF_MISSING = True  # train runs absent from outputs/runs (False: fail instead)
PROGRESS = False         # progress bars while training (off for nbval / papermill logs)
INTERACTIVE = True       # sliders in JupyterLab (skipped under papermill and nbval, which set LOOPS_HEADLESS)

# %%
import matplotlib.pyplot as plt

from lib import claims, explore, plots, profiles, store
from lib.sections.s03_budget_law import figures, read as budget

profiles.check_params(PROFILE, SEEDS, DEVICE)
device = profiles.resolve_device(DEVICE)
plan = profiles.budget_law(PROFILE, SEEDS, SIZES)
print(f"profile {PROFILE}: {len(plan.runs)} runs of the settled recipe, {len(plan.fixed)} fixed-T contrasts, "
      f"test length {plan.n_long}, device {device}")

# %% [markdown]
# ## Runs
# Cached runs load from `outputs/runs/budget_law/`; a missing one trains here (tens of minutes each on
# a CPU in the quick profile). A run counts as *learned* when its in-distribution whole-word accuracy
# (length n_train, T_train loops) reaches `plan.learned_acc`.

# %%
runs = store.get_or_train_many(plan.runs, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)
fixed = store.get_or_train_many(plan.fixed, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)
readings = budget.contract_readings(runs, plan.eval_count, plan.learned_acc, uncapped_factor=4)
contrast = budget.contract_readings(fixed, plan.eval_count, plan.learned_acc)
print(budget.runs_table({"settled": readings, "fixed-T": contrast}))

# %% [markdown]
# ## tau(n, i) and the frontier at each training contract (learned runs of the settled recipe)

# %%
learned = {(x["config"].contract, x["config"].seed): x["tau"] for x in readings if x["learned"]}   # colour: contract, marker: seed
fig, axes = plt.subplots(1, 2, figsize=(14, 4.3), layout="constrained")
plots.tau_curves(learned, ax=axes[0])
figures.frontiers(learned, ax=axes[1])
plots.save(fig, "03_budget_law_tau_frontier", PROFILE)
plt.show()

# %% [markdown]
# ## The exponent of v against demand
# Only learned contracts enter the fit: a contract the model never solved has no frontier to read.
# The interval resamples the seeds within each demand (a stratified bootstrap).

# %%
fit = budget.law_fit(readings)
fit_uncapped = budget.law_fit(readings, key="tau_uncapped")     # tau read with 4 x T_train loops
fig, ax = plt.subplots(figsize=(5, 4))
figures.speed_vs_demand([x["config"].demand for x in readings], [x["tau"].v_tau.v for x in readings], fit.tau, ax=ax,
                      learned=[x["learned"] for x in readings])
plots.save(fig, "03_budget_law_speed_vs_demand", PROFILE)
plt.show()

# %% [markdown]
# ## Rescue and the halting rule at twice the training length
# At `n = n_long` the training budget `T_train` is too small for a frontier of speed v; extra loops
# should let it reach the late positions (those beyond `n_train`), and the halting rule
# `T* = ceil(n_long / v-hat)` should say how many. One panel a contract, one colour a seed. Solid:
# late-position accuracy; dashed: whole words; dotted: T*. The table reads both at `T_train`, at the contract's loops for `n_long`, at `T*` and at
# the best loop.

# %%
rescued = {x["config"]: budget.rescue(x, plan.n_long, plan.loops_factor, plan.eval_count) for x in readings if x["learned"]}
fig = figures.rescue(rescued, plan.n_long)
plots.save(fig, "03_budget_law_rescue", PROFILE)
plt.show()
print(budget.rescue_table(rescued, plan.n_long))

# %% [markdown]
# ## Explore: any cached contract, any T and n
# Accuracy per loop and position for one run (the demand-1 contract at twice its length and loops),
# drawn by the same render function the sliders below use (JupyterLab only).

# %%
view = next(r for r in runs if r.config.T_train == r.config.n_train)
fig, readout = plots.render_frontier(view, T=2 * view.config.T_train, n=plan.n_long)
plots.save(fig, "03_budget_law_frontier_view", PROFILE)
plt.show()
print(readout)

# %% tags=["nbval-ignore-output"]
if INTERACTIVE and not explore.headless():
    display(explore.explorer({f"{r.config.contract} seed {r.config.seed}": r for r in runs},
                             2 * runs[0].config.T_train, plan.n_long, plots.render_frontier))

# %% [markdown]
# ## Summary and verdict

# %%
results = budget.law_results(readings, fit, rescued, fit_uncapped)
claims.print_verdicts("03_budget_law", results, PROFILE)
print(budget.estimator_summary(results))
print(f"at n = {plan.n_long}, mean over learned runs: late positions at T_train {results['late_at_T_train']}, "
      f"at T* {results['halting_late_acc']}, best {results['best_late_acc']}; whole words at T_train "
      f"{results['whole_at_T_train']}, at T* {results['halting_acc']}, best {results['best_loop_acc']}")
fixed_fit = budget.law_fit(contrast).tau
print(f"fixed-T contrast (seeds {sorted({x['config'].seed for x in contrast})}): exponent "
      f"{'-' if fixed_fit is None else round(fixed_fit.exponent, 3)}")

# %% [markdown]
# ## Reading the result (committed quick profile: settled recipe, seeds 0, 1 and 2)
#
# Every number this reading relies on is printed above; the prose names which line to look at.
# - **The speeds follow the demand** (v(tau) in the table of runs: 0.57-0.58, 1.13-1.16, 2.42-2.50):
#   the exponent over demands 0.5-2 is 1.05 with R² 0.998, its seed interval [1.04, 1.07] lies inside
#   the ledger's tolerance band (0.88-1.08) but excludes both the paper's 0.98 and 1: the speed runs a
#   little ahead of the price as the demand rises (`budget_exponent`, judged on the point with the
#   interval printed beside). The frontier speeds give 0.80, the fixed-T contrast 0.81 (its last line).
#   Read with 4 x T_train loops (the ledger's reading: tau is then not capped by the budget) the
#   exponent is the same, 1.05 [1.04, 1.07]: these models' frontiers finish inside their budget.
# - **The ledger reads the exponent and the speed at T = n as *not measured***: the readout must read
#   position 1 right after the first loop on >= 0.9 of the solved inputs before its tau counts, and two
#   of the nine runs read it from loop 2 (demand 0.5 seed 0: 0.71; demand 1 seed 2: 0.86; the worst is
#   printed in the summary). Their loss starts at loop T_train, so nothing asked the readout to read
#   loop 1; a decoder per loop (04's block probes) is the instrument that can tell.
# - **One run did not learn**: seed 2 at demand 0.5 ran away after reaching length 8 and recovered
#   only in part by the step cap (solved 0.82); the fit and its interval use the 8 learned runs.
# - **At T = n** the tau speed is a little above 1 (1.13-1.16) while the frontier speed is 1 in two
#   of three seeds (the uncapped frontier: 0.94 on average).
# - **Rescue and the halting rule**: at twice the training length the late positions are mostly
#   wrong after `T_train` loops (0.13-0.25; chance is 1/24) and mostly right after the contract's
#   loops for that length (0.47-0.98); `T*` from the in-distribution speed lands a loop or two short
#   of the best loop, which costs whole words more than late positions (the rescue table: late
#   positions 0.82 at T*, whole words 0.43). Demand 2, whose state does not settle (01),
#   extrapolates worst, and its seeds differ most (best whole-word 0.00-0.61).
# - **Demand 4 is not trained** under this recipe: the fixed-T contrast shows the quick model does
#   not learn it (its curriculum stops at 6 of 8).

# %% [markdown]
# ## Confirmatory: C03-budget on reserved seeds
# The pre-registered test (`paper/PREREGISTRATION.md`, entry C03-budget, committed before any of its runs
# trained): the settled recipe at five demands (T = 16, 12, 8, 6, 4 at n_train = 8) on seeds 120–122 in
# one execution mode (CPU, eager, fp32, one thread). Read only once every run is stored; until then this
# cell says how many are in and records no verdict. Per run (`sections.s03_budget_law.confirm`): *learned* at
# T_train; the readout's validity (position 1 right after loop 1 on ≥ 0.9 of solved inputs; an invalid
# run leaves the fit, printed); v(tau) from tau(8, i) read with 4 · T_train loops (primary), the frontier
# and the linear block probe beside it; at n = 16 the late positions (i > 8) after T_train, after
# T* = ⌈16 / v̂⌉ and after 2 · loops_at(16) loops; tau(last) against n = 2..8 and damage cones.
# The exponent b in v ∝ demand^b is least squares of log v on log demand; its interval resamples seeds
# within each demand (2,000 resamples). Reproduced when that interval meets the paper's 0.98 ± 0.04 and is
# no wider than 0.16. Each run's reading is kept beside the run (`readings/c03-budget.json`, keyed by its
# weights' sha256 and the reader's version) and recomputed only when either changes.
#
# The figure below the verdicts: each run's speed against its demand, both estimators on the same runs:
# v(tau) = 1 / slope of tau(8, i) against i (filled), and the frontier's (open). A line is
# log v = a + b log(demand) fitted by least squares on the runs the entry fits (learned, readout valid,
# ≥ 2 such seeds at the demand); the law is v = n_train / T_train, that is a = 0 and b = 1 (dashed). A
# run left out of the fit is drawn at its v(tau) in grey.

# %%
from lib.sections.s03_budget_law import confirm as budget_confirm

confirm = budget_confirm.show(PROFILE)
