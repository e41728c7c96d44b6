"""Sections of bench/README.md that tools other than bench/run.py write, each between its own markers.

bench/run.py regenerates the file from bench/results/*.json and keeps every block named in BLOCKS;
a tool writes its block with `write_block(name, text)`: replaced in place, or, the first time, put before
the next block in BLOCKS order (else at the end). The step-speed block is written by hand from
bench/results/step_speed.json, the jacobian-chunks block from what `python -m bench.jacobian_chunks` prints.
"""
from __future__ import annotations

from lib.paths import PROJECT_ROOT, atomic_write_text

README = PROJECT_ROOT / "bench" / "README.md"
BLOCKS = ("ledger-cost", "step-speed", "time-to-learn", "jacobian-chunks", "paper-plan")     # their order in the README


def markers(name: str) -> tuple[str, str]:
    if name not in BLOCKS:
        raise ValueError(f"name: unknown README block {name!r}; allowed: {BLOCKS}")
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def kept_blocks(text: str) -> list[str]:
    """Every marked block present in `text`, markers included, in BLOCKS order."""
    out = []
    for name in BLOCKS:
        begin, end = markers(name)
        if begin in text and end in text:
            out.append(text[text.index(begin):text.index(end) + len(end)])
    return out


def write_block(name: str, text: str) -> None:
    """Put `text` between the block's markers in bench/README.md (see the module docstring for where)."""
    begin, end = markers(name)
    s = README.read_text() if README.exists() else ""
    if (begin in s) != (end in s):
        raise ValueError(f"{README}: block {name!r} has one of its two markers; mend the file by hand first")
    block = f"{begin}\n{text.strip()}\n{end}"
    if begin in s:
        s = s[:s.index(begin)] + block + s[s.index(end) + len(end):]
    else:
        later = [m for m in (markers(n)[0] for n in BLOCKS[BLOCKS.index(name) + 1:]) if m in s]
        at = s.index(later[0]) if later else None
        s = s.rstrip() + "\n\n" + block + "\n" if at is None else s[:at] + block + "\n\n" + s[at:]
    atomic_write_text(README, s)
