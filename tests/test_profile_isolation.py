"""A notebook run with another profile through papermill never writes where the committed quick
outputs live: its figures go to figures/<profile>/ and its results to <notebook>.<profile>.json."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_smoke_papermill_run_writes_nothing_over_the_quick_outputs(tmp_path):
    outputs = tmp_path / "outputs"
    env = {**{k: v for k, v in os.environ.items() if k not in ("LOOPS_ARTIFACTS", "LOOPS_POINT_DIR")},
           "LOOPS_OUTPUTS": str(outputs), "LOOPS_HEADLESS": "1", "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-m", "papermill", str(ROOT / "notebooks" / "02_tau_calibration.ipynb"),
                          str(tmp_path / "out.ipynb"), "-p", "PROFILE", "smoke", "--no-progress-bar"],
                         cwd=ROOT / "notebooks", env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    figures = sorted(p.relative_to(outputs / "figures") for p in (outputs / "figures").rglob("*.png"))
    assert figures and all(p.parts[0] == "smoke" for p in figures), figures     # never outputs/figures/<name>.png
    results = sorted(p.name for p in (outputs / "results").glob("*.json"))
    assert results == ["02_tau_calibration.smoke.json"], results
