import pytest
import torch

torch.set_num_threads(1)   # determinism tests compare bit-for-bit; one thread keeps reductions in one order


@pytest.fixture
def store_root(tmp_path, monkeypatch):
    """A private, empty outputs/ for store tests."""
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path / "outputs"))
    return tmp_path / "outputs"
