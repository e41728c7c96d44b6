"""Profiles: the numbers each section notebook runs with, in one place per section.

`quick` is sized for a 2-core CPU (minutes, from an empty cache); `paper` holds the paper's grid
(sizes s/m/l, several seeds, test lengths to 4x n_train) for a GPU. Both run the same code.
Notebooks call `check_params` first: a bad parameter fails there, before any work, naming the
parameter, the value and what is allowed.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .model import PRESETS
from .train import RunConfig

PROFILES = ("quick", "paper")
DEVICES = ("auto", "cpu", "cuda")


def check_params(profile: str, seeds=None, device: str = "auto", **lengths) -> None:
    """Validate a notebook's parameter cell. `lengths` are named positive integers (n, T, ...)."""
    if profile not in PROFILES:
        raise ValueError(f"PROFILE: unknown profile {profile!r}; allowed: {PROFILES}")
    if device not in DEVICES:
        raise ValueError(f"DEVICE: unknown device {device!r}; allowed: {DEVICES}")
    if seeds is not None:
        if (not isinstance(seeds, (list, tuple)) or not seeds
                or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)):
            raise ValueError(f"SEEDS: must be a non-empty list of integers >= 0, got {seeds!r}")
    for name, v in lengths.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")


def resolve_device(device: str) -> str:
    """'auto' -> 'cuda' when a GPU is visible, else 'cpu'."""
    import torch
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("DEVICE: 'cuda' requested but no GPU is visible; allowed here: 'auto', 'cpu'")
    return device


# ---------------------------------------------------------------------------------------------
# 03 budget law

@dataclass(frozen=True)
class BudgetLawPlan:
    runs: tuple[RunConfig, ...]    # one per (contract, seed, size)
    n_long: int                    # longer test length for rescue and the halting rule
    loops_factor: int              # test-time loops up to loops_factor * T_train
    learned_acc: float             # in-distribution sequence accuracy for a run to count as learned
    eval_count: int


# The quick profile was settled by measurement (bench/quick_profile_search.py, results in
# bench/results/quick_profile_search.jsonl and the closing note).
_QUICK_BASE = RunConfig(experiment="budget_law", task="S4", n_train=8, n_layers=1, d_model=64, n_heads=4,
                        injection="adapter", batch=128, lr=1e-3, warmup=100, max_steps=8000, polish_steps=300)
_QUICK_T = (16, 8, 4, 2)           # demand n_train / T_train = 0.5, 1, 2, 4

_PAPER_BASE = replace(_QUICK_BASE, n_train=16, batch=256, lr=3e-4, max_steps=40000, polish_steps=2000)
_PAPER_T = (32, 16, 8, 4)


def budget_law(profile: str, seeds=(0,)) -> BudgetLawPlan:
    check_params(profile, list(seeds))
    if profile == "quick":
        runs = tuple(replace(_QUICK_BASE, T_train=T, seed=s) for T in _QUICK_T for s in seeds)
        return BudgetLawPlan(runs, n_long=2 * _QUICK_BASE.n_train, loops_factor=4, learned_acc=0.9, eval_count=512)
    runs = tuple(replace(_PAPER_BASE, T_train=T, seed=s, **PRESETS[size])
                 for size in ("s", "m", "l") for T in _PAPER_T for s in seeds)
    return BudgetLawPlan(runs, n_long=4 * _PAPER_BASE.n_train, loops_factor=4, learned_acc=0.9, eval_count=1024)


def contract_label(cfg: RunConfig) -> str:
    return f"n={cfg.n_train} T={cfg.T_train} (demand {cfg.demand:g})"
