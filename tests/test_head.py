"""The head instrument on constructed prediction histories with known answers."""
import math

import numpy as np
import torch
import pytest

from lib.instruments import head


def staircase(n, T, loops_per_position, B=4, n_classes=5, seed=0):
    """Position i (1-indexed) shows a wrong value until loop ceil(i * loops_per_position), then the label."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, (B, n))
    preds = np.empty((T, B, n), dtype=int)
    for t in range(1, T + 1):
        for i in range(1, n + 1):
            settled = t >= math.ceil(i * loops_per_position)
            preds[t - 1, :, i - 1] = labels[:, i - 1] if settled else (labels[:, i - 1] + 1 + t % (n_classes - 1)) % n_classes
    return preds, labels


def test_convergence_times_definition():
    p = np.array([[[0]], [[1]], [[0]], [[2]], [[2]]])  # (T=5, B=1, n=1): settles at loop 4
    assert head.convergence_times(p).tolist() == [[4]]
    assert head.convergence_times(np.zeros((3, 1, 1))).tolist() == [[1]]


def test_staircase_slope_one():
    preds, labels = staircase(n=8, T=10, loops_per_position=1)
    r = head.measure(preds, labels)
    assert r.n_solved == 4
    assert r.tau_curve.tolist() == list(range(1, 9))
    assert r.v_tau.v == pytest.approx(1.0) and r.v_tau.r2 == pytest.approx(1.0)
    assert r.frontier.tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 8, 8]
    assert r.v_frontier == pytest.approx(1.0)


def test_staircase_slope_half():   # two loops per position -> half a position per loop
    preds, labels = staircase(n=8, T=18, loops_per_position=2)
    r = head.measure(preds, labels)
    assert r.tau_curve.tolist() == [2, 4, 6, 8, 10, 12, 14, 16]
    assert r.v_tau.v == pytest.approx(0.5)
    assert r.v_frontier == pytest.approx(0.5)
    assert head.halting_loops(8, r.v_tau.v) == 16


def test_constant_is_flat():
    preds, labels = staircase(n=8, T=6, loops_per_position=0)   # all settled at loop 1
    r = head.measure(preds, labels)
    assert np.all(r.tau_curve == 1)
    assert math.isinf(r.v_tau.v)
    fit = head.scaling_class([4, 8, 16, 32], [3.0, 3.0, 3.0, 3.0])
    assert fit.cls == "flat"


def test_unsolved_inputs_are_excluded():
    preds, labels = staircase(n=4, T=6, loops_per_position=1, B=3)
    labels = labels.copy()
    labels[0, 2] = (labels[0, 2] + 1) % 5           # input 0 is now wrong at the last loop
    r = head.measure(preds, labels)
    assert r.n_solved == 2 and r.n_inputs == 3
    assert r.tau_curve.tolist() == [1, 2, 3, 4]


def test_scaling_classes():
    ns = np.array([4, 8, 16, 32, 64])
    assert head.scaling_class(ns, 1.0 * ns + 2).cls == "linear"
    assert head.scaling_class(ns, 3 * np.log2(ns) + 1).cls == "log"
    noisy_flat = 5 + np.array([0.3, -0.2, 0.1, -0.3, 0.2])
    assert head.scaling_class(ns, noisy_flat).cls == "flat"
    with pytest.raises(ValueError, match="ns"):
        head.scaling_class([4, 8], [1, 2])


def test_budget_exponent():
    d = np.array([0.5, 1, 2, 4])
    fit = head.budget_exponent(d, 1.0 * d)
    assert fit.exponent == pytest.approx(1.0) and fit.r2 == pytest.approx(1.0)
    fit = head.budget_exponent(d, 3.0 * d ** 0.5)
    assert fit.exponent == pytest.approx(0.5)


def test_halting_rule():
    assert head.halting_loops(16, 1.0) == 16
    assert head.halting_loops(16, 0.7) == 23
    assert head.halting_loops(16, 2.0) == 8
    with pytest.raises(ValueError, match="v_hat"):
        head.halting_loops(16, 0.0)


def test_confidence_stopping_on_a_constructed_model():
    """A model whose answer is right and confident from loop 3 on: the baseline stops at loop 3."""
    import torch
    from lib.instruments.head import confidence_stopping
    from lib.tasks import make_task

    task = make_task("parity")

    class Oracle(torch.nn.Module):
        def forward(self, tokens, T, all_loops=False):
            x = tokens[:, 1:]
            y = torch.cumsum(x, 1) % 2
            good = torch.nn.functional.one_hot(torch.cat([torch.zeros_like(y[:, :1]), y], 1), 2).float() * 10
            bad = good.flip(-1) * 0.1                                  # wrong and unsure before loop 3
            out = torch.stack([bad if t < 2 else good for t in range(T)])
            return out if all_loops else out[-1]
    acc, stop = confidence_stopping(Oracle(), task, 6, 8, threshold=0.9, count=64)
    assert acc == 1.0 and stop == 3.0
    acc, stop = confidence_stopping(Oracle(), task, 6, 2, threshold=0.9, count=64)   # never confident: last loop
    assert stop == 2.0 and acc == 0.0


class RevealOneCellPerLoop(torch.nn.Module):
    """After loop t, predicts the right digit for board cells 0..t-1 and digit 1 elsewhere."""

    def __init__(self, solution):
        super().__init__()
        self.solution = solution            # (B, n) digits 1..9

    def forward(self, tokens, T, all_loops=False, streaming=False):
        B, n = self.solution.shape
        out = torch.zeros(T, B, n + 1, 10)
        for t in range(1, T + 1):
            pred = torch.where(torch.arange(n) < t, self.solution, torch.ones_like(self.solution))
            out[t - 1, :, 1:] = torch.nn.functional.one_hot(pred, 10).float()
        return out


def test_board_accuracy_counts_blank_cells_only():
    # two boards of 4 cells; blank cells (token 0) at positions 1 and 3 of board 0, 0..3 of board 1
    solution = torch.tensor([[2, 3, 4, 5], [1, 2, 3, 4]])
    tokens = torch.tensor([[99, 2, 0, 4, 0], [99, 0, 0, 0, 0]])         # BOS, then the board
    labels = torch.cat([torch.full((2, 1), -100), solution], 1)
    cell, board = head.board_accuracy_by_loops(RevealOneCellPerLoop(solution), tokens, labels, 4)
    # 6 blank cells; right after loop t: blank cells with index < t (board 0: {1, 3}; board 1: all four).
    # Loop 1 -> board 1's cell 0 (1/6); loop 2 -> +board 0's cell 1, board 1's cell 1 (3/6); loop 3 -> 4/6; loop 4 -> 6/6.
    assert cell.tolist() == pytest.approx([1 / 6, 3 / 6, 4 / 6, 6 / 6])
    assert board.tolist() == [0.0, 0.0, 0.0, 1.0]
