"""`make all`'s path (lib.run_all) leaves the checkout as it found it, and its log quiet.

One quick notebook (00, about 10 s) goes through run_all with its results, figures, ledger and executed
copy redirected (LOOPS_ARTIFACTS, as `make test` sets it): nothing of the checkout changes, and what it
wrote is, byte for byte, what is committed, which is what `make all` (writing into outputs/ itself) would
write over it. The kernel's TCP warning and the KeyboardInterrupt of its shutdown stay out of the log."""
import subprocess

import matplotlib
import pytest

from lib import claims, run_all
from lib.paths import PROJECT_ROOT

matplotlib.use("Agg")


def git_status() -> list[str]:
    """The checkout's changes, but the run store's: a training process may be writing its checkpoint
    meanwhile, and run_all trains nothing here (00's runs are committed)."""
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=PROJECT_ROOT,
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if "outputs/runs/" not in line]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPS_ARTIFACTS", str(tmp_path))
    monkeypatch.setenv("LOOPS_HEADLESS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return tmp_path


def test_run_all_changes_nothing_of_the_checkout_and_writes_what_is_committed(scratch, capfd):
    before = git_status()
    run_all.run("quick", only=["00"], jobs=1)
    assert git_status() == before
    log = capfd.readouterr()
    assert "00_quickstart.ipynb done" in log.out
    for noise in ("without encryption", "KeyboardInterrupt", "Traceback"):
        assert noise not in log.out + log.err, noise
    # everything went to the scratch folder: the executed copy, the ledger, results and figures
    assert (scratch / "notebooks" / "00_quickstart.ipynb").exists() and (scratch / "REPORT.md").exists()
    written = sorted(p for kind in ("results", "figures") for p in (scratch / kind).glob("*") if p.is_file())
    assert {p.suffix for p in written} >= {".png", ".svg"}            # 00 draws its frontier (it keeps no results)
    for path in written:                  # make all writes these bytes over the committed files: no change
        committed = PROJECT_ROOT / "outputs" / path.parent.name / path.name
        assert path.read_bytes() == committed.read_bytes(), f"{committed.relative_to(PROJECT_ROOT)} would change"


def test_a_figure_saved_twice_has_the_same_bytes(scratch):
    import matplotlib.pyplot as plt

    from lib import plots
    for attempt in range(2):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [0.1, 0.5, 0.2], label="a line")
        ax.legend()
        plots.save(fig, "determinism_check")
        plt.close(fig)
        if attempt == 0:
            first = {ext: (scratch / "figures" / f"determinism_check.{ext}").read_bytes() for ext in ("png", "svg")}
    for ext, data in first.items():
        assert (scratch / "figures" / f"determinism_check.{ext}").read_bytes() == data, ext


def test_the_committed_ledger_is_the_one_the_committed_results_give(monkeypatch):
    """make all ends by writing paper/REPORT.md from outputs/results/: committed together, it does not change."""
    monkeypatch.delenv("LOOPS_ARTIFACTS", raising=False)
    monkeypatch.delenv("LOOPS_POINT_DIR", raising=False)
    assert run_all.report_path() == PROJECT_ROOT / "paper" / "REPORT.md"
    assert claims.report() == run_all.report_path().read_text()
