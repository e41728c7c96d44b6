"""A sweep's table of points: one row per point, from the point's folder (status.json and
results/*.json), written as outputs/sweeps/<sweep-name>/summary.csv and printed, shorter, at the end
of a sweep.

The table is tidy: the same columns for every row, whatever each point recorded, so that seeds of
one configuration line up and can be combined (lib.sweep.aggregate). The columns, in order:

    point                    the point's id (its folder's name)
    <each grid parameter>    its value (lists and dicts as JSON)
    seed                     the point's one seed (SEED=s, or SEEDS=[s]); empty for a point with none
                             or several
    status, wall_s, error    done / failed / cancelled / unfinished, seconds, a point's error in one line
    <each result>            every scalar a point recorded, nested dicts flattened to `a.b`; the union
                             over all points, empty where a point lacks the value

A result's column is its flattened key; when the sweep's points record more than one results file,
every key is prefixed with its file's stem (`stem.a.b`), decided for the whole sweep so that a point
that recorded fewer files does not get other columns. A key that would clash with a column above
is prefixed with its stem too.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..paths import atomic_write_text
from .grid import Point
from .point import read_results

FIXED = ("point", "seed", "status", "wall_s", "error")       # the columns that are not parameters or results


def point_seed(params: dict):
    """The one seed a point runs: SEED=s, or SEEDS=[s]; None for no seed parameter or several seeds."""
    if "SEED" in params:
        return params["SEED"]
    seeds = params.get("SEEDS")
    return seeds[0] if isinstance(seeds, list) and len(seeds) == 1 else None


def point_status(point: Point) -> dict:
    """A point's status.json (a point never started reads 'unfinished'; so does one killed between
    writing its status and its DONE)."""
    try:
        status = json.loads((point.folder / "status.json").read_text())
    except (OSError, ValueError):
        status = {"status": "unfinished", "evalue": "never ran"}
    if status.get("status") == "done" and not (point.folder / "DONE").exists():
        status["status"] = "unfinished"
    return status


def summary_rows(points: list[Point]) -> list[dict]:
    """summary.csv's rows, one per point in grid order, each with every column (None where a point
    lacks a value)."""
    param_names = list(dict.fromkeys(k for p in points for k in p.params))
    fixed = ["point", *param_names, *FIXED[1:]]
    results = [read_results(p.folder) for p in points]
    by_stem = len({stem for r in results for stem, content in r.items() if isinstance(content, dict)}) > 1
    rows = []
    for point, result in zip(points, results):
        status = point_status(point)
        row = {"point": point.id}
        row.update({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in point.params.items()})
        row.update(seed=point_seed(point.params), status=status["status"], wall_s=status.get("wall_s"),
                   error="" if status["status"] == "done" else error_text(status))
        for stem, content in result.items():
            if isinstance(content, dict):
                for key, value in _flatten(content).items():
                    row[f"{stem}.{key}" if by_stem or key in fixed else key] = value
        rows.append(row)
    columns = list(dict.fromkeys([*fixed, *(k for r in rows for k in r)]))
    return [{c: r.get(c) for c in columns} for r in rows]


def result_columns(rows: list[dict], param_names: list[str]) -> list[str]:
    """The columns of `rows` that hold results (not the point's id, parameters, seed or status)."""
    return [k for k in dict.fromkeys(k for r in rows for k in r) if k not in FIXED and k not in param_names]


def numeric_columns(rows: list[dict], columns: list[str]) -> list[str]:
    """Those of `columns` whose values are all numbers (bools are not) where present, at least one."""
    def number(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return [c for c in columns if any(r.get(c) is not None for r in rows)
            and all(r.get(c) is None or number(r.get(c)) for r in rows)]


def error_text(status: dict) -> str:
    """A point's error in one line: 'cell 3: ValueError: message' (the cell when it is known)."""
    where = f"cell {status['cell_index']}: " if status.get("cell_index") is not None else ""
    name = f"{status['ename']}: " if status.get("ename") else ""
    return f"{where}{name}{status.get('evalue')}"


def _flatten(obj, prefix: str = "") -> dict:
    """Scalars of a nested results dict as {'a.b': value}; lists are left out (not one cell's worth)."""
    out = {}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        elif v is None or isinstance(v, (bool, int, float, str)):
            out[key] = v
    return out


def write_csv(rows: list[dict], path: Path) -> None:
    """Rows as CSV (columns: every key, in the order first met; None as an empty cell), written atomically."""
    columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, buf.getvalue())


def write_summary(rows: list[dict], path: Path) -> None:
    """summary.csv: the rows of summary_rows."""
    write_csv(rows, path)


def read_summary(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def format_table(rows: list[dict], param_names: list[str], max_result_columns: int = 4) -> str:
    """The printed summary: point, params, status, wall time, then the first few numeric results
    (every column is in summary.csv) and, for a point not done, its error."""
    if not rows:
        return "(no points)"
    shown = ["point", *param_names, "status", "wall_s"]
    numeric = numeric_columns(rows, result_columns(rows, param_names))
    columns = shown + numeric[:max_result_columns]

    def cell(v) -> str:
        if v is None or v == "":
            return "-"
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    table = [columns] + [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in table]
    for i, r in enumerate(rows):
        if r.get("error"):
            lines[i + 1] += f"  {r['error'][:100]}"
    return "\n".join(lines)
