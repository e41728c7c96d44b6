"""08's claim (Paper A §6: easy-to-hard length extrapolation)."""
from __future__ import annotations

from ...instruments.head import LEARNED
from ...rules import Claim

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
