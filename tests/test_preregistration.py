"""The confirmatory round's guarantees: reserved seeds, the execution mode in the recipe, and every
pre-registered run started after its entry was committed (read from the git history)."""
import hashlib
import json
import re
import subprocess
from dataclasses import replace
from datetime import datetime, timezone

import pytest

from lib import confirmatory, profiles, store
from lib.config import MODES, RESERVED_SEEDS, RunConfig, config_hash
from lib.paths import PROJECT_ROOT
from lib.sections import common

PREREG = PROJECT_ROOT / "paper" / "PREREGISTRATION.md"
# the cheapest confirmatory-shaped run: the smoke recipe, a reserved seed, the round's mode
CHEAP = replace(profiles.SMOKE_BASE, T_train=4, max_steps=12, seed=100, mode=common.STUDY_MODE)


def _plans():
    for name, plan in profiles.SECTIONS.items():
        for profile in profiles.PROFILES:
            try:
                yield name, profile, plan(profile).configs()
            except ValueError as err:          # a plan a profile does not have (e.g. the fair wall's smoke)
                assert "profile" in str(err)


def test_no_exploratory_plan_uses_a_reserved_seed():
    seen = 0
    for name, profile, cfgs in _plans():
        for c in cfgs:
            seen += 1
            assert c.seed not in RESERVED_SEEDS and not c.mode, (name, profile, c.seed, c.mode)
    assert seen > 100


def test_no_search_or_pilot_sets_a_mode_so_none_can_use_a_reserved_seed():
    for path in sorted([*(PROJECT_ROOT / "bench").glob("*.py"), *(PROJECT_ROOT / "searches").glob("*.py")]):
        assert not re.search(r"\bmode\s*=\s*['\"]cpu|\bmode\s*=\s*['\"]cuda", path.read_text()), path.name


def test_a_reserved_seed_needs_a_declared_mode():
    with pytest.raises(ValueError, match="seed: 100 is reserved"):
        RunConfig(seed=100)
    with pytest.raises(ValueError, match="mode: unknown"):
        RunConfig(mode="gpu-fast")
    RunConfig(seed=199, mode="cpu-eager-fp32")
    RunConfig(seed=200)


def test_the_mode_enters_the_hash_and_its_default_keeps_every_hash():
    assert config_hash(RunConfig()) == config_hash(RunConfig(mode=""))
    assert len({config_hash(RunConfig(mode=m)) for m in MODES}) == len(MODES)


def _study_runs(entry, plan):
    """A study's runs; a study waiting for its pilot's pick: its runs under every pick the pilot can make
    (each of its possible plans must keep the round's rules too)."""
    return plan() or confirmatory.UNDER_EVERY_PICK[entry]()


def test_every_study_runs_on_reserved_seeds_in_one_mode_and_has_an_entry():
    text = PREREG.read_text()
    for entry, plan in confirmatory.STUDIES.items():
        assert re.search(rf"^## {re.escape(entry)} ", text, re.M), entry
        cfgs = _study_runs(entry, plan)
        assert cfgs and all(c.seed in RESERVED_SEEDS and c.mode == common.STUDY_MODE for c in cfgs), entry


def test_no_reserved_seed_serves_two_studies():
    """A study may read another's runs (C43-controls reads C05-wall's streaming runs), never train its own
    on the other's seeds: each run belongs to the first study listing it, and their seeds are disjoint."""
    owner = {}
    for entry, plan in confirmatory.STUDIES.items():
        for c in _study_runs(entry, plan):
            owner.setdefault(c, entry)
    seeds = {}
    for c, entry in owner.items():
        seeds.setdefault(entry, set()).add(c.seed)
    for a in seeds:
        for b in seeds:
            assert a == b or not seeds[a] & seeds[b], (a, b, sorted(seeds[a] & seeds[b]))


def test_a_request_against_the_runs_mode_fails_before_any_write(store_root):
    with pytest.raises(ValueError, match="compile: this run's recipe fixes mode"):
        store.get_or_train(CHEAP, compile=True)
    with pytest.raises(ValueError, match="device: this run's recipe fixes mode"):
        store.get_or_train(CHEAP, device="cuda")
    assert not (store_root / "runs").exists()


def test_another_modes_run_is_never_read_as_this_recipes(store_root):
    unmoded = replace(CHEAP, seed=7, mode="")
    store.get_or_train(unmoded)
    moded = replace(unmoded, mode=common.STUDY_MODE)
    assert not store.is_done(moded)                       # another hash: trained anew, not read
    run = store.get_or_train(moded)
    done = json.loads((run.path / "DONE").read_text())
    assert done["mode"] == common.STUDY_MODE and "started_utc" in done
    # a run directory whose DONE records another mode is refused even under this recipe's name
    done["mode"] = "cpu-compiled-fp32"
    (run.path / "DONE").write_text(json.dumps(done))
    with pytest.raises(ValueError, match="trained in mode 'cpu-compiled-fp32'"):
        store.load_run(moded)


def test_a_replay_in_the_same_mode_is_bit_identical(tmp_path, monkeypatch):
    digests = []
    for k in range(2):
        monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / f"outputs{k}"))
        run = store.get_or_train(CHEAP)
        digests.append(hashlib.sha256((run.path / "model.pt").read_bytes()).hexdigest())
        assert json.loads((run.path / "DONE").read_text())["mode"] == common.STUDY_MODE
    assert digests[0] == digests[1]


def _git(*args) -> str:
    return subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True).stdout


def _entry_committed(entry: str) -> int | None:
    """Unix time of the oldest commit whose PREREGISTRATION.md has the entry's heading."""
    times = _git("log", "--format=%ct", "-S", f"## {entry} ", "--", "paper/PREREGISTRATION.md").split()
    return min(map(int, times)) if times else None


def test_every_stored_confirmatory_run_started_after_its_entry_was_committed():
    if not (PROJECT_ROOT / ".git").exists():
        pytest.skip("no git history in this copy")
    for entry, plan in confirmatory.STUDIES.items():
        committed = None
        for c in plan():
            d = store.run_dir(c)
            if not (d / "STARTED").exists():
                assert not (d / "DONE").exists() and not (d / "checkpoint.pt").exists(), d
                continue
            committed = committed or _entry_committed(entry)
            assert committed is not None, f"{entry}: runs exist but the entry was never committed"
            started = datetime.strptime(json.loads((d / "STARTED").read_text())["started_utc"], "%Y-%m-%dT%H:%M:%SZ")
            assert started.replace(tzinfo=timezone.utc).timestamp() >= committed, (entry, d.name)
            added = _git("log", "--format=%ct", "--diff-filter=A", "--", str(d.relative_to(PROJECT_ROOT))).split()
            assert all(int(t) >= committed for t in added), (entry, d.name)

