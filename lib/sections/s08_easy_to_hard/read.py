"""08's readers: easy-to-hard prefix sums read as the benchmark reads them (the best loop of a scan,
`instruments.extrapolation`), and whether the loop count can be *chosen* without labels: the halting
rule T* = ceil(n / v-hat), with v-hat read in distribution, against the max-confidence baseline that
stops each input at the first loop where every position is confident; the ledger's numbers.
"""
from __future__ import annotations

import numpy as np

from ...instruments import head
from ...instruments.extrapolation import best_loop
from ...probes import probe_seed


def describe_best_loops(curves: dict) -> str:
    """A line per seed and length of `curves` (seed -> {n: LoopAccuracy}): the best whole-word accuracy
    over the scanned loops, the first loop reaching it, and the accuracy at the last loop."""
    lines = []
    for seed, by_n in curves.items():
        for n, acc in by_n.items():
            best, loop = best_loop(acc.seq_acc)
            lines.append(f"seed {seed} n={n:4d}: best whole-word accuracy {best:.3f} at loop {loop}, "
                         f"at the last loop {acc.seq_acc[-1]:.3f}")
    return "\n".join(lines)


def speed_in_distribution(run, count: int) -> tuple[head.TauResult, float]:
    """tau at the contract (n_train, T_train) on the `in_distribution` probe set, and v-hat(tau)
    (nan with fewer than head.MIN_SOLVED solved inputs: a speed over a handful of words is noise)."""
    c = run.config
    r = head.tau(run.model, c.task_obj(), c.n_train, c.T_train, count=count, seed=probe_seed("in_distribution", c.seed),
                 streaming=c.streaming)
    return r, (r.v_tau.v if r.n_solved >= head.MIN_SOLVED else float("nan"))


def halting_against_confidence(run, curves: dict, v_hat: float, threshold: float, count: int,
                               confidence: dict | None = None) -> dict:
    """n -> dict(T_star, acc_star, conf_acc, conf_stop) at every length of `curves` beyond n_train.

    T_star = ceil(n / v-hat) (None where v-hat is undefined or not positive: the rule has nothing to
    say), acc_star the whole-word accuracy after T_star loops (capped at the scanned loops; nan
    without T_star). The baseline stops each input at the first loop whose least confident position
    reaches `threshold` (within the same scanned loops): conf_acc its whole-word accuracy, conf_stop
    its mean stopping loop. Both read the `extrapolation` probe set, as the curves. confidence: n ->
    (conf_acc, conf_stop) already read over the same scan (`accuracy_and_confidence_by_length`)."""
    c = run.config
    out = {}
    for n, acc in curves.items():
        if n <= c.n_train:
            continue
        T_star = head.halting_loops(n, v_hat) if np.isfinite(v_hat) and v_hat > 0 else None
        acc_star = acc.at(min(T_star, len(acc.seq_acc))) if T_star else float("nan")
        conf_acc, conf_stop = (confidence[n] if confidence is not None else
                               head.confidence_stopping(run.model, c.task_obj(), n, len(acc.seq_acc), threshold,
                                                        count=count, seed=probe_seed("extrapolation", n)))
        out[n] = dict(T_star=T_star, acc_star=acc_star, conf_acc=conf_acc, conf_stop=conf_stop)
    return out


def four_x_length(test_ns, n_train: int) -> int:
    """The length the 4x claim is read at: 4 n_train when it is a test length, else the longest test
    length (the smoke profile tests only to 2x)."""
    return 4 * n_train if 4 * n_train in test_ns else test_ns[-1]


def nanmean_or_nan(values, digits: int = 3) -> float:
    """Mean over the finite values (the seeds where the halting rule applied), rounded; nan where none."""
    values = [v for v in values if np.isfinite(v)]
    return round(float(np.mean(values)), digits) if values else float("nan")


def easy_to_hard_results(curves: dict, halting: dict, test_ns, n_train: int, chess_best=None) -> dict:
    """The ledger's numbers from the readings of every seed: curves (seed -> accuracy_by_length) and
    halting (seed -> halting_against_confidence). The 4x claim is the WORST seed's best loop (the claim
    is that training on short inputs solves 4x longer ones, so every seed must); the other lengths are
    means over seeds. chess_best: best exact match per chess seed, or None where chess did not run."""
    n4 = four_x_length(test_ns, n_train)
    best = lambda seed, n: curves[seed][n].seq_acc.max()
    longer = [n for n in test_ns if n > n_train]
    return {
        "e2h_4x_best_acc": round(float(min(best(s, n4) for s in curves)), 3),
        "e2h_4x_length": n4,
        "best_acc_by_length": {str(n): round(float(np.mean([best(s, n) for s in curves])), 3) for n in test_ns},
        "halting_acc": {str(n): nanmean_or_nan([halting[s][n]["acc_star"] for s in curves]) for n in longer},
        "confidence_acc": {str(n): round(float(np.mean([halting[s][n]["conf_acc"] for s in curves])), 3)
                           for n in longer},
        "chess_best_acc": None if chess_best is None else round(float(np.mean(chess_best)), 3),
    }
