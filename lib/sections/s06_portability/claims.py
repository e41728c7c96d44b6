"""06's claims (Paper A §7: budget annealing)."""
from __future__ import annotations

from ...rules import Claim


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
