"""Hand-built looped maps with known answers, sharing LoopedTransformer's loop (forward, hooks)."""
import torch
import torch.nn as nn

from lib.model import LoopConfig, LoopedTransformer


class SerialPropagator(LoopedTransformer):
    """Prefix sums in Z_m, computed one position per `period` loops (period 1 or 2).

    State per position: [value (m one-hot, zeros = empty), latch (m one-hot)]. Each loop, position i
    reads position i-1's value and adds its own token; with period 2 the result passes through the
    latch first, so information moves one position every two loops. Decoded class m = "empty".
    tau(i) = period * i exactly, and a patch's damage travels at 1/period positions per loop.
    """

    def __init__(self, m: int = 5, period: int = 1):
        super().__init__(LoopConfig(vocab_size=m + 1, n_classes=m + 1, n_layers=1, d_model=2 * m, n_heads=1,
                                    injection="none"))
        assert period in (1, 2)
        self.m, self.period = m, period

    def embed(self, tokens):                      # BOS (= m) holds value 0; tokens start empty
        B, N = tokens.shape
        h = torch.zeros(B, N, 2 * self.m)
        h[:, 0, 0] = 1.0
        return h

    def step(self, h, e, loop=0):
        # the instruments stack K copies of the batch (one per state/probe pair): each reads its tokens
        x = self._tokens.repeat(h.shape[0] // len(self._tokens), 1)
        value, latch = h[..., : self.m], h[..., self.m:]
        prev = torch.cat([torch.zeros_like(value[:, :1]), value[:, :-1]], dim=1)   # value of position i-1
        new = torch.zeros_like(value)
        for b in range(value.shape[0]):
            for i in range(1, value.shape[1]):
                if prev[b, i].sum() > 0:
                    new[b, i] = torch.roll(prev[b, i], shifts=int(x[b, i]), dims=-1)
        new[:, 0] = value[:, 0]
        if self.period == 1:
            return torch.cat([new, latch], dim=-1)
        new_value = latch.clone()
        new_value[:, 0] = value[:, 0]
        return torch.cat([new_value, new], dim=-1)

    def decode(self, h):
        value = h[..., : self.m]
        empty = (value.sum(-1, keepdim=True) == 0).float()
        return torch.cat([value, empty], dim=-1) * 10.0

    def forward(self, tokens, T, **kw):
        self._tokens = tokens
        return super().forward(tokens, T, **kw)


def serial_labels(tokens, m):
    x = tokens[:, 1:]
    y = torch.cumsum(x, dim=1) % m
    return torch.cat([torch.full_like(y[:, :1], -100), y], dim=1)


class LinearContraction(LoopedTransformer):
    """h <- A h + e with ||A|| < 1: a unique fixed point, J_t = A at every loop (Prop. 1 exactly)."""

    def __init__(self, d: int = 6, n_classes: int = 3, rho: float = 0.5, seed: int = 0):
        super().__init__(LoopConfig(vocab_size=4, n_classes=n_classes, n_layers=1, d_model=d, n_heads=1,
                                    injection="none"))
        g = torch.Generator().manual_seed(seed)
        q, _ = torch.linalg.qr(torch.randn(d, d, generator=g))
        self.A = nn.Parameter(rho * q, requires_grad=False)

    def step(self, h, e, loop=0):
        return h @ self.A.T + e


class TwoFixedPoints(LoopedTransformer):
    """h <- tanh(3 h): per coordinate, stable fixed points at ±0.995; the start's sign decides which."""

    def __init__(self, d: int = 6):
        super().__init__(LoopConfig(vocab_size=4, n_classes=3, n_layers=1, d_model=d, n_heads=1, injection="none"))

    def step(self, h, e, loop=0):
        return torch.tanh(3.0 * h)


def fake_run(model, **cfg):
    """A stored run's three parts, built by hand: a Z5 config (prefix sums mod 5), a model, metrics."""
    from types import SimpleNamespace

    from lib.config import RunConfig
    return SimpleNamespace(config=RunConfig(task="Z5", **cfg), model=model, metrics={"n_params": 100})
