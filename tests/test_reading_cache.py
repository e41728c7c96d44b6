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


@pytest.mark.parametrize("other", [{"v": 1.0001, "n": 3, "ok": True}, {"v": 1.00002, "n": 3, "ok": True},
                                   {"v": 1.0, "n": 4, "ok": True}, {"v": 1.0, "n": 3, "ok": False}, {"v": 1.0, "n": 3.0, "ok": True},
                                   {"v": float("nan"), "n": 3, "ok": True}, {"v": 1.0, "n": 3},
                                   {"v": [1.0], "n": 3, "ok": True}])
def test_a_recompute_that_disagrees_is_an_error(tmp_path, other):
    run = fake_run(tmp_path)
    reading_cache.reading(run, "x", 1, lambda: {"v": 1.0, "n": 3, "ok": True})
    with pytest.raises(ValueError, match="differs from the kept"):
        reading_cache.reading(run, "x", 1, lambda: other, recompute=True)


def test_a_recompute_agrees_through_another_cpus_float32_rounding(tmp_path):
    # the sizes of difference seen between two machines: 2e-7 relative in a gradient norm, 1.3e-7 absolute
    # in a relative step of 1e-3 between loops
    run = fake_run(tmp_path)
    reading_cache.reading(run, "x", 1, lambda: {"g": 0.07587436586618423, "step": 0.0009966171346604824,
                                                 "inf": float("inf")})
    again = {"g": 0.07587438076734543, "step": 0.0009964838391169906, "inf": float("inf")}
    assert reading_cache.reading(run, "x", 1, lambda: again, recompute=True)["g"] == 0.07587438076734543


def test_bad_name(tmp_path):
    with pytest.raises(ValueError, match="name"):
        reading_cache.reading(fake_run(tmp_path), "../x", 1, dict)


def test_each_parameter_set_is_kept_apart(tmp_path):
    run, calls = fake_run(tmp_path), []
    compute = lambda k: (lambda: calls.append(k) or {"k": k})   # noqa: E731
    assert reading_cache.reading(run, "x", 1, compute(1), params={"ns": (8, 16)})["k"] == 1
    assert reading_cache.reading(run, "x", 1, compute(2), params={"ns": (8, 32)})["k"] == 2
    assert reading_cache.reading(run, "x", 1, compute(3), params={"ns": [8, 16]})["k"] == 1    # kept: same parameters
    assert calls == [1, 2] and len(list((tmp_path / "readings").glob("x-*.json"))) == 2
    kept = json.loads(next((tmp_path / "readings").glob("x-*.json")).read_text())
    assert kept["params"]["ns"] in ([8, 16], [8, 32])


def test_the_environment_recomputes_every_reading(tmp_path, monkeypatch):
    run = fake_run(tmp_path)
    reading_cache.reading(run, "x", 1, lambda: {"v": 1.0}, params={"a": 1})
    monkeypatch.setenv(reading_cache.RECOMPUTE_ENV, "1")
    with pytest.raises(ValueError, match="differs from the kept"):
        reading_cache.reading(run, "x", 1, lambda: {"v": 2.0}, params={"a": 1})


def test_a_kept_reading_reads_back_in_the_readers_key_order(tmp_path):
    run = fake_run(tmp_path)
    value = {"z": 1, "a": {"raw": 1.0, "cosine": 2.0}}
    first = reading_cache.reading(run, "x", 1, lambda: value)
    kept = reading_cache.reading(run, "x", 1, dict)
    assert list(first) == list(kept) == ["z", "a"] and list(kept["a"]) == ["raw", "cosine"]
