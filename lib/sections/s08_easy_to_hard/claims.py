"""08's claim (Paper A §6: easy-to-hard length extrapolation)."""
from __future__ import annotations

from ...instruments.head import LEARNED
from ...rules import Claim, ConfirmatoryTest

CLAIMS = (
    Claim("e2h_4x_best_acc", 6, "A §6", "Easy-to-hard prefix sums: 4× exact-match length extrapolation",
          "exact match at 4×", "whole-word accuracy at 4·n_train ≥ 0.9 with more loops (min over seeds of the best loop)",
          "08_easy_to_hard", lambda v: v >= 0.9, lambda v: v >= 0.5,
          "the model learned n_train in distribution (whole-word ≥ 0.9)",
          lambda r: min(v for k, v in r["best_acc_by_length"].items() if int(k) == min(map(int, r["best_acc_by_length"]))) >= LEARNED,
          partly="≥ 0.5 (the best loop is an upper bound: the loop is picked on the test set)",
          basis=lambda r: "seeds 0-1, the search's own runs of its pick; the search ran twice (its first log was lost, "
                          "and its first pick read 0.01 at 4x)"),
)


# C43-easy-to-hard (its entry in paper/PREREGISTRATION.md): the minimum over 4 reserved seeds at 4·n_train
# after exactly loops_at(4·n_train) loops
CONFIRMATORY = {
    "e2h_4x_best_acc": ConfirmatoryTest("C43-easy-to-hard", "e2h_4x_min_at_loops", lambda v: v >= 0.9, lambda v: v >= 0.5,
                                        beside=("e2h_4x_by_seed", "e2h_4x_best_loop_upper_bound")),
}
