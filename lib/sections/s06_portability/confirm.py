"""The C41-annealing entry's readings (paper/PREREGISTRATION.md): budget annealing into P41-pilot's
lottery contract T_L on reserved seeds.

Per seed: the lottery run (T = 8 -> 4 -> T_L, warm-started) and the scratch run (T_L from scratch, the
same budget), each read for *learned* (its final in-distribution whole-word accuracy >= 0.9), its steps
to learn (the budget + 1 when it did not) and, for the lottery run, v-hat from the readout's tau at
n_train with the readout's validity (position 1 right after loop 1 on >= 0.9 of the solved inputs), and
v-hat from the frontier beside it (the other estimator: reported, not in the rules).
*Transferred* is 06's `read.transferred`: learned T_L with v-hat log-closer to T_L's demand than to
T = 4's; a lottery run that did not learn counts as not transferred, a learned one without a valid
readout is left out of the share (printed).
"""
from __future__ import annotations

import matplotlib.pyplot as plt

from ... import reading_cache, store
from ...instruments import head
from ...plots import save
from ...probes import probe_seed
from ...rules import ALPHA, print_confirmatory, record_confirmatory
from ...stats import one_sided_binomial_p
from . import figures, plan
from .claims import CONFIRMATORY
from .read import transferred

ENTRY = "C41-annealing"
LEARNED = 0.9
EVAL_COUNT = 512
MIN_VALID = 8              # rule (A): lottery runs with a valid readout
MIN_SCRATCH_FAILS = 5      # rule (L): from-scratch failures for a complete bypass to reach p < 0.05
BYPASS_LEARNED = 11 / 12   # rule (L): the annealed learned fraction a reproduction needs
SPEED_VERSION = 2


def _speed(run) -> dict:
    c = run.config
    r = head.tau(run.model, c.task_obj(), c.n_train, c.T_train, count=EVAL_COUNT,
                 seed=probe_seed("in_distribution", c.seed))
    ok = r.n_solved >= head.MIN_SOLVED
    return {"n_solved": r.n_solved, "v_tau": r.v_tau.v if ok else float("nan"),
            "v_frontier": r.v_frontier if ok else float("nan"),
            "position1_first_loop": float(r.position1_first_loop) if r.n_solved else None}


def run_reading(run) -> dict:
    """Learned, steps to learn (censored at budget + 1) and the readout's speed (kept beside the run)."""
    c = run.config
    learned = bool(run.metrics["final_eval"]["seq_acc"] >= LEARNED)
    speed = reading_cache.reading(run, "annealing-speed", SPEED_VERSION, lambda: _speed(run),
                                  params={"eval_count": EVAL_COUNT})
    valid = speed["n_solved"] >= head.MIN_SOLVED and head.decoder_valid(speed["position1_first_loop"])
    return {"seed": c.seed, "T_train": c.T_train, "demand": c.demand, "learned": learned,
            "acc": float(run.metrics["final_eval"]["seq_acc"]),
            "steps_to_learn": int(run.metrics["steps"]) if learned else int(c.max_steps) + 1,
            "v_tau": speed["v_tau"] if valid else float("nan"),
            "v_frontier": speed["v_frontier"] if valid else float("nan"), "valid": bool(valid)}


def not_learned_reading(cfg) -> dict:
    """A run that diverged, or a lottery run left untrained because a run of its chain diverged: it has not
    learned and has no readout (PREREGISTRATION, third transcription notes)."""
    return {"seed": cfg.seed, "T_train": cfg.T_train, "demand": cfg.demand, "learned": False, "acc": 0.0,
            "steps_to_learn": int(cfg.max_steps) + 1, "v_tau": float("nan"), "v_frontier": float("nan"),
            "valid": False, "diverged": True}


def annealing_confirm_results(lottery: list[dict], scratch: list[dict], previous_demand: float,
                              lottery_contract: bool = True) -> dict:
    """The readings rules (A) and (L) consume; `lottery[i]` and `scratch[i]` are seed i's runs."""
    if [r["seed"] for r in lottery] != [r["seed"] for r in scratch]:
        raise ValueError("lottery, scratch: one run each per seed, in the same seed order")
    # a lottery run that did not learn has not transferred, whatever its readout; a learned one is read
    # only with a valid readout (its v-hat decides the re-pricing) (the entry's amendment of 2026-12-05)
    read = [r for r in lottery if not r["learned"] or r["valid"]]
    def share_by(estimator: str) -> float | None:
        moved = [r["learned"] and transferred({"acc": r["acc"], "v": r[estimator], "demand": r["demand"]},
                                              previous_demand, LEARNED) for r in read]
        return sum(moved) / len(read) if read else None

    share = share_by("v_tau")
    wins = sum(a["steps_to_learn"] < b["steps_to_learn"] for a, b in zip(lottery, scratch))
    losses = sum(a["steps_to_learn"] > b["steps_to_learn"] for a, b in zip(lottery, scratch))
    sign_p = one_sided_binomial_p(wins, losses)
    faster = sign_p < ALPHA
    annealed = sum(r["learned"] for r in lottery) / len(lottery)
    alone = sum(r["learned"] for r in scratch) / len(scratch)
    b = sum(a["learned"] and not s["learned"] for a, s in zip(lottery, scratch))
    c = sum(s["learned"] and not a["learned"] for a, s in zip(lottery, scratch))
    mcnemar_p = one_sided_binomial_p(b, c)
    diff = annealed - alone
    bypass = mcnemar_p < ALPHA and annealed >= BYPASS_LEARNED - 1e-9
    fails = sum(not s["learned"] for s in scratch)
    return {
        "seeds": len(lottery), "lottery_runs_read": len(read),
        "diverged": {"lottery": [r["seed"] for r in lottery if r.get("diverged")],
                     "scratch": [r["seed"] for r in scratch if r.get("diverged")]},
        "learned_without_valid_readout": [r["seed"] for r in lottery if r["learned"] and not r["valid"]],
        "transferred_share": share,
        # the other estimator, beside: the share with v-hat read off the frontier (not in rule (A))
        "transferred_share_frontier": share_by("v_frontier"),
        "faster_than_scratch": bool(faster), "sign_test": [wins, losses, round(sign_p, 4)],
        # rule (A): every valid seed transferred and faster: 1; else the share, at most 0.5 without "faster"
        "anneal_transfer_score": None if share is None else (share if faster else min(share, 0.5)),
        "lottery_learned_fraction": round(annealed, 3), "scratch_learned_fraction": round(alone, 3),
        "scratch_fails": fails, "lottery_contract": bool(lottery_contract),
        "lottery_powered": bool(lottery_contract and fails >= MIN_SCRATCH_FAILS and fails < len(scratch)),
        "mcnemar": [b, c, round(mcnemar_p, 4)], "anneal_minus_scratch": diff,
        # rule (L): 1 when McNemar p < 0.05 and the annealed fraction >= 11/12; else the difference (< 1)
        "anneal_bypass_score": 1.0 if bypass else min(diff, 0.99),
        "median_steps": [sorted(r["steps_to_learn"] for r in lottery)[len(lottery) // 2],
                         sorted(r["steps_to_learn"] for r in scratch)[len(scratch) // 2]],
    }


def show(profile: str = "quick") -> dict | None:
    """Notebook 06's confirmatory section: once every run of the study is stored, read it, record the
    readings for the ledger and print them with the verdicts; until then say what is missing and record
    nothing. The runs are the entry's, whatever the profile."""
    s = plan.annealing_study()
    if s is None:
        print(f"{ENTRY}: waiting for P41-pilot's pick (plan.LOTTERY_PICK is not recorded yet; no runs listed)")
        return None
    study = s.configs()
    # a seed's chain stops at a diverged run: the runs after it will not train (`lib.cli`)
    broken = {c.seed for c in (*s.start, *s.anneal, *s.lottery) if store.is_diverged(c)}
    waiting = tuple(c for c in study if not store.is_done(c) and not store.is_diverged(c)
                    and not (c.seed in broken and c in s.lottery + s.anneal))
    print(store.study_progress(ENTRY, study, waiting))
    if waiting:
        return None
    lottery = [not_learned_reading(c) if c.seed in broken else run_reading(store.load_run(c)) for c in s.lottery]
    scratch = [not_learned_reading(c) if store.is_diverged(c) else run_reading(store.load_run(c)) for c in s.scratch]
    out = annealing_confirm_results(lottery, scratch, s.anneal[0].demand, s.lottery_contract)
    record_confirmatory(ENTRY, out)
    if broken or out["diverged"]["scratch"]:
        print(f"diverged (not learned, no reading): the chains of seeds {sorted(broken)}, the scratch runs of seeds "
              f"{out['diverged']['scratch']}")
    if out["diverged"]["scratch"]:
        print("note: a diverged scratch run reads as a from-scratch failure, the comparator's side: it counts for "
              "the lottery run in (A)'s sign test and in (L)'s McNemar test and power condition")
    for a, b in zip(lottery, scratch):
        print(f"seed {a['seed']}: annealed learned {a['learned']} in {a['steps_to_learn']} steps (v-hat "
              f"{a['v_tau']:.3f}, frontier {a['v_frontier']:.3f}{'' if a['valid'] else ', readout invalid'}); "
              f"scratch learned {b['learned']} "
              f"in {b['steps_to_learn']}")
    print(out)
    print_confirmatory(CONFIRMATORY)
    fig = figures.confirm_annealing(lottery, scratch, s.anneal[0].demand, LEARNED)
    save(fig, "06_portability_confirm_annealing", profile)
    plt.show()
    return out

