"""05's claims (Paper A §6.3: the operator wall), and the C05-wall study's tests."""
from __future__ import annotations

from ...rules import Claim, ConfirmatoryTest

# The absolute row, read on the operator-first A5 seeds whatever S4 does.
ABSOLUTE_A5_CLAIMS = (
    Claim("a5_ood_acc", 3, "A §6.3", "NC1-completeness costs nothing: A5 generalizes fully", "full generalization",
          "operator-first A5 whole-word accuracy ≥ 0.9 in distribution and at 2·n_train (min over seeds shown)",
          "05_operator_wall", lambda v: v >= 0.9, lambda v: v >= 0.5,
          "an operator-first A5 seed learns in distribution", lambda r: r["a5_learned_fraction"]["operator_first"] > 0,
          partly="≥ 0.5"),
)
# 05's claims at equal budgets (`plan.fair_wall`, `read.fair_wall_results`): every curriculum offered the
# same steps, A5 judged against the solvable S4 where S4 carries (the absolute row above stays beside them).
FAIR_WALL_CLAIMS = (
    Claim("nc1_minus_solvable_ood", 3, "A §6.3", "NC1-completeness costs nothing: A5 extrapolates as far as a solvable group (S4) "
    "under the same recipe and budget",
          "full generalization", "operator-first A5 minus S4 whole-word accuracy (means over seeds) ≥ −0.1, at the longest length "
          "beyond training where S4 carries (≥ 0.5)",
          "05_operator_wall", lambda v: v >= -0.1, lambda v: v >= -0.3,
          "S4 carries beyond training under the wall's recipe (else there is nothing to compare with)",
          lambda r: r["nc1_compared_at_n"] is not None, partly="≥ −0.3"),
    Claim("wall_joint_deadlock_fraction", 3, "A §6.3", "S5's 120×120 operator deadlocks joint learning", "deadlock",
          "every joint S5 seed measured deadlocked, each offered the operator-first runs' steps", "05_operator_wall",
          lambda v: v == 1.0, lambda v: v >= 0.5, partly="at least half the seeds"),
    Claim("wall_operator_first_fraction", 3, "A §6.3", "An operator-first curriculum dissolves the wall in every seed",
          "every seed", "every operator-first S5 seed learns (whole-word ≥ 0.9) within the joint runs' budget",
          "05_operator_wall", lambda v: v == 1.0, lambda v: v >= 0.5, partly="at least half the seeds"),
    Claim("streaming_gap", 3, "A §6.3", "Imposing seriality through the input schedule (streaming) fails where free training succeeds",
          "streaming fails", "free minus streaming whole-word accuracy ≥ 0.5, mean over the seeds whose free run learned (max over "
          "tasks and lengths)",
          "05_operator_wall", lambda v: v >= 0.5, lambda v: v >= 0.2, "free training learns the task (some seed)",
          lambda r: len(r["streaming_gaps"]) > 0, partly="gap ≥ 0.2"),
)
CLAIMS = ABSOLUTE_A5_CLAIMS + FAIR_WALL_CLAIMS


# C05-wall (its entry in paper/PREREGISTRATION.md)
CONFIRMATORY = {
    # rules 1-5 of its entry
    "a5_ood_acc": ConfirmatoryTest("C05-wall", "a5_operator_first_learned_fraction", lambda v: v == 1.0,
                                   lambda v: v > 0, "every operator-first S4 seed learns",
                                   lambda r: r["s4_operator_first_learned_fraction"] == 1.0,
                                   ("s4_operator_first_learned_fraction",)),
    "nc1_minus_solvable_ood": ConfirmatoryTest("C05-wall", "nc1_minus_solvable_ood", lambda v: v >= -0.1,
                                               precondition="≥ 2 learned operator-first seeds of A5 and of S4, and "
                                               "the learned S4 seeds carry ≥ 0.5 at some n in {10, 12, 14, 16}",
                                               requires=lambda r: r["nc1_compared_at_n"] is not None,
                                               beside=("nc1_compared_at_n", "a5_absolute_at_2n", "s4_passes_absolute_at_2n")),
    # the score is the deadlocked share when no joint S5 seed learned, else 0 (`wall_confirm`): the entry
    # reads "not reproduced" when any joint S5 seed learns, "partly" for 1/3 or 2/3 deadlocked otherwise
    "wall_joint_deadlock_fraction": ConfirmatoryTest("C05-wall", "wall_joint_deadlock_score", lambda v: v == 1.0,
                                                     lambda v: v > 0, "≥ 2 of 3 joint S4 seeds learn",
                                                     lambda r: r["s4_joint_learned_fraction"] >= 2 / 3,
                                                     ("wall_joint_deadlock_fraction", "wall_joint_learned_fraction",
                                                      "a5_joint_learned_fraction", "leaves_plateau_at_step")),
    "wall_operator_first_fraction": ConfirmatoryTest("C05-wall", "wall_operator_first_fraction", lambda v: v == 1.0,
                                                     lambda v: v > 0),
    "streaming_gap": ConfirmatoryTest("C05-wall", "streaming_gap", lambda v: v >= 0.5, lambda v: v > 0,
                                      "≥ 2 of 3 free S4 joint seeds learn", lambda r: r["free_learned_fraction"] >= 2 / 3,
                                      ("streaming_gaps_by_seed",)),
}
