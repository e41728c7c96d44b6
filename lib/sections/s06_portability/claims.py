"""06's claims (Paper A §7: budget annealing)."""
from __future__ import annotations

from ...rules import Claim, ConfirmatoryTest


def _final_contract_learnable(r: dict) -> bool:
    return r["scratch_learned_fraction"] > 0


CLAIMS = (
    Claim("anneal_transfer_fraction", 4, "A §7", "Budget annealing transfers the algorithm and re-prices its speed",
          "4/4 seeds", "every seed learned the judged contract (the hardest of the chain some run learns) with v-hat closer to the new "
          "demand than the old",
          "06_portability", lambda v: v == 1.0, lambda v: v >= 0.5,
          "the judged contract is learnable: some from-scratch seed learns it", _final_contract_learnable,
          partly="at least half the seeds"),
    Claim("anneal_minus_scratch", 4, "A §7", "Annealing bypasses the seed lottery of from-scratch training",
          "most scratch runs fail", "learned fraction annealed minus from scratch at the judged contract ≥ 0.5",
          "06_portability", lambda v: v >= 0.5, lambda v: v > 0,
          "a seed lottery at a learnable contract: some from-scratch seed learns the judged contract and some fails it",
          lambda r: _final_contract_learnable(r) and r["scratch_learned_fraction"] < 1, partly="difference > 0"),
)


# C41-annealing (its entry in paper/PREREGISTRATION.md), rules (A) and (L)
CONFIRMATORY = {
    # (A): 1 when every valid seed transferred and the lottery runs learn faster than scratch (sign test);
    # else the transferred share, at most 0.5 without "faster" (`confirm.annealing_confirm_results`)
    "anneal_transfer_fraction": ConfirmatoryTest("C41-annealing", "anneal_transfer_score", lambda v: v == 1.0,
                                                 lambda v: v >= 0.5, "≥ 8 lottery runs read (unlearned, or learned with "
                                                 "a valid readout)", lambda r: r["lottery_runs_read"] >= 8,
                                                 ("transferred_share", "transferred_share_frontier",
                                                  "lottery_runs_read", "learned_without_valid_readout",
                                                  "faster_than_scratch", "sign_test", "median_steps")),
    # (L): 1 when McNemar's one-sided p < 0.05 and the annealed learned fraction >= 11/12; else the difference
    "anneal_minus_scratch": ConfirmatoryTest("C41-annealing", "anneal_bypass_score", lambda v: v == 1.0, lambda v: v > 0,
                                             "a lottery contract (P41 found one) with power: from-scratch runs fail "
                                             "in ≥ 5 of 12 seeds and learn in ≥ 1", lambda r: r["lottery_powered"],
                                             ("anneal_minus_scratch", "scratch_learned_fraction", "mcnemar")),
}
