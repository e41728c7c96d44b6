"""How large a forward-mode pass the tail's Jacobian products should take (`tail.jacobian_products`'
`max_elements`), timed on one CPU thread on a stored quick model.

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.jacobian_chunks

Reads the Jacobian alignment of the settled recipe's S4 n8 T8 pilot run (seed 0, 32 tail inputs, 4
probes, loops 14..64: what notebooks 01 and 07 read past the fixed point) with each chunk size, three
times each after a warm-up, and prints the times and the largest difference from the first size's
products (chunking stacks the same products differently; it must not change them).
"""
from __future__ import annotations

import functools
import time

import torch

SIZES = (2 ** 23, 2 ** 20, 2 ** 19, 2 ** 18)


def main() -> int:
    from lib import profiles, store
    from lib.instruments import tail
    from lib.probes import probe_set
    torch.set_num_threads(1)
    cfg = profiles.contest_config(profiles.contest_contracts("quick")["S4 n8 T8"], 0)   # a pilot seed
    run = store.load_run(cfg)
    tokens, _ = probe_set(cfg.task_obj(), "tail", cfg.seed, cfg.n_train, 32)
    products = tail.jacobian_products
    try:
        tail.jacobian_alignment(run.model, tokens, 20, probes=4, from_loop=14)          # warm-up
        times, values = {}, {}
        for _ in range(3):
            for size in SIZES:
                tail.jacobian_products = functools.partial(products, max_elements=size)
                t = time.perf_counter()
                values[size] = tail.jacobian_alignment(run.model, tokens, 64, probes=4, from_loop=14)
                times.setdefault(size, []).append(time.perf_counter() - t)
    finally:
        tail.jacobian_products = products
    for size in SIZES:
        print(f"max_elements 2**{size.bit_length() - 1}: {min(times[size]):.2f} / {sorted(times[size])[1]:.2f} / "
              f"{max(times[size]):.2f} s (min / median / max); largest difference from 2**23: "
              f"{float(abs(values[size] - values[SIZES[0]]).max()):.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
