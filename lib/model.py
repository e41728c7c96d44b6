"""The weight-tied looped transformer.

    h^0 = e = Embed(tokens)
    h^{t+1} = F(inject(h^t, e))          F = L pre-norm layers, the SAME weights at every loop
    logits^t = Linear(LN(h^t))           decodable after every loop

Layers: causal multi-head attention with no positional encoding (NoPE), then a GELU MLP, each
in a pre-norm residual branch. Input injection ("recall"):
    "none"    inject(h, e) = h
    "add"     inject(h, e) = h + e
    "adapter" inject(h, e) = W [h, e]    (W: 2d -> d, initialised to [I | I], i.e. "add" at start)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

INJECTIONS = ("none", "add", "adapter")
PRESETS = {  # the paper's sizes; heads chosen so every head is 32 wide (the paper does not say)
    "s": dict(n_layers=2, d_model=128, n_heads=4),
    "m": dict(n_layers=2, d_model=256, n_heads=8),
    "l": dict(n_layers=4, d_model=512, n_heads=16),
}


@dataclass(frozen=True)
class LoopConfig:
    vocab_size: int            # input ids, BOS included
    n_classes: int             # output classes per position
    n_layers: int = 2          # layers in the looped block
    d_model: int = 128
    n_heads: int = 4
    mlp_ratio: int = 4
    injection: str = "adapter"

    def __post_init__(self):
        for name in ("vocab_size", "n_classes", "n_layers", "d_model", "n_heads", "mlp_ratio"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model: {self.d_model} is not divisible by n_heads={self.n_heads}; "
                             "allowed: d_model a multiple of n_heads")
        if self.injection not in INJECTIONS:
            raise ValueError(f"injection: unknown {self.injection!r}; allowed: {INJECTIONS}")


class Layer(nn.Module):
    """One pre-norm transformer layer: x + Attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, cfg: LoopConfig):
        super().__init__()
        d = cfg.d_model
        self.n_heads = cfg.n_heads
        self.ln_attn = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.attn_out = nn.Linear(d, d)
        self.ln_mlp = nn.LayerNorm(d)
        self.mlp_in = nn.Linear(d, cfg.mlp_ratio * d)
        self.mlp_out = nn.Linear(cfg.mlp_ratio * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, D = x.shape
        q, k, v = self.qkv(self.ln_attn(x)).view(B, N, 3, self.n_heads, D // self.n_heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)          # fused kernel, causal
        x = x + self.attn_out(a.transpose(1, 2).reshape(B, N, D))
        # exact (erf) GELU: on this torch build it is ~2x faster forward+backward than the tanh form
        return x + self.mlp_out(F.gelu(self.mlp_in(self.ln_mlp(x))))


def reveal_loops(N: int, device=None) -> torch.Tensor:
    """Streaming schedule: the 0-indexed loop at which sequence position j starts computing.
    BOS (j = 0) and token 1 start at loop 0; token i starts at loop i - 1 (Paper A §3)."""
    return torch.clamp(torch.arange(N, device=device) - 1, min=0)


class LoopedTransformer(nn.Module):
    def __init__(self, cfg: LoopConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.block = nn.ModuleList(Layer(cfg) for _ in range(cfg.n_layers))   # ONE block, tied over loops
        if cfg.injection == "adapter":
            self.adapter = nn.Linear(2 * d, d, bias=False)
        self.ln_out = nn.LayerNorm(d)
        self.readout = nn.Linear(d, cfg.n_classes)
        self._init_weights()

    def _init_weights(self):
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "ln_" in name:
                nn.init.ones_(p)
            elif p.dim() == 2:
                nn.init.normal_(p, std=0.02)
        for layer in self.block:   # GPT-2 style: shrink the residual writes
            for p in (layer.attn_out.weight, layer.mlp_out.weight):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * self.cfg.n_layers))
        if self.cfg.injection == "adapter":
            d = self.cfg.d_model
            with torch.no_grad():
                self.adapter.weight.copy_(torch.cat([torch.eye(d), torch.eye(d)], dim=1))

    def inject(self, h: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        if self.cfg.injection == "add":
            return h + e
        if self.cfg.injection == "adapter":
            return self.adapter(torch.cat([h, e], dim=-1))
        return h

    def step(self, h: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        """One loop: h^{t+1} = F(inject(h^t, e))."""
        x = self.inject(h, e)
        for layer in self.block:
            x = layer(x)
        return x

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        return self.readout(self.ln_out(h))

    def forward(self, tokens: torch.Tensor, T: int, all_loops: bool = False, return_states: bool = False,
                streaming: bool = False, hook=None, h0: torch.Tensor | None = None):
        """Run T loops.

        all_loops=False: logits after loop T, (B, N, C).
        all_loops=True:  logits after every loop 1..T stacked, (T, B, N, C).
        return_states:   also return the states h^1..h^T stacked, (T, B, N, d).
        streaming:       token i (sequence position i, BOS = position 0) starts computing at loop
                         i - 1 (see `reveal_loops`); before that its state stays at its embedding.
                         With causal attention no revealed position can attend to a later one, so
                         "embedded and attendable only from loop i-1 on" needs no extra mask.
        hook(t, h) -> h: called on the state after loop t (1-indexed); used for activation patching.
        h0:              initial state instead of the embedding (path-independence tests).
        """
        if not isinstance(T, int) or T < 1:
            raise ValueError(f"T: number of loops must be an integer >= 1, got {T!r}")
        e = self.embed(tokens)
        h, states = (e if h0 is None else h0), []
        if streaming:
            start = reveal_loops(tokens.shape[1], tokens.device)
        for t in range(T):
            h = self.step(h, e)
            if streaming:
                waiting = (start > t)[None, :, None]              # positions not yet revealed after loop t
                h = torch.where(waiting, e, h)
            if hook is not None:
                h = hook(t + 1, h)
            if all_loops or return_states:
                states.append(h)
        if all_loops:
            logits = self.decode(torch.stack(states))     # one readout call for every loop
        else:
            logits = self.decode(h)
        return (logits, torch.stack(states)) if return_states else logits

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
