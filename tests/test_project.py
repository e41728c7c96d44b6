"""Project invariants: pins agree, notebooks are paired, the README's commands are what CI runs."""
import re
import tomllib
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_environment_yml_pins_match_pyproject():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = set(pyproject["dependencies"]) | set(pyproject["optional-dependencies"]["test"])
    env = set(re.findall(r"^\s*-\s+([A-Za-z0-9_.-]+==[^\s]+)\s*$", (ROOT / "environment.yml").read_text(), re.M))
    assert env == wanted
    assert "torch==2.13.0" in wanted


@pytest.mark.parametrize("py", sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")), ids=lambda p: p.name)
def test_notebooks_are_paired(py):
    nb = py.with_suffix(".ipynb")
    assert nb.exists(), f"{nb.name} missing: run `make notebooks`"
    src = lambda n: [(c.cell_type, c.source.strip(), c.metadata.get("tags", [])) for c in n.cells]   # tags too
    assert src(jupytext.read(py)) == src(jupytext.read(nb)), f"{nb.name} differs from {py.name}: run `make notebooks`"
    executed = [c for c in jupytext.read(nb).cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in executed), f"{nb.name} is not fully executed"


def test_readme_commands_and_ci():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert commands[:2] == ["make all", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))] == ["make test"]


def code_lines(py: Path) -> int:
    """Non-blank, non-comment lines in the code cells of a jupytext percent source."""
    count, in_code = 0, False
    for line in py.read_text().splitlines():
        if line.startswith("# %%"):
            in_code = "[markdown]" not in line
        elif in_code and line.strip() and not line.strip().startswith("#"):
            count += 1
    return count


@pytest.mark.parametrize("py", sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")), ids=lambda p: p.name)
def test_notebooks_are_thin(py):
    # measurement and rules live in lib (tested there); a notebook states, calls, draws and judges
    assert code_lines(py) <= 60, f"{py.name}: {code_lines(py)} code lines; move logic into lib"
    src = py.read_text()
    assert not re.search(r"seed\s*=\s*\d{3,}\s*\+", src), f"{py.name}: name the probe set (lib/probes.py)"
    assert "claims.verdict(" not in src and "rules.verdict(" not in src, f"{py.name}: print verdicts with claims.print_verdicts"
