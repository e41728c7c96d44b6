import json
from dataclasses import replace

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


def test_resumed_run_records_its_whole_training_time(store_root):
    cfg = RunConfig(**TINY)
    d = store.run_dir(cfg)
    d.mkdir(parents=True)
    train(RunConfig(**{**TINY, "max_steps": 20}), workdir=d)       # a first stretch, checkpointed at step 20
    state = torch.load(d / "checkpoint.pt", weights_only=True)
    here = f"cpu x{torch.get_num_threads()}"
    assert set(state["spent"]) == {here} and state["spent"][here] > 0
    state["spent"] = {here: state["spent"][here] + 1000.0, "cuda": 50.0}   # as if it had also run on a GPU
    torch.save(state, d / "checkpoint.pt")
    done = json.loads((store.get_or_train(cfg).path / "DONE").read_text())
    assert done["train_spent"]["cuda"] == 50.0 and done["train_spent"][here] >= 1000.0
    assert done["train_wall_s"] == pytest.approx(sum(done["train_spent"].values()), abs=0.2)
    assert "train_wall_partial" not in done


def test_resume_from_a_checkpoint_without_its_time_says_partial(store_root):
    cfg = RunConfig(**TINY)
    d = store.run_dir(cfg)
    d.mkdir(parents=True)
    train(RunConfig(**{**TINY, "max_steps": 20}), workdir=d)
    state = torch.load(d / "checkpoint.pt", weights_only=True)
    del state["spent"]                                                 # a checkpoint written before the record
    torch.save(state, d / "checkpoint.pt")
    done = json.loads((store.get_or_train(cfg).path / "DONE").read_text())
    assert done["train_wall_partial"] is True and "train_spent" not in done


def test_a_fresh_run_records_its_resource(store_root):
    done = json.loads((store.get_or_train(RunConfig(**TINY)).path / "DONE").read_text())
    assert list(done["train_spent"]) == [f"cpu x{torch.get_num_threads()}"] and "train_wall_partial" not in done


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


# --- Paper B / deep-thinking training options -----------------------------------------------------
def test_progressive_batches_draw_their_split_within_T_and_only_then():
    from lib.step import draw_batch
    from lib.train import RunProgress
    cfg = RunConfig(task="S4", n_train=4, T_train=6, loss_loops="progressive", curriculum_start=4)
    gen = torch.Generator().manual_seed(0)
    run, task = RunProgress(cfg), cfg.task_obj()
    splits = [(b.free, b.k, b.T) for b in (draw_batch(cfg, run, task, gen) for _ in range(200))]
    assert all(0 <= f <= T - 1 and 1 <= k <= T - f for f, k, T in splits)
    assert {f for f, _, _ in splits} == set(range(6)) and {k for _, k, _ in splits} == set(range(1, 7))
    again = torch.Generator().manual_seed(0)           # deterministic under the seed
    assert [(b.free, b.k) for b in (draw_batch(cfg, RunProgress(cfg), task, again) for _ in range(200))] == \
        [(f, k) for f, k, _ in splits]
    plain = RunConfig(task="S4", n_train=4, T_train=6, curriculum_start=4)   # other runs draw nothing more
    g1, g2 = torch.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    b = draw_batch(plain, RunProgress(plain), task, g1)
    assert (b.free, b.k) == (0, 0)
    task.sample(plain.batch, 4, g2)
    assert torch.equal(g1.get_state(), g2.get_state())


def test_progressive_step_runs_free_loops_without_gradient_then_k_with_it():
    from lib.model import LoopConfig, LoopedTransformer
    from lib.step import Batch, progressive_logits
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=5, n_classes=4, n_layers=1, d_model=16, n_heads=2))
    tokens = torch.randint(0, 5, (3, 6))
    b = Batch(5, tokens, tokens, 6, 6, free=2, k=3)
    logits, h = progressive_logits(m, tokens, b)
    torch.testing.assert_close(logits, m(tokens, 5))                 # the same function as 5 plain loops
    logits.sum().backward()
    grads = {n: p.grad.clone() for n, p in m.named_parameters()}
    # exactly the gradient of 3 loops from the detached state after 2: none flows through the first 2
    m.zero_grad()
    with torch.no_grad():
        h2 = m(tokens, 2, return_states=True)[1][-1]
    m(tokens, 3, h0=h2).sum().backward()
    assert all(torch.allclose(grads[n], p.grad, atol=1e-6) for n, p in m.named_parameters())
    m.zero_grad()
    m(tokens, 5).sum().backward()                                     # and not that of 5 plain loops
    assert not torch.allclose(grads["embed.weight"], m.embed.weight.grad)


def test_progressive_run_trains_and_resumes_identically(tmp_path):
    cfg = RunConfig(experiment="t", task="parity", n_train=4, T_train=4, n_layers=1, d_model=16, n_heads=2,
                    batch=16, max_steps=24, warmup=2, eval_count=16, checkpoint_every=10, loss_loops="progressive",
                    progressive_alpha=0.5, attn_window=2)     # (step decay: its milestones move with max_steps)
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
    whole, _ = train(cfg, tmp_path / "a")
    partial = replace(cfg, max_steps=12)
    train(partial, tmp_path / "b")                  # stops at 12 with a checkpoint at 10, then resumes
    resumed, _ = train(cfg, tmp_path / "b")
    assert all(torch.equal(p, q) for p, q in zip(whole.state_dict().values(), resumed.state_dict().values()))


def test_step_decay_divides_the_rate_at_its_milestones():
    from lib.train import _lr_at
    cfg = RunConfig(lr=1e-3, warmup=10, max_steps=300, lr_decay="step")
    assert _lr_at(cfg, 50, None) == pytest.approx(1e-3)
    assert _lr_at(cfg, 120, None) == pytest.approx(1e-4) and _lr_at(cfg, 200, None) == pytest.approx(1e-5)
    assert _lr_at(cfg, 205, 200) == pytest.approx(1e-5 * (1 - 5 / cfg.polish_steps))   # polishing from there
    assert _lr_at(replace(cfg, lr_decay="constant"), 250, None) == pytest.approx(1e-3)


@pytest.mark.parametrize("kw,msg", [(dict(loss_loops="progressive", tied=False), "loss_loops"),
                                    (dict(progressive_alpha=1.5), "progressive_alpha"), (dict(lr_decay="cos"), "lr_decay"),
                                    (dict(attn_window=-1), "attn_window"), (dict(progressive_alpha=0.5), "progressive_alpha"),
                                    (dict(progressive_alpha="1", loss_loops="progressive"), "progressive_alpha"),
                                    (dict(residual_init="depth"), "residual_init")])
def test_bad_training_options_are_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        RunConfig(**kw)


def test_training_cost_sums_the_records(store_root):
    runs = [store.get_or_train(RunConfig(**{**TINY, "seed": s, "max_steps": 10})) for s in range(4)]
    done = [json.loads((r.path / "DONE").read_text()) for r in runs]
    done[0]["train_spent"] = {"cpu x2": 100.0, "cuda": 30.0}          # resumed on a GPU after 100 s on 2 threads
    done[1]["train_spent"] = {"cpu x1": 50.0}
    for d in done[2:]:
        del d["train_spent"]
    done[2]["train_wall_s"] = 7.0                                      # a record from before costs by resource
    done[3].update(train_wall_s=3.0, train_wall_partial=True)
    for r, d in zip(runs, done):
        (r.path / "DONE").write_text(json.dumps(d))
    cost = store.training_cost(runs)
    assert cost == {"runs": 4, "cpu_s": 250.0, "gpu_s": 30.0, "by_resource": 2, "legacy": 1, "legacy_wall_s": 7.0,
                    "partial": 1, "partial_wall_s": 3.0, "unknown": 0}
    (runs[3].path / "DONE").write_text(json.dumps({**done[3], "train_wall_s": None}))     # no time at all
    cost = store.training_cost(runs)
    assert (cost["unknown"], cost["partial"], cost["partial_wall_s"]) == (1, 0, 0.0)
