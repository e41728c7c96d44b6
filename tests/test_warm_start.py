"""Warm start and lineage (budget annealing, Paper A §7)."""
import json
from dataclasses import replace

import pytest
import torch

from lib import config, store
from lib.config import RunConfig

PARENT = RunConfig(experiment="warm", task="S3", n_train=4, T_train=4, n_layers=1, d_model=16, n_heads=2, batch=16,
                   max_steps=30, warmup=5, eval_count=32, checkpoint_every=10)


def test_warm_start_begins_exactly_at_the_stored_weights(store_root, monkeypatch):
    parent = store.get_or_train(PARENT)
    child_cfg = config.warm_start(PARENT, T_train=2, max_steps=3)
    assert child_cfg.init_from == config.run_id(PARENT) and child_cfg.curriculum_start == PARENT.n_train
    # with the optimiser's step switched off, the child's weights must be the parent's, bit for bit
    monkeypatch.setattr(torch.optim.AdamW, "step", lambda self, *a, **kw: None)
    child = store.get_or_train(child_cfg)
    for k, v in parent.model.state_dict().items():
        assert torch.equal(child.model.state_dict()[k], v), k


def test_lineage_is_recorded_through_a_chain(store_root):
    store.get_or_train(PARENT)
    mid_cfg = config.warm_start(PARENT, T_train=2, max_steps=10)
    mid = store.get_or_train(mid_cfg)
    leaf_cfg = config.warm_start(mid_cfg, T_train=1, max_steps=10)
    leaf = store.get_or_train(leaf_cfg)
    parent_done = json.loads((store.run_dir(PARENT) / "DONE").read_text())
    assert mid.metrics["lineage"]["init_from"] == config.run_id(PARENT)
    assert mid.metrics["lineage"]["parent_sha256"] == parent_done["model_sha256"]
    assert leaf.metrics["lineage"]["init_from"] == config.run_id(mid_cfg)
    assert leaf.metrics["lineage"]["parent_lineage"]["init_from"] == config.run_id(PARENT)
    assert leaf.config.init_from == config.run_id(mid_cfg)        # and in the stored config (the hash)
    assert config.config_hash(leaf_cfg) != config.config_hash(replace(leaf_cfg, init_from=""))


def test_bad_parents_are_refused_before_any_write(store_root):
    missing = replace(PARENT, T_train=2, init_from="warm/0123456789abcdef")
    with pytest.raises(FileNotFoundError, match="init_from: 'warm/0123456789abcdef' is not a finished run"):
        store.get_or_train(missing)
    assert not store.run_dir(missing).exists()
    store.get_or_train(PARENT)
    other_arch = replace(config.warm_start(PARENT, T_train=2), d_model=32)
    with pytest.raises(ValueError, match="init_from: .* has another architecture"):
        store.get_or_train(other_arch)
    assert not store.run_dir(other_arch).exists()
    with pytest.raises(ValueError, match="init_from: must be '' or a stored run's"):
        RunConfig(init_from="../../etc/passwd")


def test_annealing_plan_steps_match_the_scratch_budget_and_chain_through_the_store():
    from lib import profiles
    plan = profiles.annealing("quick")
    for chain, scratch, first in zip(plan.chains, plan.scratch, plan.start):
        assert [c.T_train for c in chain] == [c.T_train for c in scratch] == [first.T_train // 2, first.T_train // 4]
        assert [c.max_steps for c in chain] == [c.max_steps for c in scratch]      # equal training at each contract
        parents = [first] + list(chain[:-1])
        assert [c.init_from for c in chain] == [config.run_id(p) for p in parents]
    # the lottery branch: T = 3 between the chain's T = 4 and T = 2, warm-started from each seed's T = 4
    # run, beside from-scratch runs of the same contract, budget and seed
    assert [c.init_from for c in plan.branch] == [config.run_id(ch[0]) for ch in plan.chains]
    for b, s, ch in zip(plan.branch, plan.branch_scratch, plan.chains, strict=True):
        assert b.T_train == s.T_train == 3 and b.max_steps == s.max_steps == ch[0].max_steps
        assert b.seed == s.seed == ch[0].seed and not s.init_from
    configs = plan.configs()
    assert all(configs.index(b) > configs.index(ch[0]) for b, ch in zip(plan.branch, plan.chains))   # parents first
    assert profiles.annealing("smoke").branch == ()


def test_transfer_criterion_on_constructed_readings():
    from lib.sections.s06_portability.read import transferred
    # contract T8 -> T4 at n=8: demand 1 -> 2
    assert transferred(dict(acc=0.99, v=2.1, demand=2.0), previous_demand=1.0, learned_acc=0.95)
    assert not transferred(dict(acc=0.99, v=1.2, demand=2.0), 1.0, 0.95)       # learned, speed not re-priced
    assert not transferred(dict(acc=0.60, v=2.0, demand=2.0), 1.0, 0.95)       # re-priced, not learned
    assert not transferred(dict(acc=0.99, v=float("nan"), demand=2.0), 1.0, 0.95)
    # log-closeness, not linear: v = 1.5 is log-closer to 2 than to 1 (|log .75| < |log 1.5|)
    assert transferred(dict(acc=0.99, v=1.5, demand=2.0), 1.0, 0.95)
    assert not transferred(dict(acc=0.99, v=1.4, demand=2.0), 1.0, 0.95)      # sqrt(2) = 1.414 is the midpoint


class _Run:
    """A stand-in for a stored run: contract_reading is replaced below by a table of readings."""
    def __init__(self, seed, T, steps):
        from types import SimpleNamespace
        self.config = SimpleNamespace(seed=seed, T_train=T)
        self.metrics = {"steps": steps}


def test_annealing_rows_and_results_on_constructed_readings(monkeypatch):
    from lib.sections.s06_portability import read as portability
    # seed 0: T 8 -> 4 -> 2, learned and re-priced at both steps; seed 1 stops transferring at T = 2
    read = {(0, 8): (1.0, 1.0), (0, 4): (1.0, 2.0), (0, 2): (0.95, 3.9), (1, 8): (1.0, 1.0), (1, 4): (1.0, 1.9),
            (1, 2): (0.5, 2.0)}
    scratch_read = {(0, 4): (1.0, 2.1), (0, 2): (0.1, float("nan")), (1, 4): (0.95, 2.0), (1, 2): (0.0, float("nan"))}
    def reading(run, count):
        key = (run.config.seed, run.config.T_train)
        acc, v = (scratch_read if run.metrics["steps"] == 99 else read)[key]
        return dict(acc=acc, v=v, v_frontier=v, demand=8 / run.config.T_train)
    monkeypatch.setattr(portability, "contract_reading", reading)
    start = [_Run(0, 8, 10), _Run(1, 8, 10)]
    chains = [[_Run(s, 4, 50), _Run(s, 2, 60)] for s in (0, 1)]
    scratch = [[_Run(s, T, 99) for s in (0, 1)] for T in (4, 2)]      # scratch[k][i]: step k, seed i
    rows = portability.annealing_rows(start, chains, scratch, 64, 0.9)
    assert [(r["seed"], r["T"], r["transferred"]) for r in rows] == [(0, 4, True), (0, 2, True), (1, 4, True),
                                                                      (1, 2, False)]
    res = portability.annealing_results(rows, 0.9, seen_seeds=(0,))
    # only seed 0's annealed run holds T = 2; no from-scratch run does: judged at T = 4, where both learn
    assert res["final_T"] == 2 and res["judged_T"] == 4
    assert res["anneal_transfer_fraction"] == 1.0 and res["anneal_transfer_count"] == "2/2"
    assert res["scratch_learned_fraction"] == 1.0 and res["anneal_minus_scratch"] == 0.0
    assert res["seen_seeds"] == [0] and res["transfer_fraction_unseen_seeds"] == 1.0    # seed 1 alone
    assert res["transfer_by_T"] == {"4": "2/2", "2": "1/2"}
    assert res["steps_ratio_where_both_learned"] == [round(50 / 99, 3), round(50 / 99, 3)]


def test_a_branch_row_is_read_from_its_parent_and_can_move_the_judged_contract(monkeypatch):
    from lib.sections.s06_portability import read as portability
    # seed 0: 8 -> 4 -> 2, and the branch 4 -> 3; seed 1 likewise. From scratch: T = 4 both, T = 3 seed 0
    # only (a lottery), T = 2 neither
    read = {(s, T): (1.0, 8 / T) for s in (0, 1) for T in (8, 4, 3)} | {(0, 2): (0.2, 2.0), (1, 2): (0.1, 2.0)}
    read[(1, 3)] = (1.0, 2.05)          # learned T = 3 but v-hat stays at T = 4's price: not transferred
    scratch_read = {(0, 4): (1.0, 2.0), (1, 4): (1.0, 2.0), (0, 3): (0.95, 2.7), (1, 3): (0.3, float("nan")),
                    (0, 2): (0.0, float("nan")), (1, 2): (0.0, float("nan"))}
    def reading(run, count):
        key = (run.config.seed, run.config.T_train)
        acc, v = (scratch_read if run.metrics["steps"] == 99 else read)[key]
        return dict(acc=acc, v=v, v_frontier=v, demand=8 / run.config.T_train)
    monkeypatch.setattr(portability, "contract_reading", reading)
    start = [_Run(s, 8, 10) for s in (0, 1)]
    chains = [[_Run(s, 4, 50), _Run(s, 2, 60)] for s in (0, 1)]
    scratch = [[_Run(s, T, 99) for s in (0, 1)] for T in (4, 2)]
    branch, branch_scratch = [_Run(s, 3, 40) for s in (0, 1)], [_Run(s, 3, 99) for s in (0, 1)]
    rows = portability.annealing_rows(start, chains, scratch, 64, 0.9, branch, branch_scratch, branch_from=0)
    assert [(r["seed"], r["T"], r["branch"]) for r in rows] == [(0, 4, False), (0, 2, False), (0, 3, True),
                                                                 (1, 4, False), (1, 2, False), (1, 3, True)]
    b0 = rows[2]
    assert b0["demand_before"] == 2.0 and b0["v_before"] == 2.0    # read from its parent, T = 4, not from T = 2
    assert b0["transferred"] and not rows[5]["transferred"]
    res = portability.annealing_results(rows, 0.9)
    assert res["judged_T"] == 3 and res["final_T"] == 2          # the hardest contract some scratch seed learns
    assert res["scratch_learned_fraction"] == 0.5 and res["anneal_minus_scratch"] == 0.5
    assert res["anneal_transfer_count"] == "1/2"
    assert res["by_contract"]["4"] == {"transferred": "2/2", "annealed_learned": 1.0, "scratch_learned": 1.0}
    with pytest.raises(ValueError, match="branch: one run and one from-scratch run per seed"):
        portability.annealing_rows(start, chains, scratch, 64, 0.9, branch[:1], branch_scratch)


def test_annealing_is_judged_at_the_hardest_contract_some_run_learns():
    from lib import claims
    from lib.sections.s06_portability import read as portability
    def row(seed, T, acc, scratch_acc, transferred):
        return dict(seed=seed, T=T, acc=acc, scratch_acc=scratch_acc, transferred=transferred, steps=10, scratch_steps=20)
    # nobody learns T = 2; at T = 4 both annealed runs transfer and one from-scratch seed of two fails
    rows = [row(0, 4, 1.0, 1.0, True), row(0, 2, 0.5, 0.0, False), row(1, 4, 0.95, 0.3, True), row(1, 2, 0.6, 0.1, False)]
    res = portability.annealing_results(rows, 0.9)
    assert res["final_T"] == 2 and res["judged_T"] == 4
    assert res["anneal_transfer_fraction"] == 1.0 and res["scratch_learned_fraction"] == 0.5
    lottery = claims.claim("anneal_minus_scratch")
    assert lottery.requires(res)
    no_lottery = portability.annealing_results([{**r, "scratch_acc": 1.0} if r["T"] == 4 else r for r in rows], 0.9)
    assert no_lottery["judged_T"] == 4 and not lottery.requires(no_lottery)    # every scratch seed learns: no lottery
    # an annealed run alone learning a harder contract does not move the judged one: the choice reads
    # from-scratch runs only, never the annealed runs it judges
    annealed_only = portability.annealing_results([{**r, "acc": 1.0} if r["T"] == 2 else r for r in rows], 0.9)
    assert annealed_only["judged_T"] == 4
    nowhere = portability.annealing_results([{**r, "acc": 0.1, "scratch_acc": 0.1} for r in rows], 0.9)
    assert nowhere["judged_T"] == 2 and not claims.claim("anneal_transfer_fraction").requires(nowhere)
