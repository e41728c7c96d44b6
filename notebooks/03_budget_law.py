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
# contracts of demand 0.5, 1, 2 and 4, read `tau(n, i)` on solved inputs, estimate v-hat two ways
# (1/slope of tau against position; slope of the solved-prefix frontier against loops), fit the
# exponent, then test extra loops and the halting rule at twice the training length.
#
# What we chose where the paper is silent: S4 with a start token; the operator-first length
# curriculum (length 2 = the Cayley table, then +1 per promotion); loss at the final loop only;
# tau = mean over solved inputs; frontier threshold q = 0.9 (see `lib/instruments/head.py`).

# %% tags=["parameters"]
PROFILE = "quick"        # "quick" (2-core CPU, cached runs) or "paper" (the paper's grid, GPU)
SEEDS = [0]
DEVICE = "auto"
TRAIN_IF_MISSING = True  # train runs absent from outputs/runs (False: fail instead)
PROGRESS = False         # progress bars while training (off for nbval / papermill logs)
INTERACTIVE = True       # sliders in JupyterLab (skipped when LOOPS_HEADLESS=1: papermill, nbval)

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from lib import claims, explore, plots, profiles, store
from lib.instruments import head

profiles.check_params(PROFILE, SEEDS, DEVICE)
device = profiles.resolve_device(DEVICE)
plan = profiles.budget_law(PROFILE, SEEDS)
print(f"profile {PROFILE}: {len(plan.runs)} runs, test length {plan.n_long}, device {device}")

# %% [markdown]
# ## Runs
# Cached runs load from `outputs/runs/budget_law/`; a missing one trains here (minutes each on a CPU
# in the quick profile). A run counts as *learned* when its in-distribution sequence accuracy
# (length n_train, T_train loops) reaches `plan.learned_acc`.

# %%
runs = store.get_or_train_many(plan.runs, progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=device)  # seeds train as one population
for r in runs:
    m = r.metrics
    print(f"{profiles.contract_label(r.config):28s} seed {r.config.seed}  steps {m['steps']:5d}  "
          f"curriculum reached {m['reached_length']}/{r.config.n_train}  "
          f"seq acc {m['final_eval']['seq_acc']:.3f}")

# %% [markdown]
# ## Measurement: tau(n, i) and v-hat at the training contract

# %%
measured = {}
for r in runs:
    c = r.config
    t = head.tau(r.model, c.task_obj(), c.n_train, c.T_train, count=plan.eval_count, seed=1000 + c.seed)
    measured[r.config] = t
    print(f"{profiles.contract_label(c):28s} solved {t.solved_fraction:.2f}  v(tau) {t.v_tau.v:5.2f}  "
          f"v(frontier) {t.v_frontier:5.2f}  law {c.demand:4.2f}  tau: {np.round(t.tau_curve, 1).tolist()}")

# %%
learned = {c: t for c, t in measured.items() if t.n_solved > 0 and t.solved_fraction >= plan.learned_acc}
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
plots.tau_curves({profiles.contract_label(c): t for c, t in learned.items()}, ax=axes[0])
plots.frontiers({profiles.contract_label(c): t for c, t in learned.items()}, ax=axes[1])
plots.save(fig, "03_budget_law_tau_frontier")
plt.show()

# %% [markdown]
# ## The exponent of v against demand
# Only learned contracts enter the fit: a contract the model never solved has no frontier to read.
# Printed below, whatever the outcome.

# %%
demands = np.array([c.demand for c in measured])
v_tau = np.array([t.v_tau.v for t in measured.values()])
v_front = np.array([t.v_frontier for t in measured.values()])
is_learned = np.array([c in learned for c in measured])
usable = is_learned & np.isfinite(v_tau) & np.isfinite(v_front)     # a flat tau has no finite speed
fit = head.budget_exponent(demands[usable], v_tau[usable]) if usable.sum() >= 2 else None
fit_front = head.budget_exponent(demands[usable], v_front[usable]) if usable.sum() >= 2 else None
fig, ax = plt.subplots(figsize=(5, 4))
plots.speed_vs_demand(demands, v_tau, fit, ax=ax, learned=is_learned)
plots.save(fig, "03_budget_law_speed_vs_demand")
plt.show()

# %% [markdown]
# ## Rescue and overthinking: accuracy against test-time loops at twice the training length
# At `n = n_long` the trained budget is too small for a frontier of speed v; extra loops should
# let it reach the late positions (those beyond `n_train`). Solid: accuracy of the late positions;
# dashed: whole-word (exact-match) accuracy; dotted: the halting rule's `T* = ceil(n_long / v-hat)`.

# %%
loop_acc, halting = {}, {}
for c, t in learned.items():
    r = next(r for r in runs if r.config == c)
    loop_acc[c] = head.accuracy_by_loops(r.model, c.task_obj(), plan.n_long, plan.loops_factor * c.T_train,
                                         count=plan.eval_count, seed=2000 + c.seed)
    halting[c] = head.halting_loops(plan.n_long, t.v_tau.v)
# late positions = the ones beyond n_train (chance level 1/|G|)
late = {c: a.position_acc[:, c.n_train:].mean(1) for c, a in loop_acc.items()}
fig, ax = plt.subplots(figsize=(6.5, 4))
label = profiles.contract_label
plots.accuracy_vs_loops({label(c): late[c] for c in loop_acc}, ax=ax,
                        dashed={label(c): a.seq_acc for c, a in loop_acc.items()},
                        marks={label(c): halting[c] for c in loop_acc}, ylabel="accuracy",
                        title=f"n = {plan.n_long}: late positions (solid), whole words (dashed), T* (dotted)")
plots.save(fig, "03_budget_law_rescue")
plt.show()

# %%
print(f"at n = {plan.n_long}: sequence accuracy / late-position accuracy (positions > n_train)")
for c, a in loop_acc.items():
    T_star = halting[c]
    star = f"{a.at(T_star):.2f} / {late[c][T_star - 1]:.2f}" if T_star <= len(a.seq_acc) else "beyond the tested loops"
    print(f"{profiles.contract_label(c):28s} T_train: {a.at(c.T_train):.2f} / {late[c][c.T_train - 1]:.2f}   "
          f"best late {late[c].max():.2f} at {int(late[c].argmax()) + 1} loops   "
          f"{len(a.seq_acc)} loops: {a.seq_acc[-1]:.2f} / {late[c][-1]:.2f}   T* = {T_star}: {star}")

# %% [markdown]
# ## Explore: any cached contract, any T and n
# Accuracy per loop and position for one run (the demand-1 contract at twice its length and loops),
# drawn by the same render function the sliders below use (JupyterLab only).

# %%
view = next(r for r in runs if r.config.T_train == r.config.n_train)
fig, readout = plots.render_frontier(view, T=2 * view.config.T_train, n=plan.n_long)
plots.save(fig, "03_budget_law_frontier_view")
plt.show()
print(readout)

# %%
if INTERACTIVE and not explore.headless():
    display(explore.explorer({profiles.contract_label(r.config): r for r in runs}, 2 * runs[0].config.T_train,
                             plan.n_long, plots.render_frontier))

# %% [markdown]
# ## Summary and verdict

# %%
at_T_eq_n = [t.v_tau.v for c, t in learned.items() if c.T_train == c.n_train]
results = {
    "budget_exponent": None if fit is None else round(fit.exponent, 3),
    "budget_exponent_stderr": None if fit is None else round(fit.stderr, 3),
    "budget_r2": None if fit is None else round(fit.r2, 3),
    "budget_exponent_frontier": None if fit_front is None else round(fit_front.exponent, 3),
    "speed_at_T_eq_n": round(float(np.mean(at_T_eq_n)), 3) if at_T_eq_n else None,
    "rescue_gain": round(float(np.mean([late[c].max() - late[c][c.T_train - 1] for c in loop_acc])), 3)
    if loop_acc else None,
    "halting_acc": round(float(np.mean([a.at(halting[c]) if halting[c] <= len(a.seq_acc) else 0.0
                                        for c, a in loop_acc.items()])), 3) if loop_acc else None,
    "contracts_learned": f"{int(is_learned.sum())}/{len(is_learned)}",
    "speeds": {profiles.contract_label(c): round(t.v_tau.v, 2) for c, t in measured.items()},
}
claims.record("03_budget_law", results, PROFILE)

print(f"PROFILE {PROFILE}")
print("contract                      learned  v(tau)  v(frontier)  law n/T")
for c, t in measured.items():
    print(f"{profiles.contract_label(c):28s}  {str(c in learned):7s}  {t.v_tau.v:6.2f}  {t.v_frontier:11.2f}  {c.demand:7.2f}")
print()
for key in ("budget_exponent", "budget_r2", "speed_at_T_eq_n", "rescue_gain", "halting_acc"):
    cl = claims.claim(key)
    print(f"{key:18s} ours {results[key]!s:7s} paper {cl.paper:17s} -> {claims.verdict(cl, results[key])}")
print(f"exponent from the frontier speeds instead: {results['budget_exponent_frontier']}")
print(f"contracts learned: {results['contracts_learned']}")

# %% [markdown]
# ## Reading the result (committed quick-profile run: S4, 2 layers, d = 64, one seed per contract)
#
# - **Demand 1 and 2 sit on the law.** The frontier moves 1.00 and 2.00 positions per loop (1.04
#   and 2.22 from tau, whose fit includes positions 1–2, settled in the first loop), and at `T = n`
#   the speed is the paper's 1.00.
# - **Demand 0.5 is faster than priced.** With 16 loops for 8 positions the model still moves
#   0.70 positions per loop and settles the last position by loop ≈ 12 of 16: SGD did *not* take the
#   slowest frontier the contract allows, the same slack the CPU prototype saw (0.53–0.67). This is
#   what pulls the exponent to ≈ 0.8 instead of 0.98; the paper's value is outside our interval
#   at this scale, so the claim reads *partly*.
# - **Demand 4 is not learned at this scale.** With 2 loops the 2-layer, d = 64 block must compose
#   four group elements per loop; its curriculum stalled at length 6 after 12,000 steps (in the
#   profile search the same block reached length 7 in 8,000 steps). The closest public
#   reproduction also hit a capacity edge at demand 4 (1.77 positions per loop with 0.44M parameters).
# - **Rescue is partial, then overthinking.** At twice the training length extra loops lift the
#   late positions from chance (0.04) to 0.56–0.70, then every model degrades as loops continue.
#   Whole words at 2·n_train are almost never exactly right, so the halting rule's `T*` gives no
#   exact-match accuracy here, although it lands near the late-position peak for demand 0.5.
#
# The paper profile (`PROFILE = "paper"`: n_train = 16, sizes s/m/l, more seeds, 40k steps) is the
# run that can settle these on a GPU.
