"""lib.sweep: grid expansion, bad input (names and values, refused before any kernel starts), the tidy
summary.csv and its seeds combined per configuration (constructed points), skipping DONE points on
restart, failure reporting, the local pool and submitit's executors on tiny real notebooks, and
(slow) a real single-node Slurm."""
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from scipy import stats

from lib import sweep
from lib.sweep import SweepError, expand_grid, run_sweep

ROOT = Path(__file__).resolve().parent.parent


def make_notebook(path: Path, params: str, body: str) -> Path:
    """A notebook with a `parameters` cell and one code cell (the kernel is the project's python3)."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# tiny"), cell, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


# Records through lib.rules.record, so LOOPS_POINT_DIR (set by the sweep) is what routes it.
RECORDING = ("from lib import rules\n"
             "rules.record('tiny', {'value': SEED * SCALE, 'nested': {'x': 1}, 'label': LABEL})")
# Raises in the body cell for seed 1 only.
RAISING = RECORDING + "\nif SEED == 1:\n    raise ValueError('seed one is bad')"


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    return make_notebook(tmp_path / "tiny.ipynb", "SEED = 0\nSCALE = 1.0\nLABEL = 'a'", RECORDING)


def test_grid_expansion_is_the_exact_product_with_seeds_innermost(tmp_path):
    nb = make_notebook(tmp_path / "nb.ipynb", "PROFILE = 'quick'\nSEEDS = [0]\nT = 4", "pass")
    points = expand_grid(nb, {"PROFILE": ["smoke", "quick"], "T": 8}, seeds="0-1", name="g", root=tmp_path)
    assert [p.params for p in points] == [
        {"PROFILE": "smoke", "T": 8, "SEEDS": [0]}, {"PROFILE": "smoke", "T": 8, "SEEDS": [1]},
        {"PROFILE": "quick", "T": 8, "SEEDS": [0]}, {"PROFILE": "quick", "T": 8, "SEEDS": [1]}]
    assert all(p.folder.parent == tmp_path / "sweeps" / "g" for p in points)
    assert len({p.id for p in points}) == 4 and all(len(p.id) == 12 for p in points)
    # the id depends on the notebook's name and the parameters only, not on their order
    again = expand_grid(nb, {"T": [8], "PROFILE": ["smoke", "quick"]}, seeds=[0, 1], name="g", root=tmp_path)
    assert sorted(p.id for p in again) == sorted(p.id for p in points)


def test_a_single_seed_parameter_gets_a_scalar(tmp_path):
    nb = make_notebook(tmp_path / "nb.ipynb", "SEED = 0", "pass")
    assert [p.params for p in expand_grid(nb, seeds="3,5", root=tmp_path)] == [{"SEED": 3}, {"SEED": 5}]
    assert sweep.parse_seeds("0-2,7") == [0, 1, 2, 7]


def test_command_line_values_and_grid_files(tmp_path):
    assert sweep.parse_param("PROFILE=smoke") == ("PROFILE", ["smoke"])
    assert sweep.parse_param("T=[8, 16]") == ("T", [8, 16])
    assert sweep.parse_param("SEEDS=[[0,1],[2]]") == ("SEEDS", [[0, 1], [2]])
    (tmp_path / "g.yaml").write_text("grid:\n  PROFILE: [smoke]\nseeds: [0, 1]\nname: s\n")
    (tmp_path / "g.json").write_text(json.dumps({"grid": {"PROFILE": ["smoke"]}, "seeds": [0, 1], "name": "s"}))
    assert sweep.load_grid_file(tmp_path / "g.yaml") == sweep.load_grid_file(tmp_path / "g.json")


@pytest.mark.parametrize("kwargs, message", [
    ({"grid": {"PROFIL": ["smoke"]}}, "unknown parameter 'PROFIL' for nb.ipynb; allowed: ['PROFILE', 'T']"),
    ({"seeds": "0-3"}, "--seeds: nb.ipynb has no SEED or SEEDS parameter; its parameters: ['PROFILE', 'T']"),
    ({"grid": {"T": []}}, "parameter 'T' has an empty list of values"),
    ({"executor": "kubernetes"}, "--executor: unknown 'kubernetes'; allowed: ['local', 'slurm'"),
    ({"workers": 0}, "--workers: must be an integer >= 1"),
    ({"name": "../up"}, "--name: '../up' is not a usable folder name"),
    ({"slurm": sweep.SlurmOptions(partition="gpu")}, "--partition: only for --executor slurm (got --executor local)"),
])
def test_bad_input_fails_before_any_work(tmp_path, monkeypatch, kwargs, message):
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    nb = make_notebook(tmp_path / "nb.ipynb", "PROFILE = 'quick'\nT = 4", "pass")
    with pytest.raises(SweepError) as err:
        run_sweep(nb, **kwargs)
    assert message in str(err.value)
    assert not (tmp_path / "outputs").exists()


def test_bad_seeds_and_a_cli_error_exit_2(tmp_path, capsys):
    with pytest.raises(SweepError, match="--seeds: cannot read 'x'"):
        sweep.parse_seeds("0,x")
    nb = make_notebook(tmp_path / "nb.ipynb", "SEED = 0", "pass")
    assert sweep.main([str(nb), "--param", "NOPE=1"]) == 2
    assert "unknown parameter 'NOPE'" in capsys.readouterr().err


SHARED = "PROFILE = 'quick'\nDEVICE = 'auto'\nSEEDS = None\nT = 4"      # the section notebooks' shared parameters


@pytest.mark.parametrize("kwargs, message", [
    ({"grid": {"PROFILE": ["smoke", "bogus"]}},
     "grid: parameter 'PROFILE' has unknown value 'bogus'; allowed: ['quick', 'paper', 'smoke']"),
    ({"grid": {"DEVICE": ["gpu"]}}, "grid: parameter 'DEVICE' has unknown value 'gpu'; allowed: ['auto', 'cpu', 'cuda']"),
    ({"seeds": "98-100"}, "--seeds: seed 100 is reserved for pre-registered confirmatory runs (lib.config.RESERVED_SEEDS: "
                          "100-199); allowed: integers 0-99"),
    ({"seeds": [250]}, "--seeds: seed 250 is out of range; allowed: integers 0-99"),
    ({"seeds": [-1]}, "--seeds: seed -1 is not an integer >= 0; allowed: integers 0-99"),
    ({"grid": {"SEEDS": [[0], [1, 150]]}}, "grid: parameter 'SEEDS': seed 150 is reserved"),
    ({"grid": {"SEEDS": [3]}}, "grid: parameter 'SEEDS' takes lists of seeds (one list per point"),
    ({"grid": {"SEEDS": [[0], ["a"]]}}, "grid: parameter 'SEEDS': seed 'a' is not an integer >= 0"),
    ({"grid": {"PROFILE": ["smoke"], "SEDS": [[0]]}}, "unknown parameter 'SEDS' for nb.ipynb; allowed: ['PROFILE', "),
])
def test_bad_values_fail_before_any_kernel_starts(tmp_path, monkeypatch, kwargs, message):
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    started = []
    monkeypatch.setattr(sweep.run, "run_local_pool", lambda *a: started.append(a))
    nb = make_notebook(tmp_path / "nb.ipynb", SHARED, "pass")
    with pytest.raises(SweepError) as err:
        run_sweep(nb, **kwargs)
    assert message in str(err.value)
    assert not started and not (tmp_path / "outputs").exists()


def test_a_reserved_seed_in_a_grid_SEED_is_refused(tmp_path):
    nb = make_notebook(tmp_path / "nb.ipynb", "SEED = 0", "pass")
    with pytest.raises(SweepError, match="grid: parameter 'SEED': seed 120 is reserved .*allowed: integers 0-99"):
        expand_grid(nb, {"SEED": [0, 120]}, root=tmp_path)
    assert [p.params for p in expand_grid(nb, {"SEED": [0, 99]}, root=tmp_path)] == [{"SEED": 0}, {"SEED": 99}]


def test_bad_values_on_the_command_line_exit_2_naming_the_parameter(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    nb = make_notebook(tmp_path / "nb.ipynb", SHARED, "pass")
    assert sweep.main([str(nb), "--param", "PROFILE=bogus", "--seeds", "0-3"]) == 2
    assert "grid: parameter 'PROFILE' has unknown value 'bogus'; allowed: ['quick', 'paper', 'smoke']" \
        in capsys.readouterr().err
    (tmp_path / "g.yaml").write_text("grid:\n  DEVICE: [cpu]\nseeds: [0, 150]\n")
    assert sweep.main([str(nb), "--grid", str(tmp_path / "g.yaml")]) == 2
    assert "--seeds: seed 150 is reserved for pre-registered confirmatory runs" in capsys.readouterr().err
    (tmp_path / "g.yaml").write_text("grid:\n  DEVIC: [cpu]\n")
    assert sweep.main([str(nb), "--grid", str(tmp_path / "g.yaml")]) == 2
    assert "unknown parameter 'DEVIC'" in capsys.readouterr().err
    assert not (tmp_path / "outputs").exists()


def fake_point(point, status: str | None, **results) -> None:
    """A point as a worker leaves it, without running anything: status.json, DONE when done, and
    results/<stem>.json for each keyword. status None: a point that never started."""
    if status is None:
        return
    (point.folder / "results").mkdir(parents=True)
    for stem, content in results.items():
        (point.folder / "results" / f"{stem}.json").write_text(json.dumps(content))
    record = {"point": point.id, "params": point.params, "status": status, "wall_s": 1.5}
    if status != "done":
        record.update(cell_index=3, ename="ValueError", evalue="broke")
    (point.folder / "status.json").write_text(json.dumps(record))
    if status == "done":
        (point.folder / "DONE").write_text("")


@pytest.fixture
def constructed(tmp_path, monkeypatch):
    """A finished 2 x 3 sweep (T x seeds) whose points recorded different keys; nothing runs.
    T=4: three seeds done, acc 0.5/0.6/0.7, the last one recording an extra key;
    T=8: seed 0 done, seed 1 failed after recording a partial acc, seed 2 never ran."""
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    nb = make_notebook(tmp_path / "nb.ipynb", "SEED = 0\nT = 4\nLABEL = 'a'", "pass")
    points = expand_grid(nb, {"T": [4, 8]}, seeds="0-2", name="constructed")
    t4, t8 = points[:3], points[3:]
    for acc, x, point in zip([0.5, 0.6, 0.7], [1, 1, 1], t4):
        late = {"late": 5} if point.params["SEED"] == 2 else {}
        fake_point(point, "done", tiny={"acc": acc, "nested": {"x": x}, "label": "a", **late})
    fake_point(t8[0], "done", tiny={"acc": 0.9, "nested": {"x": 2}, "label": "b"})
    fake_point(t8[1], "failed", tiny={"acc": 0.1})
    fake_point(t8[2], None)
    return nb, points


def run_constructed(nb, monkeypatch, **kwargs):
    """run_sweep over the constructed points, with the executor stubbed out: the points not done
    stay as constructed, and the tables are written from their folders."""
    monkeypatch.setattr(sweep.run, "run_local_pool", lambda specs, workers, report: None)
    return run_sweep(nb, workers=1, **kwargs)


def test_summary_has_one_row_per_point_and_the_same_columns_for_every_row(constructed, monkeypatch):
    nb, points = constructed
    result = run_constructed(nb, monkeypatch, grid={"T": [4, 8]}, seeds="0-2", name="constructed")
    assert result.skipped == 4 and not result.ok
    with open(result.folder / "summary.csv", newline="") as f:
        reader = csv.reader(f)
        header, *lines = list(reader)
    assert header == ["point", "T", "SEED", "seed", "status", "wall_s", "error", "acc", "nested.x", "label", "late"]
    assert len(lines) == 6 and all(len(line) == len(header) for line in lines)
    table = sweep.read_summary(result.folder / "summary.csv")
    assert [(r["T"], r["seed"], r["status"], r["acc"], r["nested.x"], r["late"]) for r in table] == [
        ("4", "0", "done", "0.5", "1", ""), ("4", "1", "done", "0.6", "1", ""), ("4", "2", "done", "0.7", "1", "5"),
        ("8", "0", "done", "0.9", "2", ""), ("8", "1", "failed", "0.1", "", ""), ("8", "2", "unfinished", "", "", "")]
    assert (table[4]["error"], table[5]["error"]) == ("cell 3: ValueError: broke", "never ran")
    # in memory, the same rows with every column (None where a point lacks a value)
    assert all(list(r) == header for r in result.rows) and result.rows[0]["late"] is None


def test_seeds_are_combined_per_configuration_with_a_t_interval(constructed, monkeypatch):
    nb, points = constructed
    result = run_constructed(nb, monkeypatch, grid={"T": [4, 8]}, seeds="0-2", name="constructed")
    table = sweep.read_summary(result.folder / "summary_by_config.csv")
    assert list(table[0]) == ["T", "n_points", "n_done", *(f"{c}.{k}" for c in ("acc", "nested.x", "late")
                                                             for k in ("n", "mean", "ci95_low", "ci95_high"))]
    t4, t8 = result.configs
    assert (t4["T"], t4["n_points"], t4["n_done"], t4["acc.n"]) == (4, 3, 3, 3)
    assert t4["acc.mean"] == pytest.approx(0.6)
    low, high = stats.t.interval(0.95, 2, loc=0.6, scale=stats.sem([0.5, 0.6, 0.7]))
    assert (t4["acc.ci95_low"], t4["acc.ci95_high"]) == (pytest.approx(low), pytest.approx(high))
    assert (t4["nested.x.mean"], t4["nested.x.ci95_low"], t4["nested.x.ci95_high"]) == (1, 1, 1)  # no spread
    assert (t4["late.n"], t4["late.mean"], t4["late.ci95_low"]) == (1, 5, None)   # one seed: no interval
    # T=8: only the done seed counts (the failed one's partial acc does not), so n = 1 and no interval
    assert (t8["n_points"], t8["n_done"], t8["acc.n"], t8["acc.mean"], t8["acc.ci95_low"]) == (3, 1, 1, 0.9, None)
    assert (t8["late.n"], t8["late.mean"]) == (0, None)
    assert "label.mean" not in t4                             # a text result is not averaged
    assert (table[1]["T"], table[1]["acc.n"], table[1]["acc.mean"], table[1]["acc.ci95_low"]) == ("8", "1", "0.9", "")


def test_a_seed_list_parameter_is_one_seed_per_point_and_not_a_configuration(tmp_path):
    nb = make_notebook(tmp_path / "nb.ipynb", SHARED, "pass")
    points = expand_grid(nb, {"PROFILE": ["smoke"], "T": [4, 8]}, seeds="0-1", name="s", root=tmp_path)
    for point, acc in zip(points, [1.0, 2.0, 3.0, 5.0]):
        fake_point(point, "done", tiny={"acc": acc})
    rows = sweep.summary_rows(points)
    assert [(r["SEEDS"], r["seed"]) for r in rows] == [("[0]", 0), ("[1]", 1), ("[0]", 0), ("[1]", 1)]
    configs = sweep.by_config(rows, list(points[0].params))
    assert [(c["PROFILE"], c["T"], c["acc.n"], c["acc.mean"]) for c in configs] == [("smoke", 4, 2, 1.5),
                                                                                     ("smoke", 8, 2, 4.0)]
    assert "SEEDS" not in configs[0]


def test_result_columns_do_not_depend_on_which_files_a_point_recorded(tmp_path):
    """A point that recorded a second results file prefixes every point's columns with the file's
    stem, not only its own; a key that clashes with a fixed column is prefixed too."""
    nb = make_notebook(tmp_path / "nb.ipynb", "SEED = 0", "pass")
    first, second = expand_grid(nb, seeds="0-1", name="s", root=tmp_path)
    fake_point(first, "done", tiny={"acc": 1.0, "status": "ok"})
    fake_point(second, "done", tiny={"acc": 2.0}, extra={"n": 3})
    rows = sweep.summary_rows([first, second])
    assert list(rows[0]) == list(rows[1]) == ["point", "SEED", "seed", "status", "wall_s", "error", "tiny.acc",
                                              "tiny.status", "extra.n"]
    assert [(r["status"], r["tiny.acc"], r["tiny.status"], r["extra.n"]) for r in rows] == [
        ("done", 1.0, "ok", None), ("done", 2.0, None, 3)]
    alone = sweep.summary_rows([first])                       # one results file: keys unprefixed, but no clash
    assert list(alone[0])[-2:] == ["acc", "tiny.status"] and alone[0]["status"] == "done"


def test_local_pool_runs_every_point_and_a_restart_runs_only_the_missing_one(tiny, tmp_path, capsys):
    first = run_sweep(tiny, {"SCALE": [2.0]}, seeds="0-2", name="restart", workers=2)
    assert first.ok and first.ran == 3 and first.skipped == 0
    table = list(csv.DictReader(open(first.folder / "summary.csv")))
    assert [(r["SEED"], r["status"], r["value"], r["nested.x"], r["label"]) for r in table] == [
        ("0", "done", "0.0", "1", "a"), ("1", "done", "2.0", "1", "a"), ("2", "done", "4.0", "1", "a")]
    by_config = sweep.read_summary(first.folder / "summary_by_config.csv")       # the three seeds combined
    assert [(r["SCALE"], r["n_done"], r["value.n"], r["value.mean"]) for r in by_config] == [("2.0", "3", "3", "2.0")]
    for row in first.rows:       # every point's artefacts are in its own folder
        point = first.folder / row["point"]
        assert {f.name for f in point.iterdir()} >= {"params.json", "notebook.ipynb", "status.json", "DONE", "results"}
        assert json.loads((point / "results" / "tiny.json").read_text())["value"] == row["value"]
    assert not (tmp_path / "outputs" / "results").exists()     # nothing went to the shared results folder

    # An interrupted sweep: the middle point never finished. The restart runs it and only it.
    interrupted = first.folder / first.rows[1]["point"]
    (interrupted / "DONE").unlink()
    untouched = {r["point"]: (first.folder / r["point"] / "notebook.ipynb").stat().st_mtime_ns for r in first.rows}
    capsys.readouterr()
    second = run_sweep(tiny, {"SCALE": [2.0]}, seeds="0-2", name="restart", workers=2)
    assert second.ok and second.ran == 1 and second.skipped == 2
    assert "3 points, 2 already done (skipped), 1 to run" in capsys.readouterr().out
    for point, mtime in untouched.items():
        changed = (first.folder / point / "notebook.ipynb").stat().st_mtime_ns != mtime
        assert changed == (point == interrupted.name), point
    assert [r["value"] for r in second.rows] == [0.0, 2.0, 4.0]


def test_a_failing_point_reports_its_cell_and_error_and_the_others_go_on(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    nb = make_notebook(tmp_path / "raising.ipynb", "SEED = 0\nSCALE = 1.0\nLABEL = 'a'", RAISING)
    result = run_sweep(nb, seeds="0-1", name="fails", workers=2)
    assert not result.ok
    done, failed = result.rows
    assert done["status"] == "done" and failed["status"] == "failed"
    status = json.loads((result.folder / failed["point"] / "status.json").read_text())
    # cells: markdown 0, parameters 1, papermill's injected parameters 2, the raising body 3
    assert (status["cell_index"], status["ename"], status["evalue"]) == (3, "ValueError", "seed one is bad")
    assert status["cell_source"].startswith("from lib import rules")       # an excerpt of the failing cell
    assert failed["error"].startswith("cell 3") and "ValueError: seed one is bad" in failed["error"]
    assert (result.folder / failed["point"] / "notebook.ipynb").exists()      # the executed notebook, for reading
    assert not (result.folder / failed["point"] / "DONE").exists()
    out = capsys.readouterr().out
    assert "failed" in out and "cell 3" in out and "ValueError: seed one is bad" in out
    assert sweep.main([str(nb), "--seeds", "0-1", "--name", "fails"]) == 1     # failed points re-run, fail again


@pytest.mark.parametrize("executor", ["debug", "submitit-local"])
def test_submitit_executors_run_real_notebooks(tiny, executor):
    result = run_sweep(tiny, {"LABEL": ["b"]}, seeds="0-1", name=executor, executor=executor, poll_s=0.5,
                       max_wait_min=3)
    assert result.ok and [r["value"] for r in result.rows] == [0.0, 1.0]
    assert [r["label"] for r in result.rows] == ["b", "b"]
    assert (result.folder / "slurm_logs").is_dir()


def test_waiting_for_jobs_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    nb = make_notebook(tmp_path / "slow.ipynb", "SLEEP_S = 1", "import time\ntime.sleep(SLEEP_S)")
    t0 = time.time()
    result = run_sweep(nb, {"SLEEP_S": [30]}, name="slow", executor="submitit-local", poll_s=0.5, max_wait_min=0.05)
    assert time.time() - t0 < 20
    assert [r["status"] for r in result.rows] == ["unfinished"] and "after 0.05 min" in result.rows[0]["error"]
    assert not (result.folder / result.rows[0]["point"] / "DONE").exists()


def test_slurm_options_become_sbatch_lines(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "srun").write_text("#!/bin/sh\n")       # submitit looks for srun; nothing runs
    (tmp_path / "bin" / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    options = sweep.SlurmOptions(partition="gpu", account="proj", time_min=90, cpus=4, mem_gb=16, gpus=1,
                                 extra={"qos": "high"}, max_parallel=2)
    ex = sweep.executors._make_submitit_executor("slurm", tmp_path / "logs", options, "budget", n_points=8)
    lines = set(ex._executor._make_submission_file_text("python -m x", "uid").splitlines())
    assert {"#SBATCH --partition=gpu", "#SBATCH --account=proj", "#SBATCH --time=90", "#SBATCH --cpus-per-task=4",
            "#SBATCH --mem=16GB", "#SBATCH --gpus-per-node=1", "#SBATCH --qos=high",
            "#SBATCH --job-name=sweep-budget"} <= lines


class FakeEndedJob:
    """A submitit job the scheduler reports ended without a result file (e.g. after scancel), or
    with the given result (a worker that recorded its kernel's death before the job was killed)."""
    def __init__(self, folder: Path, state: str, result: dict | None = None):
        self.job_id, self.state, self._result = "42_0", state, result
        self.paths = type("Paths", (), {"result_pickle": folder / "result.pkl"})()
        if result is not None:
            self.paths.result_pickle.write_text("")

    def result(self):
        return self._result


@pytest.mark.parametrize("state, status", [("CANCELLED by 0", "cancelled"), ("TIMEOUT", "failed"),
                                           ("OUT_OF_MEMORY", "failed"), ("INTERRUPTED", "failed")])
def test_a_job_that_ended_without_a_result_is_reported_not_waited_for(tmp_path, state, status):
    spec = {"folder": str(tmp_path / "p"), "params": {"SEED": 0}}
    job = FakeEndedJob(tmp_path, state)
    assert sweep.job_outcome(job, spec, "RUNNING", {}, grace_s=0) is None
    outcome = sweep.job_outcome(job, spec, state, {}, grace_s=0)
    assert outcome["status"] == status and state.split()[0] in outcome["evalue"]
    assert json.loads((tmp_path / "p" / "status.json").read_text())["status"] == status


def test_a_kernel_killed_by_scancel_is_reported_as_cancelled(tmp_path):
    spec = {"folder": str(tmp_path / "p"), "params": {"SEED": 0}}
    died = {"status": "failed", "ename": "DeadKernelError", "evalue": "Kernel died", "wall_s": 2.0}
    job = FakeEndedJob(tmp_path, "CANCELLED by 0", died)
    assert sweep.job_outcome(job, spec, "RUNNING", {}, grace_s=60) is None       # waits for the final state
    outcome = sweep.job_outcome(job, spec, "CANCELLED by 0", {}, grace_s=60)
    assert outcome["status"] == "cancelled" and "DeadKernelError" in outcome["evalue"]
    # a notebook that genuinely failed in a job that completed stays failed
    assert sweep.job_outcome(job, spec, "COMPLETED", {}, grace_s=60) is died


def test_real_slurm_single_node(capsys):
    """tests/slurm_single_node.sh: a real Slurm with accounting on this machine, a 4-seed sweep of
    03_budget_law (smoke) as a job array, one cancelled job, teardown. Needs root or passwordless
    sudo and Debian's packages; LOOPS_SKIP_SLURM=1 skips it on a developer's laptop."""
    if os.environ.get("LOOPS_SKIP_SLURM") == "1":
        pytest.skip("LOOPS_SKIP_SLURM=1")
    t0 = time.time()
    env = {**os.environ, "PY": sys.executable, "OMP_NUM_THREADS": "1"}
    env.pop("LOOPS_OUTPUTS", None)
    try:
        proc = subprocess.run(["bash", str(ROOT / "tests" / "slurm_single_node.sh")], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=660)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"the Slurm check did not stop by itself within 660 s:\n{err.stdout}")
    wall = time.time() - t0
    with capsys.disabled():
        print(f"\n[test_real_slurm_single_node] slurm check wall time: {wall:.0f} s (exit {proc.returncode})")
    output = proc.stdout[-6000:] + proc.stderr[-3000:]
    if proc.returncode == 3:
        pytest.fail("Slurm could not be installed or started here (set LOOPS_SKIP_SLURM=1 to skip on a machine "
                    f"without root/apt):\n{output}")
    assert proc.returncode == 0, f"Slurm check failed after {wall:.0f} s:\n{output}"
    assert "all checks passed" in proc.stdout
