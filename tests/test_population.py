"""Population training gives each seed the numbers it gets when trained alone."""
from dataclasses import replace

import pytest
import torch

from lib.population import StackedLoopedTransformer, train_population
from lib.train import RunConfig, train

BASE = RunConfig(experiment="pop", task="S3", n_train=4, T_train=3, n_layers=2, d_model=16, n_heads=2,
                 batch=16, max_steps=40, warmup=5, eval_count=64, curriculum_start=2, promote_acc=0.3, first_acc=0.3)


def test_stacked_forward_equals_single_models():
    from lib.model import LoopedTransformer
    models = []
    for s in range(3):
        torch.manual_seed(s)
        models.append(LoopedTransformer(BASE.model_config()).eval())
    stacked = StackedLoopedTransformer(models)
    tokens = torch.randint(0, 6, (3, 5, 7))
    out = stacked(tokens, 4)
    for p, m in enumerate(models):
        torch.testing.assert_close(out[p], m(tokens[p], 4), atol=1e-5, rtol=1e-5)


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
    with pytest.raises(ValueError, match="schedule"):
        train_population([replace(BASE, schedule="log")])


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
