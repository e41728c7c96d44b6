"""A sweep's input: the grid, the seeds, checked against the notebook's own parameter cell, and
expanded into points (one papermill run each), each with a stable name and folder of its own.

Everything here runs before any point does, so bad input fails at once, naming the parameter and
what is allowed (SweepError), and nothing is written: a parameter the notebook's `parameters` cell
does not assign, an empty list of values, and (lib.sweep.values) a PROFILE, DEVICE or seed the
notebooks do not accept.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..paths import outputs_dir
from .errors import SweepError
from .values import check_grid_values, check_seed

SEED_PARAMETERS = ("SEEDS", "SEED")          # a list of seeds (SEEDS=[s]) or one seed (SEED=s)


@dataclass(frozen=True)
class Point:
    """One papermill run: a notebook and the parameters injected into it."""
    notebook: Path
    params: dict
    folder: Path

    @property
    def id(self) -> str:
        return self.folder.name


def point_id(notebook: Path, params: dict) -> str:
    """Short sha256 of the notebook's name and the sorted parameters: stable across restarts and
    machines (the notebook's folder does not enter, so a moved checkout finds its points again)."""
    blob = json.dumps({"notebook": Path(notebook).name, "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def parse_seeds(text) -> list[int]:
    """'0-3' -> [0, 1, 2, 3]; '0,2,5' -> [0, 2, 5]; a list of ints passes through. Each seed must be
    one a sweep may use (lib.sweep.values.check_seed: 0-99), none listed twice."""
    if isinstance(text, (list, tuple)):
        seeds = list(text)
    else:
        seeds = []
        for part in str(text).split(","):
            part = part.strip()
            m = re.fullmatch(r"(\d+)-(\d+)", part)
            if m and int(m[1]) <= int(m[2]):
                check_seed(int(m[2]), "--seeds")          # before a huge range is built
                seeds.extend(range(int(m[1]), int(m[2]) + 1))
            elif re.fullmatch(r"\d+", part):
                seeds.append(int(part))
            else:
                raise SweepError(f"--seeds: cannot read {part!r} in {text!r}; allowed: integers >= 0 "
                                 "separated by commas, or a range like 0-3")
    if not seeds:
        raise SweepError(f"--seeds: must be a non-empty list of integers >= 0, got {text!r}")
    for seed in seeds:
        check_seed(seed, "--seeds")
    if len(set(seeds)) != len(seeds):
        raise SweepError(f"--seeds: a seed is listed twice in {text!r}")
    return seeds


def parse_param(text: str) -> tuple[str, list]:
    """'NAME=VALUES' from the command line; VALUES is read as YAML: a list is the values to sweep,
    anything else is one value. `PROFILE=smoke`, `T=[8,16]`, `SEEDS=[[0,1],[2,3]]` (two points)."""
    import yaml
    name, sep, values = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
        raise SweepError(f"--param: expected NAME=VALUES (e.g. PROFILE=smoke or T=[8,16]), got {text!r}")
    try:
        value = yaml.safe_load(values)
    except yaml.YAMLError as err:
        raise SweepError(f"--param {name}: cannot read {values!r} as YAML: {err}") from None
    return name.strip(), value if isinstance(value, list) else [value]


def load_grid_file(path) -> dict:
    """A small YAML or JSON file: {notebook?, name?, seeds?, grid: {PARAM: [values...]}}."""
    import yaml
    path = Path(path)
    if not path.is_file():
        raise SweepError(f"--grid: no such file {str(path)!r}")
    try:
        spec = yaml.safe_load(path.read_text())        # YAML is a superset of JSON: one reader for both
    except yaml.YAMLError as err:
        raise SweepError(f"--grid: {path} is not valid YAML/JSON: {err}") from None
    allowed = {"notebook", "name", "seeds", "grid"}
    if not isinstance(spec, dict) or set(spec) - allowed:
        extra = sorted(set(spec) - allowed) if isinstance(spec, dict) else type(spec).__name__
        raise SweepError(f"--grid: {path}: unknown keys {extra}; allowed: {sorted(allowed)}")
    if not isinstance(spec.get("grid", {}), dict):
        raise SweepError(f"--grid: {path}: 'grid' must map parameter names to lists of values")
    return spec


def notebook_parameters(notebook: Path) -> list[str]:
    """Names assigned in the notebook's `parameters` cell. papermill.inspect_notebook gives them,
    except for lines its parser gives up on (a comment with parentheses and a colon, e.g.), which it
    drops with a warning; a plain scan of `NAME =` lines catches those."""
    import logging
    import nbformat
    import papermill
    logger = logging.getLogger("papermill.translators")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        names = list(papermill.inspect_notebook(str(notebook)))
    finally:
        logger.setLevel(level)
    for cell in nbformat.read(notebook, as_version=4).cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            names += re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=(?!=)", cell.source, re.M)
    return list(dict.fromkeys(names))


def expand_grid(notebook, grid: dict | None = None, seeds=None, name: str | None = None,
                root: Path | None = None) -> list[Point]:
    """Every point of the grid, checked against the notebook's parameters before any work.

    Order: the product of the grid's values in the order the parameters are given, seeds innermost.
    A grid value that is a list is the values to sweep; a scalar is one value."""
    notebook = Path(notebook)
    if notebook.suffix != ".ipynb" or not notebook.is_file():
        raise SweepError(f"notebook: {str(notebook)!r} is not an existing .ipynb file")
    allowed = notebook_parameters(notebook)
    if not allowed:
        raise SweepError(f"notebook: {notebook.name} has no cell tagged 'parameters'; nothing to sweep")
    grid = {k: (v if isinstance(v, list) else [v]) for k, v in (grid or {}).items()}
    for param, values in grid.items():
        if param not in allowed:
            raise SweepError(f"grid: unknown parameter {param!r} for {notebook.name}; allowed: {allowed}")
        if not values:
            raise SweepError(f"grid: parameter {param!r} has an empty list of values")
    check_grid_values(grid)
    if seeds is not None:
        seeds = parse_seeds(seeds)
        seed_param = next((p for p in SEED_PARAMETERS if p in allowed), None)
        if seed_param is None:
            raise SweepError(f"--seeds: {notebook.name} has no SEED or SEEDS parameter; its parameters: {allowed}")
        if seed_param in grid:
            raise SweepError(f"--seeds: the grid also sets {seed_param}; give the seeds one way only")
        grid[seed_param] = [[s] if seed_param == "SEEDS" else s for s in seeds]
    name = name or notebook.stem
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise SweepError(f"--name: {name!r} is not a usable folder name; allowed: letters, digits, '.', '_', '-'")
    sweep_dir = (root or outputs_dir()) / "sweeps" / name
    points = []
    for values in itertools.product(*grid.values()):
        params = dict(zip(grid, values))
        points.append(Point(notebook.resolve(), params, sweep_dir / point_id(notebook, params)))
    if len({p.id for p in points}) != len(points):
        raise SweepError("grid: two points have the same parameters (a value is listed twice)")
    return points
