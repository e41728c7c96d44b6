"""Calibrating the head instrument (Paper A §5): does tau(n, i) read a mechanism we know?

- `control_reading`: tau at the contract of a control run (streaming: serial forced by the input
  schedule, slope 1 loop per position; the increment shortcut: one attention read, flat);
- `free_reading`: for a free-trained run that learned its contract, tau against n (its scaling
  class) and the damage-cone grid at the contract (the causal check: cones should spread at the
  speed tau reports);
- `calibration_results`: the ledger's numbers.
"""
from __future__ import annotations

import numpy as np

from ...instruments import head, patching
from ...probes import probe_seed, probe_set

UNCAPPED = 4      # tau against n read with 4x the schedule's loops: tau(last) is not capped by the count


def control_reading(run, eval_count: int) -> head.TauResult:
    c = run.config
    return head.tau(run.model, c.task_obj(), c.n_train, c.T_train, count=eval_count,
                    seed=probe_seed("in_distribution", c.seed), streaming=c.streaming)


def free_reading(run, test_ns, eval_count: int, patch_inputs: int, alpha: float, threshold: float,
                 learned_acc: float = 0.9) -> dict | None:
    """None when the run did not learn its contract (solved fraction < learned_acc): no frontier."""
    c = run.config
    t = control_reading(run, eval_count)
    if t.solved_fraction < learned_acc:
        return None
    task = c.task_obj()
    tokens, labels = probe_set(task, "patch_clean", 0, c.n_train, patch_inputs)
    donors, _ = probe_set(task, "patch_donor", 0, c.n_train, patch_inputs)
    cones = patching.damage_cones(run.model, tokens, labels, donors, c.T_train, alpha=alpha, threshold=threshold)
    return dict(tau=t, against_n=head.tau_against_n(run.model, c, test_ns, count=eval_count), cones=cones,
                against_n_uncapped=head.tau_against_n(run.model, c, test_ns, count=eval_count, loops_factor=UNCAPPED))


def describe_free(c, f: dict) -> str:
    """Two lines for a free model: tau(last) against n with the schedule's loops and with 4x them, its
    class each way, the tau and cone speeds, and the decoder's validity."""
    a, u = f["against_n"], f["against_n_uncapped"]
    return (f"{c.contract}: tau(last) over n={a.ns}: {np.round(a.last, 1).tolist()} -> "
            f"{a.fit.cls if a.fit else 'too few lengths solved'}; v(tau) {f['tau'].v_tau.v:.2f}, "
            f"v(cone) {f['cones'].v_cone:.2f}\n{'':{len(c.contract)}s}  read with {UNCAPPED}x the loops: tau(last) "
            f"{np.round(u.last, 1).tolist()} -> {u.fit.cls if u.fit else 'too few lengths solved'}; decoder reads "
            f"position 1 at loop 1 on {f['tau'].position1_first_loop:.2f} of solved inputs")


def calibration_results(controls: dict, shortcut_fits: dict, free: dict) -> dict:
    """controls: (kind, seed) -> TauResult; shortcut_fits: seed -> ScalingFit; free: config -> free_reading."""
    slopes = lambda kind: [r.v_tau.slope for (k, _), r in controls.items() if k == kind]    # noqa: E731
    fit = lambda f: f["against_n"].fit                                                       # noqa: E731
    ratio = lambda f: f["cones"].v_cone / f["tau"].v_tau.v                                   # noqa: E731
    return {
        "streaming_slope": round(float(np.mean(slopes("streaming"))), 3),
        "shortcut_slope": round(float(np.mean(slopes("shortcut"))), 3),
        "shortcut_class": ",".join(sorted({f.cls for f in shortcut_fits.values()})),
        "free_scaling_classes": {c.contract: (fit(f).cls if fit(f) else None) for c, f in free.items()},
        "free_linear_fraction": round(float(np.mean([fit(f) is not None and fit(f).cls == "linear"
                                                     for f in free.values()])), 3) if free else None,
        "free_scaling_classes_uncapped": {c.contract: (f["against_n_uncapped"].fit.cls if f["against_n_uncapped"].fit
                                                       else None) for c, f in free.items()},
        "free_linear_fraction_uncapped": round(float(np.mean(
            [f["against_n_uncapped"].fit is not None and f["against_n_uncapped"].fit.cls == "linear"
             for f in free.values()])), 3) if free else None,
        "decoder_position1_min": round(float(min(f["tau"].position1_first_loop for f in free.values())), 3) if free else None,
        "cone_to_tau_ratio": {c.contract: round(ratio(f), 2) for c, f in free.items()},
        "cone_ratio_median": round(float(np.median([ratio(f) for f in free.values()])), 3) if free else None,
    }
