"""The budget law's readings (Paper A §6.1): speeds per contract, the exponent across demands with
an interval from the seeds, and what extra loops do at a longer length (rescue, the halting rule).

- `contract_readings`: tau(n_train, i) and both v-hat at each run's own contract, and whether the
  run learned (solved fraction >= learned_acc).
- `law_fit`: the exponent b of v ∝ demand^b over the learned runs, pooled over seeds; its 95 %
  interval resamples the seeds within each demand (a stratified bootstrap: every demand keeps its
  count of runs), so the interval says how much the seeds disagree. One seed per demand gives no
  interval (None).
- `rescue`: whole-word and late-position (i > n_train) accuracy at a longer length after every loop
  up to loops_factor x the contract's loops there, at T_train, at the contract's loops, at the halting
  rule's T* = ceil(n / v-hat) and at the best loop (`extrapolation.beyond_training`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...instruments import head
from ...instruments.extrapolation import beyond_training
from ...probes import probe_seed


def contract_readings(runs, eval_count: int, learned_acc: float, uncapped_factor: int | None = None) -> list[dict]:
    """Per run: tau at its contract read with T_train loops ("tau": tau(last) cannot exceed T_train there)
    and, with `uncapped_factor`, with that many times T_train ("tau_uncapped": over the inputs solved at
    the last loop read, so a frontier slower than the budget shows). Learned: solved at T_train."""
    out = []
    for r in runs:
        c = r.config
        read = lambda T: head.tau(r.model, c.task_obj(), c.n_train, T, count=eval_count,   # noqa: E731
                                  seed=probe_seed("in_distribution", c.seed))
        t = read(c.T_train)
        out.append(dict(run=r, config=c, tau=t, learned=bool(t.n_solved > 0 and t.solved_fraction >= learned_acc),
                        **({"tau_uncapped": read(uncapped_factor * c.T_train)} if uncapped_factor else {})))
    return out


@dataclass
class LawFit:
    tau: head.ExponentFit | None          # fit of the tau speeds (None with fewer than 2 usable runs)
    frontier: head.ExponentFit | None     # the same on the frontier speeds
    interval: tuple[float, float] | None  # 95 % seed-bootstrap interval of the tau exponent
    usable: np.ndarray                    # per reading: learned and both speeds finite


def law_fit(readings: list[dict], n_resamples: int = 2000, seed: int = 0, key: str = "tau") -> LawFit:
    """key: which reading of `contract_readings` ("tau", or "tau_uncapped")."""
    demands = np.array([x["config"].demand for x in readings])
    v_tau = np.array([x[key].v_tau.v for x in readings])
    v_front = np.array([x[key].v_frontier for x in readings])
    usable = np.array([x["learned"] for x in readings], bool) & np.isfinite(v_tau) & np.isfinite(v_front)
    if usable.sum() < 2:                                   # a flat tau has no finite speed
        return LawFit(None, None, None, usable)
    d, v = demands[usable], v_tau[usable]
    fit = head.budget_exponent(d, v)
    fit_front = head.budget_exponent(d, v_front[usable])
    return LawFit(fit, fit_front, seed_interval(d, v, n_resamples, seed), usable)


def seed_interval(demands, speeds, n_resamples: int = 2000, seed: int = 0) -> tuple[float, float] | None:
    """95 % percentile interval of the exponent, resampling runs with replacement within each demand.
    None unless every demand has at least two runs (a demand read once has no seed spread to resample)
    and there are at least two demands."""
    demands, speeds = np.asarray(demands, float), np.asarray(speeds, float)
    groups = [np.flatnonzero(demands == d) for d in np.unique(demands)]
    if len(groups) < 2 or min(len(g) for g in groups) < 2:
        return None
    rng = np.random.default_rng(seed)
    exps = []
    for _ in range(n_resamples):
        idx = np.concatenate([rng.choice(g, size=len(g), replace=True) for g in groups])
        exps.append(head.budget_exponent(demands[idx], speeds[idx]).exponent)
    lo, hi = np.percentile(exps, [2.5, 97.5])
    return float(lo), float(hi)


def rescue(reading: dict, n_long: int, loops_factor: int, eval_count: int) -> dict:
    """What extra loops do at length n_long for one learned run (`extrapolation.beyond_training`,
    the reading the recipe search logs): accuracy after every loop up to loops_factor x the contract's
    loops at n_long, read at T_train, at the contract's loops, at T* = ceil(n_long / v-hat(tau)) and at
    the best loop, each for whole words and for the late positions (i > n_train)."""
    r, c, t = reading["run"], reading["config"], reading["tau"]
    return beyond_training(r.model, c, n_long, t.v_tau.v, loops_factor, eval_count)


def runs_table(recipes: dict) -> str:
    """One line per run: recipe -> contract_readings(...), in that order."""
    lines = []
    for recipe, xs in recipes.items():
        for x in xs:
            c, m, t = x["config"], x["run"].metrics, x["tau"]
            lines.append(f"{recipe:8s} {c.contract:26s} seed {c.seed}  steps {m['steps']:5d}  curriculum "
                         f"{m['reached_length']}/{c.n_train}  solved {t.solved_fraction:.2f}  v(tau) {t.v_tau.v:5.2f}  "
                         f"v(frontier) {t.v_frontier:5.2f}  law {c.demand:4.2f}")
    return "\n".join(lines)


def rescue_table(rescued: dict, n_long: int) -> str:
    """One line per rescued run: whole-word / late-position accuracy at T_train, at the contract's
    loops for n_long, at T* and at the best loop (with the loop counts)."""
    lines = [f"at n = {n_long}: whole-word / late-position accuracy (positions > n_train); loops in brackets"]
    for c, x in rescued.items():
        pair = lambda p: f"{p[0]:.2f} / {p[1]:.2f}"                   # noqa: E731
        star = pair(x["at_T_star"]) if x["T_star"] else "no speed"
        lines.append(f"{c.contract:26s} s{c.seed}  T_train ({c.T_train}) {pair(x['at_T_train'])}   contract "
                     f"({x['T_contract']}) {pair(x['at_contract'])}   T* ({x['T_star']}) {star}   best "
                     f"{x['best_whole'][0]:.2f} ({x['best_whole'][1]}) / {x['best_late'][0]:.2f} ({x['best_late'][1]})")
    return "\n".join(lines)


def law_results(readings: list[dict], fit: LawFit, rescued: dict, fit_uncapped: LawFit | None = None) -> dict:
    """The ledger's numbers for 03. rescued: config -> rescue(...) for the learned runs; fit_uncapped:
    `law_fit(readings, key="tau_uncapped")` (its numbers under *_uncapped keys)."""
    learned = [x for x in readings if x["learned"]]
    at_T_eq_n = [x["tau"].v_tau.v for x in learned if x["config"].T_train == x["config"].n_train]
    mean = lambda xs: round(float(np.mean(xs)), 3) if xs else None          # noqa: E731
    uncapped = {} if fit_uncapped is None else {
        "budget_exponent_uncapped": None if fit_uncapped.tau is None else round(fit_uncapped.tau.exponent, 3),
        "budget_exponent_uncapped_interval": (None if fit_uncapped.interval is None
                                              else [round(x, 3) for x in fit_uncapped.interval]),
        "budget_exponent_frontier_uncapped": (None if fit_uncapped.frontier is None
                                              else round(fit_uncapped.frontier.exponent, 3)),
        "speed_at_T_eq_n_uncapped": mean([x["tau_uncapped"].v_tau.v for x in learned
                                          if x["config"].T_train == x["config"].n_train]),
        "speed_at_T_eq_n_frontier_uncapped": mean([x["tau_uncapped"].v_frontier for x in learned
                                                   if x["config"].T_train == x["config"].n_train]),
        "speeds_uncapped": {_label(x["config"]): round(x["tau_uncapped"].v_tau.v, 2) for x in readings},
    }
    return {**uncapped,
        "budget_exponent": None if fit.tau is None else round(fit.tau.exponent, 3),
        "budget_exponent_stderr": None if fit.tau is None else round(fit.tau.stderr, 3),
        "budget_exponent_interval": None if fit.interval is None else [round(x, 3) for x in fit.interval],
        "budget_r2": None if fit.tau is None else round(fit.tau.r2, 3),
        "budget_exponent_frontier": None if fit.frontier is None else round(fit.frontier.exponent, 3),
        "speed_at_T_eq_n": mean(at_T_eq_n),
        "speed_at_T_eq_n_frontier": mean([x["tau"].v_frontier for x in learned
                                          if x["config"].T_train == x["config"].n_train]),
        # decoder validity (the worst learned run): position 1 read at the first loop
        "decoder_position1_min": mean([min(x["tau"].position1_first_loop for x in learned)]) if learned else None,
        "rescue_gain": mean([x["best_late"][0] - x["at_T_train"][1] for x in rescued.values()]),
        # the halting rule as the paper states it: late positions at a longer n rescued by T* loops;
        # whole words beside it (0 where the rule has no speed to work from)
        "halting_late_acc": mean([x["at_T_star"][1] if x["T_star"] else 0.0 for x in rescued.values()]),
        "halting_acc": mean([x["at_T_star"][0] if x["T_star"] else 0.0 for x in rescued.values()]),
        "late_at_T_train": mean([x["at_T_train"][1] for x in rescued.values()]),
        "whole_at_T_train": mean([x["at_T_train"][0] for x in rescued.values()]),
        "best_late_acc": mean([x["best_late"][0] for x in rescued.values()]),
        "best_loop_acc": mean([x["best_whole"][0] for x in rescued.values()]),
        "contracts_learned": f"{len(learned)}/{len(readings)}",
        "demands_learned": len({x["config"].demand for x in learned}),
        "speeds": {_label(x["config"]): round(x["tau"].v_tau.v, 2) for x in readings},
    }


def estimator_summary(results: dict) -> str:
    """The exponent and the speed at T = n by both estimators, uncapped (the ledger's) and capped."""
    r = results
    return "\n".join([
        f"exponent, tau read with 4 x T_train loops (the ledger's reading): {r['budget_exponent_uncapped']}, seed "
        f"interval {r['budget_exponent_uncapped_interval']}; frontier {r['budget_exponent_frontier_uncapped']}; "
        f"speed at T = n {r['speed_at_T_eq_n_uncapped']} (frontier {r['speed_at_T_eq_n_frontier_uncapped']})",
        f"exponent, tau read with T_train loops (capped): {r['budget_exponent']}, seed interval "
        f"{r['budget_exponent_interval']}; frontier {r['budget_exponent_frontier']}; speed at T = n "
        f"{r['speed_at_T_eq_n']} (frontier {r['speed_at_T_eq_n_frontier']}); contracts learned: "
        f"{r['contracts_learned']}; decoder validity (worst learned run) {r['decoder_position1_min']}",
        f"speeds, uncapped: {r['speeds_uncapped']}"])


def _label(c) -> str:
    return c.contract if c.seed == 0 else f"{c.contract} seed {c.seed}"
