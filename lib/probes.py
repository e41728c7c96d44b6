"""Named evaluation sets: every fixed test set an instrument reads, by purpose.

A probe set is `tasks.test_set(task, n, count, seed)` with the seed taken from this table, so a
reader sees *what* a set is for (in-distribution head reading, extrapolation at length n, ...)
instead of a number, and two instruments that should read the same inputs do. The base numbers
are the ones the committed results were measured with; changing one changes results.

    purpose            key          what it is for
    in_distribution    run seed     tau / v-hat at the contract (n_train, T_train)
    tau_vs_n           length n     tau against n (scaling class, calibration controls)
    extrapolation      length n     accuracy beyond the training length (03's rescue and halting too)
    tail               run seed     tail metrics, fixed points, Proposition 1
    contest_target     0            the OOD target of the contests and of 01's population (one set)
    prop1              0            Proposition 1's numerical check (one set)
    patch_clean        0            damage cones: the clean words
    patch_donor        0            damage cones: the donor words whose states are patched in
    probe_fit          length n     the words block probes are fit on (instruments.block_probe)
"""
from __future__ import annotations

import torch

from .tasks import Task, test_set

# 2000 was the rescue set of 03 until it read the extrapolation set (one set per length for every reader)
PROBE_SEEDS = {"in_distribution": 1000, "tau_vs_n": 3000, "extrapolation": 4000,
               "patch_clean": 5000, "patch_donor": 6000, "tail": 7000, "contest_target": 8000,
               "prop1": 9000, "probe_fit": 10000}


def probe_seed(purpose: str, key: int) -> int:
    """The seed of the probe set for `purpose` at `key` (a run seed or a length, see the table)."""
    if purpose not in PROBE_SEEDS:
        raise ValueError(f"purpose: unknown probe set {purpose!r}; allowed: {tuple(PROBE_SEEDS)}")
    if not isinstance(key, int) or isinstance(key, bool) or not 0 <= key < 1000:
        raise ValueError(f"key: a run seed or a length in [0, 1000), got {key!r}")
    return PROBE_SEEDS[purpose] + key


def probe_set(task: Task, purpose: str, key: int, n: int, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(tokens, labels) of the named probe set: `count` words of length n."""
    return test_set(task, n, count, probe_seed(purpose, key))
