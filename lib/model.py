"""The weight-tied looped transformer.

    h^0 = e = Embed(tokens)
    h^{t+1} = F(inject(h^t, e))          F = L pre-norm layers, the SAME weights at every loop
    logits^t = Linear(LN(h^t))           decodable after every loop

Layers: causal multi-head attention with no positional encoding (NoPE), then a GELU MLP, each
in a pre-norm residual branch. Input injection ("recall"):
    "none"    inject(h, e) = h
    "add"     inject(h, e) = h + e
    "adapter" inject(h, e) = W [h, e]    (W: 2d -> d, initialised to [I | I], i.e. "add" at start)

Controls for the architecture-prior study (Paper A §6.2, App. D):
  n_blocks > 1  UNTIED: n_blocks distinct blocks, block t applied at loop t, each once (a standard
                transformer of depth n_layers * n_blocks with the same injection and readout).
  pos           "none" (NoPE, the default), "learned" absolute, "rotary" (RoPE on queries and
                keys), or "scan": fixed scan-address features of the position (see
                `scan_address`) through a learned projection, added to the token embedding;
                "grid" (sudoku): each cell's row, column and box (`grid_address`) through a learned
                projection, so two cells share a feature exactly when they constrain each other.

causal=False: bidirectional attention (every position sees every other), for sudoku only.
attn_window > 0: causal local attention, each position sees itself and the attn_window - 1 before it
(Paper B's code uses local attention, window 5, on prefix sums).

Population axis: `LoopedTransformer.stack(models)` makes ONE model out of P models of one config,
every parameter stacked on a leading axis (P, ...) under its usual name. The same `forward` /
`step` / `Layer` code then runs all P at once: each linear map becomes one batched product
(`baddbmm`), each norm one call, attention one call over P*B sequences (`population.py` trains seeds
this way). A single model has no axis (population None) and calls its nn.Linear / nn.LayerNorm /
nn.Embedding modules exactly as before, so a single run's numbers do not depend on this feature.

Paper B's knobs (recall = input injection; notebook 09), as its public code (ashlab11/generalization)
has them:
  injection "none"      no recall: the input enters only as the initial state h^0 = e
            "add"       external recall: once per loop, at the block's entry (Paper A's injection)
            "internal"  internal recall: inside every sublayer, after its pre-norm:
                        x + Attn(R(LN(x), e)), x + MLP(R(LN(x), e)); nothing at the block's entry
  recall_op R(x, e), how recall combines the state with the input (for "add" and "internal"):
            "add"       x + e                              (default)
            "linear"    W_x x + W_e e, learned, with biases; one pair per layer (internal) or one
                        for the block's entry (external). Initialised W_x = W_e = I, biases 0, so a
                        run starts as "add" (Paper B's code keeps torch's default init: our choice)
            "concat"    [x, e]: the sublayer reads 2d features (internal only, as in Paper B's code)
  norm      "pre"       x + f(LN(x))                (default)
            "peri"      x + LN'(f(LN(x)))           (the sublayer's output normalised too)
            "post"      LN(x + f(x))
            "sandwich"  LN'(x + f(LN(x)))           (pre-norm and a norm after the residual add)
  norm_kind "layer"     LayerNorm everywhere (default); "rms": RMSNorm everywhere (Paper B's code):
                        the block's norms, the outer norm and the readout's norm
  outer_norm        h^{t+1} = LN_outer(F(inject(h^t, e))): one norm on the state after each whole
                    loop, so the iterated state always lies on the normalised sphere (our reading of
                    Paper B's "normalization around the whole looped block", which its code does not
                    name; notebook 09 says why).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import torch
import torch.nn as nn

from .layers import Layer, linear, make_norm, normalise, recall

INJECTIONS = ("none", "add", "adapter", "internal")
RECALL_OPS = ("add", "linear", "concat")
NORMS = ("pre", "peri", "post", "sandwich")
NORM_KINDS = ("layer", "rms")
RESIDUAL_INITS = ("block", "depth")
POSITIONAL = ("none", "learned", "rotary", "scan", "grid")
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
    n_blocks: int = 1          # 1: weight-tied; > 1: untied, one block per loop (T <= n_blocks)
    pos: str = "none"
    max_len: int = 1024        # positions the "learned" and "scan" encodings cover (BOS included)
    norm: str = "pre"
    outer_norm: bool = False
    causal: bool = True        # False: every position attends to every other (sudoku: a cell depends on the whole board)
    recall_op: str = "add"
    norm_kind: str = "layer"
    attn_window: int = 0       # > 0: local attention, each position sees the last attn_window positions (itself included)
    residual_init: str = "block"   # residual writes' init std 0.02/sqrt(2 L): L the block's layers ("block") or
                                   # every layer of the stack, n_layers * n_blocks ("depth": GPT-2's rule for an
                                   # untied stack; the same for a tied model)

    def __post_init__(self):
        for name in ("vocab_size", "n_classes", "n_layers", "d_model", "n_heads", "mlp_ratio", "n_blocks", "max_len"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model: {self.d_model} is not divisible by n_heads={self.n_heads}; "
                             "allowed: d_model a multiple of n_heads")
        if self.injection not in INJECTIONS:
            raise ValueError(f"injection: unknown {self.injection!r}; allowed: {INJECTIONS}")
        if self.pos not in POSITIONAL:
            raise ValueError(f"pos: unknown positional encoding {self.pos!r}; allowed: {POSITIONAL}")
        if self.norm not in NORMS:
            raise ValueError(f"norm: unknown placement {self.norm!r}; allowed: {NORMS}")
        if self.norm_kind not in NORM_KINDS:
            raise ValueError(f"norm_kind: unknown {self.norm_kind!r}; allowed: {NORM_KINDS}")
        if self.recall_op not in RECALL_OPS:
            raise ValueError(f"recall_op: unknown {self.recall_op!r}; allowed: {RECALL_OPS}")
        if self.recall_op != "add" and self.injection not in ("add", "internal"):
            raise ValueError(f"recall_op: {self.recall_op!r} combines state and input where recall happens; "
                             f"allowed with injection={self.injection!r}: 'add' only")
        if self.recall_op == "concat" and self.injection != "internal":
            raise ValueError("recall_op: 'concat' feeds each sublayer [x, e] (internal recall only, as in Paper B's "
                             "code); allowed with injection='add': 'add', 'linear'")
        if not isinstance(self.outer_norm, bool):
            raise ValueError(f"outer_norm: must be True or False, got {self.outer_norm!r}")
        if not isinstance(self.causal, bool):
            raise ValueError(f"causal: must be True or False, got {self.causal!r}")
        if not isinstance(self.attn_window, int) or isinstance(self.attn_window, bool) or self.attn_window < 0:
            raise ValueError(f"attn_window: an integer >= 0 (0: full attention), got {self.attn_window!r}")
        if self.residual_init not in RESIDUAL_INITS:
            raise ValueError(f"residual_init: unknown {self.residual_init!r}; allowed: {RESIDUAL_INITS}")
        if self.attn_window and not self.causal:
            raise ValueError("attn_window: local attention is causal here (the last attn_window positions); "
                             "allowed with causal=False: 0")
        if self.pos == "rotary" and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"pos: 'rotary' needs an even head width, got d_model/n_heads = {self.d_model // self.n_heads}")


def scan_address(N: int, max_len: int = 1024) -> torch.Tensor:
    """Scan-address features of positions 0..N-1, shape (N, 2M) with M = ceil(log2 max_len).

    Pair m is (cos(pi i / 2^m), sin(pi i / 2^m)): a smoothed binary digit m of i (pair 0 is
    (-1)^i, the lowest bit). Shifting the position by 2^k is a FIXED rotation of every pair (by
    pi 2^(k-m)), so a query R_k phi(i) dotted with keys phi(j) peaks exactly at j = i - 2^k: one
    attention head per k reads position i - 2^k, which is what a Hillis-Steele log-depth scan needs
    (`scan_shift` builds R_k; tests/test_architecture.py checks the read)."""
    M = max(1, math.ceil(math.log2(max_len)))
    i = torch.arange(N, dtype=torch.float32)[:, None]
    angle = math.pi * i / (2.0 ** torch.arange(M, dtype=torch.float32))[None, :]
    return torch.stack([angle.cos(), angle.sin()], dim=-1).reshape(N, 2 * M)


GRID_CELLS = 81       # a 9 x 9 board, row-major, after the BOS token
GRID_FEATURES = 28    # BOS flag, then row, column and box one-hots (9 each)


def grid_address(N: int = GRID_CELLS + 1) -> torch.Tensor:
    """Grid features of positions 0..N-1 of [BOS, cell_0, ..., cell_80], shape (N, 28): position 0
    carries only the BOS flag; cell k (row r = k // 9, column c = k % 9) has ones at 1 + r,
    10 + c and 19 + box with box = 3 (r // 3) + c // 3. Two cells share a feature exactly when they
    share a row, column or box, i.e. when sudoku's rule ties them."""
    if not 1 <= N <= GRID_CELLS + 1:
        raise ValueError(f"tokens: the 'grid' encoding covers BOS and {GRID_CELLS} cells (N <= {GRID_CELLS + 1}), got N={N}")
    f = torch.zeros(N, GRID_FEATURES)
    f[0, 0] = 1.0
    for k in range(N - 1):
        r, c = divmod(k, 9)
        f[1 + k, [1 + r, 10 + c, 19 + 3 * (r // 3) + c // 3]] = 1.0
    return f


def scan_shift(k: int, max_len: int = 1024) -> torch.Tensor:
    """The (2M, 2M) block-diagonal rotation R_k with R_k phi(i) = phi(i - 2^k)."""
    M = max(1, math.ceil(math.log2(max_len)))
    R = torch.zeros(2 * M, 2 * M)
    for m in range(M):
        a = -math.pi * 2.0 ** (k - m)
        c, s = math.cos(a), math.sin(a)
        R[2 * m:2 * m + 2, 2 * m:2 * m + 2] = torch.tensor([[c, -s], [s, c]])
    return R


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
        if cfg.pos == "learned":
            self.embed_pos = nn.Embedding(cfg.max_len, d)
        elif cfg.pos == "scan":
            self.register_buffer("scan_features", scan_address(cfg.max_len, cfg.max_len), persistent=False)
            self.scan_proj = nn.Linear(self.scan_features.shape[1], d, bias=False)
        elif cfg.pos == "grid":
            self.register_buffer("grid_features", grid_address(), persistent=False)
            self.grid_proj = nn.Linear(GRID_FEATURES, d, bias=False)
        # tied: ONE block of n_layers layers, reused at every loop; untied: n_blocks blocks laid end to end
        self.block = nn.ModuleList(Layer(cfg) for _ in range(cfg.n_layers * cfg.n_blocks))
        if cfg.injection == "adapter":
            self.adapter = nn.Linear(2 * d, d, bias=False)
        if cfg.injection == "add" and cfg.recall_op == "linear":
            self.recall_x, self.recall_e = nn.Linear(d, d), nn.Linear(d, d)
        if cfg.outer_norm:
            self.ln_outer = make_norm(cfg.norm_kind, d)
        self.ln_out = make_norm(cfg.norm_kind, d)
        self.readout = nn.Linear(d, cfg.n_classes)
        self.population: int | None = None     # P when the parameters carry a population axis (see `stack`)
        self._init_weights()

    @classmethod
    def stack(cls, models: list["LoopedTransformer"]) -> "LoopedTransformer":
        """P models of one config as one model with a population axis: every parameter becomes the
        (P, ...) stack of the models' parameters under the same name. Draws no random numbers.
        Inputs gain the axis too (tokens (P, B, N)); see `forward`."""
        if not models or any(m.cfg != models[0].cfg or m.population is not None for m in models):
            raise ValueError("models: stack needs single models (no population axis) of one config")
        out = copy.deepcopy(models[0])
        params = [dict(m.named_parameters()) for m in models]
        for prefix, mod in out.named_modules():
            for name, _ in list(mod.named_parameters(recurse=False)):
                full = f"{prefix}.{name}" if prefix else name
                setattr(mod, name, nn.Parameter(torch.stack([p[full].detach() for p in params])))
        for mod in out.modules():
            if isinstance(mod, (Layer, LoopedTransformer)):
                mod.population = len(models)
        return out

    def unstack(self, p: int) -> dict:
        """Seed p's weights as a single model's state dict (a copy)."""
        if self.population is None:
            raise ValueError("unstack: this model has no population axis")
        return {k: v[p].detach().clone() for k, v in self.state_dict().items()}

    def _init_weights(self):
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "ln_" in name:
                nn.init.ones_(p)
            elif p.dim() == 2:
                nn.init.normal_(p, std=0.02)
        depth = self.cfg.n_layers * (self.cfg.n_blocks if self.cfg.residual_init == "depth" else 1)
        for layer in self.block:   # GPT-2 style: shrink the residual writes
            for p in (layer.attn_out.weight, layer.mlp_out.weight):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * depth))
        d = self.cfg.d_model
        if self.cfg.injection == "adapter":
            with torch.no_grad():
                self.adapter.weight.copy_(torch.cat([torch.eye(d), torch.eye(d)], dim=1))
        with torch.no_grad():          # linear recall starts as additive recall: W_x = W_e = I
            for mod in (self, *self.block):
                if hasattr(mod, "recall_x"):
                    mod.recall_x.weight.copy_(torch.eye(d))
                    mod.recall_e.weight.copy_(torch.eye(d))

    def inject(self, h: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        if self.cfg.injection == "add":
            return recall(self.cfg.recall_op, h, e, self, self.population)
        if self.cfg.injection == "adapter":
            return linear(self.adapter, torch.cat([h, e], dim=-1), self.population)
        return h

    @property
    def tied(self) -> bool:
        return self.cfg.n_blocks == 1

    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """e = token embedding (+ positional encoding when pos is "learned", "scan" or "grid")."""
        P, N = self.population, tokens.shape[-1]
        if P is None:
            e = self.embed(tokens)
        else:                                     # tokens (P, B, N): seed p's rows of seed p's table
            e = self.embed.weight[torch.arange(P, device=tokens.device)[:, None, None], tokens]
        if self.cfg.pos in ("learned", "scan") and N > self.cfg.max_len:
            raise ValueError(f"tokens: length {N} exceeds max_len={self.cfg.max_len} of the {self.cfg.pos!r} encoding")
        if self.cfg.pos == "learned":
            e = e + (self.embed_pos.weight[:N] if P is None else self.embed_pos.weight[:, None, :N])
        elif self.cfg.pos in ("scan", "grid"):       # fixed features of the position, a learned projection
            if self.cfg.pos == "grid" and N > GRID_CELLS + 1:
                raise ValueError(f"tokens: the 'grid' encoding covers BOS and {GRID_CELLS} cells, got length {N}")
            features, proj = ((self.scan_features, self.scan_proj) if self.cfg.pos == "scan"
                              else (self.grid_features, self.grid_proj))
            if P is None:
                e = e + proj(features[:N])
            else:
                e = e + linear(proj, features[:N].expand(P, -1, -1), P)[:, None]
        return e

    def step(self, h: torch.Tensor, e: torch.Tensor, loop: int = 0) -> torch.Tensor:
        """One loop: h^{t+1} = F_t(inject(h^t, e)); F_t = F for every t when tied; `loop` is 0-indexed."""
        x = self.inject(h, e)
        L = self.cfg.n_layers
        layers = self.block if self.tied else self.block[loop * L:(loop + 1) * L]
        recall = e if self.cfg.injection == "internal" else None
        for layer in layers:
            x = layer(x, recall)
        return normalise(self.ln_outer, x, self.population) if self.cfg.outer_norm else x

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        P = self.population
        return linear(self.readout, normalise(self.ln_out, h, P), P)

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

        With a population axis (`stack`): tokens (P, B, N) and every output gains a leading P
        ((P, B, N, C); all_loops (P, T, B, N, C)). T may then also be one count per seed: all seeds
        run max(T) loops and seed p's state stays as it is after its own T[p] (its later entries
        under all_loops repeat that state), so each seed gets exactly its own T-loop result.
        """
        P, until = self.population, None
        if P is not None and isinstance(T, (list, tuple)):
            if len(T) != P or not all(isinstance(t, int) and t >= 1 for t in T):
                raise ValueError(f"T: a population of {P} needs one integer >= 1 per seed, got {T!r}")
            if len(set(T)) > 1:
                until = torch.tensor(T, device=tokens.device).view(P, 1, 1, 1)
            T = max(T)
        if not isinstance(T, int) or T < 1:
            raise ValueError(f"T: number of loops must be an integer >= 1, got {T!r}")
        if not self.tied and T > self.cfg.n_blocks:
            raise ValueError(f"T: an untied model has {self.cfg.n_blocks} blocks and runs at most that many loops, got {T}")
        if streaming and not self.cfg.causal:
            raise ValueError("streaming: the streaming schedule needs causal attention (causal=True)")
        e = self.embed_tokens(tokens)
        h, states = (e if h0 is None else h0), []
        if streaming:
            start = reveal_loops(tokens.shape[-1], tokens.device)
        for t in range(T):
            before = h
            h = self.step(h, e, t)
            if streaming:
                waiting = (start > t)[None, :, None]              # positions not yet revealed after loop t
                h = torch.where(waiting, e, h)
            if until is not None:
                h = torch.where(until > t, h, before)             # seeds past their own T keep their state
            if hook is not None:
                h = hook(t + 1, h)
            if all_loops or return_states:
                states.append(h)
        loop_axis = 0 if P is None else 1
        if all_loops:
            logits = self.decode(torch.stack(states, loop_axis))     # one readout call for every loop
        else:
            logits = self.decode(h)
        return (logits, torch.stack(states, loop_axis)) if return_states else logits

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
