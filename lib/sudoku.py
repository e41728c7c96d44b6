"""Seeded 9×9 sudoku puzzles with exactly one solution; difficulty = fewer givens.

Recipe: fill a random complete grid (a randomised backtracking solve of the empty grid), then
visit the cells in a random order and blank each one unless that would admit a second solution
(checked by a solution counter that stops at 2), until exactly `givens` cells remain. If a visit
order gets stuck above the target (every remaining given is needed), start again from a new grid.
Training sets use more givens and harder test sets fewer, e.g. `make_puzzles(n, 36, seed)` to train
and `make_puzzles(n, 26, seed + 1)` to test. Random removal rarely gets below ~24 givens, so targets
under that are slow or fail after `max_attempts` (the 17-given minimum needs a curated source):
one removal pass ends stuck between 22 and 27 givens (median 25, measured on 60 grids), so 24 and
above take a few attempts, 22-23 tens of attempts, and fewer than 22 rarely succeed.

How this relates to the public recipe: the easy-to-hard family's sudoku experiment
(aks2203/deep-thinking, `deepthinking/utils/sudoku.py`) starts from a downloaded list of 17-given
puzzles (Royle's sudoku17), relabels digits at random, and adds back givens from the solution:
34 givens for training, 17 for testing, stored as CSV lines "puzzle,solution" of 81 digits with 0
for a blank. We keep the difficulty knob (number of givens) and the 81-digit, 0-is-blank format
(`to_string`), but generate puzzles here from a seed instead of downloading a list, so the
hardest sets are ~22-26 givens rather than 17.

Solver: cells are a flat list of 81 digits (0 = blank, row-major); rows, columns and boxes keep
9-bit masks of the digits they hold; the search always branches on the blank cell with the fewest
candidates (most-constrained first), which solves these puzzles with little or no backtracking.
"""
from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Sequence

import torch

from .paths import atomic_write_text, outputs_dir

ALL_DIGITS = 0x1FF                      # bit d-1 set = digit d present
ROW = [i // 9 for i in range(81)]
COL = [i % 9 for i in range(81)]
BOX = [(i // 27) * 3 + (i % 9) // 3 for i in range(81)]
POPCOUNT = [bin(m).count("1") for m in range(512)]
DIGITS_OF = [[d + 1 for d in range(9) if m >> d & 1] for m in range(512)]   # mask -> its digits


def _as_cells(grid) -> list[int]:
    """Accept 81 digits as a string ('0' or '.' blank), a flat sequence, a 9×9 nesting or a tensor."""
    if isinstance(grid, str):
        cells = [0 if ch in "0." else int(ch) if ch.isdigit() else -1 for ch in grid]
    else:
        if isinstance(grid, torch.Tensor):
            grid = grid.reshape(-1).tolist()
        cells = [int(v) for row in grid for v in (row if isinstance(row, (list, tuple)) else [row])]
    if len(cells) != 81 or any(not 0 <= v <= 9 for v in cells):
        raise ValueError("grid must be 81 cells with digits 0..9 (0 = blank), as a string, a flat "
                         f"sequence, a 9x9 nesting or a tensor; got {len(cells)} cells")
    return cells


def _masks(cells: list[int]) -> tuple[list[int], list[int], list[int]] | None:
    """Row/column/box digit masks of the givens, or None if two givens clash."""
    rows, cols, boxes = [0] * 9, [0] * 9, [0] * 9
    for i, v in enumerate(cells):
        if v:
            bit = 1 << (v - 1)
            if (rows[ROW[i]] | cols[COL[i]] | boxes[BOX[i]]) & bit:
                return None
            rows[ROW[i]] |= bit
            cols[COL[i]] |= bit
            boxes[BOX[i]] |= bit
    return rows, cols, boxes


def _search(cells: list[int], limit: int, rng: random.Random | None = None,
            first: list[int] | None = None) -> int:
    """Count solutions of `cells` up to `limit`; fill `first` with the first one found.

    `cells` is restored before returning. With `rng`, candidate digits are tried in random
    order (used to draw a random complete grid).
    """
    state = _masks(cells)
    if state is None:
        return 0
    rows, cols, boxes = state
    blanks = [i for i in range(81) if cells[i] == 0]

    def recurse() -> int:
        if not blanks:
            if first is not None and not first:
                first.extend(cells)
            return 1
        # Most-constrained blank first; stop scanning at a forced (0 or 1 candidate) cell.
        best_k, best_n, best_mask = -1, 10, 0
        for k, i in enumerate(blanks):
            mask = ~(rows[ROW[i]] | cols[COL[i]] | boxes[BOX[i]]) & ALL_DIGITS
            n = POPCOUNT[mask]
            if n < best_n:
                best_k, best_n, best_mask = k, n, mask
                if n <= 1:
                    break
        if best_n == 0:
            return 0
        cell = blanks[best_k]
        blanks[best_k] = blanks[-1]      # swap-remove, undone below
        blanks.pop()
        r, c, b = ROW[cell], COL[cell], BOX[cell]
        digits = DIGITS_OF[best_mask]
        if rng is not None:
            digits = digits[:]
            rng.shuffle(digits)
        found = 0
        for d in digits:
            bit = 1 << (d - 1)
            cells[cell] = d
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit
            found += recurse()
            rows[r] ^= bit
            cols[c] ^= bit
            boxes[b] ^= bit
            if found >= limit:
                break
        cells[cell] = 0
        if best_k < len(blanks):
            blanks.append(blanks[best_k])
            blanks[best_k] = cell
        else:
            blanks.append(cell)
        return found

    return recurse()


def count_solutions(grid, limit: int = 2) -> int:
    """Number of solutions of `grid`, counting stops at `limit` (so 2 means "two or more")."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"count_solutions: limit must be an integer >= 1, got {limit!r}")
    return _search(_as_cells(grid), limit)


def solve(grid) -> list[int] | None:
    """One solution of `grid` as 81 digits (row-major), or None if it has none."""
    first: list[int] = []
    return first if _search(_as_cells(grid), 1, first=first) else None


def is_valid_solution(cells: Sequence[int]) -> bool:
    """True if 81 digits form a complete sudoku: every row, column and box holds 1..9 once."""
    cells = list(cells)
    if len(cells) != 81:
        return False
    units = ([[r * 9 + c for c in range(9)] for r in range(9)]
             + [[r * 9 + c for r in range(9)] for c in range(9)]
             + [[i for i in range(81) if BOX[i] == b] for b in range(9)])
    return all(sorted(cells[i] for i in unit) == list(range(1, 10)) for unit in units)


def random_full_grid(rng: random.Random) -> list[int]:
    """A random complete grid: solve the empty grid trying candidate digits in random order."""
    first: list[int] = []
    _search([0] * 81, 1, rng=rng, first=first)
    return first


def _carve(solution: list[int], givens: int, rng: random.Random) -> list[int] | None:
    """Blank cells of `solution` in random order while the solution stays unique; None if stuck
    above `givens`."""
    puzzle = solution[:]
    order = list(range(81))
    rng.shuffle(order)
    remaining = 81
    for i in order:
        if remaining == givens:
            break
        puzzle[i] = 0
        if _search(puzzle, 2) == 1:
            remaining -= 1
        else:
            puzzle[i] = solution[i]      # this given is needed for uniqueness
    return puzzle if remaining == givens else None


def make_puzzle(givens: int, seed: int, max_attempts: int = 200) -> tuple[list[int], list[int]]:
    """One (puzzle, solution) pair, each 81 digits, the puzzle with exactly `givens` nonzero cells."""
    _check_make_args(1, givens, seed, max_attempts)
    # A string seed is hashed with sha512 by `random`, independent of PYTHONHASHSEED.
    rng = random.Random(f"sudoku:{seed}:{givens}")
    for _ in range(max_attempts):
        solution = random_full_grid(rng)
        puzzle = _carve(solution, givens, rng)
        if puzzle is not None:
            return puzzle, solution
    raise RuntimeError(f"make_puzzle: no unique puzzle with givens={givens} in {max_attempts} "
                       "attempts; random removal rarely goes below ~24 givens, use more givens "
                       "or a larger max_attempts")


def _check_make_args(count: int, givens: int, seed: int, max_attempts: int) -> None:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"make_puzzles: count must be an integer >= 1, got {count!r}")
    if isinstance(givens, bool) or not isinstance(givens, int) or not 17 <= givens <= 81:
        raise ValueError(f"make_puzzles: givens must be an integer in 17..81 (17 is the fewest any "
                         f"unique sudoku has), got {givens!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"make_puzzles: seed must be an integer >= 0, got {seed!r}")
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError(f"make_puzzles: max_attempts must be an integer >= 1, got {max_attempts!r}")


def make_puzzles(count: int, givens: int, seed: int = 0,
                 max_attempts: int = 200) -> list[tuple[list[int], list[int]]]:
    """`count` (puzzle, solution) pairs with exactly `givens` givens and a unique solution.

    Puzzle k comes from its own seed (seed, k), so a set's first puzzles do not depend on `count`.
    """
    _check_make_args(count, givens, seed, max_attempts)
    return [make_puzzle(givens, seed * 1_000_003 + k, max_attempts) for k in range(count)]


def to_tensors(pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Model format: inputs int64 (N, 81) tokens 0..9 with 0 = blank; targets int64 (N, 81) the
    solution digits 1..9 (a 10-way output whose class 0 is never a target). Cells are row-major."""
    inputs = torch.tensor([list(p) for p, _ in pairs], dtype=torch.int64).reshape(-1, 81)
    targets = torch.tensor([list(s) for _, s in pairs], dtype=torch.int64).reshape(-1, 81)
    return inputs, targets


def to_string(cells: Sequence[int]) -> str:
    """81 digits as the public CSV field format ('0' = blank)."""
    return "".join(str(int(v)) for v in cells)


# ---------------------------------------------------------------------------------------------
# Data for training a looped transformer (task "sudoku" in tasks.py)

TRAIN_GIVENS = 34           # the public recipe's training difficulty (deep-thinking: 34 givens)
HARDER_GIVENS = (28, 24)    # our harder test sets (the public recipe tests at 17; see the docstring)
TRAIN_POOL = 1000           # distinct training puzzles; symmetries (`augment`) multiply them

GENERATOR_VERSION = 1       # bump when make_puzzles would draw different puzzles: old files are then unused

_POOLS: dict = {}


def pool_file(givens: int, count: int, seed: int) -> Path:
    return outputs_dir() / "data" / "sudoku" / f"v{GENERATOR_VERSION}_givens{givens}_count{count}_seed{seed}.csv"


def read_pool(path: Path, givens: int, count: int) -> list[tuple[list[int], list[int]]]:
    """A pool file written by `pool`: lines "puzzle,solution" of 81 digits (the public CSV format).
    Checked as it is read: `count` lines, each puzzle with `givens` givens that agree with a valid
    solution (uniqueness is the generator's guarantee and is not re-checked)."""
    pairs = []
    for k, line in enumerate(path.read_text().split()):
        try:
            puzzle, solution = (_as_cells(part) for part in line.split(","))
        except ValueError:
            puzzle = solution = None
        if (puzzle is None or sum(v > 0 for v in puzzle) != givens or not is_valid_solution(solution)
                or any(p and p != q for p, q in zip(puzzle, solution))):
            raise ValueError(f"{path}: line {k + 1} is not a {givens}-given puzzle of its solution; "
                             "delete the file to generate the pool again")
        pairs.append((puzzle, solution))
    if len(pairs) != count:
        raise ValueError(f"{path}: {len(pairs)} puzzles, expected {count}; delete the file to generate it again")
    return pairs


def pool(givens: int, count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`make_puzzles(count, givens, seed)` as tensors (see `to_tensors`), cached per process and on
    disk (`pool_file`, outputs/data/sudoku/): drawing the hard pools takes minutes of pure Python
    backtracking, reading them milliseconds."""
    key = (givens, count, seed)
    if key not in _POOLS:
        path = pool_file(givens, count, seed)
        if path.exists():
            pairs = read_pool(path, givens, count)
        else:
            pairs = make_puzzles(count, givens, seed)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_text(path, "".join(f"{to_string(p)},{to_string(q)}\n" for p, q in pairs))
            except OSError as err:         # a read-only outputs/: the pool is still drawn, only not kept
                warnings.warn(f"sudoku pool not kept at {path}: {err}", stacklevel=2)
        _POOLS[key] = to_tensors(pairs)
    return _POOLS[key]


def _line_order(generator: torch.Generator) -> torch.Tensor:
    """A random order of the 9 rows (or columns) that keeps bands together: permute the 3 bands,
    then the 3 lines inside each band."""
    bands = torch.randperm(3, generator=generator)
    return torch.cat([3 * b + torch.randperm(3, generator=generator) for b in bands.tolist()])


def augment(inputs: torch.Tensor, targets: torch.Tensor,
            generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Each (puzzle, solution) pair under its own random validity-preserving symmetry: relabel the
    digits 1-9, reorder bands and rows within bands, stacks and columns within stacks, and transpose
    with probability 1/2. Every such map sends a valid grid to a valid grid and is invertible, so a
    puzzle with one solution keeps exactly one (the solution's image), and 1,000 base puzzles give
    far more distinct training boards than a short run can see."""
    out_x, out_y = torch.empty_like(inputs), torch.empty_like(targets)
    for b in range(inputs.shape[0]):
        rows, cols = _line_order(generator), _line_order(generator)
        cells = (9 * rows[:, None] + cols[None, :])
        if int(torch.randint(0, 2, (1,), generator=generator)):
            cells = cells.T
        cells = cells.reshape(81)
        relabel = torch.cat([torch.zeros(1, dtype=torch.int64), 1 + torch.randperm(9, generator=generator)])
        out_x[b], out_y[b] = relabel[inputs[b, cells]], relabel[targets[b, cells]]
    return out_x, out_y
