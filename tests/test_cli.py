"""The store's command line: every option's bad value exits 2 naming it, before any work; `run` never
trains unless asked; `eval` reads any stored run and never trains; `list` filters."""
import json
from dataclasses import replace

import pytest

from lib import cli, profiles, store
from lib.config import config_hash, run_id, warm_start

SMALL = replace(profiles.SMOKE_BASE, T_train=3, max_steps=10, seed=3)


@pytest.mark.parametrize("argv, named", [
    (["train", "budget_law", "--seeds", "a"], "--seeds"),
    (["train", "budget_law", "--seeds", "-1"], "--seeds"),
    (["train", "budget_law", "--shard", "x"], "--shard"),
    (["train", "budget_law", "--shard", "3/2"], "--shard"),
    (["train", "budget_law", "--threads", "0"], "--threads"),
    (["train", "budget_law", "--profile", "bogus"], "--profile"),
    (["train", "nope"], "section: unknown 'nope'"),
    (["train", "confirm:C99-none"], "study: unknown pre-registration entry"),
    (["train", "confirm:C05-wall", "--seeds", "1"], "--seeds: a pre-registered study's seeds"),
    (["train", "confirm:C05-wall", "--compile"], "--compile"),
    (["train", "pilot:P99"], "pilot: unknown pilot 'P99'"),
    (["train", "pilot:P41", "--seeds", "40"], "--seeds: a pilot's seeds are fixed by its rule"),
    (["run", "--config", "{bad json"], "--config: not JSON"),
    (["run", "--config", '{"task": "S4",\n "n_train": }'], "line 2"),
    (["run", "--config", "[1, 2]"], "--config: a JSON object"),
    (["run", "--config", '{"task": "nope"}'], "--config: task"),
    (["run", "--config", '{"n_train": 0}'], "n_train"),
    (["run", "--config", "{}", "--lock-timeout", "-1"], "--lock-timeout"),
    (["eval", "zz", "--n", "8", "--loops", "8"], "run:"),
    (["eval", "abcdef", "--n", "0", "--loops", "8"], "--n"),
    (["eval", "abcdef", "--n", "8", "--loops", "x"], "--loops"),
    (["list", "--seed", "x"], "--seed"),
    (["list", "--mode", "fast"], "--mode"),
    (["list", "--status", "gone"], "--status"),
])
def test_bad_options_exit_2_naming_them(argv, named, store_root, capsys):
    with pytest.raises(SystemExit) as err:
        cli.main(argv)
    assert err.value.code == 2
    assert named in capsys.readouterr().err
    assert not (store_root / "runs").exists()           # nothing written


def test_help_everywhere(capsys):
    for argv in ([], ["train"], ["run"], ["eval"], ["list"], ["verify"]):
        with pytest.raises(SystemExit) as err:
            cli.main([*argv, "--help"])
        assert err.value.code == 0
        assert "usage:" in capsys.readouterr().out


def test_train_dry_run_lists_the_runs_and_trains_nothing(store_root, capsys):
    assert cli.main(["train", "budget_law", "--profile", "smoke", "--dry-run"]) == 0
    out = capsys.readouterr().out
    n = len(cli.plan_configs("budget_law", "smoke"))
    assert out.count("missing") == n and f"{n} runs, 0 stored" in out
    assert cli.main(["train", "pilot:P41", "--dry-run", "--shard", "0/4"]) == 0
    assert "10 runs, 0 stored" in capsys.readouterr().out
    assert not (store_root / "runs").exists()


def test_a_queued_warm_start_waits_for_its_parent_in_the_same_queue(store_root, monkeypatch):
    child = warm_start(SMALL, T_train=2)
    monkeypatch.setattr(cli.time, "sleep", lambda s: None)
    assert cli.train([child, SMALL], (0, 1), 1, False, True) == 0          # the child first: it waits a pass
    assert store.is_done(SMALL) and store.is_done(child)
    orphan = warm_start(replace(SMALL, seed=4), T_train=2)                  # its parent is in no queue
    assert not cli._parent_pending(orphan, [orphan])
    with pytest.raises(FileNotFoundError, match="train the parent first"):   # left to the store, which refuses
        cli.train([orphan], (0, 1), 1, False, True)


def test_a_queue_leaves_a_run_another_process_holds_and_exits(store_root, monkeypatch, capsys):
    """Waiting for a run another process trains would idle this core until it finishes; the queue takes
    what is free and exits, naming what it left."""
    from filelock import FileLock
    monkeypatch.setattr(cli.time, "sleep", lambda s: pytest.fail("a queue must not wait for a held run"))
    other = replace(SMALL, seed=6)
    store.run_dir(SMALL).parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(store.run_dir(SMALL)) + ".lock"):                       # "another process" trains SMALL
        assert cli.train([SMALL, other], (0, 1), 1, False, True) == 0
    assert store.is_done(other) and not store.is_done(SMALL)
    assert f"left to the processes training them: {run_id(SMALL)}" in capsys.readouterr().out


def _no_waiting(seconds):
    raise AssertionError("the queue waited for a run that will not train")


def test_a_queue_goes_past_a_diverged_run_and_its_children_and_names_them(store_root, monkeypatch, capsys):
    """A queue trains unattended: a run that diverges now, one that diverged before (FAILED marker), a
    warm start from it and a warm start from that (which would otherwise wait for its parent forever) are
    skipped and named, the rest trains, and the exit status says something failed."""
    from lib.step import Diverged
    before, now, fine = SMALL, replace(SMALL, seed=7), replace(SMALL, seed=8)
    child = warm_start(before, T_train=2)
    grandchild = warm_start(child, T_train=3)
    store.run_dir(before).mkdir(parents=True)
    (store.run_dir(before) / "FAILED").write_text(json.dumps({"error": "loss nan", "step": 4}))
    real = store.get_or_train

    def diverging(cfg, **kw):
        if cfg == now:
            raise Diverged(5, float("nan"), 1.0, None)
        return real(cfg, **kw)
    monkeypatch.setattr(cli.store, "get_or_train", diverging)
    monkeypatch.setattr(cli.time, "sleep", _no_waiting)
    assert cli.train([before, child, grandchild, now, fine], (0, 1), 1, False, True) == 1
    assert store.is_done(fine) and not any(store.is_done(c) for c in (before, child, grandchild, now))
    out = capsys.readouterr().out
    assert all(run_id(c) in out.split("diverged, not stored")[1] for c in (before, child, grandchild, now))
    with pytest.raises(Diverged):                                   # outside a queue it stops, as before
        cli.train([now], (0, 1), 1, False, False)


def test_a_sharded_queue_follows_the_lineage_across_shards(store_root, monkeypatch, capsys):
    """Shard 1 skips a diverged run's child without a marker; shard 0 holds its grandchild, which must not
    wait for the child: the lineage is followed through the whole plan."""
    start, fine = SMALL, replace(SMALL, seed=8)
    child = warm_start(start, T_train=2)
    grandchild = warm_start(child, T_train=3)
    store.run_dir(start).mkdir(parents=True)
    (store.run_dir(start) / "FAILED").write_text(json.dumps({"error": "loss nan", "step": 4}))
    monkeypatch.setattr(cli.time, "sleep", _no_waiting)
    plan = [start, child, grandchild, fine]                         # shard 0: start, grandchild; shard 1: child, fine
    assert cli.train(plan, (1, 2), 1, False, True) == 1 and store.is_done(fine)
    assert cli.train(plan, (0, 2), 1, False, True) == 1
    assert run_id(grandchild) in capsys.readouterr().out.split("diverged, not stored")[-1]


def test_run_never_trains_unless_asked(store_root, capsys):
    config = json.dumps(SMALL.to_dict())
    assert cli.main(["run", "--config", config]) == 1
    assert "pass --train" in capsys.readouterr().err
    assert not store.is_done(SMALL)
    assert cli.main(["run", "--config", config, "--train"]) == 0
    assert store.is_done(SMALL)
    assert cli.main(["run", "--config", config]) == 0           # stored: loads


def test_eval_reads_a_stored_run_and_never_trains(store_root, capsys):
    store.get_or_train(SMALL)
    ref = f"{SMALL.experiment}/{config_hash(SMALL)}"
    assert cli.main(["eval", ref, "--n", "4,6", "--loops", "3,6", "--count", "16", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["n"] for r in rows] == [4, 6] and all(len(r["whole_word"]) == 2 for r in rows)
    assert all(len(per) == r["n"] for r in rows for per in r["per_position"])
    assert cli.main(["eval", config_hash(SMALL)[:8], "--n", "4", "--loops", "3", "--count", "16"]) == 0
    assert "whole-word" in capsys.readouterr().out
    other = replace(SMALL, seed=4)
    with pytest.raises(SystemExit):
        cli.main(["eval", config_hash(other), "--n", "4", "--loops", "3"])
    assert "matches 0 finished runs" in capsys.readouterr().err
    assert not store.is_done(other)


def test_eval_refuses_more_loops_than_an_untied_model_has(store_root):
    from lib.evaluate import evaluate
    untied = replace(SMALL, tied=False, d_model=8)
    run = store.get_or_train(untied)
    with pytest.raises(ValueError, match="loops: an untied model has exactly 3 blocks"):
        evaluate(run, [4], [4], count=8)


def test_list_shows_task_contract_seed_mode_and_filters(store_root, capsys):
    store.get_or_train(SMALL)
    store.get_or_train(replace(SMALL, seed=5))
    cli.main(["list"])
    out = capsys.readouterr().out
    assert "S3" in out and "n=4 T=3" in out and "none" in out and out.count("done") == 2
    header, *rows = out.splitlines()
    assert header.split()[-4:] == ["from", "steps", "seq_acc", "cpu_s"]
    for row in rows:                     # the curriculum's first length, and CPU seconds from the run's DONE
        assert int(row.split()[-4]) == SMALL.curriculum_start and float(row.split()[-1]) >= 0
    cli.main(["list", "--seed", "5"])
    assert capsys.readouterr().out.count("done") == 1
    cli.main(["list", "--task", "S4"])
    assert "done" not in capsys.readouterr().out


@pytest.mark.parametrize("T, n, named", [(0, 4, "T"), (True, 4, "T"), (2.5, 4, "T"), (3, 0, "n"), (3, -1, "n")])
def test_the_frontier_helper_refuses_bad_inputs(T, n, named, store_root):
    from lib import plots
    run = store.get_or_train(SMALL)
    with pytest.raises(ValueError, match=f"^{named}: must be an integer >= 1"):
        plots.render_frontier(run, T=T, n=n, count=8)


def test_the_frontier_helper_refuses_loops_past_an_untied_models_depth(store_root):
    from lib import plots
    run = store.get_or_train(replace(SMALL, tied=False, d_model=8))
    with pytest.raises(ValueError, match="T: an untied model has exactly 3 blocks"):
        plots.render_frontier(run, T=4, n=4, count=8)
    fig, readout = plots.render_frontier(run, T=3, n=4, count=8)
    assert "n=4 T=3" in readout


def test_the_rescue_figure_of_a_run_set_with_nothing_learned_is_a_note_not_an_error():
    from lib.sections.s03_budget_law import figures
    fig = figures.rescue({}, n_long=8)
    assert "no run learned" in fig.axes[0].texts[0].get_text()
