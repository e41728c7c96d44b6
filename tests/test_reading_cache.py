"""Readings kept beside a run (`reading_cache`): used while the weights and the reader's version match,
re-read when either changes, and a recompute that disagrees with the kept reading is an error."""
import json
from types import SimpleNamespace

import pytest

from lib import reading_cache


def fake_run(tmp_path, sha="abc"):
    (tmp_path / "DONE").write_text(json.dumps({"model_sha256": sha}))
    return SimpleNamespace(path=tmp_path)


def test_kept_reading_is_used_until_weights_or_version_change(tmp_path):
    run, calls = fake_run(tmp_path), []
    compute = lambda: calls.append(1) or {"v": 1.5, "pair": (1, 2), "nan": float("nan")}   # noqa: E731
    first = reading_cache.reading(run, "x", 1, compute)
    assert first["pair"] == [1, 2] and len(calls) == 1
    assert reading_cache.reading(run, "x", 1, compute) == first or len(calls) == 1      # NaN != NaN in ==
    assert len(calls) == 1                                                              # kept
    reading_cache.reading(run, "x", 2, compute)                                         # another reader version
    assert len(calls) == 2
    fake_run(tmp_path, sha="def")                                                       # other weights
    reading_cache.reading(run, "x", 2, compute)
    assert len(calls) == 3
    assert reading_cache.reading(run, "x", 2, compute, recompute=True)["v"] == 1.5      # agrees, NaN included


def test_a_recompute_that_disagrees_is_an_error(tmp_path):
    run = fake_run(tmp_path)
    reading_cache.reading(run, "x", 1, lambda: {"v": 1.0})
    with pytest.raises(ValueError, match="differs from the kept"):
        reading_cache.reading(run, "x", 1, lambda: {"v": 1.0000001}, recompute=True)


def test_bad_name(tmp_path):
    with pytest.raises(ValueError, match="name"):
        reading_cache.reading(fake_run(tmp_path), "../x", 1, dict)
