"""The reader of C04-architecture (paper/PREREGISTRATION.md): the architecture prior read by a
decoder for every block, on the confirm runs (`plan.study_families()`, seeds 110-112).

Per run (`read_seed`):
- *learned*: whole-word accuracy at n_train after its T_train loops (untied: its blocks), 512 words of its
  in-distribution set (`contract.at_contract`), >= `head.LEARNED`;
- *extrapolation*: whole-word accuracy at n = 12 and 16 with the run's own loops there (`loops_at(n)`;
  untied: its depth), 512 words of the extrapolation set (`contract.final_accuracy_by_length`);
- for the probed families (tied, tied + scan, untied): probe tau at the last position against n = 2..16
  under three decoders, one forward pass a length: the linear block probe (primary), the MLP probe
  (the stated alternative) and the model's own readout, each with its validity (position 1 read at
  block 1, pooled over the solved inputs of the lengths kept) and scaling class (`head.scaling_class`
  over the lengths with >= 16 solved inputs, >= 4 lengths or no class). Blocks read: untied, its
  blocks; tied, 2 * loops_at(n) loops. Probes are fit once a run, for as many blocks as the longest read.

A run's reading is plain JSON, kept beside the run (`reading_cache`, re-read only when its weights or
READER_VERSION change): a probed run costs minutes (its MLP probes), too slow to redo in every pass of
the notebook. `study_readings` turns the rows into the readings the CONFIRMATORY rules of
this section's `claims` consume (rules 1-4 of the entry); `read_study` reads whatever is stored and records
them only once every run of the study is stored.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from ... import reading_cache, stats, store
from ...instruments import block_probe, head
from ...instruments.contract import at_contract, final_accuracy_by_length
from ...plots import save
from ...probes import probe_set
from ...rules import confirm_path, record_confirmatory, verdict
from . import figures, plan
from .claims import CONFIRMATORY

ENTRY = "C04-architecture"
PROBED = ("tied", "tied + scan", "untied")                    # the families whose probe tau a rule reads
COMPARATORS = ("tied, untied recipe", "tied, settled T = n")  # rule 3's tied comparators, named in the entry
TEST_NS = tuple(range(2, 17))                                 # n = 2..16 (2 n_train)
EXTRAPOLATION_NS = (12, 16)
COMPARE_N = 12                                                # rule 3's comparison length, fixed in the entry
SCORES = 0.05                                                 # rule 3: each family's mean at n = 12 ("both score")
MIN_LENGTHS = 4                                               # lengths a scaling class needs
COUNT, FIT_COUNT = 512, 256                                   # test words a length; probe-fit words a length
DECODERS = ("linear", "mlp", "readout")
CLASSES = ("flat", "log", "linear", None)                     # None: too few solved lengths for a class
RULES = ("untied_log_fraction", "tied_linear_fraction", "untied_minus_tied_ood", "untied_a5_seq_acc")
READER_VERSION = 2            # bump when what `read_seed` computes changes: kept readings are then re-read


def blocks_read(cfg, n: int) -> int:
    """Blocks / loops read at length n: an untied model its blocks, a tied one twice the schedule's loops."""
    return cfg.T_train if not cfg.tied else 2 * cfg.loops_at(n)


@dataclass
class DecoderScaling:
    ns: list[int]                   # the lengths kept (>= min_solved solved inputs)
    last: list[float]               # probe tau at the last position, per kept length
    validity: float                 # position 1 right at block 1, over the solved inputs of the kept lengths
    fit: head.ScalingFit | None     # None: fewer than MIN_LENGTHS lengths kept

    @property
    def cls(self) -> str | None:
        return self.fit.cls if self.fit else None


def scaling(per_length, min_solved: int = head.MIN_SOLVED, min_lengths: int = MIN_LENGTHS) -> DecoderScaling:
    """per_length: (n, block_probe.ProbeTau) pairs -> the decoder's scaling reading."""
    kept = [(n, r) for n, r in per_length if r.n_solved >= min_solved]
    ns, last = [n for n, _ in kept], [float(r.tau_curve[-1]) for _, r in kept]
    solved = sum(r.n_solved for _, r in kept)
    validity = sum(r.validity * r.n_solved for _, r in kept) / solved if solved else float("nan")
    fit = head.scaling_class(ns, last) if len(ns) >= min_lengths else None
    return DecoderScaling(ns, last, float(validity), fit)


def probe_readings(run, ns=TEST_NS, kinds=("linear", "mlp"), count: int = COUNT, fit_count: int = FIT_COUNT,
                   min_solved: int = head.MIN_SOLVED) -> dict[str, DecoderScaling]:
    """Probe tau against n under each probe kind and the readout (the `tau_vs_n` probe sets; solved: the
    model's own answer right at every position after the last block read)."""
    c = run.config
    T_fit = max(blocks_read(c, n) for n in ns)
    probes = {k: block_probe.fit_for_run(run, T_fit, k, fit_count) for k in kinds}
    per = {k: [] for k in (*kinds, "readout")}
    for n in ns:
        tokens, labels = probe_set(c.task_obj(), "tau_vs_n", n, n, count)
        hs, own = block_probe.model_states(run.model, tokens, blocks_read(c, n))
        y, own = labels[:, 1:].numpy(), own.numpy()
        solved = (own[-1] == y).all(1)
        for k in kinds:
            per[k].append((n, block_probe.probe_tau(block_probe.predict(probes[k], hs), y, solved)))
        per["readout"].append((n, block_probe.probe_tau(own, y, solved)))
    return {k: scaling(v, min_solved) for k, v in per.items()}


def _decoder_json(s: DecoderScaling) -> dict:
    # validity is judged against 0.9 (`head.decoder_valid`): kept at full precision
    return {"class": s.cls, "validity": float(s.validity), "ns": s.ns, "tau_last": [round(t, 4) for t in s.last],
            "r2_log_linear": [round(s.fit.r2["log"], 4), round(s.fit.r2["linear"], 4)] if s.fit and s.cls != "flat" else None}


def read_seed(family: str, run, probe: bool | None = None, ns=TEST_NS, kinds=("linear", "mlp"),
              count: int = COUNT, fit_count: int = FIT_COUNT, extrapolation_ns=EXTRAPOLATION_NS) -> dict:
    """One run, as plain JSON: learned, extrapolation (by str(n)) and (probe: None means the family is
    in PROBED) its decoders' scaling readings."""
    c = run.config
    acc = float(at_contract(run, count).at(c.T_train))
    ext = final_accuracy_by_length(run, extrapolation_ns, count)
    row = dict(family=family, seed=c.seed, steps=run.metrics.get("steps"), learned_acc=acc,       # judged unrounded
               learned=acc >= head.LEARNED, extrapolation={str(n): float(a) for n, a in ext.items()}, decoders={})
    if (family in PROBED) if probe is None else probe:
        row["decoders"] = {k: _decoder_json(v) for k, v in probe_readings(run, ns, kinds, count, fit_count).items()}
    return row


def kept_seed(family: str, run, recompute: bool = False, **read_kw) -> dict:
    """`read_seed`, kept beside the stored run (`reading_cache`)."""
    return reading_cache.reading(run, "c04-architecture", READER_VERSION, lambda: read_seed(family, run, **read_kw),
                                 recompute)


# ---------------------------------------------------------------------------------------------
# the study's readings (rules 1-4)

def _valid(row) -> bool:
    d = row["decoders"].get("linear")
    return d is not None and head.decoder_valid(d["validity"])


def _share(rows, cls: str, decoder: str) -> float | None:
    """Share of `rows` whose class under `decoder` is `cls` (a seed without a class does not count as it)."""
    if not rows or not all(decoder in r["decoders"] for r in rows):      # none, or a decoder not read
        return None
    return round(sum(r["decoders"][decoder]["class"] == cls for r in rows) / len(rows), 3)


def _interval(k: int, n: int) -> list | None:
    if n == 0:
        return None
    e = stats.proportion(k, n)
    return [k, n, round(e.low, 3), round(e.high, 3)]


def rule_verdict(claim_key: str, readings: dict, value=None) -> str:
    """The entry's rule for `claim_key` (`claims.CONFIRMATORY`) applied to `readings`, or to another value
    of its key under the same precondition (the MLP probe's share, for the flag)."""
    test = CONFIRMATORY[claim_key]
    return verdict(test, readings.get(test.key) if value is None else value, True, readings)


def _extrapolation_rule(learned: dict) -> tuple[float | None, bool, dict]:
    """Rule 3 on the learned seeds' accuracy at COMPARE_N: (value, comparable, means by family).
    1: every untied seed below every seed of both comparators; 0.5: the untied mean below both
    comparators' means without that; 0: otherwise."""
    at = {f: [r["extrapolation"][str(COMPARE_N)] for r in learned.get(f, [])] for f in ("untied", *COMPARATORS)}
    exact = {f: (float(np.mean(v)) if v else None) for f, v in at.items()}
    means = {f: (round(m, 4) if m is not None else None) for f, m in exact.items()}      # printed
    comparable = all(len(v) >= 2 and exact[f] >= SCORES for f, v in at.items())
    if not all(at.values()):
        return None, comparable, means
    if all(u < min(at[f]) for u in at["untied"] for f in COMPARATORS):
        return 1.0, comparable, means
    return (0.5 if all(exact["untied"] < exact[f] for f in COMPARATORS) else 0.0), comparable, means


def study_readings(rows) -> dict:
    """The readings of C04-architecture from its runs' rows (any subset: a missing family reads None)."""
    fam = {}
    for r in rows:
        fam.setdefault(r["family"], []).append(r)
    learned = {f: [r for r in rs if r["learned"]] for f, rs in fam.items()}
    valid = {f: [r for r in learned[f] if _valid(r)] for f in PROBED if f in fam}
    out = {"entry": ENTRY, "runs_read": len(rows)}
    for f, cls, prefix in (("untied", "log", "untied"), ("tied", "linear", "tied"), ("tied + scan", "linear", "tied_scan")):
        v = valid.get(f, [])
        out[f"{prefix}_valid_learned"] = len(v)
        for decoder in DECODERS:
            out[f"{prefix}_{cls}_fraction" + ("" if decoder == "linear" else "_" + decoder)] = _share(v, cls, decoder)
    for prefix, key in (("untied", "untied_log_fraction"), ("tied", "tied_linear_fraction")):
        # rules 1-2: a verdict that differs under the MLP probe is flagged (same seeds, same precondition)
        out[f"{prefix}_mlp_flag"] = (out[key] is not None and out[key + "_mlp"] is not None
                                     and rule_verdict(key, out) != rule_verdict(key, out, out[key + "_mlp"]))
    value, comparable, means = _extrapolation_rule(learned)
    out.update(untied_worst_at_12=value, extrapolation_comparable=comparable, extrapolation_means_at_12=means)
    out["extrapolation_means_at_16"] = {f: (round(float(np.mean([r["extrapolation"]["16"] for r in learned[f]])), 4)
                                            if learned.get(f) and "16" in learned[f][0]["extrapolation"] else None)
                                        for f in ("untied", *COMPARATORS)}          # printed beside rule 3
    out["untied_s4_learned"] = len(learned.get("untied", []))
    a5 = [r["learned_acc"] for r in fam.get("untied A5", [])]
    out["untied_a5_seq_acc"] = float(max(a5)) if a5 else None
    out["families"] = {f: {"seeds": [r["seed"] for r in rs], "learned": _interval(len(learned[f]), len(rs)),
                           "valid_learned": len(valid[f]) if f in valid else None,
                           "class_shares": ({d: {str(c): _interval(sum(r["decoders"][d]["class"] == c for r in valid[f]),
                                                                   len(valid[f])) for c in CLASSES}
                                             for d in DECODERS if all(d in r["decoders"] for r in valid[f])}
                                            if f in valid else None)}
                       for f, rs in fam.items()}
    out["seeds"] = {f"{r['family']} seed {r['seed']}": {k: v for k, v in r.items() if k not in ("family", "seed")}
                    for r in rows}
    return out


def below_ceiling(rows, families: dict | None = None) -> dict:
    """Printed beside rule 1, never judged or recorded (not in the entry): tau cannot exceed the last block
    read, so lengths whose probe tau sits within half a block of it bend any rising curve into a concave,
    log-looking one. Per valid learned seed of a probed family and per probe: how many kept lengths sit at
    that ceiling, and the scaling class over the lengths below it (None: fewer than MIN_LENGTHS)."""
    families = plan.study_families() if families is None else families
    cfg = {(f, c.seed): c for f, cs in families.items() for c in cs}
    out = {}
    for r in rows:
        if r["family"] not in PROBED or not r["learned"] or not _valid(r):
            continue
        c = cfg[(r["family"], r["seed"])]
        for kind in ("linear", "mlp"):
            d = r["decoders"].get(kind)
            if d is None:
                continue
            below = [(n, t) for n, t in zip(d["ns"], d["tau_last"]) if t < blocks_read(c, n) - 0.5]
            fit = head.scaling_class(*zip(*below)) if len(below) >= MIN_LENGTHS else None
            out.setdefault(r["family"], {}).setdefault(kind, {})[r["seed"]] = dict(
                at_ceiling=len(d["ns"]) - len(below), lengths=len(d["ns"]), cls=fit.cls if fit else None)
    return out


def _ceilings(rows) -> dict:
    """family -> its last block read, for the families with a probed length at it and one depth at every n."""
    out = {}
    for f, cs in plan.study_families().items():
        depths = {blocks_read(c, n) for c in cs for n in TEST_NS}
        if f in PROBED and len(depths) == 1 and any(v["at_ceiling"] for k in below_ceiling(rows).get(f, {}).values()
                                                    for v in k.values()):
            out[f] = depths.pop()
    return out


def _ceiling_lines(rows) -> list[str]:
    found = below_ceiling(rows)
    clear = [f for f, kinds in found.items() if not any(v["at_ceiling"] for seeds in kinds.values() for v in seeds.values())]
    lines = [f"    post hoc, not judged — probe tau within half a block of the last block read: none in {', '.join(clear)}"] if clear else []
    for f, kinds in found.items():
        if f in clear:
            continue
        parts = [f"{kind}: " + ", ".join(f"seed {s} {v['cls'] or 'no class'} ({v['at_ceiling']} of {v['lengths']} at it)"
                                        for s, v in seeds.items()) for kind, seeds in kinds.items()]
        lines.append(f"    post hoc, not judged — {f}, class over the lengths below the last block read: " + "; ".join(parts))
    return lines


# ---------------------------------------------------------------------------------------------
# the study: whatever is stored, recorded once all of it is

@dataclass
class Study:
    total: int                                  # runs the study names
    missing: list = field(default_factory=list)  # (family, config) not yet stored
    rows: list = field(default_factory=list)
    readings: dict | None = None                # None with no run stored
    recorded: Path | None = None                # the readings file, once every run is stored

    @property
    def complete(self) -> bool:
        return not self.missing


def read_study(families: dict | None = None, record: bool = True, keep: bool = True, **read_kw) -> Study:
    """Read every stored run of the study (`plan.study_families()` unless given; keep: each
    run's reading kept beside it, `kept_seed`); record the readings (`rules.record_confirmatory`) only
    when every run is stored and `record`."""
    families = plan.study_families() if families is None else families
    pairs = [(f, c) for f, cfgs in families.items() for c in cfgs]
    study = Study(len(pairs), [(f, c) for f, c in pairs if not store.is_done(c)])
    read = kept_seed if keep else read_seed
    study.rows = [read(f, store.load_run(c), **read_kw) for f, c in pairs if store.is_done(c)]
    study.readings = study_readings(study.rows) if study.rows else None
    if study.complete and record:
        study.recorded = record_confirmatory(ENTRY, study.readings)
    return study


def _f(v, nd: int = 2) -> str:
    return "–" if v is None else f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def describe(study: Study) -> str:
    """The study's table: a line per stored run, the family shares, and the rules (verdicts only once
    every run is stored)."""
    lines = [f"{ENTRY}: {study.total - len(study.missing)} of {study.total} runs stored; "
             f"not yet trained: {len(study.missing)} of {study.total} runs"]
    by_family = {}
    for f, c in study.missing:
        by_family.setdefault(f, []).append(c.seed)
    lines += [f"  not yet trained: {f} seeds {seeds}" for f, seeds in by_family.items()]
    for r in study.rows:
        d = r["decoders"]
        ext = " ".join(f"n={n}: {a:.3f}" for n, a in r["extrapolation"].items())
        lin = d.get("linear", {})
        probe = "" if not d else ("; classes " + " / ".join(f"{k} {d[k]['class']}" for k in d) +
                                  f"; validity linear {lin['validity']:.2f}, readout {d['readout']['validity']:.2f}"
                                  f"; probe tau(last) n={lin['ns'][0] if lin['ns'] else '-'}.."
                                  f"{lin['ns'][-1] if lin['ns'] else '-'}: {np.round(lin['tau_last'], 1).tolist()}")
        lines.append(f"  {r['family']:20s} seed {r['seed']}: in-distribution {r['learned_acc']:.3f} "
                     f"({'learned' if r['learned'] else 'not learned'}); {ext}{probe}")
    if study.readings is None:
        return "\n".join(lines + ["  no run stored: nothing to read; no verdict recorded"])
    rd = study.readings
    for f, s in rd["families"].items():
        shares = "" if not s["class_shares"] else "; " + "; ".join(
            f"{dec}: " + ", ".join(f"{c} {v[0]}/{v[1]} [{v[2]:.2f}, {v[3]:.2f}]" for c, v in cs.items() if v and v[0])
            for dec, cs in s["class_shares"].items())
        lines.append(f"  {f}: learned {s['learned'][0]}/{s['learned'][1]} [{s['learned'][2]:.2f}, "
                     f"{s['learned'][3]:.2f}], valid learned {_f(s['valid_learned'])}{shares}")
    lines.append(f"  rule 1 untied log share {_f(rd['untied_log_fraction'])} (mlp {_f(rd['untied_log_fraction_mlp'])}, "
                 f"readout {_f(rd['untied_log_fraction_readout'])}) over {rd['untied_valid_learned']} valid learned seeds"
                 + (" ⚑ the MLP probe's verdict differs" if rd["untied_mlp_flag"] else ""))
    lines += _ceiling_lines(study.rows)
    lines.append(f"  rule 2 tied linear share {_f(rd['tied_linear_fraction'])} (mlp {_f(rd['tied_linear_fraction_mlp'])}, "
                 f"readout {_f(rd['tied_linear_fraction_readout'])}) over {rd['tied_valid_learned']}; tied + scan "
                 f"{_f(rd['tied_scan_linear_fraction'])} over {rd['tied_scan_valid_learned']}"
                 + (" ⚑ the MLP probe's verdict differs" if rd["tied_mlp_flag"] else ""))
    lines.append(f"  rule 3 untied worst at n={COMPARE_N}: {_f(rd['untied_worst_at_12'], 1)} (learned seeds' means "
                 f"{rd['extrapolation_means_at_12']}; comparable {rd['extrapolation_comparable']}; at n = 16: "
                 f"{rd['extrapolation_means_at_16']})")
    lines.append(f"  rule 4 untied A5 best in-distribution accuracy {_f(rd['untied_a5_seq_acc'], 3)} "
                 f"(untied S4 seeds learned: {rd['untied_s4_learned']})")
    if not study.complete:
        return "\n".join(lines + ["  verdicts: none until every run is stored (nothing recorded)"])
    for k in RULES:
        v = rule_verdict(k, rd)
        why = f"; needs {CONFIRMATORY[k].precondition}" if v == "not measured" else ""
        lines.append(f"  verdict {k}: {v} ({CONFIRMATORY[k].key} = {_f(rd[CONFIRMATORY[k].key], 3)}{why})")
    return "\n".join(lines + [f"  recorded: {study.recorded.name}" if study.recorded else "  not recorded"])


def recorded() -> dict | None:
    """The recorded readings, if the study has been read complete."""
    p = confirm_path(ENTRY)
    return json.loads(p.read_text()) if p.exists() else None


def show(profile: str = "quick") -> Study | None:
    """Notebook 04's confirmatory section: read the study (its runs are quick-profile runs, so another
    profile's pass leaves them alone), print its table, draw and save the probe-tau figure once a
    probed run is stored."""
    if profile != "quick":
        print(f"{ENTRY}: not read under profile {profile}")
        return None
    study = read_study()
    print(describe(study))
    fig = figures.probe_tau(study.rows, PROBED, _ceilings(study.rows))
    if fig is None:
        print("no probed confirm run stored yet: nothing to draw")
        return study
    save(fig, "04_architecture_prior_confirm_tau_vs_n", profile)
    plt.show()
    return study
