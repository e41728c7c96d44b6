import json
import os

import pytest
import torch

from lib import store
from lib import config
from lib.config import RunConfig, config_hash
from lib.train import train

PINNED_HASH = "98076558198029ef"
TINY = dict(experiment="test", task="S3", n_train=3, T_train=3, n_layers=1, d_model=16, n_heads=2,
            batch=16, max_steps=40, warmup=5, checkpoint_every=10, eval_count=32)


def weights(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_two_trainings_give_identical_weights():
    cfg = RunConfig(**TINY)
    a, ma = train(cfg)
    b, mb = train(cfg)
    for k, v in weights(a).items():
        assert torch.equal(v, b.state_dict()[k]), k
    assert ma["log"] == mb["log"]
    c, _ = train(RunConfig(**{**TINY, "seed": 1}))
    assert not torch.equal(a.state_dict()["readout.weight"], c.state_dict()["readout.weight"])


def test_resume_from_checkpoint_matches_uninterrupted(tmp_path):
    full, _ = train(RunConfig(**TINY))
    # the same run stopped after 20 steps (its checkpoint written at step 20), then resumed to 40
    train(RunConfig(**{**TINY, "max_steps": 20}), workdir=tmp_path)
    assert (tmp_path / "checkpoint.pt").exists()
    resumed, metrics = train(RunConfig(**TINY), workdir=tmp_path)
    assert metrics["steps"] == 40
    assert metrics == train(RunConfig(**TINY))[1]          # the training log too, not only the weights
    for k, v in full.state_dict().items():
        assert torch.equal(v, resumed.state_dict()[k]), k


def test_get_or_train_caches(store_root):
    cfg = RunConfig(**TINY)
    run = store.get_or_train(cfg)
    assert (run.path / "DONE").exists() and run.path.parent.parent == store_root / "runs"
    assert not (run.path / "checkpoint.pt").exists()
    again = store.get_or_train(cfg, train_if_missing=False)
    for k, v in run.model.state_dict().items():
        assert torch.equal(v, again.model.state_dict()[k])
    assert again.metrics == run.metrics


def test_hash_depends_on_config_and_code_version(monkeypatch):
    a, b = RunConfig(**TINY), RunConfig(**{**TINY, "T_train": 4})
    assert config_hash(a) != config_hash(b)
    h = config_hash(a)
    monkeypatch.setattr(config, "CODE_VERSION", "other")
    assert config_hash(a) != h


def test_hash_is_pinned():
    # Changing a RunConfig default or the hash scheme orphans every committed run: this pin makes it loud.
    assert config_hash(RunConfig(**TINY)) == PINNED_HASH


def test_interrupted_write_is_never_read_as_done(store_root, monkeypatch):
    cfg = RunConfig(**TINY)

    def crash(path, obj):                 # the process dies while writing metrics, before DONE
        raise OSError("simulated crash during write")
    monkeypatch.setattr(store, "atomic_write_json", crash)
    with pytest.raises(OSError):
        store.get_or_train(cfg)
    monkeypatch.undo()
    monkeypatch.setenv("LOOPS_OUTPUTS", str(store_root))
    assert not store.is_done(cfg)
    with pytest.raises(FileNotFoundError, match="no DONE"):
        store.load_run(cfg)
    with pytest.raises(FileNotFoundError, match="not in the store"):
        store.get_or_train(cfg, train_if_missing=False)
    run = store.get_or_train(cfg)         # a later call finishes the run properly
    assert store.is_done(cfg) and run.metrics["steps"] == 40


def test_tampered_weights_are_refused(store_root):
    cfg = RunConfig(**TINY)
    run = store.get_or_train(cfg)
    with open(run.path / "model.pt", "ab") as f:
        f.write(b"\0")
    with pytest.raises(ValueError, match="sha256"):
        store.load_run(cfg)


@pytest.mark.parametrize("kw,param", [
    (dict(task="S9"), "task"), (dict(task="mod5"), "task"), (dict(n_train=0), "n_train"),
    (dict(T_train=0), "T_train"), (dict(d_model=30, n_heads=4), "d_model"), (dict(schedule="cosine"), "schedule"),
    (dict(lr=-1.0), "lr"), (dict(experiment="../x"), "experiment"), (dict(injection="concat"), "injection")])
def test_bad_config_rejected_before_any_work(store_root, kw, param):
    with pytest.raises(ValueError, match=param):
        RunConfig(**{**TINY, **kw})
    assert not store_root.exists()


def test_every_committed_run_keeps_its_hash():
    # A new RunConfig field whose default changes nothing must leave every stored run's name alone.
    from lib.paths import PROJECT_ROOT
    stored = sorted((PROJECT_ROOT / "outputs" / "runs").glob("*/*/config.json"))
    assert len(stored) >= 80
    for path in stored:
        assert config_hash(RunConfig.from_dict(json.loads(path.read_text()))) == path.parent.name, path
