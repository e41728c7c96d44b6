"""The main job: execute every section notebook through papermill, then refresh the claims ledger.

    python -m lib.run_all --profile quick            # executed copies go to outputs/notebooks/
    python -m lib.run_all --profile quick --in-place # developers: refresh the committed notebooks

Runs already in the store load from it; missing ones train (the quick profile fits a 2-core CPU).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from . import claims
from .profiles import PROFILES
from .paths import PROJECT_ROOT, outputs_dir

NOTEBOOKS = PROJECT_ROOT / "notebooks"


def section_notebooks() -> list[Path]:
    """Every section, by its .py source (a new section's .ipynb is created from it on first run)."""
    for src in NOTEBOOKS.glob("[0-9][0-9]_*.py"):
        if not src.with_suffix(".ipynb").exists():
            subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", str(src)], check=True)
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def run(profile: str = "quick", in_place: bool = False, only: list[str] | None = None) -> float:
    if profile not in PROFILES:
        raise ValueError(f"--profile: unknown profile {profile!r}; allowed: {PROFILES}")
    import jupytext
    import papermill as pm

    out_dir = outputs_dir() / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    t_all = time.time()
    for nb in section_notebooks():
        if only and not any(nb.name.startswith(o) for o in only):
            continue
        src = nb.with_suffix(".py")
        if src.exists():   # the .py is the source of truth: bring the .ipynb's cells up to date first
            if [c.source for c in jupytext.read(src).cells] != [c.source for c in jupytext.read(nb).cells]:
                subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--update", "--to", "ipynb", str(src)],
                               check=True)
        target = nb if in_place else out_dir / nb.name
        t0 = time.time()
        print(f"[run_all] {nb.name} -> {target.relative_to(PROJECT_ROOT) if target.is_relative_to(PROJECT_ROOT) else target}",
              flush=True)
        pm.execute_notebook(str(nb), str(target), parameters={"PROFILE": profile} if profile != "quick" else {},
                            cwd=str(NOTEBOOKS), progress_bar=False, kernel_name="python3")
        print(f"[run_all] {nb.name} done in {time.time() - t0:.1f} s", flush=True)
    path = claims.write_report()
    wall = time.time() - t_all
    print(f"[run_all] claims ledger refreshed: {path.relative_to(PROJECT_ROOT)}")
    print(f"[run_all] wall time: {wall:.1f} s ({wall / 60:.1f} min)")
    return wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="quick", choices=PROFILES)
    ap.add_argument("--in-place", action="store_true", help="execute the committed notebooks themselves")
    ap.add_argument("--only", nargs="*", help="notebook name prefixes, e.g. 03")
    a = ap.parse_args(argv)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    os.environ.setdefault("LOOPS_HEADLESS", "1")      # notebooks skip their slider cells in batch runs
    run(a.profile, a.in_place, a.only)


if __name__ == "__main__":
    sys.exit(main())
