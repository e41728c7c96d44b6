"""02's claims (Paper A §5): tau reads a serial control as serial and a shortcut as flat, free-trained
tied models as serial, and damage cones spread at tau's speed. The controls' confirmatory tests are
C43-controls' (below); the free models' and the cones' are the C03-budget study's
(`s03_budget_law.claims.CONFIRMATORY`).
"""
from __future__ import annotations

from ...instruments.head import decoder_valid
from ...rules import Claim, ConfirmatoryTest

CLAIMS = (
    Claim("streaming_slope", 5, "A §5", "tau reads the streaming positive control as serial", "slope 1.0 loop/position",
          "slope in [0.9, 1.1]", "02_tau_calibration", lambda v: 0.9 <= v <= 1.1, lambda v: 0.7 <= v <= 1.3,
          partly="slope in [0.7, 1.3]"),
    Claim("shortcut_slope", 5, "A §5", "tau reads a shortcut (constant-depth) control as flat", "flat (slope 0)",
          "|slope| ≤ 0.1", "02_tau_calibration", lambda v: abs(v) <= 0.1, lambda v: abs(v) <= 0.25,
          partly="|slope| ≤ 0.25"),
    Claim("free_linear_fraction_uncapped", 5, "A §5", "Free-trained tied models read tau ∝ n (serial frontier)",
          "tau ∝ n", "every learned free model fits the linear class, tau read with 4× the schedule's loops",
          "02_tau_calibration", lambda v: v == 1.0, lambda v: v >= 0.5,
          "decoder validity: position 1 read at loop 1 on ≥ 0.9 of solved inputs",
          lambda r: decoder_valid(r["decoder_position1_min"]), partly="at least half of them"),
    Claim("free_linear_fraction", 5, "A §5", "the same read with the schedule's loops (tau(last) capped by the count)",
          "tau ∝ n", "every learned free model fits the linear class", "02_tau_calibration",
          lambda v: v == 1.0, lambda v: v >= 0.5, partly="at least half of them",
          qualifies="free_linear_fraction_uncapped"),
    Claim("cone_ratio_median", 5, "A §5", "Damage cones spread at the tau-based speed", "cone slope = v",
          "median v_cone / v_tau in [0.8, 1.25]", "02_tau_calibration",
          lambda v: 0.8 <= v <= 1.25, lambda v: 0.5 <= v <= 2.0, partly="median in [0.5, 2]"),
)

# Where a rule changed after a verdict was printed: (claim key, old verdict, date, what changed). The
# ledger prints each beside the claim's verdict now; the old rule's entry stays in paper/PREREGISTRATION.md.
RULE_CHANGES = (
    ("free_linear_fraction_uncapped", "reproduced", "2026-12-04", "decoder validity (R37-gates: the readout must read "
     "position 1 at loop 1); read uncapped (R37-uncapped): with the schedule's loops tau(last) cannot exceed the loop count"),
)


# C43-controls (its entry in paper/PREREGISTRATION.md): 02's tolerances on reserved seeds. Its streaming
# row read C05-wall's streaming runs, none of which learned; C43-controls-streaming reads the same rule on
# runs of 02's own streaming recipe, with C43-controls' verdict kept beside.
_READ = "≥ 2 of 3 runs read (learned, ≥ 16 solved inputs, readout valid at loop 1)"
_STREAMING_ON_C05 = ConfirmatoryTest("C43-controls", "streaming_slope", lambda v: 0.9 <= v <= 1.1,
                                     lambda v: 0.7 <= v <= 1.3, _READ, lambda r: r["streaming_runs_read"] >= 2,
                                     ("streaming_slopes_by_seed",))
CONFIRMATORY = {
    "streaming_slope": ConfirmatoryTest("C43-controls-streaming", "streaming_slope", lambda v: 0.9 <= v <= 1.1,
                                        lambda v: 0.7 <= v <= 1.3, _READ, lambda r: r["streaming_runs_read"] >= 2,
                                        ("streaming_slopes_by_seed",), earlier=_STREAMING_ON_C05),
    "shortcut_slope": ConfirmatoryTest("C43-controls", "shortcut_slope", lambda v: abs(v) <= 0.1, lambda v: abs(v) <= 0.25,
                                       _READ, lambda r: r["shortcut_runs_read"] >= 2, ("shortcut_slopes_by_seed",)),
}
