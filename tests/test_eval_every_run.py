"""`python -m lib.cli eval` reads every committed run: each finished run in outputs/runs is found by its
'experiment/hash', loaded (weights checked against DONE) and evaluated at its own training length and
loop count on a few words, without training (issue 39: one evaluation entry point for any run)."""
import json
from pathlib import Path

import pytest

from lib import cli
from lib.paths import outputs_dir

RUNS = sorted(Path(d).parent for d in (outputs_dir() / "runs").glob("*/*/DONE"))


def test_there_are_committed_runs():
    assert len(RUNS) > 100


@pytest.mark.parametrize("experiment", sorted({d.parent.name for d in RUNS}))
def test_eval_reads_every_committed_run(experiment, capsys):
    for d in (d for d in RUNS if d.parent.name == experiment):
        cfg = json.loads((d / "config.json").read_text())
        assert cli.main(["eval", f"{experiment}/{d.name}", "--n", str(cfg["n_train"]), "--loops", str(cfg["T_train"]),
                         "--count", "4", "--json"]) == 0, d
        out = capsys.readouterr().out
        assert '"whole_word"' in out, (d, out[:200])
