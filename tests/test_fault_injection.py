from tests import fault_injection


def test_fault_injection_small():
    s = fault_injection.main(["--runs", "3", "--seed", "1"])
    assert s["faults_injected"] > 0
    assert s["runs_completed"] == 3
    assert s["mismatches_vs_uninterrupted_twin"] == 0
