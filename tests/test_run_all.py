"""The notebook runner: side-by-side notebooks, failures named, bad input refused before any work."""
import nbformat
import pytest

from lib import run_all


def _notebook(path, code):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture
def two_notebooks(tmp_path, monkeypatch):
    src = tmp_path / "notebooks"
    src.mkdir()
    _notebook(src / "01_ok.ipynb", "import os\nprint('threads', os.environ.get('OMP_NUM_THREADS'))")
    _notebook(src / "02_bad.ipynb", "raise ValueError('T: must be >= 1')")
    monkeypatch.setattr(run_all, "section_notebooks", lambda: sorted(src.glob("*.ipynb")))
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("LOOPS_ARTIFACTS", raising=False)    # `make test` sets it: executed copies would go there
    monkeypatch.delenv("LOOPS_POINT_DIR", raising=False)
    written = []
    monkeypatch.setattr(run_all.claims, "write_report", lambda: written.append(1))
    return tmp_path / "outputs" / "notebooks", written


def test_side_by_side_runs_every_notebook_names_the_failure_and_keeps_the_ledger(two_notebooks, monkeypatch):
    out, written = two_notebooks
    monkeypatch.setattr(run_all.os, "cpu_count", lambda: 2)
    with pytest.raises(RuntimeError, match=r"1 notebook\(s\) failed: 02_bad.ipynb: .*T: must be >= 1"):
        run_all.run("quick", jobs=2)
    ok = nbformat.read(out / "01_ok.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for o in ok.cells[0].outputs)
    assert printed.strip() == "threads 1"              # two kernels on two cores: one thread each
    assert (out / "02_bad.ipynb").exists()             # the failed copy is kept, to read the error in
    assert written == []                               # no ledger refreshed over a failed section


@pytest.mark.parametrize("jobs", [0, -2])
def test_bad_jobs_is_refused_before_any_notebook_runs(two_notebooks, jobs):
    out, _ = two_notebooks
    with pytest.raises(ValueError, match="--jobs: .* >= 1"):
        run_all.run("quick", jobs=jobs)
    assert not out.exists()


def test_side_by_side_starts_the_longest_notebook_first(two_notebooks, monkeypatch, capsys):
    for name, seconds in (("01_ok.ipynb", 3.0), ("02_bad.ipynb", 90.0)):   # papermill's record of the last run
        path = run_all.section_notebooks()[0].parent / name
        nb = nbformat.read(path, as_version=4)
        nb.metadata["papermill"] = {"duration": seconds}
        nbformat.write(nb, path)
    monkeypatch.setattr(run_all.os, "cpu_count", lambda: 2)
    with pytest.raises(RuntimeError):
        run_all.run("quick", jobs=2)
    started = [line.split()[1] for line in capsys.readouterr().out.splitlines() if " -> " in line]
    assert started == ["02_bad.ipynb", "01_ok.ipynb"]
    never = run_all.section_notebooks()[0].parent / "never_run.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), never)
    assert run_all.last_duration(never) == 0.0                          # never executed: started last


def test_one_at_a_time_runs_every_notebook_too(two_notebooks):
    out, written = two_notebooks
    with pytest.raises(RuntimeError, match=r"1 notebook\(s\) failed: 02_bad.ipynb"):
        run_all.run("quick", jobs=1)
    assert (out / "01_ok.ipynb").exists() and written == []
