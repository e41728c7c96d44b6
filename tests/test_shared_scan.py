"""08's one-pass reading: accuracy per loop and the max-confidence baseline from the same loops give
exactly what the two readers give apart (the chunked pass is the plain forward's bits)."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from lib.config import RunConfig
from lib.instruments import chunks, extrapolation, head
from lib.sections.s08_easy_to_hard import read as read08
from lib.model import LoopedTransformer
from lib.probes import probe_seed
from tests.constructed import SerialPropagator


def _apart(run, ns, factor, count, threshold):
    curves = extrapolation.accuracy_by_length(run, ns, factor, count)
    conf = {n: head.confidence_stopping(run.model, run.config.task_obj(), n, len(a.seq_acc), threshold, count,
                                        probe_seed("extrapolation", n))
            for n, a in curves.items() if n > run.config.n_train}
    return curves, conf


def _same(a, b):
    (ca, fa), (cb, fb) = a, b
    assert list(ca) == list(cb) and fa == fb
    for n in ca:
        assert np.array_equal(ca[n].seq_acc, cb[n].seq_acc) and np.array_equal(ca[n].position_acc, cb[n].position_acc)


@pytest.mark.parametrize("chunk_tokens", [64, chunks.CHUNK_TOKENS])
def test_one_pass_equals_the_two_readers_on_a_looped_transformer(monkeypatch, chunk_tokens):
    cfg = RunConfig(task="Z5", n_train=4, T_train=4, n_layers=1, d_model=16, n_heads=2, causal=True, outer_norm=True)
    torch.manual_seed(0)
    model = LoopedTransformer(cfg.model_config()).eval()
    with torch.no_grad():                   # weights large enough that predictions and confidence move per loop
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0, 0.4)
    run = SimpleNamespace(config=cfg, model=model)
    monkeypatch.setattr(chunks, "CHUNK_TOKENS", chunk_tokens)           # 64: several chunks a loop
    chunked = []
    real = chunks.chunked
    monkeypatch.setattr(chunks, "chunked", lambda *a: chunked.append(1) or real(*a))
    one = extrapolation.accuracy_and_confidence_by_length(run, (4, 8, 12), 1.5, 48, 0.6)
    assert chunked                                                            # the chunked pass ran
    _same(one, _apart(run, (4, 8, 12), 1.5, 48, 0.6))
    assert set(one[1]) == {8, 12}                                             # the baseline only beyond n_train


def test_one_pass_falls_back_to_the_plain_forward_for_other_models(monkeypatch):
    monkeypatch.setattr(chunks, "fast_path", lambda model: False)     # e.g. untied or a population
    run = SimpleNamespace(config=RunConfig(task="Z5", n_train=4, T_train=4),
                          model=SerialPropagator(5, period=1).eval())
    _same(extrapolation.accuracy_and_confidence_by_length(run, (4, 8), 1.5, 32, 0.9), _apart(run, (4, 8), 1.5, 32, 0.9))
    curves, conf = extrapolation.accuracy_and_confidence_by_length(run, (4, 8), 1.5, 32, 0.9)
    h = read08.halting_against_confidence(run, curves, 1.0, 0.9, 32, confidence=conf)
    assert h == read08.halting_against_confidence(run, curves, 1.0, 0.9, 32)
