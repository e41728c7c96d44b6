"""Population training gives each seed the numbers it gets when trained alone."""
import json
from dataclasses import replace

import pytest
import torch

from lib import population
from lib.population import train_population
from lib.config import RunConfig
from lib.model import LoopedTransformer
from lib.step import Diverged
from lib.train import train

BASE = RunConfig(experiment="pop", task="S3", n_train=4, T_train=3, n_layers=2, d_model=16, n_heads=2,
                 batch=16, max_steps=40, warmup=5, eval_count=64, curriculum_start=2, promote_acc=0.3, first_acc=0.3)


def test_stacked_forward_equals_single_models():
    models = []
    for s in range(3):
        torch.manual_seed(s)
        models.append(LoopedTransformer(BASE.model_config()).eval())
    stacked = LoopedTransformer.stack(models)
    tokens = torch.randint(0, 6, (3, 5, 7))
    out = stacked(tokens, 4)
    for p, m in enumerate(models):
        torch.testing.assert_close(out[p], m(tokens[p], 4), atol=1e-5, rtol=1e-5)
        assert stacked.unstack(p).keys() == m.state_dict().keys()
        assert all(torch.equal(v, m.state_dict()[k]) for k, v in stacked.unstack(p).items())


@pytest.mark.parametrize("schedule", ["fixed", "streaming"])
def test_population_matches_single_runs(schedule):
    base = replace(BASE, schedule=schedule, T_train=BASE.n_train + 2) if schedule == "streaming" else BASE
    cfgs = [replace(base, seed=s) for s in (0, 1, 2)]
    pop = train_population(cfgs)
    for cfg, (model, metrics) in zip(cfgs, pop):
        alone, m_alone = train(cfg)
        assert metrics["steps"] == m_alone["steps"]
        assert metrics["promotions"] == m_alone["promotions"]
        for k, v in alone.state_dict().items():
            torch.testing.assert_close(model.state_dict()[k], v, atol=2e-4, rtol=1e-3, msg=k)


@pytest.mark.parametrize("changes", [
    dict(tied=False, pos="learned", norm="peri", outer_norm=True, injection="internal"),   # untied: T_train blocks
    dict(pos="rotary", norm="post", injection="add"),
    dict(pos="scan", injection="none"),
    # lengths drawn per seed after the first promotion (step 20): padded batches, one loop count per seed
    dict(schedule="proportional", loss_loops="tail", lengths="uniform", first_acc=0.05, promote_acc=0.05, max_steps=45),
    dict(schedule="streaming", T_train=6, lengths="uniform", first_acc=0.05, promote_acc=0.05, max_steps=45),
    dict(causal=False, curriculum_start=4),                                  # bidirectional, one length
])
def test_every_batchable_config_matches_single_runs(changes):
    cfgs = [replace(BASE, **{"seed": s, "max_steps": 30, **changes}) for s in (0, 1)]
    assert population.supports(cfgs[0])
    pop = train_population(cfgs)
    for cfg, (model, metrics) in zip(cfgs, pop):
        alone, m_alone = train(cfg)
        assert metrics["steps"] == m_alone["steps"] and metrics["promotions"] == m_alone["promotions"]
        for k, v in alone.state_dict().items():
            torch.testing.assert_close(model.state_dict()[k], v, atol=2e-4, rtol=1e-3, msg=k)


def test_warm_started_population_matches_single_runs():
    parent = LoopedTransformer(BASE.model_config()).state_dict()
    cfgs = [replace(BASE, seed=s, max_steps=20, init_from="pop/0123456789abcdef") for s in (0, 1)]
    assert not population.supports(cfgs[0])           # the store does not pass parent weights to a group
    with pytest.raises(ValueError, match="init_state"):
        train_population(cfgs)
    pop = train_population(cfgs, init_state=parent)
    for cfg, (model, _) in zip(cfgs, pop):
        alone, _ = train(cfg, init_state=parent)
        for k, v in alone.state_dict().items():
            torch.testing.assert_close(model.state_dict()[k], v, atol=2e-4, rtol=1e-3, msg=k)


def test_population_divergence_raises_diverged_naming_the_seed(tmp_path, monkeypatch):
    from lib import step as step_mod
    real = step_mod.F.cross_entropy
    calls = {"n": 0}

    def poisoned(*a, **kw):                            # two seeds: call 2 * 12 + 2 is seed index 1 at step 12
        calls["n"] += 1
        out = real(*a, **kw)
        return out * float("nan") if calls["n"] == 2 * 12 + 2 else out
    monkeypatch.setattr(step_mod.F, "cross_entropy", poisoned)
    cfgs = [replace(BASE, seed=s, checkpoint_every=5) for s in (3, 5)]
    with pytest.raises(Diverged) as err:
        train_population(cfgs, workdir=tmp_path)
    e = err.value
    assert e.seed == 5 and e.step == 12 and e.last_finite_loss == e.last_finite_loss
    assert e.checkpoint == tmp_path / "population.pt"
    assert "seed 5" in str(e) and "step 12" in str(e)


def test_seeds_finishing_at_different_steps_are_frozen():
    cfgs = [replace(BASE, seed=s, max_steps=60, final_acc=0.3, polish_steps=5) for s in (0, 1)]
    pop = train_population(cfgs)
    for cfg, (model, metrics) in zip(cfgs, pop):
        alone, m_alone = train(cfg)
        assert metrics["steps"] == m_alone["steps"]
        for k, v in alone.state_dict().items():
            torch.testing.assert_close(model.state_dict()[k], v, atol=2e-4, rtol=1e-3, msg=k)


def test_population_rejects_mixed_configs():
    with pytest.raises(ValueError, match="cfgs"):
        train_population([BASE, replace(BASE, T_train=5)])
    # what does not batch: loop counts drawn per seed, bidirectional attention over padded lengths
    for changes in (dict(schedule="log"), dict(T_jitter=1.5), dict(causal=False), dict(causal=False, lengths="uniform")):
        assert not population.supports(replace(BASE, **changes))
        with pytest.raises(ValueError, match="schedule"):
            train_population([replace(BASE, **changes)])


def test_store_trains_missing_seeds_as_one_population(store_root, monkeypatch):
    from lib import population, store
    calls = []
    real = population.train_population
    monkeypatch.setattr(population, "train_population", lambda cfgs, **kw: calls.append(len(cfgs)) or real(cfgs, **kw))
    cfgs = [replace(BASE, seed=s) for s in (0, 1, 2)]
    store.get_or_train(cfgs[1])                        # one seed already cached
    runs = store.get_or_train_many(cfgs)
    assert calls == [2]                                # the two missing seeds, trained together
    assert [r.config.seed for r in runs] == [0, 1, 2] and all(store.is_done(c) for c in cfgs)
    assert runs[0].metrics["population"] == 2


def test_interrupted_population_resumes_to_the_same_weights(tmp_path, monkeypatch):
    cfgs = [replace(BASE, seed=s, max_steps=40, checkpoint_every=10) for s in (0, 1)]
    reference = train_population(cfgs)
    from lib import tasks
    real_sample = tasks.Task.sample
    calls = {"n": 0}

    def dying_sample(self, *a, **kw):                     # the machine dies during step 26
        calls["n"] += 1
        if calls["n"] > 25 * len(cfgs):
            raise KeyboardInterrupt("injected")
        return real_sample(self, *a, **kw)
    monkeypatch.setattr(tasks.Task, "sample", dying_sample)
    with pytest.raises(KeyboardInterrupt):
        train_population(cfgs, workdir=tmp_path)
    monkeypatch.setattr(tasks.Task, "sample", real_sample)
    state = torch.load(tmp_path / "population.pt", weights_only=True)
    assert state["iteration"] == 20 and state["seeds"] == [0, 1]
    resumed = train_population(cfgs, workdir=tmp_path)
    for (m_ref, met_ref), (m_res, met_res) in zip(reference, resumed):
        assert met_ref["steps"] == met_res["steps"] and met_ref["log"] == met_res["log"]
        for k, v in m_ref.state_dict().items():
            assert torch.equal(m_res.state_dict()[k], v), k
    # a checkpoint of another seed list is not used
    other = train_population([replace(c, seed=c.seed + 5) for c in cfgs], workdir=tmp_path)
    assert [m["steps"] for _, m in other] == [40, 40]


def test_store_marks_the_diverged_seed_of_a_population(store_root, monkeypatch):
    from lib import store
    from lib import step as step_mod
    real = step_mod.F.cross_entropy
    calls = {"n": 0}

    def poisoned(*a, **kw):                            # seed index 1 at step 12, as above
        calls["n"] += 1
        out = real(*a, **kw)
        return out * float("nan") if calls["n"] == 2 * 12 + 2 else out
    monkeypatch.setattr(step_mod.F, "cross_entropy", poisoned)
    cfgs = [replace(BASE, experiment="pop_div", seed=s, checkpoint_every=5) for s in (3, 5)]
    with pytest.raises(Diverged):
        store.get_or_train_many(cfgs)
    assert (store.run_dir(cfgs[1]) / "FAILED").exists() and not (store.run_dir(cfgs[0]) / "FAILED").exists()
    assert "seed 5" in (store.run_dir(cfgs[1]) / "FAILED").read_text()


def test_resumed_population_records_each_seed_its_share_of_the_whole_program(store_root):
    from lib import store
    cfgs = [replace(BASE, seed=s, max_steps=40, checkpoint_every=10) for s in (0, 1)]
    d = store.run_dir(cfgs[0])
    d.mkdir(parents=True)
    train_population([replace(c, max_steps=20) for c in cfgs], workdir=d)     # the first stretch, checkpointed
    state = torch.load(d / "population.pt", weights_only=True)
    here = f"cpu x{torch.get_num_threads()}"
    assert all(set(r["spent"]) == {here} for r in state["runs"])
    for r in state["runs"]:
        r["spent"][here] += 1000.0                                      # as if the first stretch took 1,000 s more
    torch.save(state, d / "population.pt")
    for run in store.get_or_train_many(cfgs):
        done = json.loads((run.path / "DONE").read_text())
        assert done["train_spent"][here] >= 500.0 and "train_wall_partial" not in done


def test_population_checkpoint_time_is_read_for_its_own_seeds(tmp_path):
    from lib import store
    ckpt = tmp_path / "population.pt"
    assert store.trained_before(ckpt, [0, 1]) == {}                       # no checkpoint: nothing before
    torch.save({"seeds": [0, 1], "runs": [{"spent": {"cpu x1": 12.5}}, {"spent": {"cpu x1": 12.5}}]}, ckpt)
    assert store.trained_before(ckpt, [0, 1]) == {"cpu x1": 12.5}
    assert store.trained_before(ckpt, [5, 6]) == {}                       # another seed list: training ignores it
    torch.save({"seeds": [0, 1], "runs": [{}, {}]}, ckpt)                 # written before the record
    assert store.trained_before(ckpt, [0, 1]) is None
