"""Length extrapolation read as the easy-to-hard benchmark reads it (Paper A §6, Schwarzschild et al.).

A looped model trained at n_train is tested at longer n with more test-time loops. What it can do at
n is the BEST whole-word accuracy over a scan of loops (deep-thinking's accuracy-per-iteration
curves): a model that needs more loops at longer inputs must be given them, and one that overthinks
must not be blamed for its last loop. How many loops to scan follows the one rule that scales loops
with length (`RunConfig.loops_at`), times a margin.

The one-pass scan also reads the max-confidence baseline (each input stopped at the first loop where
every position is confident), the baseline a halting rule such as T* = ceil(n / v-hat) is held
against.
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


def at_the_schedules_loops(run, test_ns, loops_factor: float, count: int) -> dict:
    """n -> {"acc": whole-word accuracy after exactly `loops_at(n)` loops (the confirmatory reading: no
    loop chosen on the test set), "best": the best over the scan to loops_factor x that, "best_loop": where
    (an upper bound only)}, on the `extrapolation` probe sets, one scan a length."""
    out = {}
    for n, acc in accuracy_by_length(run, test_ns, loops_factor, count).items():
        best, at = best_loop(acc.seq_acc)
        out[n] = {"acc": float(acc.seq_acc[run.config.loops_at(n) - 1]), "best": best, "best_loop": at}
    return out


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
    the halting reader (its `confidence=`). A streaming run reads them apart (its accuracy is
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
