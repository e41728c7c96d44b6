"""The pieces one loop of the model is made of: `Layer` (attention then a GELU MLP, each a residual
branch, with the norm placements and internal recall of `model.LoopConfig`), and the primitives it
calls, each aware of the population axis (`LoopedTransformer.stack`: parameters stacked (P, ...)):
`linear` (one batched product for P seeds), `normalise`, `recall`, the attention kernel choice and
rotary positions. A single model (population None) calls its nn.Linear / nn.LayerNorm modules
exactly as a plain transformer does.
"""
from __future__ import annotations

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotary(x: torch.Tensor) -> torch.Tensor:
    """RoPE on (B, H, N, dh): rotate each pair of channels by position * 10000^(-2p/dh)."""
    N, dh = x.shape[-2], x.shape[-1]
    freq = 10000.0 ** (-torch.arange(0, dh, 2, device=x.device, dtype=torch.float32) / dh)
    angle = torch.arange(N, device=x.device, dtype=torch.float32)[:, None] * freq[None, :]
    cos, sin = angle.cos(), angle.sin()                      # the rotation in fp32, also under bf16 autocast
    x1, x2 = x[..., 0::2].float(), x[..., 1::2].float()
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2).to(x.dtype)


def linear(mod: nn.Linear, x: torch.Tensor, population: int | None) -> torch.Tensor:
    """mod(x); with a population axis (mod's weight (P, out, in), x (P, ..., in)) one batched product."""
    if population is None:
        return mod(x)
    w, b = mod.weight, mod.bias
    x3 = x.reshape(population, -1, x.shape[-1])
    y = torch.bmm(x3, w.transpose(1, 2)) if b is None else torch.baddbmm(b.unsqueeze(1), x3, w.transpose(1, 2))
    return y.view(*x.shape[:-1], w.shape[1])


def recall(op: str, x: torch.Tensor, e: torch.Tensor, owner: nn.Module, population: int | None) -> torch.Tensor:
    """R(x, e): recall of the input e into x by `op` (RECALL_OPS); "linear" reads owner.recall_x and
    owner.recall_e (the block's entry: the model; internal recall: each layer)."""
    if op == "linear":
        return linear(owner.recall_x, x, population) + linear(owner.recall_e, e, population)
    if op == "concat":
        return torch.cat([x, e], dim=-1)
    return x + e


def make_norm(kind: str, d: int) -> nn.Module:
    """One normalisation of width d: LayerNorm ("layer") or RMSNorm ("rms"), each with a learned scale."""
    return nn.LayerNorm(d) if kind == "layer" else nn.RMSNorm(d)


def normalise(mod: nn.LayerNorm | nn.RMSNorm, x: torch.Tensor, population: int | None) -> torch.Tensor:
    """mod(x); with a population axis (mod's weight (P, d), and bias for a LayerNorm, x (P, ..., d)) each
    seed's own scale and shift."""
    if population is None:
        return mod(x)
    shape = (population,) + (1,) * (x.dim() - 2) + (x.shape[-1],)
    if isinstance(mod, nn.RMSNorm):
        return F.rms_norm(x, x.shape[-1:], eps=mod.eps) * mod.weight.view(shape)
    y = F.layer_norm(x, x.shape[-1:], eps=mod.eps)
    return y * mod.weight.view(shape) + mod.bias.view(shape)


SHORT_WORDS = 9     # longest sequence (BOS included) the compiled CPU step attends by broadcast products


def attention_products(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v written as broadcast products and a masked softmax: the same maths as
    F.scaled_dot_product_attention, in ops the compiler fuses."""
    N = q.shape[-2]
    s = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1) * q.shape[-1] ** -0.5
    if causal:
        s = s.masked_fill(~torch.ones(N, N, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    return (s.softmax(-1).unsqueeze(-1) * v.unsqueeze(-3)).sum(-2)


def local_mask(N: int, window: int, device=None) -> torch.Tensor:
    """(N, N) bool: query i may attend to key j when i - window < j <= i (causal local attention)."""
    i = torch.arange(N, device=device)
    return (i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - window)


# eager runs ask for the same mask in every layer of every loop: built once (read-only); a compiled
# step builds it inside its graph instead (the compiler does not trace through a cache)
_cached_local_mask = functools.lru_cache(maxsize=64)(local_mask)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """The fused kernel, except inside a compiled CPU step on short words: there the kernel costs
    ~5 µs per (sequence, head) for almost no FLOPs, and the broadcast form compiled with the rest of
    the loop makes a quick S4 step 1.3x faster (bench/cpu_step_speed.py; at 17 tokens the kernel wins
    again). Eager runs never take the broadcast path, so stored runs retrain bit-identically."""
    if torch.compiler.is_compiling() and q.device.type == "cpu" and q.shape[-2] <= SHORT_WORDS:
        return attention_products(q, k, v, causal)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)   # fused kernel, causal by default


class Layer(nn.Module):
    """One transformer layer: attention then a GELU MLP, each a residual branch; by default pre-norm,
    x + Attn(LN(x)), then x + MLP(LN(x)) (other placements and recall: see the module docstring)."""

    def __init__(self, cfg):                  # cfg: a model.LoopConfig
        super().__init__()
        d = cfg.d_model
        self.n_heads = cfg.n_heads
        self.rotary = cfg.pos == "rotary"
        self.causal = cfg.causal
        self.window = cfg.attn_window
        self.norm = cfg.norm
        self.recall_op = cfg.recall_op if cfg.injection == "internal" else "add"
        d_in = 2 * d if self.recall_op == "concat" else d          # what a sublayer reads
        self.ln_attn = make_norm(cfg.norm_kind, d)
        self.qkv = nn.Linear(d_in, 3 * d)
        self.attn_out = nn.Linear(d, d)
        self.ln_mlp = make_norm(cfg.norm_kind, d)
        self.mlp_in = nn.Linear(d_in, cfg.mlp_ratio * d)
        self.mlp_out = nn.Linear(cfg.mlp_ratio * d, d)
        if cfg.norm in ("peri", "sandwich"):
            self.ln_attn_out, self.ln_mlp_out = make_norm(cfg.norm_kind, d), make_norm(cfg.norm_kind, d)
        if self.recall_op == "linear":
            self.recall_x, self.recall_e = nn.Linear(d, d), nn.Linear(d, d)
        self.population: int | None = None     # P when the parameters carry a population axis (see `stack`)

    def lin(self, mod: nn.Linear, x: torch.Tensor) -> torch.Tensor:
        return linear(mod, x, self.population)

    def ln(self, mod: nn.LayerNorm | nn.RMSNorm, x: torch.Tensor) -> torch.Tensor:
        return normalise(mod, x, self.population)

    def recall(self, x: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        """R(x, e): internal recall of the input e into a sublayer's (normalised) input x."""
        return recall(self.recall_op, x, e, self, self.population)

    def attend(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, N, D_in), or (P, B, N, D_in) with a population axis: P*B sequences in one attention call."""
        N, D = x.shape[-2], self.attn_out.weight.shape[-1]
        q, k, v = self.lin(self.qkv, x).view(-1, N, 3, self.n_heads, D // self.n_heads).permute(2, 0, 3, 1, 4)
        if self.rotary:
            q, k = rotary(q), rotary(k)
        if self.window:
            build = local_mask if torch.compiler.is_compiling() else _cached_local_mask
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=build(N, self.window, x.device))
        else:
            a = attention(q, k, v, self.causal)
        return self.lin(self.attn_out, a.transpose(1, 2).reshape(*x.shape[:-1], D))

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        # exact (erf) GELU: on this torch build it is ~2x faster forward+backward than the tanh form
        return self.lin(self.mlp_out, F.gelu(self.lin(self.mlp_in, x)))

    def forward(self, x: torch.Tensor, recall: torch.Tensor | None = None) -> torch.Tensor:
        """recall: the input embedding for internal recall (combined, `recall_op`, with each sublayer's
        normalised input)."""
        r = (lambda y: y) if recall is None else (lambda y: self.recall(y, recall))
        ln = self.ln
        if self.norm == "pre":
            x = x + self.attend(r(ln(self.ln_attn, x)))
            return x + self.mlp(r(ln(self.ln_mlp, x)))
        if self.norm == "peri":
            x = x + ln(self.ln_attn_out, self.attend(r(ln(self.ln_attn, x))))
            return x + ln(self.ln_mlp_out, self.mlp(r(ln(self.ln_mlp, x))))
        if self.norm == "sandwich":
            x = ln(self.ln_attn_out, x + self.attend(r(ln(self.ln_attn, x))))
            return ln(self.ln_mlp_out, x + self.mlp(r(ln(self.ln_mlp, x))))
        x = ln(self.ln_attn, x + self.attend(r(x)))                               # post-norm
        return ln(self.ln_mlp, x + self.mlp(r(x)))
