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
# # 08 · The easy-to-hard replication: prefix sums (Paper A §6, Schwarzschild et al. 2021)
#
# **Claim.** On the public easy-to-hard prefix-sums benchmark, a looped model trained on short
# inputs solves **4× longer inputs exactly** (whole-word accuracy) when given more loops; its
# frontier is read by tau and v-hat as on the group tasks; the halting rule `T* = ceil(n / v-hat)`
# stops it in time.
#
# **Data** (`lib/easy_to_hard.py`, task `"prefix_sums"`): regenerated locally by the benchmark's
# public recipe — 10,000 words per length; below 24 bits distinct integers written LSB-first,
# otherwise fair bits; target = cumulative sum mod 2 — with a seed (the official generator has
# none). Training batches come from the fixed training set of each length; test words from a
# second set. The official `.pth` files load with `easy_to_hard.load_prefix_sums_pth` when a user
# has them; nothing is downloaded.
#
# **Scale.** The paper profile trains at 32 bits and tests at 64, 128 and 512 as the benchmark
# does; the quick profile trains at 16 bits and tests at 32, 64 (4×) and 128 (8×) on a CPU.
#
# **Recipe.** The quick recipe is the pick of a logged search (`bench/prefix_sums_search.py`, its rule
# fixed in its docstring before any candidate trained; `profiles.PREFIX_SUMS_PICK`): five candidates
# borrowed from the public recipes (deep-thinking's progressive loss; Paper B's code: local attention of
# window 5, linear recall inside each sublayer, peri-norm, RMSNorm, step decay) and from this project's
# settled loops, each at two seeds; the pick is the recipe whose two seeds both learn n_train and whose
# worse seed extrapolates best at 4×. The runs below are the search's own runs of the pick, so they
# are exploratory evidence: the search picked them partly on the 4× reading the claim is judged on. The
# search ran twice: its first log was lost with an unlanded branch, and that first run picked another
# recipe, which read 0.01 at 4×; this log is the second. A confirmatory test (pre-registered, on fresh
# seeds, judged at a fixed loop budget rather than the best loop) closes this notebook.
#
# **Halting against a baseline.** The halting rule uses v-hat measured in distribution; the
# baseline stops each input at the first loop where every position's top probability is ≥ 0.9
# (max-confidence stopping, `head.confidence_stopping`).

# %% tags=["parameters"]
PROFILE = "quick"
SEEDS = None          # None: the profile's seeds (profiles.E2H_SEEDS: quick 0-1)
DEVICE = "auto"
TRAIN_IF_MISSING = True
PROGRESS = False
CHESS_DATA = None     # a folder holding the official chess_data/ files: then chess is trained and tested too

# %%
import matplotlib.pyplot as plt
import numpy as np

from lib import claims, plots, profiles, store
from lib.instruments import extrapolation
from lib.sections.s08_easy_to_hard import confirm as e2h_confirm, figures, read

profiles.check_params(PROFILE, SEEDS, DEVICE)
plan = profiles.easy_to_hard(PROFILE, SEEDS)
opts = dict(progress=PROGRESS, train_if_missing=TRAIN_IF_MISSING, device=profiles.resolve_device(DEVICE))
runs = store.get_or_train_many(plan.runs, **opts)
print(profiles.prefix_sums_recipe(PROFILE))
for run in runs:
    c = run.config
    print(f"seed {c.seed}: {c.task}, trained n={c.n_train} T={c.T_train}, {c.n_layers} layer d={c.d_model}, "
          f"{run.metrics['steps']} steps, in-distribution whole-word accuracy {run.metrics['final_eval']['seq_acc']:.3f}")

# %% [markdown]
# ## Accuracy per iteration at every test length
# Whole-word accuracy after each loop at each test length n, on the same words for every run
# (`extrapolation.accuracy_by_length`), scanning `1.5 ×` the loops the run gets at n
# (`extrapolation.scan_loops`: `RunConfig.loops_at(n)`, the one rule that scales loops with length,
# here `max(n, T_train)`) — deep-thinking's accuracy-per-iteration curves; the dotted line marks the
# training budget. What the model can do at n is its best loop. The same pass also reads the
# max-confidence baseline of the next section (`extrapolation.accuracy_and_confidence_by_length`: both
# readers' numbers exactly, the loops run once).

# %%
scans = {run.config.seed: extrapolation.accuracy_and_confidence_by_length(run, plan.test_ns, plan.loops_factor,
                                                                          plan.eval_count, plan.conf_threshold)
         for run in runs}
curves = {seed: by_n for seed, (by_n, _) in scans.items()}
fig = figures.accuracy_per_iteration(curves, {run.config.seed: run.config.T_train for run in runs})
plots.save(fig, "08_easy_to_hard_accuracy_per_iteration", PROFILE)
plt.show()
print(read.describe_best_loops(curves))

# %% [markdown]
# ## tau, v-hat and the halting rule against max-confidence stopping
# v-hat is read in distribution (`read.speed_in_distribution`; undefined with fewer than 16
# solved words); at each longer n the rule gives `T* = ceil(n / v-hat)` loops, and the baseline stops
# each word at the first loop whose least confident position reaches the threshold
# (`read.halting_against_confidence`).

# %%
halting = {}
for run in runs:
    seed = run.config.seed
    r, v = read.speed_in_distribution(run, plan.eval_count)
    print(f"seed {seed}: solved {r.solved_fraction:.2f}; v(tau) {v:.2f}, v(frontier) {r.v_frontier:.2f} "
          f"positions/loop; tau {np.round(r.tau_curve, 1).tolist()}")
    halting[seed] = read.halting_against_confidence(run, curves[seed], v, plan.conf_threshold, plan.eval_count,
                                                             confidence=scans[seed][1])
    for n, h in halting[seed].items():
        print(f"   n={n:4d}: halting rule T*={h['T_star']} -> {h['acc_star']:.3f}; max-confidence stops at loop "
              f"{h['conf_stop']:.1f} on average -> {h['conf_acc']:.3f}")

# %% [markdown]
# ## Chess (only where the user supplies the public puzzle files)
#
# The easy-to-hard chess puzzles cannot be regenerated locally (they are Lichess puzzles) and are
# never downloaded here. With `CHESS_DATA` set to a folder holding the official `chess_data/`
# files, this cell trains a single-layer bidirectional looped model on the easy range (64 square
# tokens, the mover at the bottom; target: the solution move's two squares) and reports exact-match
# accuracy on the harder test range against test-time loops (up to twice the training loops).
# Without it, the cell says so.

# %%
chess_best = None
if CHESS_DATA is None:
    print("chess: not run — the official easy-to-hard chess files are not supplied (nothing is downloaded); "
          "run with CHESS_DATA=<folder holding chess_data/> to train and test it")
else:
    import os
    from lib import easy_to_hard
    os.environ[easy_to_hard.CHESS_DATA_ENV] = str(CHESS_DATA)
    chess_best = []
    for run in store.get_or_train_many(plan.chess, **opts):
        c = run.config
        # seed 0 of a chess set is not a seed: the first eval_count puzzles of the harder test range
        acc = extrapolation.accuracy_by_length(run, [c.n_train], 2, c.eval_count, seed=0)[c.n_train]
        best, loop = extrapolation.best_loop(acc.seq_acc)
        chess_best.append(best)
        print(f"chess seed {c.seed}: exact match on the hard range {acc.at(c.T_train):.3f} after T={c.T_train}, "
              f"best {best:.3f} at loop {loop}")

# %% [markdown]
# ## Summary and verdict
#
# The 4× claim reads the worst seed's best loop at `4 n_train` (`read.easy_to_hard_results`);
# it needs a model that learned `n_train` in distribution, which the ledger reads from the same
# results.

# %%
results = read.easy_to_hard_results(curves, halting, plan.test_ns, plan.runs[0].n_train, chess_best)
claims.print_verdicts("08_easy_to_hard", results, PROFILE)
print(f"best whole-word accuracy by length {results['best_acc_by_length']} (4x: n={results['e2h_4x_length']})")
print(f"halting rule accuracy {results['halting_acc']} vs max-confidence {results['confidence_acc']}")

# %% [markdown]
# ## Confirmatory: C43-easy-to-hard on reserved seeds
# The pre-registered test (`paper/PREREGISTRATION.md`, entry C43-easy-to-hard, committed before P43-pilots
# trained): 08's recipe at the learning rate and budget P43-pilots picks on its own seeds (60–63), trained
# on seeds 170–173. The claim is read at 4·n_train = 64 after exactly `loops_at(64)` loops: no loop is
# chosen on the test set (the best loop of a scan is printed beside as an upper bound). Every seed must
# reach 0.9: the value is the minimum over the four.

# %%
confirm = e2h_confirm.show(PROFILE)
