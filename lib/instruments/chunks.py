"""One loop of a tied model over many inputs, run in cache-sized chunks (the long scans of 08 and 09).

Each input is its own map and the kernels give an input's rows the same bits in any batch, so running
a loop chunk by chunk, decoding each loop as it comes, computes the same products as the plain forward
on a working set that fits the cache. `batch_independent` checks that on the run itself; a reader
falls back to the plain forward where it does not hold, or where `fast_path` says the model is not a
plain tied one (untied stacks and populations run the plain forward).
"""
from __future__ import annotations

import torch

from ..model import LoopedTransformer

CHUNK_TOKENS = 4096          # positions per call: inputs per chunk = CHUNK_TOKENS // length


def fast_path(model) -> bool:
    return isinstance(model, LoopedTransformer) and model.population is None and model.tied


def chunked(model, h: torch.Tensor, e: torch.Tensor, t: int, per_chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(states after loop t, their logits) for the states h (B, N, d), per_chunk inputs per call."""
    out = [model.step(h[a:a + per_chunk], e[a:a + per_chunk], t) for a in range(0, len(h), per_chunk)]
    return torch.cat(out), torch.cat([model.decode(x) for x in out])


@torch.no_grad()
def batch_independent(model, tokens: torch.Tensor, per_chunk: int) -> bool:
    """Whether one loop of the whole batch, as the plain readers run it, gives the same states and
    logits in chunks of per_chunk inputs and for the first few inputs alone."""
    logits, hs = model(tokens, 1, all_loops=True, return_states=True)
    e = model.embed_tokens(tokens)
    h, lg = chunked(model, e, e, 0, per_chunk)
    few = min(3, len(tokens))
    h3, lg3 = chunked(model, e[:few], e[:few], 0, 1)
    return (torch.equal(h, hs[0]) and torch.equal(lg, logits[0]) and torch.equal(h3, hs[0, :few])
            and torch.equal(lg3, logits[0, :few]))
