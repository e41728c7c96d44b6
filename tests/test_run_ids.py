"""Every run a plan names keeps its name: the run ids (`experiment/config hash`, the store's directory)
of every plan in every profile, of the pre-registered studies (those waiting for a pilot's pick under every
pick it can make) and of the recipe searches, and each
plan's other fields (test lengths, counts, thresholds), equal the committed fixture
`tests/fixtures/run_ids.json`. A change of code layout that keeps them all moves no stored run and no
notebook reading. Plans only build configs here: nothing trains.

    .venv/bin/python -m tests.test_run_ids --write     # regenerate the fixture (only for a deliberate change)
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import subprocess
import sys

from lib import confirmatory, profiles
from lib.config import RunConfig, run_id
from lib.paths import PROJECT_ROOT

FIXTURE = PROJECT_ROOT / "tests" / "fixtures" / "run_ids.json"

# plans callable with a profile alone, beyond the command line's sections (`profiles.SECTIONS`)
EXTRA_PLANS = {"operator_wall_unequal": lambda p: profiles.operator_wall(p),
               "budget_law_with_l": lambda p: profiles.budget_law(p, sizes=profiles.PAPER_SIZES_WITH_L),
               "contest_contracts": profiles.contest_contracts,
               "sudoku_base": profiles.sudoku_base}

# the recipe searches and pilots: module -> every config it trains or reads
SEARCHES = {
    "searches.settle_search": lambda m: [m.config(r, d, s) for r, d, s in m.QUEUE],
    "searches.prefix_sums_search": lambda m: [m.config(r, s) for r, s in m.QUEUE],
    "searches.untied_search": lambda m: [m.config(r, s) for r, s in m.QUEUE] + [m.config(r, m.HELD_OUT_SEED) for r in m.RECIPES],
    "searches.sudoku_pilot": lambda m: [m.config(r, s) for r, s in m.QUEUE],
    "searches.contest_pilot": lambda m: [profiles.contest_config(c, s) for c in profiles.contest_contracts("quick").values()
                                      for s in m.PILOT_SEEDS],
    "bench.time_to_learn": lambda m: [m.recipe_config(s) for s in m.SEEDS] + m.candidate_configs(),
    "bench.cpu_step_speed": lambda m: list(m.CONFIGS.values()),
}


def _json(value):
    """A plan field as JSON: a config by its run id, tuples and named tuples as lists, dict keys as text."""
    if isinstance(value, RunConfig):
        return run_id(value)
    if isinstance(value, dict):
        return {"/".join(map(str, k)) if isinstance(k, tuple) else str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_json(v) for v in value]
    return value


def _plan(plan) -> dict:
    """A plan's run ids (in `configs()` order) and every field, configs named by their run ids."""
    if isinstance(plan, RunConfig):
        return {"run_ids": [run_id(plan)]}
    if isinstance(plan, dict):                              # contest_contracts: name -> config
        return {"run_ids": [run_id(c) for c in plan.values()], "fields": _json(plan)}
    return {"run_ids": [run_id(c) for c in plan.configs()],
            "fields": {f.name: _json(getattr(plan, f.name)) for f in dataclasses.fields(plan)}}


def catalogue() -> dict:
    plans = {}
    for name, build in {**profiles.SECTIONS, **EXTRA_PLANS}.items():
        for profile in profiles.PROFILES:
            try:
                plans[f"{name}:{profile}"] = _plan(build(profile))
            except ValueError as err:                       # a plan a profile does not have (the fair wall's smoke)
                plans[f"{name}:{profile}"] = {"refused": str(err)}
    studies = {entry: [run_id(c) for c in study()] for entry, study in confirmatory.STUDIES.items()}
    studies.update({f"{entry} (every pick)": [run_id(c) for c in runs()] for entry, runs in confirmatory.UNDER_EVERY_PICK.items()})
    searches = {name: [run_id(c) for c in configs(importlib.import_module(name))] for name, configs in SEARCHES.items()}
    return {"plans": plans, "studies": studies, "searches": searches}


def _committed_runs() -> set[str]:
    """'experiment/hash' of every run directory committed under outputs/runs/."""
    out = subprocess.run(["git", "ls-files", "outputs/runs"], cwd=PROJECT_ROOT, capture_output=True, text=True,
                         check=True).stdout
    return {"/".join(p.split("/")[2:4]) for p in out.splitlines() if p.count("/") >= 4}


def _quick_ids(cat: dict) -> set[str]:
    return {i for key, plan in cat["plans"].items() if key.endswith(":quick") for i in plan.get("run_ids", ())}


def test_every_plan_names_the_runs_it_named():
    expected, got = json.loads(FIXTURE.read_text()), catalogue()
    assert sorted(got["plans"]) == sorted(expected["plans"])
    for key in expected["plans"]:
        assert got["plans"][key] == expected["plans"][key], key
    assert got["studies"] == expected["studies"]
    # a search moved to another folder keeps its configs: compared by module name without its folder
    strip = lambda d: {k.rpartition(".")[2]: v for k, v in d.items()}        # noqa: E731
    assert strip(got["searches"]) == strip(expected["searches"])


def test_every_committed_run_a_quick_plan_named_is_still_named():
    expected, got = json.loads(FIXTURE.read_text()), catalogue()
    named = _committed_runs() & _quick_ids(expected)
    assert len(named) > 100                                 # the committed quick runs the notebooks load
    assert named <= _quick_ids(got)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(catalogue(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
