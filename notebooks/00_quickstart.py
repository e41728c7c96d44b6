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
# # 00 · Quickstart: a looped transformer's computation frontier
#
# A weight-tied looped transformer applies one block `T` times. After every loop we can decode
# its answer at every position. On S4 prefix products (`p_i = g_1 ∘ … ∘ g_i`) a model trained
# under the contract `n_train = 8, T_train = 8` solves about one position per loop: the bright
# region below grows one column per row — the computation frontier. Give it an input twice as long
# and twice the loops and the frontier keeps moving to the last position; at four times the length it
# stalls halfway, however many loops it gets (see below).
#
# This notebook loads a cached run from the store (no training) and draws its frontier for a
# chosen `T` (loops) and `n` (input length) through one plain render function.

# %% tags=["parameters"]
T = 16          # test-time loops
N = 16          # input length
RUN_T_TRAIN = 8  # which cached budget-law run to show (its T_train; n_train = 8)
SEED = 0
TRAIN_IF_MISSING = True
INTERACTIVE = True  # sliders in JupyterLab; batch runs (papermill, nbval) set LOOPS_HEADLESS and skip them

# %%
import matplotlib.pyplot as plt
from dataclasses import replace

from lib import explore, plots, profiles, store

profiles.check_params("quick", [SEED], "auto", T=T, N=N, RUN_T_TRAIN=RUN_T_TRAIN)
choices = {c.T_train: c for c in profiles.budget_law("quick", [SEED]).runs}
if RUN_T_TRAIN not in choices:
    raise ValueError(f"RUN_T_TRAIN: no quick budget-law run with T_train={RUN_T_TRAIN}; allowed: {sorted(choices)}")
run = store.get_or_train(choices[RUN_T_TRAIN], train_if_missing=TRAIN_IF_MISSING)
c = run.config
print(f"run {run.path.name}: {c.task}, {c.n_layers} layer(s), d={c.d_model}, "
      f"{run.metrics['n_params']} parameters, trained n={c.n_train} T={c.T_train}")

# %%
fig, readout = plots.render_frontier(run, T=T, n=N)
# the committed figure is drawn with the default parameters; any other choice goes to outputs/figures/custom/
plots.save(fig, "00_quickstart_frontier", "quick" if (T, N, RUN_T_TRAIN, SEED) == (16, 16, 8, 0) else "custom")
plt.show()
print(readout)

# %% [markdown]
# Rows are loops, columns positions; colour is the fraction of 256 random words whose decoded
# output at that position is already right. The dashed line marks the training budget `T_train`,
# the fewest loops a training word of length `n_train` got (the recipe draws each batch's loops
# between `T` and `2 T`); no training word was longer than `n_train`. The frontier keeps moving
# about one position per loop past the budget and past the trained length, so whole words of twice
# the training length come right once the frontier reaches the last position (the right panel).
# The run was trained with the settled-loops recipe (`profiles.SETTLED`: loops drawn above the budget,
# loss on every loop from it on), so in distribution the answer holds past the budget (try `N = 8,
# T = 32`); at twice the length, loops well past the frontier slowly erode whole words again (try
# `T = 32`). Notebook 03 measures both.
#
# The frontier does not move without limit. At `N = 32` (four times the training length) it stalls
# by about position 15 in every cached budget-law run (seeds 0-2, demands 0.5-2: the longest prefix with
# ≥ 90 % of words right is 6-20 positions, reached by loop 29 at the latest), and more loops do not
# move it on: at `T = 64` the solved prefix has held or shrunk (to nothing at demand 2), positions
# past it are right for only part of the words, and almost no word of length 32 comes out whole
# (≤ 1 %). Try `N = 32, T = 64`.
#
# ## Move the sliders
# In JupyterLab the cell below shows a chooser of the cached budget-law runs and sliders for `T`
# and `n`; every change redraws the figure through the same render function as above.

# %% tags=["nbval-ignore-output"]
if INTERACTIVE and not explore.headless():
    cached = {cfg.contract: store.get_or_train(cfg, train_if_missing=False)
              for cfg in choices.values() if store.is_done(cfg)}
    display(explore.explorer(cached, T, N, plots.render_frontier, value=c.contract))
