import pytest
import torch

torch.set_num_threads(1)   # determinism tests compare bit-for-bit; one thread keeps reductions in one order


@pytest.fixture
def store_root(tmp_path, monkeypatch):
    """A private, empty outputs/ for store tests."""
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    monkeypatch.delenv("LOOPS_ARTIFACTS", raising=False)     # results and figures in this outputs/ too
    return tmp_path / "outputs"


@pytest.fixture(autouse=True)
def fresh_sudoku_pools(tmp_path, monkeypatch):
    """Tests draw their sudoku pools (and keep them in their own folder): a pool file in outputs/data
    would stand in for the generator under test, and a test run must not write into the repository."""
    from lib import sudoku
    monkeypatch.setattr(sudoku, "_POOLS", {})
    original = sudoku.pool_file
    monkeypatch.setattr(sudoku, "pool_file", lambda *a: tmp_path / "pools" / original(*a).name)
