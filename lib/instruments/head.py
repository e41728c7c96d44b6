"""The head instrument: convergence time tau(n, i), frontier speed v-hat, scaling class, halting.

Definitions (Paper A §5):
- decoded output of position i after loop t: argmax of the readout applied to h^t.
- tau(b, i) on input b: the first loop t (1-indexed) from which the decoded output at position i
  equals its value at the last loop T at every loop t' >= t.
- tau(n, i): mean of tau(b, i) over the SOLVED inputs of length n (every position correct after
  T loops). The mean, not the median, so a curve over few positions is not quantised to integers.
- v-hat, two ways:
  (a) from tau: 1 / slope of tau(n, i) against position i (least squares over all positions);
  (b) from the frontier: at each loop t the solved-prefix frontier F(t) is the longest prefix of
      positions whose accuracy over the solved inputs is >= q (q = 0.9), made monotone by a running
      max; v-hat = slope of F against t over the loops where 0 < F < n, plus the first loop with F = n.
- scaling class of tau against n: flat / log / linear, by least squares (see `scaling_class`).
- halting rule: T* = ceil(n / v-hat).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats

from ..probes import probe_seed
from ..tasks import Task, test_set

LEARNED = 0.9       # whole-word accuracy in distribution for a model to count as learned (as the plans use)
MIN_SOLVED = 16     # tau and v-hat over fewer solved inputs are noise: callers leave them undefined
DECODER_VALID = 0.9  # a decoder sees the model when it reads position 1 after the first loop on this share


def decoder_valid(first_loop_position1) -> bool:
    """A tau or frontier reading counts only if its decoder can see the model: on >= DECODER_VALID of
    the solved inputs it reads position 1 (a function of the first token alone) right at the first loop
    or block. None (not measured) fails."""
    return first_loop_position1 is not None and not math.isnan(first_loop_position1) and first_loop_position1 >= DECODER_VALID


@torch.no_grad()
def loop_predictions(model, tokens: torch.Tensor, T: int, streaming: bool = False) -> torch.Tensor:
    """(T, B, n) decoded outputs after every loop, BOS position dropped."""
    return model(tokens, T, all_loops=True, streaming=streaming).argmax(-1)[:, :, 1:]


def convergence_times(preds: torch.Tensor | np.ndarray) -> np.ndarray:
    """preds (T, B, n) -> tau (B, n): first loop (1-indexed) from which preds equal their final value."""
    p = np.asarray(preds)
    return settled_from(p == p[-1])


def settled_from(ok: np.ndarray) -> np.ndarray:
    """ok (T, ...) bool over loops -> first loop (1-indexed) from which ok holds at every later loop;
    T + 1 where it does not hold at the last loop."""
    stays = np.flip(np.cumprod(np.flip(ok, 0), axis=0), 0)     # stays[t] = ok at every t' >= t
    return ok.shape[0] - stays.sum(0) + 1


def frontier(position_acc: np.ndarray, q: float = 0.9) -> np.ndarray:
    """position_acc (T, n) accuracy per loop and position -> F (T,): monotone solved-prefix length."""
    ok = np.asarray(position_acc) >= q
    prefix = np.where(ok.all(1), ok.shape[1], np.argmin(ok, axis=1))   # first failing position
    return np.maximum.accumulate(prefix)


def speed_from_frontier(F: np.ndarray, n: int) -> float:
    """Slope of the frontier against loops where it is moving (see module docstring); nan if < 2 points."""
    F = np.asarray(F, dtype=float)
    t = np.arange(1, len(F) + 1)
    moving = (F > 0) & (F < n)
    full = np.nonzero(F >= n)[0]
    if len(full):
        moving[full[0]] = True
    if moving.sum() < 2:
        return float("nan")
    return float(stats.linregress(t[moving], F[moving]).slope)


@dataclass
class SpeedFit:
    v: float          # positions per loop = 1 / slope
    slope: float      # loops per position
    intercept: float
    r2: float


def speed_from_tau(tau_curve: np.ndarray, positions: np.ndarray | None = None) -> SpeedFit:
    tau_curve = np.asarray(tau_curve, dtype=float)
    positions = np.arange(1, len(tau_curve) + 1) if positions is None else np.asarray(positions, float)
    if np.ptp(tau_curve) == 0:
        return SpeedFit(float("inf"), 0.0, float(tau_curve[0]), float("nan"))
    fit = stats.linregress(positions, tau_curve)
    v = 1.0 / fit.slope if fit.slope > 0 else float("inf")
    return SpeedFit(float(v), float(fit.slope), float(fit.intercept), float(fit.rvalue ** 2))


@dataclass
class TauResult:
    n: int
    T: int
    tau_curve: np.ndarray        # (n,) mean tau over solved inputs, per position
    tau_median: np.ndarray       # (n,)
    position_acc: np.ndarray     # (T, n) accuracy per loop over solved inputs (the frontier's input)
    position_acc_all: np.ndarray  # (T, n) accuracy per loop over every input
    n_solved: int
    n_inputs: int
    frontier: np.ndarray         # (T,)
    v_tau: SpeedFit
    v_frontier: float
    # the decoder's validity: the share of solved inputs whose position 1 (a function of the first token
    # alone) it reads right after the first loop or block; below DECODER_VALID it cannot see the model
    position1_first_loop: float = float("nan")

    @property
    def solved_fraction(self) -> float:
        return self.n_solved / self.n_inputs


def measure(preds: np.ndarray, labels: np.ndarray, q: float = 0.9) -> TauResult:
    """All head measurements from a prediction history preds (T, B, n) and labels (B, n)."""
    preds, labels = np.asarray(preds), np.asarray(labels)
    T, B, n = preds.shape
    correct = preds == labels[None]
    solved = correct[-1].all(1)
    tau_all = convergence_times(preds)
    if solved.sum() == 0:
        nan = np.full(n, np.nan)
        return TauResult(n, T, nan, nan, np.zeros((T, n)), correct.mean(1), 0, B, np.zeros(T, int),
                         SpeedFit(float("nan"), float("nan"), float("nan"), float("nan")), float("nan"))
    acc_solved = correct[:, solved].mean(1)
    F = frontier(acc_solved, q)
    return TauResult(n, T, tau_all[solved].mean(0), np.median(tau_all[solved], 0), acc_solved,
                     correct.mean(1), int(solved.sum()), B, F, speed_from_tau(tau_all[solved].mean(0)),
                     speed_from_frontier(F, n), float(acc_solved[0, 0]))


def tau(model, task: Task, n: int, T: int, count: int = 512, seed: int = 0, q: float = 0.9,
        streaming: bool = False) -> TauResult:
    """tau(n, i) and both speed estimates for `model` on `count` seeded test words of length n."""
    tokens, labels = test_set(task, n, count, seed)
    return measure(loop_predictions(model, tokens, T, streaming).numpy(), labels[:, 1:].numpy(), q)


def halting_loops(n: int, v_hat: float) -> int:
    """The halting rule T* = ceil(n / v-hat)."""
    if not v_hat > 0:
        raise ValueError(f"v_hat: must be a positive speed, got {v_hat!r}")
    return max(1, math.ceil(n / v_hat - 1e-9))


@dataclass
class ScalingFit:
    cls: str                 # "flat", "log" or "linear"
    r2: dict                 # R^2 of the log and linear fits
    slope: dict              # their slopes
    p_value: dict            # their slope p-values
    note: str


def scaling_class(ns, taus, alpha: float = 0.05, flat_tol: float = 0.05) -> ScalingFit:
    """Which of flat / log n / n best describes tau against n.

    flat if tau barely moves (range <= flat_tol * mean) or neither slope is significant at `alpha`;
    otherwise the better R^2 of tau ~ a + b log n and tau ~ a + b n.
    """
    ns, taus = np.asarray(ns, float), np.asarray(taus, float)
    if len(ns) < 3:
        raise ValueError(f"ns: need at least 3 lengths to fit a scaling class, got {len(ns)}")
    if np.ptp(taus) <= flat_tol * max(abs(taus.mean()), 1e-12):
        return ScalingFit("flat", {"log": float("nan"), "linear": float("nan")}, {"log": 0.0, "linear": 0.0},
                          {"log": 1.0, "linear": 1.0}, "tau constant within tolerance")
    fits = {"log": stats.linregress(np.log(ns), taus), "linear": stats.linregress(ns, taus)}
    r2 = {k: float(f.rvalue ** 2) for k, f in fits.items()}
    slope = {k: float(f.slope) for k, f in fits.items()}
    p = {k: float(f.pvalue) for k, f in fits.items()}
    if min(p.values()) > alpha:
        return ScalingFit("flat", r2, slope, p, f"no slope significant at alpha={alpha}")
    best = max(r2, key=r2.get)
    return ScalingFit(best, r2, slope, p, f"R2 log={r2['log']:.3f}, linear={r2['linear']:.3f}")


@dataclass
class TauAgainstN:
    ns: list[int]                # the lengths kept (enough solved inputs)
    last: list[float]            # mean tau at the last position, per kept length
    fit: ScalingFit | None       # scaling class; None with fewer than 3 lengths or a non-finite tau


def tau_against_n(model, cfg, ns, count: int = 512, min_solved: int = MIN_SOLVED,
                  loops_factor: int = 1) -> TauAgainstN:
    """tau at the last position against the input length n, each length run with `loops_factor` times
    the loops the run gets there (`cfg.loops_at(n)`; 1: the schedule's own count, which caps tau(last)
    at it, so a run that settles at its last loop reads linear by construction; more lets tau exceed
    the schedule) on the named probe set `tau_vs_n`. Lengths with fewer than `min_solved` solved inputs
    are left out (0 keeps every length; an unsolved one then leaves the class undefined)."""
    if not isinstance(loops_factor, int) or isinstance(loops_factor, bool) or loops_factor < 1:
        raise ValueError(f"loops_factor: an integer >= 1, got {loops_factor!r}")
    kept, last = [], []
    for n in ns:
        r = tau(model, cfg.task_obj(), n, loops_factor * cfg.loops_at(n), count=count,
                seed=probe_seed("tau_vs_n", n), streaming=cfg.streaming)
        if r.n_solved >= min_solved:
            kept.append(n)
            last.append(float(r.tau_curve[-1]))
    ok = len(kept) >= 3 and bool(np.all(np.isfinite(last)))
    return TauAgainstN(kept, last, scaling_class(kept, last) if ok else None)


@dataclass
class ExponentFit:
    exponent: float
    stderr: float
    intercept: float
    r2: float


def budget_exponent(demands, speeds) -> ExponentFit:
    """Fit log v = a + b log(n_train / T_train); the budget law says b = 1."""
    d, v = np.asarray(demands, float), np.asarray(speeds, float)
    keep = np.isfinite(v) & (v > 0)
    if keep.sum() < 2:
        raise ValueError("speeds: need at least 2 finite positive speeds to fit an exponent")
    fit = stats.linregress(np.log(d[keep]), np.log(v[keep]))
    return ExponentFit(float(fit.slope), float(fit.stderr), float(fit.intercept), float(fit.rvalue ** 2))


@dataclass
class LoopAccuracy:
    n: int
    seq_acc: np.ndarray        # (T_max,) whole-word accuracy after each loop 1..T_max
    position_acc: np.ndarray   # (T_max, n) accuracy per loop and position

    def at(self, T: int) -> float:
        return float(self.seq_acc[T - 1])


@torch.no_grad()
def accuracy_by_loops(model, task: Task, n: int, T_max: int, count: int = 512, seed: int = 0,
                      streaming: bool = False) -> LoopAccuracy:
    """Accuracy after every test-time loop 1..T_max (one forward pass): rescue and overthinking."""
    tokens, labels = test_set(task, n, count, seed)
    return loop_accuracy(n, loop_predictions(model, tokens, T_max, streaming), labels)


def loop_accuracy(n: int, preds: torch.Tensor, labels: torch.Tensor) -> LoopAccuracy:
    """preds (T, B, n) decoded outputs after every loop (BOS dropped), labels (B, n + 1) -> LoopAccuracy."""
    correct = preds.numpy() == labels[:, 1:].numpy()[None]
    return LoopAccuracy(n, correct.all(2).mean(1), correct.mean(1))


@torch.no_grad()
def board_accuracy_by_loops(model, tokens: torch.Tensor, labels: torch.Tensor, T_max: int,
                            blank: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """For board tasks on a given set (sudoku): after every loop 1..T_max, the accuracy on the cells
    whose input token is `blank` (the cells to be solved; givens are trivially copied) and whole-board
    exact match. Returns (blank_cell_acc (T_max,), board_acc (T_max,))."""
    correct = loop_predictions(model, tokens, T_max) == labels[None, :, 1:]        # (T, B, n)
    to_solve = (tokens[:, 1:] == blank)[None]
    cell = (correct & to_solve).sum((1, 2)).double() / to_solve.sum()
    return cell.numpy(), correct.all(-1).double().mean(-1).numpy()


@torch.no_grad()
def confidence_stopping(model, task: Task, n: int, T_max: int, threshold: float = 0.9, count: int = 512,
                        seed: int = 0) -> tuple[float, float]:
    """The max-confidence stopping baseline the halting rule is compared with: per input, stop at the
    first loop whose confidence (the smallest, over positions, of the top softmax probability)
    reaches `threshold`, else at T_max. Returns (whole-word accuracy of the stopped outputs, mean stop loop)."""
    tokens, labels = test_set(task, n, count, seed)
    return stop_by_confidence(model(tokens, T_max, all_loops=True), labels, T_max, threshold)


def stop_by_confidence(logits: torch.Tensor, labels: torch.Tensor, T_max: int, threshold: float) -> tuple[float, float]:
    """`confidence_stopping` on the logits (T_max, B, N, C) of every loop already run."""
    probs = logits.softmax(-1)[:, :, 1:]                                      # (T, B, n, C)
    conf = probs.max(-1).values.min(-1).values                                # (T, B)
    confident = conf >= threshold
    stop = torch.where(confident.any(0), confident.float().argmax(0), torch.full_like(conf[0], T_max - 1).long())
    pred = probs.argmax(-1)[stop, torch.arange(len(labels))]                  # (B, n)
    acc = (pred == labels[:, 1:]).all(1).float().mean().item()
    return acc, float(stop.float().mean() + 1)
