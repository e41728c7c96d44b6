"""The pilots P41 and P43 (paper/PREREGISTRATION.md): their queues hold the rule's seeds and counts and
no reserved seed; their pick rules on constructed readings; their readers refuse while runs are missing
and log every run and the pick; `lib.cli train pilot:<entry>` lists the queue without training. Nothing
here trains a pilot's own config: reader tests train tiny stand-ins in a private store."""
from dataclasses import replace

import pytest

from lib import cli, profiles, store
from lib.config import RESERVED_SEEDS
from searches import p41_pilot as p41
from searches import p43_pilots as p43
from searches.search_log import read_rows

# ---------------------------------------------------------------------------------------------
# queues: seeds, counts, recipes


def test_p41_queue_seeds_counts_and_recipes():
    contests, annealing = p41.contest_runs(), p41.annealing_runs()
    contracts = profiles.contest_contracts("quick")
    assert list(contests) == list(contracts)                                  # T = 8, 6, 4
    for name, cfgs in contests.items():
        assert [c.seed for c in cfgs] == list(range(40, 48))
        assert all(replace(c, experiment=contracts[name].experiment, seed=0) == contracts[name] for c in cfgs)
        assert {c.experiment for c in cfgs} == {"pilot_p41_contest"}
    base = profiles.annealing("quick").scratch[0][0]                          # the chain's fixed-T recipe
    assert {k: (cfgs[0].T_train, cfgs[0].max_steps) for k, cfgs in annealing.items()} == {"a": (3, 12000),
                                                                                           "b": (2, 24000)}
    for cfgs in annealing.values():
        assert [c.seed for c in cfgs] == list(range(50, 58))
        assert {c.experiment for c in cfgs} == {"pilot_p41_annealing"}
        assert all(c.n_train == 8 and c.schedule == "fixed" and c.loss_loops == "final" and not c.init_from for c in cfgs)
        assert all(replace(c, experiment=base.experiment, T_train=base.T_train, max_steps=base.max_steps,
                           seed=base.seed) == base for c in cfgs)
    q = p41.queue()
    assert len(q) == len(set(q)) == 24 + 16
    assert set(q) == {c for cfgs in [*contests.values(), *annealing.values()] for c in cfgs}


def test_p43_queue_seeds_counts_and_recipes():
    ps, su = p43.prefix_sums_runs(), p43.sudoku_runs()
    base = profiles.easy_to_hard("quick").runs[0]                              # 08's quick pick
    assert {k: (c[0].lr, c[0].max_steps) for k, c in ps.items()} == {"lr1e-3_8k": (1e-3, 8000),
                                                                    "lr3e-4_16k": (3e-4, 16000),
                                                                    "lr1e-4_32k": (1e-4, 32000)}
    for cfgs in ps.values():
        assert [c.seed for c in cfgs] == [60, 61, 62, 63]
        assert all(replace(c, experiment=base.experiment, lr=base.lr, max_steps=base.max_steps, seed=base.seed) == base
                   for c in cfgs)
        assert all(c.attn_window == 5 and c.schedule == "proportional" and c.n_train == c.T_train == 16 for c in cfgs)
    board = profiles.stability("quick").sudoku
    assert len(su) == 8 and {r for r, _ in su} == {"external", "internal"}
    for (recall, k), cfgs in su.items():
        assert [c.seed for c in cfgs] == [70, 71, 72]
        assert (cfgs[0].lr, cfgs[0].max_steps) == p43.SUDOKU_CANDIDATES[k]
        assert cfgs[0].pos == "grid" and cfgs[0].injection == profiles.RECALLS[recall]
        assert all(replace(c, experiment=board[recall][0].experiment, lr=board[recall][0].lr,
                           max_steps=board[recall][0].max_steps, seed=board[recall][0].seed) == board[recall][0]
                   for c in cfgs)
    closed, opened = p43.queue(gate=False), p43.queue(gate=True)
    assert len(closed) == len(set(closed)) == 12 + 12
    assert len(opened) == len(set(opened)) == 12 + 24
    assert opened[:24] == closed                                               # the 8,000-step arm last
    assert {c.max_steps for c in opened[24:]} == {8000}


def test_no_pilot_run_uses_a_reserved_seed_a_mode_or_anothers_seed():
    runs = [*p41.queue(), *p43.queue(gate=True)]
    assert all(c.seed not in RESERVED_SEEDS and not c.mode for c in runs)
    pilot_seeds = {c.seed for c in runs}
    assert pilot_seeds == {*range(40, 48), *range(50, 58), *range(60, 64), *range(70, 73)}
    # used by nothing else: no section plan of any profile and no other search names these seeds
    import importlib

    from tests.test_run_ids import SEARCHES
    others = set()
    for name, plan in profiles.SECTIONS.items():
        for profile in profiles.PROFILES:
            try:
                others |= {c.seed for c in plan(profile).configs()}
            except ValueError:
                pass
    for module, configs in SEARCHES.items():
        others |= {c.seed for c in configs(importlib.import_module(module))}
    assert not pilot_seeds & others


# ---------------------------------------------------------------------------------------------
# the pick rules on constructed readings

def _seeds(in_accs, ood_by_L):
    """One dict per seed: ood_by_L maps L -> one accuracy per seed."""
    return [{"in_acc": a, "ood": {L: accs[i] for L, accs in ood_by_L.items()}} for i, a in enumerate(in_accs)]


def test_contest_length_is_the_median_nearest_half_over_learned_seeds():
    # 6 learned seeds; the two that did not learn read 1.0 at 14, which would make 14 the pick if counted
    # (readings are multiples of 1/512 in practice: dyadic values keep the ties exact here too)
    ood = {10: [1, 1, .875, .875, .75, .75, 0, 0], 12: [.875, .75, .75, .625, .625, .5, 0, 0],
           14: [.5, .5, .375, .25, .25, .25, 1, 1], 16: [.25, .125, .125, 0, 0, 0, 0, 0]}
    r = p41.contest_length(_seeds([1, 1, .95, .9, .99, 1, .5, .2], ood))
    assert r["learned"] == 6 and r["of"] == 8 and r["no_split"] is None
    assert r["medians"] == {10: .875, 12: .6875, 14: .3125, 16: .0625}
    assert r["length"] == 12                                                  # 12 and 14 tie at 0.1875: the shorter
    tie = {10: [.75] * 4, 12: [.25] * 4, 14: [.75] * 4}
    assert p41.contest_length(_seeds([1] * 4, tie))["length"] == 10
    near = {10: [.875] * 4, 12: [.5625] * 4, 14: [.4375] * 4, 16: [.5] * 4}
    assert p41.contest_length(_seeds([1] * 4, near))["length"] == 16


def test_contest_without_four_learned_seeds_or_with_every_median_outside_the_band_is_no_split():
    ood = {10: [.5] * 8}
    r = p41.contest_length(_seeds([1, 1, 1, .89, .5, 0, 0, 0], ood))          # 3 learned (0.89 misses 0.9)
    assert r["learned"] == 3 and r["length"] is None and "3 learned" in r["no_split"]
    assert p41.contest_length(_seeds([.9] * 4, ood))["length"] == 10          # >= 0.9 learns; 4 suffice
    for medians in ([.05, .0, .09], [.95, .91, 1.0], [.95, .92, .05, 0]):     # all below, all above, a jump across
        r = p41.contest_length(_seeds([1] * 4, {10 + 2 * i: [m] * 4 for i, m in enumerate(medians)}))
        assert r["length"] is None and "outside" in r["no_split"], medians
    r = p41.contest_length(_seeds([1] * 4, {10: [.95] * 4, 12: [.1] * 4}))   # 0.1 is inside the band
    assert r["length"] == 12 and r["no_split"] is None


def test_annealing_contract_in_the_band_nearer_half_ties_to_a():
    assert p41.annealing_contract({"a": 0.5, "b": 0.25}) == "a"
    assert p41.annealing_contract({"a": 0.75, "b": 0.375}) == "b"
    assert p41.annealing_contract({"a": 0.625, "b": 0.375}) == "a"            # tie: (a)
    assert p41.annealing_contract({"a": 0.375, "b": 0.625}) == "a"
    assert p41.annealing_contract({"a": 1.0, "b": 0.25}) == "b"               # band closed at 1/4 and 3/4
    assert p41.annealing_contract({"a": 0.875, "b": 0.75}) == "b"
    assert p41.annealing_contract({"a": 1.0, "b": 0.125}) is None             # neither: no lottery contract
    assert p41.annealing_contract({"a": 0.0, "b": 0.875}) is None


def test_prefix_sums_pick_highest_median_margin_and_ties_to_the_cheaper():
    names = list(p43.PREFIX_SUMS_CANDIDATES)                                   # cheapest first
    assert p43.prefix_sums_pick(dict(zip(names, [0.2, 0.5, 0.9]))) == names[2]
    assert p43.prefix_sums_pick(dict(zip(names, [0.2, 0.875, 0.9]))) == names[1]   # margin 0.025 < 0.05
    assert p43.prefix_sums_pick(dict(zip(names, [0.875, 0.9, 0.6]))) == names[0]
    assert p43.prefix_sums_pick(dict(zip(names, [0.5, 0.5, 0.5]))) == names[0]      # tie
    assert p43.prefix_sums_pick(dict(zip(names, [0.5, 0.5625, 0.5]))) == names[1]   # margin 0.0625: not within
    # margins against the highest, not chained: 0.5 is 0.08 below the top although 0.04 below its neighbour
    assert p43.prefix_sums_pick(dict(zip(names, [0.5, 0.54, 0.58]))) == names[1]


def test_sudoku_pick_per_recall_highest_median_ties_to_the_cheaper():
    names = list(p43.SUDOKU_CANDIDATES)          # lr1e-3_4k, lr3e-4_4k, lr1e-3_8k, lr3e-4_8k
    assert p43.sudoku_pick(dict(zip(names, [0.1, 0.2, 0.3, 0.25]))) == "lr1e-3_8k"
    assert p43.sudoku_pick(dict(zip(names, [0.1, 0.3, 0.3, 0.3]))) == "lr3e-4_4k"     # tie: fewer steps
    assert p43.sudoku_pick(dict(zip(names, [0.3, 0.3, 0.3, 0.3]))) == "lr1e-3_4k"     # equal cost: rule's order
    assert p43.sudoku_pick(dict(zip(names, [0.0, 0.0, 0.0, 0.5]))) == "lr3e-4_8k"     # no margin rule here
    assert p43.sudoku_pick(dict(zip(names[:2], [0.0, 0.0]))) == "lr1e-3_4k"           # gate closed: 4,000 only


def test_the_sudoku_gate_opens_on_any_whole_board():
    assert p43.sudoku_gate([0.0] * 11 + [None]) is None
    assert p43.sudoku_gate([0.0] * 11 + [1 / 256]) is True
    assert p43.sudoku_gate([None] * 11 + [0.004]) is True
    assert p43.sudoku_gate([0.0] * 12) is False


def _sudoku_rows(boards):
    """Logged run rows: boards maps 'recall/candidate' -> one board accuracy per seed."""
    return [{"kind": "run", "name": name, "seed": 70 + i, "board_acc": b}
            for name, accs in boards.items() for i, b in enumerate(accs)]


def test_sudoku_decision_per_recall_with_the_gate_closed_and_open():
    closed = {f"{r}/{k}": [0.0, 0.0, 0.0] for r in ("external", "internal") for k in ("lr1e-3_4k", "lr3e-4_4k")}
    d = p43.decide(p43.SUDOKU, _sudoku_rows(closed))
    assert d["gate_8000"] is False and d["pick"] == {"external": "lr1e-3_4k", "internal": "lr1e-3_4k"}
    assert set(d["recalls"]["external"]["medians"]) == {"lr1e-3_4k", "lr3e-4_4k"}
    opened = {**closed, "internal/lr3e-4_4k": [0.0, 0.5, 0.25]}
    opened.update({f"{r}/{k}": [0.0, 0.0, 0.125] for r in ("external", "internal") for k in ("lr1e-3_8k", "lr3e-4_8k")})
    opened["external/lr3e-4_8k"] = [0.25, 0.125, 0.0]
    d = p43.decide(p43.SUDOKU, _sudoku_rows(opened))
    assert d["gate_8000"] is True
    assert d["pick"] == {"external": "lr3e-4_8k", "internal": "lr3e-4_4k"}
    assert d["recalls"]["internal"]["medians"]["lr3e-4_4k"] == 0.25


# ---------------------------------------------------------------------------------------------
# readers (tiny stand-ins trained in a private store)

def test_readers_refuse_while_runs_are_missing_naming_how_many(store_root, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(p41, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(p43, "RESULTS", tmp_path / "results")
    assert p41.main(["--read"]) == 1
    err = capsys.readouterr().err
    assert "pilot_p41_contest: 24 of 24 runs are not in the store" in err
    assert "pilot_p41_annealing: 16 of 16 runs are not in the store" in err
    assert p43.main(["--read"]) == 1
    err = capsys.readouterr().err
    assert "pilot_p43_prefix_sums: 12 of 12 runs" in err
    assert "pilot_p43_sudoku: 24 of 24 runs" in err                            # gate undecided: every arm
    assert not (tmp_path / "results").exists() and not (store_root / "runs").exists()
    assert p41.main([]) == 0 and "0 of 24 runs stored" in capsys.readouterr().out


TINY = replace(profiles.SMOKE_BASE, T_train=3, max_steps=8)


def test_p41_reader_logs_every_run_and_the_pick_once(store_root, tmp_path, monkeypatch):
    monkeypatch.setattr(p41, "RESULTS", tmp_path / "results")
    contract = {"tiny": tuple(replace(TINY, experiment=p41.CONTEST, seed=s) for s in (40, 41))}
    monkeypatch.setattr(p41, "contest_runs", lambda: contract)
    monkeypatch.setattr(p41, "LENGTHS", (6, 8))
    annealing = {k: tuple(replace(TINY, experiment=p41.ANNEALING, T_train=T, seed=s) for s in (50, 51))
                 for k, (T, _) in p41.CANDIDATES.items()}
    monkeypatch.setattr(p41, "annealing_runs", lambda: annealing)
    with pytest.raises(FileNotFoundError, match="2 of 2 runs"):
        p41.read(p41.CONTEST)
    for c in [*contract["tiny"], *annealing["a"], *annealing["b"]]:
        store.get_or_train(c)
    pick = p41.read(p41.CONTEST)
    rows = read_rows(p41.log_path(p41.CONTEST))
    assert [r["kind"] for r in rows] == ["run", "run", "pick"]
    assert set(rows[0]["ood"]) == {"6", "8"} and rows[0]["loops"] == {"6": TINY.loops_at(6), "8": TINY.loops_at(8)}
    assert "train_wall_s" in rows[0] and pick["pick"] == {"tiny": None}      # 2 seeds: fewer than 4 learned
    assert p41.read(p41.CONTEST) == pick and len(read_rows(p41.log_path(p41.CONTEST))) == 3     # logged once
    pick = p41.read(p41.ANNEALING)
    fractions = {k: sum(store.load_run(c).metrics["final_eval"]["seq_acc"] >= 0.9 for c in cfgs) / 2
                 for k, cfgs in annealing.items()}
    assert pick["learned_fraction"] == fractions and pick["pick"] == p41.annealing_contract(fractions)
    assert len(read_rows(p41.log_path(p41.ANNEALING))) == 5


def test_p43_reader_reads_loops_at_64_and_logs_the_best_loop_as_a_bound(store_root, tmp_path, monkeypatch):
    monkeypatch.setattr(p43, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(p43, "COUNT", 16)                                     # a tiny model's 128-loop scan
    base = replace(TINY, task="prefix_sums", n_train=4, T_train=4, experiment=p43.PREFIX_SUMS)
    runs = {k: (replace(base, lr=lr, seed=60),) for k, (lr, _) in p43.PREFIX_SUMS_CANDIDATES.items()}
    monkeypatch.setattr(p43, "prefix_sums_runs", lambda: runs)
    for cfgs in runs.values():
        store.get_or_train(cfgs[0])
    pick = p43.read(p43.PREFIX_SUMS)
    rows = [r for r in read_rows(p43.log_path(p43.PREFIX_SUMS)) if r["kind"] == "run"]
    assert len(rows) == 3 and all(r["loops"] == base.loops_at(64) and r["scan_loops"] == 2 * base.loops_at(64)
                                  for r in rows)
    assert all(r["best_upper_bound"][0] >= r["acc"] for r in rows)
    assert pick["pick"] == p43.prefix_sums_pick({r["name"]: r["acc"] for r in rows})


# ---------------------------------------------------------------------------------------------
# the command line

def test_cli_lists_a_pilots_queue_without_training(store_root, capsys):
    assert cli.plan_configs("pilot:P41", "quick") == list(p41.queue())
    assert cli.main(["train", "pilot:P41", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.count("missing") == 40 and "40 runs, 0 stored" in out and "pilot_p41_annealing/" in out
    assert cli.main(["train", "pilot:P43", "--dry-run", "--shard", "1/2"]) == 0
    assert "12 runs, 0 stored" in capsys.readouterr().out                     # gate undecided: 24 runs, half
    assert not (store_root / "runs").exists()


@pytest.mark.parametrize("argv, named", [
    (["train", "pilot:P99"], "pilot: unknown pilot 'P99'"),
    (["train", "pilot:P41", "--seeds", "40"], "--seeds: a pilot's seeds are fixed by its rule"),
    (["train", "pilot:P43", "--shard", "2/2"], "--shard"),
])
def test_cli_refuses_bad_pilot_options(argv, named, store_root, capsys):
    with pytest.raises(SystemExit) as err:
        cli.main(argv)
    assert err.value.code == 2 and named in capsys.readouterr().err
    assert not (store_root / "runs").exists()
