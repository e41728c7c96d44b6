"""Length extrapolation read as the easy-to-hard benchmark reads it (Paper A §6, Schwarzschild et al.).

A looped model trained at n_train is tested at longer n with more test-time loops. What it can do at
n is the BEST whole-word accuracy over a scan of loops (deep-thinking's accuracy-per-iteration
curves): a model that needs more loops at longer inputs must be given them, and one that overthinks
must not be blamed for its last loop. How many loops to scan follows the one rule that scales loops
with length (`RunConfig.loops_at`), times a margin.

Whether the loop count can be *chosen* without labels is the halting question: the rule
T* = ceil(n / v-hat), with v-hat read in distribution, against the max-confidence baseline that stops
each input at the first loop where every position is confident.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..probes import probe_seed
from ..tasks import test_set
from . import chunks, head


def scan_loops(cfg, n: int, factor: float) -> int:
    """Test-time loops scanned at length n: `factor` times the loops the run gets there
    (`cfg.loops_at(n)`: T_train up to n_train, the contract's demand held beyond), rounded up.
    The margin lets a model that is a little slower at long inputs than its contract still finish;
    the scan reports the best loop, so scanning further never lowers it."""
    return math.ceil(factor * cfg.loops_at(n))


def best_loop(seq_acc) -> tuple[float, int]:
    """(best accuracy over loops, the first loop (1-indexed) that reaches it)."""
    seq_acc = np.asarray(seq_acc)
    return float(seq_acc.max()), int(seq_acc.argmax()) + 1


def accuracy_by_length(run, test_ns, loops_factor: float, count: int, seed: int | None = None) -> dict:
    """n -> head.LoopAccuracy: whole-word (and per-position) accuracy after every loop
    1..scan_loops(n) on the `extrapolation` probe set of length n (the same words for every run).
    `seed`: another test set's seed instead (a board task's fixed slice, e.g. chess)."""
    c = run.config
    return {n: head.accuracy_by_loops(run.model, c.task_obj(), n, scan_loops(c, n, loops_factor), count=count,
                                      seed=probe_seed("extrapolation", n) if seed is None else seed,
                                      streaming=c.streaming)
            for n in test_ns}


@torch.no_grad()
def _all_loop_logits(model, tokens: torch.Tensor, T: int) -> torch.Tensor:
    """model(tokens, T, all_loops=True) (T, B, N, C), the same bits, run as `fixedpoint.best_accuracy`
    runs its scan: inputs in chunks of about chunks.CHUNK_TOKENS positions, one loop at a time, each
    loop decoded as it comes (a working set that fits the cache). Where the run's kernels do not give
    an input's rows the same bits in any batch (`chunks.batch_independent`, checked on the run),
    or the model is not a plain tied one, the plain call."""
    per_chunk = max(1, chunks.CHUNK_TOKENS // tokens.shape[1])
    if not (chunks.fast_path(model) and chunks.batch_independent(model, tokens, per_chunk)):
        return model(tokens, T, all_loops=True)
    e = model.embed_tokens(tokens)
    h, logits = e, []
    for t in range(T):
        h, lg = chunks.chunked(model, h, e, t, per_chunk)
        logits.append(lg)
    return torch.stack(logits)


@torch.no_grad()
def accuracy_and_confidence_by_length(run, test_ns, loops_factor: float, count: int, threshold: float) -> tuple[dict, dict]:
    """(`accuracy_by_length(run, test_ns, loops_factor, count)`, n -> `head.confidence_stopping` over the
    same scan at every n beyond n_train) from one pass per length: both readers run the same words
    (the `extrapolation` probe set) through the same loops, so the loops run once and both read their
    logits (`_all_loop_logits`); the numbers are exactly the two readers'. Pass the second to
    `halting_against_confidence(..., confidence=)`. A streaming run reads them apart (its accuracy is
    read under the streaming schedule, the baseline's confidence without it)."""
    c = run.config
    if c.streaming:
        curves = accuracy_by_length(run, test_ns, loops_factor, count)
        return curves, {n: head.confidence_stopping(run.model, c.task_obj(), n, len(acc.seq_acc), threshold, count,
                                                    probe_seed("extrapolation", n))
                        for n, acc in curves.items() if n > c.n_train}
    curves, confidence = {}, {}
    for n in test_ns:
        T = scan_loops(c, n, loops_factor)
        tokens, labels = test_set(c.task_obj(), n, count, probe_seed("extrapolation", n))
        logits = _all_loop_logits(run.model, tokens, T)
        curves[n] = head.loop_accuracy(n, logits.argmax(-1)[:, :, 1:], labels)
        if n > c.n_train:
            confidence[n] = head.stop_by_confidence(logits, labels, T, threshold)
    return curves, confidence


def beyond_training(model, cfg, n: int, v_hat: float, loops_factor: float, count: int) -> dict:
    """What extra loops do at a length n beyond n_train, and what the halting rule picks there.

    Whole-word accuracy and the late positions' accuracy (i > n_train: the positions the training
    length never asked for) after every loop up to `scan_loops(cfg, n, loops_factor)`, extended to
    T* = ceil(n / v-hat) if that lies further, on the `extrapolation` probe set of length n. Read at
    T_train (the budget the model was trained with), at the contract's loops for n (`cfg.loops_at`),
    at T* (None where v-hat is not a positive speed) and at the best loop; each as (whole, late),
    the best as (accuracy, first loop reaching it)."""
    T_star = head.halting_loops(n, v_hat) if np.isfinite(v_hat) and v_hat > 0 else None
    T_contract = cfg.loops_at(n)
    T_scan = max(scan_loops(cfg, n, loops_factor), T_star or 0, cfg.T_train, T_contract)
    acc = head.accuracy_by_loops(model, cfg.task_obj(), n, T_scan, count=count, seed=probe_seed("extrapolation", n),
                                 streaming=cfg.streaming)
    late = acc.position_acc[:, cfg.n_train:].mean(1)
    at = lambda T: (acc.at(T), float(late[T - 1]))                    # noqa: E731
    return dict(acc=acc, late=late, T_train=cfg.T_train, T_contract=T_contract, T_star=T_star,
                at_T_train=at(cfg.T_train), at_contract=at(T_contract), at_T_star=at(T_star) if T_star else None,
                best_whole=best_loop(acc.seq_acc), best_late=best_loop(late))


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
