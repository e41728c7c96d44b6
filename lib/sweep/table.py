"""A sweep's table: one row per point, from the point's folder (status.json and results/*.json),
written as outputs/sweeps/<sweep-name>/summary.csv (params, status, wall_s, error, then every
scalar result) and printed, shorter, at the end of a sweep.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..paths import atomic_write_text
from .grid import Point
from .point import read_results


def point_row(point: Point) -> dict:
    """A point's line of the table, from its status.json (points never started read 'unfinished')."""
    try:
        status = json.loads((point.folder / "status.json").read_text())
    except (OSError, ValueError):
        status = {"status": "unfinished", "evalue": "never ran"}
    if status.get("status") == "done" and not (point.folder / "DONE").exists():
        status["status"] = "unfinished"        # status written, DONE not: killed in between
    row = {"point": point.id}
    row.update({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in point.params.items()})
    row.update(status=status["status"], wall_s=status.get("wall_s"),
               error="" if status["status"] == "done" else error_text(status))
    results = read_results(point.folder)
    for stem, content in results.items():
        prefix = f"{stem}." if len(results) > 1 else ""
        if isinstance(content, dict):
            row.update(_flatten(content, prefix))
    return row


def error_text(status: dict) -> str:
    """A point's error in one line: 'cell 3: ValueError: message' (the cell when it is known)."""
    where = f"cell {status['cell_index']}: " if status.get("cell_index") is not None else ""
    return f"{where}{status.get('ename')}: {status.get('evalue')}"


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


def write_summary(rows: list[dict], path: Path) -> None:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, buf.getvalue())


def read_summary(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def format_table(rows: list[dict], param_names: list[str], max_result_columns: int = 4) -> str:
    """The printed summary: point, params, status, wall time, then the first few numeric results
    (every column is in summary.csv) and, for a point not done, its error."""
    if not rows:
        return "(no points)"
    shown = ["point", *param_names, "status", "wall_s"]
    numeric = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in shown and k != "error"
               and any(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for r in rows)]
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
