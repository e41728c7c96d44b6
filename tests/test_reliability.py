"""Reliability and security: exact resume after SIGKILL, safe concurrency, bad input, safe loading,
divergence. Trainings here are tiny (about a second)."""
import json
import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lib import step as step_mod, store, train as train_mod
from lib.config import RunConfig

ROOT = Path(__file__).resolve().parent.parent
SMALL = dict(experiment="rel", task="S3", n_train=4, T_train=3, n_layers=1, d_model=16, n_heads=2,
             batch=16, max_steps=400, warmup=5, checkpoint_every=20, eval_count=32, final_acc=1.0)


def start(cfg: dict, outputs: Path, lock_timeout=60.0) -> subprocess.Popen:
    env = {**os.environ, "LOOPS_OUTPUTS": str(outputs), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "lib.cli", "run", "--train", "--config", json.dumps(cfg),
                             "--lock-timeout", str(lock_timeout)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def weights(outputs: Path, cfg: dict) -> dict:
    os.environ["LOOPS_OUTPUTS"] = str(outputs)
    try:
        return store.load_run(RunConfig(**cfg)).model.state_dict()
    finally:
        del os.environ["LOOPS_OUTPUTS"]


def test_sigkill_then_resume_matches_uninterrupted(tmp_path):
    twin = finish(start(SMALL, tmp_path / "twin"))
    assert twin["trained_here"]
    rng = random.Random(0)
    p = start(SMALL, tmp_path / "killed")
    run_dir = None
    deadline = time.time() + 120
    while time.time() < deadline and run_dir is None:     # wait for the first checkpoint
        found = list((tmp_path / "killed").glob("runs/rel/*/checkpoint.pt"))
        run_dir = found[0].parent if found else None
        time.sleep(0.01)
    assert run_dir is not None, "no checkpoint appeared"
    time.sleep(rng.uniform(0, 0.3))                       # then a random later step
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    assert not (run_dir / "DONE").exists(), "the run finished before the kill: make it longer"
    killed_at = torch.load(run_dir / "checkpoint.pt", weights_only=True)["step"]
    resumed = finish(start(SMALL, tmp_path / "killed"))
    assert resumed["trained_here"] and 0 < killed_at < SMALL["max_steps"]
    a, b = weights(tmp_path / "twin", SMALL), weights(tmp_path / "killed", SMALL)
    assert all(torch.equal(a[k], b[k]) for k in a)
    metrics = lambda root: json.loads(next(root.glob("runs/rel/*/metrics.json")).read_text())
    assert metrics(tmp_path / "twin") == metrics(tmp_path / "killed")


def test_two_processes_same_run_train_once(tmp_path):
    procs = [start(SMALL, tmp_path), start(SMALL, tmp_path)]
    results = [finish(p) for p in procs]
    assert sorted(r["trained_here"] for r in results) == [False, True]
    assert results[0]["path"] == results[1]["path"]


def test_different_runs_proceed_in_parallel(tmp_path):
    other = {**SMALL, "seed": 1}
    r1, r2 = [finish(p) for p in (start(SMALL, tmp_path), start(other, tmp_path))]
    assert r1["trained_here"] and r2["trained_here"]
    assert r1["start"] < r2["end"] and r2["start"] < r1["end"]     # their trainings overlapped


def test_lock_of_a_killed_process_is_not_stale(tmp_path):
    p = start(SMALL, tmp_path)
    deadline = time.time() + 60
    while time.time() < deadline and not list(tmp_path.glob("runs/rel/*.lock")):
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    t0 = time.time()
    r = finish(start(SMALL, tmp_path, lock_timeout=10))            # would time out if the lock were stale
    assert r["trained_here"] and time.time() - t0 < 60


def test_lock_timeout_has_a_clear_message(store_root):
    from filelock import FileLock
    cfg = RunConfig(**SMALL)
    d = store.run_dir(cfg)
    d.mkdir(parents=True)
    with FileLock(str(d) + ".lock"):
        with pytest.raises(TimeoutError, match="waited 0 s for another process training"):
            store.get_or_train(cfg, lock_timeout=0.2)


# --- bad input ---------------------------------------------------------------------------------
BAD_VALUES = {
    "task": st.sampled_from(["S9", "Q8", "parity2", "", "s4", "A"]),
    "n_train": st.one_of(st.integers(max_value=0), st.floats(allow_nan=True), st.just("8")),
    "T_train": st.one_of(st.integers(max_value=0), st.just(2.5), st.just(None)),
    "d_model": st.integers(min_value=1, max_value=200).filter(lambda d: d % 4 != 0),   # with n_heads = 4
    "n_heads": st.integers(max_value=0),
    "schedule": st.text(max_size=8).filter(lambda s: s not in ("fixed", "log", "streaming")),
    "injection": st.text(max_size=8).filter(lambda s: s not in ("none", "add", "adapter")),
    "lr": st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf"))),
    "batch": st.integers(max_value=0),
    "experiment": st.sampled_from(["", "../escape", "a/b", "x y"]),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_bad_configs_are_rejected_before_any_work(store_root, data):
    field = data.draw(st.sampled_from(sorted(BAD_VALUES)))
    value = data.draw(BAD_VALUES[field])
    kw = {**SMALL, "n_heads": 4, "d_model": 16, field: value}
    before = sorted(store_root.rglob("*")) if store_root.exists() else []
    with pytest.raises(ValueError) as err:
        store.get_or_train(RunConfig(**kw))
    name = "d_model" if field == "n_heads" and isinstance(value, int) and value >= 1 else field
    assert str(err.value).startswith(f"{name}:") or str(err.value).startswith("d_model:"), str(err.value)
    after = sorted(store_root.rglob("*")) if store_root.exists() else []
    assert before == after


def test_papermill_bad_parameter_fails_in_the_validation_cell(tmp_path):
    import papermill as pm
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(ROOT / "notebooks" / "00_quickstart.ipynb"), str(tmp_path / "out.ipynb"),
                            parameters={"T": 0}, cwd=str(ROOT / "notebooks"), progress_bar=False,
                            kernel_name="python3")
    assert "T: must be an integer >= 1, got 0" in str(err.value)
    assert err.value.exec_count <= 3           # the validation cell, before anything is loaded


# --- safe loading -------------------------------------------------------------------------------
class _RunsCode:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/loops_pwned",))


def test_a_pickle_that_would_run_code_is_refused(store_root):
    cfg = RunConfig(**{**SMALL, "max_steps": 5})
    run = store.get_or_train(cfg)
    bad = run.path / "model.pt"
    with open(bad, "wb") as f:
        pickle.dump({"x": _RunsCode()}, f)
    done = json.loads((run.path / "DONE").read_text())       # an attacker can fix up the hash too
    done["model_sha256"] = store._sha256(bad)
    (run.path / "DONE").write_text(json.dumps(done))
    Path("/tmp/loops_pwned").unlink(missing_ok=True)
    with pytest.raises(pickle.UnpicklingError):
        store.load_run(cfg)
    assert not Path("/tmp/loops_pwned").exists()


def test_verify_reports_tampered_runs(store_root):
    store.get_or_train(RunConfig(**{**SMALL, "max_steps": 5}))            # an untouched run beside it
    bad = store.get_or_train(RunConfig(**{**SMALL, "max_steps": 6}))
    assert store.verify() == []
    with open(bad.path / "model.pt", "ab") as f:
        f.write(b"x")
    problems = store.verify()
    assert len(problems) == 1 and bad.path.name in problems[0] and "sha256" in problems[0]


def test_checkpoint_of_another_model_is_refused(tmp_path):
    train_mod.train(RunConfig(**{**SMALL, "max_steps": 20}), workdir=tmp_path)
    with pytest.raises(ValueError, match="checkpoint: .* does not match"):
        train_mod.train(RunConfig(**{**SMALL, "d_model": 32}), workdir=tmp_path)


# --- divergence ---------------------------------------------------------------------------------
def test_divergence_stops_and_marks_the_run_failed(store_root, monkeypatch):
    real = step_mod.F.cross_entropy
    calls = {"n": 0}

    def poisoned(*a, **kw):
        calls["n"] += 1
        out = real(*a, **kw)
        return out * float("nan") if calls["n"] == 45 else out
    monkeypatch.setattr(step_mod.F, "cross_entropy", poisoned)
    cfg = RunConfig(**SMALL)
    with pytest.raises(step_mod.Diverged) as err:
        store.get_or_train(cfg)
    e = err.value
    assert e.step == 44 and e.last_finite_loss == e.last_finite_loss and e.checkpoint.name == "checkpoint.pt"
    assert "step 44" in str(e) and str(e.checkpoint) in str(e)
    assert not store.is_done(cfg) and (store.run_dir(cfg) / "FAILED").exists()
    with pytest.raises(RuntimeError, match="failed before"):
        store.get_or_train(cfg)
