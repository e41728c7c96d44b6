
import pytest

from lib import claims, rules
from lib.instruments import head
from lib.paths import PROJECT_ROOT

E = 1e-6
R, P, N = "reproduced", "partly", "not reproduced"

# Every claim's rule at its boundaries: a value just inside and just outside each edge of the
# tolerance and of the "partly" band. Changing a rule (or its tolerance) makes one of these fail.
BOUNDARIES = {
    "budget_exponent": [(0.88 + E, R), (0.88 - E, P), (1.08 - E, R), (1.08 + E, P), (0.5, P), (0.5 - E, N),
                        (1.5, P), (1.5 + E, N)],
    "budget_r2": [(0.95, R), (0.95 - E, P), (0.8, P), (0.8 - E, N)],
    "budget_exponent_uncapped": [(0.88 + E, R), (0.88 - E, P), (1.08 - E, R), (1.08 + E, P), (0.5, P), (0.5 - E, N),
                                 (1.5, P), (1.5 + E, N)],
    "budget_exponent_frontier_uncapped": [(0.88 + E, R), (0.88 - E, P), (1.5, P), (1.5 + E, N)],
    "speed_at_T_eq_n_uncapped": [(0.9 + E, R), (0.9 - E, P), (1.3 - E, P), (1.3 + E, N)],
    "speed_at_T_eq_n_frontier_uncapped": [(1.1 - E, R), (1.1 + E, P), (0.7 - E, N)],
    "free_linear_fraction_uncapped": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "speed_at_T_eq_n": [(0.9 + E, R), (0.9 - E, P), (1.1 - E, R), (1.1 + E, P), (0.7 + E, P), (0.7 - E, N),
                        (1.3 - E, P), (1.3 + E, N)],
    "rescue_gain": [(0.5, R), (0.5 - E, P), (0.2, P), (0.2 - E, N)],
    "halting_late_acc": [(0.9, R), (0.9 - E, P), (0.5, P), (0.5 - E, N)],
    "streaming_slope": [(0.9, R), (0.9 - E, P), (1.1, R), (1.1 + E, P), (0.7, P), (0.7 - E, N), (1.3, P), (1.3 + E, N)],
    "shortcut_slope": [(0.1, R), (-0.1, R), (0.1 + E, P), (0.25, P), (-0.25, P), (0.25 + E, N)],
    "free_linear_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "cone_ratio_median": [(0.8, R), (0.8 - E, P), (1.25, R), (1.25 + E, P), (0.5, P), (0.5 - E, N), (2.0, P), (2.0 + E, N)],
    "fixed_point_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "fixed_point_fraction_long_window": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "skip1_min": [(1.0, R), (1.0 - E, P), (0.95, P), (0.95 - E, N)],
    "jac_align_min": [(0.9, R), (0.9 - E, P), (0.7, P), (0.7 - E, N)],
    "tail_max_abs_rho_significant": [(0, R), (1, P), (2, N)],
    "skip1_min_premise": [(1.0, R), (1.0 - E, P), (0.95, P), (0.95 - E, N)],
    "jac_align_min_premise": [(0.9, R), (0.9 - E, P), (0.7, P), (0.7 - E, N)],
    "at_T_train_significant": [(0, R), (1, P), (2, N)],
    "budget_exponent_frontier": [(0.88 + E, R), (0.88 - E, P), (1.08 - E, R), (1.08 + E, P), (0.5, P), (0.5 - E, N)],
    "speed_at_T_eq_n_frontier": [(0.9 + E, R), (0.9 - E, P), (1.3 - E, P), (1.3 + E, N)],
    "no_recall_distinct_fraction": [(0.5, R), (0.5 + E, P), (1.0 - E, P), (1.0, N)],
    "prop1_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "untied_log_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "tied_linear_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "tied_scan_linear_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "untied_minus_tied_ood": [(-E, R), (0.0, P), (0.1 - E, P), (0.1, N)],
    "untied_a5_seq_acc": [(0.1, R), (0.1 + E, P), (0.5, P), (0.5 + E, N)],
    "a5_ood_acc": [(0.9, R), (0.9 - E, P), (0.5, P), (0.5 - E, N)],
    "nc1_minus_solvable_ood": [(-0.1, R), (0.2, R), (-0.1 - E, P), (-0.3, P), (-0.3 - E, N)],
    "wall_joint_deadlock_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "wall_operator_first_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "streaming_gap": [(0.5, R), (0.5 - E, P), (0.2, P), (0.2 - E, N)],
    "anneal_transfer_fraction": [(1.0, R), (1.0 - E, P), (0.5, P), (0.5 - E, N)],
    "anneal_minus_scratch": [(0.5, R), (0.5 - E, P), (E, P), (0.0, N)],
    "primary_significant_contests": [(3, R), (2, P), (1, P), (0, N)],
    "tail_excess_over_chance": [(-2, R), (0, R), (1, P), (2, N)],
    "e2h_4x_best_acc": [(0.9, R), (0.9 - E, P), (0.5, P), (0.5 - E, N)],
    "best_is_recall_outer": [(True, R), (False, N)],
    "best_is_recall_outer_cosine": [(True, R), (False, N)],
    "internal_minus_external": [(-0.1, R), (-0.1 - E, P), (-0.3, P), (-0.3 - E, N)],
    "sudoku_internal_minus_external": [(0.1, R), (0.1 - E, P), (E, P), (0.0, N)],
}

# Results under which each precondition holds (the value is judged) and under which it does not.
MET = {"demands_learned": 3, "budget_exponent": 0.98, "budget_exponent_interval": [0.9, 1.1], "fixed_point_fraction": 0.5,
       "budget_exponent_uncapped_interval": [0.9, 1.1],
       "decoder_position1_min": 0.95, "decoder_position1": {"tied": 1.0, "tied + scan": 0.95, "untied": 0.9},
       "premise_met": "16/16", "at_T_train_rho": {"skip1": 0.1, "aa": -0.2}, "at_T_train_correlated_models": 10,
       "tail_rho": {"skip1": 0.1, "aa": 0.3}, "correlated_models": 12,
       "smallest_p": {"a": 0.0015, "b": 0.0002, "c": 0.0083}, "split": {"a": [4, 16]},
       "untied_s4_learned_fraction": 0.5, "a5_learned_fraction": {"operator_first": 0.5},
       "anneal_transfer_fraction": 0.0, "scratch_learned_fraction": 0.5, "best_acc_by_length": {"16": 0.95, "64": 0.1},
       "compared_at_n": 32, "nc1_compared_at_n": 16, "streaming_gaps": {"S4 joint n=8": 0.9},
       "configurations": {**{f"{r} recall, outer norm": {"extrapolation": {"32": 0.05}}
                             for r in ("internal", "external")}, "no recall, outer norm": {"reached_step": 0.5}},
       "sudoku_board": {"internal, 24 givens": 0.02, "external, 24 givens": 0.0},
       "primary_auroc": {"a": [0.5, 0.3, 0.7], "b": [0.9, 0.8, 1.0], "c": [0.1, 0.0, 0.2]}, "tail_defined": 3,
       "tail_defined_by_contest": {"a": 1, "b": 1, "c": 1}, "tasks": {"a": "S4", "b": "S4", "c": "A5"}}
UNMET = {"demands_learned": 2, "budget_exponent": 0.8, "budget_exponent_interval": None, "fixed_point_fraction": 0.0,
         "budget_exponent_uncapped_interval": None,
         "decoder_position1_min": 0.9 - E, "decoder_position1": {"tied": 0.9 - E, "tied + scan": 0.5, "untied": 0.05},
         "premise_met": "0/16", "at_T_train_rho": {"skip1": None, "aa": -0.2}, "at_T_train_correlated_models": 9,
         "tail_rho": {"skip1": None, "aa": 0.3}, "correlated_models": 12,
         "smallest_p": {"a": 0.125, "b": 0.0002, "c": 0.0083},
         "untied_s4_learned_fraction": 0.0, "a5_learned_fraction": {"operator_first": 0.0},
         "anneal_transfer_fraction": 0.0, "scratch_learned_fraction": 0.0, "best_acc_by_length": {"16": 0.89, "64": 0.0},
         "compared_at_n": 32, "nc1_compared_at_n": None, "streaming_gaps": {},
         "configurations": {"internal recall, outer norm": {"extrapolation": {"32": 0.5}},
                            "external recall, outer norm": {"extrapolation": {"32": 0.05 - E}},
                            "no recall, outer norm": {"reached_step": 0.5 - E}},
         "sudoku_board": {"internal, 24 givens": 0.0, "external, 24 givens": 0.0},
         "primary_auroc": {"a": [0.5, 0.3, 0.7], "b": None, "c": [0.1, 0.0, 0.2]}, "tail_defined": 0,
         "tail_defined_by_contest": {"a": 1, "b": 0, "c": 1}, "tasks": {"a": "S4", "b": "S4", "c": "parity"}}


def test_every_claim_has_boundaries():
    assert set(BOUNDARIES) == {c.key for c in claims.CLAIMS}


@pytest.mark.parametrize("c", claims.CLAIMS, ids=lambda c: c.key)
def test_rule_at_its_boundaries(c):
    for value, expected in BOUNDARIES[c.key]:
        assert rules.verdict(c, value, ran=True, results=MET) == expected, (c.key, value)


@pytest.mark.parametrize("c", claims.CLAIMS, ids=lambda c: c.key)
def test_missing_values_and_unmet_preconditions_read_not_measured(c):
    assert rules.verdict(c, None, ran=False) == "not run"
    assert rules.verdict(c, None, ran=True, results=MET) == "not measured"
    assert rules.verdict(c, float("nan"), ran=True, results=MET) == "not measured"
    inside = next(v for v, e in BOUNDARIES[c.key] if e == R)
    if c.requires is None:
        assert c.precondition == "" and rules.verdict(c, inside, True, UNMET) == R
    else:
        assert c.precondition, f"{c.key}: a gated claim states its precondition"
        assert rules.verdict(c, inside, True, UNMET) == "not measured"
        assert rules.verdict(c, inside, True, {}) == "not measured"      # not recorded = not met


def test_report_counts_claims_not_rows_and_reads_results(store_root):
    text = claims.report()
    counted = [c for c in claims.CLAIMS if not c.qualifies]
    assert f"**{len(counted)} claims. Confirmatory: 0 reproduced, 0 partly, 0 not reproduced, 0 not measured;" in text
    assert f"0 not measured, {len(counted)} not run." in text           # exploratory counts, by claim
    assert "shared/" not in text and "PAPER.md" not in text            # no link outside the repository
    rules.record("03_budget_law", {"budget_exponent_uncapped": 0.97, "budget_exponent": 0.97, "budget_r2": 0.5,
                                   "demands_learned": 4, "budget_exponent_interval": [0.9, 1.0],
                                   "budget_exponent_uncapped_interval": [0.9, 1.0],
                                   "budget_exponent_frontier_uncapped": 0.80, "decoder_position1_min": 1.0})
    text = claims.report()
    row = next(line for line in text.splitlines() if "(n_train/T_train)^b" in line)
    assert "| reproduced | Frontier speed" in row and "| 0.97 |" in row
    assert "power law fits the speeds (capped reading): 0.5 (not reproduced)" in row   # a qualifier, in the row
    assert "⚑ the verdict flips with the frontier estimator" in row        # 0.80 reads partly
    assert not any(line.startswith("| ") and "| The power law fits" in line.split("|")[3] for line in text.splitlines())
    row = next(line for line in text.splitlines() if "At T = n the frontier" in line)
    assert "| not measured |" in row and "no value measured" in row      # the notebook ran but did not measure it
    assert "not run (no GPU)" in row


def test_confirmatory_column_reads_the_registered_study(store_root):
    c = claims.claim("wall_operator_first_fraction")
    assert claims.confirmatory_verdict(c)[0] == "registered (C05-wall), not yet read"
    assert claims.confirmatory_verdict(claims.claim("budget_exponent"))[0] == rules.NO_TEST
    rules.record_confirmatory("C05-wall", {"wall_operator_first_fraction": 2 / 3, "s4_joint_learned_fraction": 1.0,
                                            "wall_joint_deadlock_score": 1.0})
    assert claims.confirmatory_verdict(c)[0] == "partly"
    assert claims.confirmatory_verdict(claims.claim("wall_joint_deadlock_fraction"))[0] == "reproduced"
    v, _, why = claims.confirmatory_verdict(claims.claim("streaming_gap"))
    assert v == "not measured"                                           # its value is not in yet
    text = claims.report()
    headline = {c.key for c in claims.CLAIMS if not c.qualifies}         # the report counts headline claims
    others = sum(t.entry != "C05-wall" for k, t in claims.CONFIRMATORY.items() if k in headline)   # registered, not yet read
    assert f"Confirmatory: 1 reproduced, 1 partly, 0 not reproduced, 3 not measured; {others} registered" in text


def test_decoder_validity_just_inside_and_outside_its_bar():
    assert head.decoder_valid(0.9) and not head.decoder_valid(0.9 - E)
    assert not head.decoder_valid(None) and not head.decoder_valid(float("nan"))


def test_contest_power_one_positive_of_sixteen_cannot_reject():
    assert not rules.contest_powered(16, 1)          # smallest p = 2/16 = 0.125
    assert not rules.contest_powered(16, 15)
    assert rules.contest_powered(16, 2)              # 2 / C(16, 2) = 0.0167
    assert not rules.contest_powered(6, 2)           # 2 / 15 = 0.133
    assert rules.contest_powered(8, 4)               # 2 / 70 = 0.029
    with pytest.raises(ValueError, match="generalize"):
        rules.contest_powered(4, 5)


def test_a_null_over_a_constant_metric_or_few_models_is_not_powered():
    assert rules.correlation_powered({"a": 0.1, "b": -0.3}, 10)
    assert not rules.correlation_powered({"a": 0.1, "b": None}, 16)     # b is constant: it cannot correlate
    assert not rules.correlation_powered({"a": 0.1, "b": 0.2}, 9)
    assert not rules.correlation_powered({}, 16)


def test_premise_at_the_operating_point():
    assert rules.premise_met(7, 8) and not rules.premise_met(7.01, 8)
    assert rules.premise_met(6, 8, k=2) and not rules.premise_met(None, 8)


def test_every_rule_change_names_a_claim():
    for key, old, date, what in claims.RULE_CHANGES:
        claims.claim(key)
        assert old in rules.VERDICTS and what


def test_unknown_claim():
    with pytest.raises(KeyError, match="claim"):
        claims.claim("nope")


def test_print_verdicts_records_and_names_the_unmet_precondition(store_root, capsys):
    claims.print_verdicts("03_budget_law", {"budget_exponent": 0.81, "budget_r2": 0.99, "demands_learned": 3,
                                            "budget_exponent_interval": [0.7, 0.9]})
    out = capsys.readouterr().out
    assert "budget_r2" in out and "-> not measured (needs: the exponent measured and within its tolerance" in out
    assert "budget_exponent " in out and "-> not measured" in out      # no decoder validity recorded
    assert rules.load("03_budget_law", "quick")["budget_r2"] == 0.99


def test_every_confirmatory_rule_names_a_registered_study_and_a_claim():
    from lib import confirmatory
    text = (PROJECT_ROOT / "paper" / "PREREGISTRATION.md").read_text()
    for key, test in claims.CONFIRMATORY.items():
        claims.claim(key)
        assert test.entry in confirmatory.STUDIES and f"## {test.entry} " in text, (key, test.entry)
        assert not claims.claim(key).qualifies, f"{key}: a confirmatory test decides a claim, not a qualifier"
