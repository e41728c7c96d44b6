"""A claim, the rules that judge it, and the results files it is judged on.

Each section's claims (`lib/sections/sNN_*/claims.py`) are `Claim`s; the ledger (`lib.claims`) collects
them. Each section notebook writes its measured numbers to `outputs/results/<notebook>.json` (quick
profile) or `<notebook>.paper.json` (paper profile) through `record`. Verdicts:
- "not run": the claim's notebook has not run;
- "not measured": it ran, but the value is missing (nothing to measure it on, or a tie the
  notebook records as None) or the claim's precondition is not met (each claim states it, and
  `requires` reads it from the same results: e.g. Proposition 1 needs a model that reaches a fixed
  point; the fit's R² counts only with the exponent in tolerance). Unmeasured is not refuted;
- "reproduced": a measured value inside the tolerance (`holds`);
- "partly": measured, misses the tolerance but keeps the claimed direction (`partly_if`);
- "not reproduced": measured and neither.
A pre-registered study's readings go to `outputs/results/confirm/<entry>.json` (`record_confirmatory`)
and are judged by its `ConfirmatoryTest`s, the same way.

This module imports nothing of the sections or the instruments: the preconditions that read an
instrument (a decoder's validity: `instruments.head.decoder_valid`) live with it.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .paths import artifacts_dir, atomic_write_text
from .stats import smallest_p


@dataclass(frozen=True)
class Claim:
    key: str                 # result key in the notebook's results file
    finding: int             # the papers' findings, numbered as in paper/REPORT.md's key
    section: str
    text: str
    paper: str               # the paper's value, as stated
    tolerance: str           # in words, mirrors `holds`
    notebook: str
    holds: Callable[[float], bool]
    partly_if: Callable[[float], bool] = lambda v: False
    precondition: str = ""                                # in words; "" = the value's existence is enough
    requires: Callable[[dict], bool] | None = None        # reads the precondition from the notebook's results
    partly: str = ""                                      # in words, mirrors `partly_if` ("" = never partly)
    qualifies: str = ""      # key of the claim this statistic qualifies: shown in that claim's row, not counted
    basis: Callable[[dict], str] | None = None            # the seeds / interval the value rests on, from the results
    estimator: str = ""      # "frontier": the other speed estimator of the claim it qualifies (a flip is flagged)


@dataclass(frozen=True)
class ConfirmatoryTest:
    """A claim's pre-registered test: its entry in paper/PREREGISTRATION.md (the rules are the entry's,
    transcribed before any of its runs trained), read from `outputs/results/confirm/<entry>.json`."""
    entry: str
    key: str
    holds: Callable[[float], bool]
    partly_if: Callable[[float], bool] = lambda v: False
    precondition: str = ""
    requires: Callable[[dict], bool] | None = None
    # readings the entry says to print in the claim's row (the other estimator or decoder, a flag, a
    # qualifying family): shown beside the verdict, never judged
    beside: tuple[str, ...] = ()
    # the readings file under results/confirm/ (default: the entry's id); a study read by two sections
    # records each section's readings apart
    readings: str = ""
    # the test of the same claim this one follows (an older entry that could not decide it): its verdict
    # is printed beside this one's, never replaced
    earlier: ConfirmatoryTest | None = None


def find(claims, key: str) -> Claim:
    """The claim of `claims` with this key."""
    for c in claims:
        if c.key == key:
            return c
    raise KeyError(f"claim: unknown key {key!r}; known: {[c.key for c in claims]}")


# ---------------------------------------------------------------------------------------------
# Preconditions that keep an instrument honest (paper/PREREGISTRATION.md, "Rules every entry keeps")

ALPHA = 0.05
MIN_CORRELATION_N = 10  # models a correlation needs before its null can fail (|rho| >= 0.64 is significant at 10)


def contest_powered(seeds: int, generalize: int, alpha: float = ALPHA) -> bool:
    """A contest can reject 'the metric does not predict' only if a perfect ranking reaches p < alpha:
    the exact two-sided smallest p (`stats.smallest_p`) must be below it (1 of 16: 0.125, no)."""
    return smallest_p(seeds, generalize) < alpha


def correlation_powered(rho_by_metric: dict, n: int, min_n: int = MIN_CORRELATION_N) -> bool:
    """A null 'no metric correlates' could fail only if every metric it names varies across the models
    (a constant metric has no rho: None) and there are at least `min_n` models."""
    return bool(rho_by_metric) and n >= min_n and all(v is not None for v in rho_by_metric.values())


def premise_met(tau_star: float, T_train: int, k: int = 1) -> bool:
    """Proposition 1's premise at the operating point: the fixed point is reached by T_train - k."""
    return tau_star is not None and not math.isnan(tau_star) and tau_star <= T_train - k


# ---------------------------------------------------------------------------------------------
# Verdicts

VERDICTS = ("reproduced", "partly", "not reproduced", "not measured", "not run")
NO_TEST = "no confirmatory test yet"


def precondition_met(claim: Claim | ConfirmatoryTest, results: dict) -> bool:
    """Whether the claim's precondition holds in its notebook's `results`; a precondition the results
    do not record (an older notebook run) counts as unmet: unmeasured, never passed."""
    if claim.requires is None:
        return True
    try:
        return bool(claim.requires(results))
    except (KeyError, TypeError, ValueError):
        return False


def verdict(claim: Claim | ConfirmatoryTest, value, ran: bool = True, results: dict | None = None) -> str:
    """`ran`: the claim's notebook has run; `results`: its results (for the precondition). A
    `ConfirmatoryTest` is judged the same way, by its entry's rule, on its study's readings."""
    if not ran:
        return "not run"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "not measured"
    if not precondition_met(claim, results or {}):
        return "not measured"
    if claim.holds(value):
        return "reproduced"
    return "partly" if claim.partly_if(value) else "not reproduced"


def fmt(v) -> str:
    return "–" if v is None else (f"{v:.3g}" if isinstance(v, float) else str(v))


# ---------------------------------------------------------------------------------------------
# Results I/O

def results_path(notebook: str, profile: str = "quick") -> Path:
    suffix = "" if profile == "quick" else f".{profile}"
    return artifacts_dir("results") / f"{notebook}{suffix}.json"


def record(notebook: str, results: dict, profile: str = "quick") -> Path:
    """Write a notebook's measured numbers (plain floats/ints/strings) for the ledger."""
    path = results_path(notebook, profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(results, indent=1, sort_keys=True) + "\n")
    return path


def load(notebook: str, profile: str) -> dict:
    """A notebook's recorded results ({} when it has not run)."""
    p = results_path(notebook, profile)
    return json.loads(p.read_text()) if p.exists() else {}


def print_verdicts(claims, notebook: str, results: dict, profile: str = "quick") -> None:
    """Record a notebook's results and print each of its claims among `claims`: our value, the paper's,
    the verdict (with the unmet precondition where a claim reads *not measured*)."""
    record(notebook, results, profile)
    print(f"PROFILE {profile}")
    for c in claims:
        if c.notebook != notebook:
            continue
        value = results.get(c.key)
        v = verdict(c, value, True, results)
        why = f" (needs: {c.precondition})" if v == "not measured" and c.precondition else ""
        print(f"{c.key:30s} ours {fmt(value):8s} paper {c.paper:24s} -> {v}{why}")


def confirm_path(entry: str) -> Path:
    return artifacts_dir("results") / "confirm" / f"{entry}.json"


def record_confirmatory(entry: str, results: dict) -> Path:
    """Write a pre-registered study's readings (its notebook calls this once its runs are all in)."""
    path = confirm_path(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(results, indent=1, sort_keys=True) + "\n")
    return path


def judge(test: ConfirmatoryTest | None) -> tuple[str, object, str]:
    """(verdict, value, why) of a claim's pre-registered test: NO_TEST without one, "registered" while
    its study's readings are not in, else the entry's rule applied to them."""
    if test is None:
        return NO_TEST, None, ""
    before = ""
    if test.earlier is not None:
        v0, value0, why0 = judge(test.earlier)
        before = f"earlier entry {test.earlier.entry}: {v0}" + (f" ({fmt(value0)})" if value0 is not None else "") \
            + (f", {why0}" if why0 else "")
    path = confirm_path(test.readings or test.entry)
    if not path.exists():
        return f"registered ({test.entry}), not yet read", None, before
    r = json.loads(path.read_text())
    value = r.get(test.key)
    v = verdict(test, value, True, r)
    why = f"needs: {test.precondition}" if v == "not measured" and test.precondition else ""
    shown = "; ".join(f"{k} {fmt(r.get(k))}" for k in test.beside)
    return v, value, "; ".join(x for x in (why, shown and f"beside: {shown}", before) if x)


def print_confirmatory(tests: dict) -> None:
    """Each claim a pre-registered study tests (`tests`: claim key -> its test, in the ledger's order):
    its test's value and the verdict its entry's rule gives."""
    for key, test in tests.items():
        v, value, why = judge(test)
        print(f"{key:30s} {test.key:36s} {fmt(value):8s} -> {v}" + (f" ({why})" if why else ""))
