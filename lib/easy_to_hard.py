"""The easy-to-hard benchmark's prefix sums, regenerated locally, and loaders for its official files.

Schwarzschild et al. 2021 ("Can You Learn an Algorithm?", arXiv 2106.04537) publish prefix sums,
mazes and chess puzzles as PyTorch tensors. Their downloader (`easy_to_hard_data.py` in
github.com/aks2203/easy-to-hard-data) fetches tarballs from outside hosts and pings a hit counter,
so this project never calls it: prefix sums are regenerated here by the public recipe, and the
official `.pth` files are read only when the user already has them on disk.

Public prefix-sum recipe (aks2203/easy-to-hard-data, `make_prefixsums.py`, commit ce62261)
- lengths 16..64, 72, 128, 256, 512 bits; 10,000 samples per length;
- fewer than 24 bits: 10,000 distinct integers, `arange(2**n)[randperm(2**n)[:10000]]`, each
  written LSB-first (`x & 2**arange(n) != 0`, so bit j of the row is bit j of the integer);
- 24 bits or more: independent fair bits, `rand(10000, n) >= 0.5` (rows may repeat);
- target = cumsum(bits) mod 2 along the row (prefix parity);
- saved as float32 tensors `{n}_data.pth` and `{n}_targets.pth`, shape (10000, n), values 0./1.,
  in a folder `prefix_sums_data/` (an older loader, commit 1ba1832, expected
  `prefix_sums_data/len_{n}/{n}_data.pth`; both layouts are read here). The public loader feeds
  its models `data.unsqueeze(1) - 0.5` and `targets.long()`.

Where ours departs: the public script draws from torch's global, unseeded generator, so the
official files cannot be reproduced bit for bit; ours draws from a `torch.Generator` seeded by
(seed, n_bits), so a (seed, n_bits) pair always gives the same data and different lengths do not
share a stream. The distribution is the same. We return int64 0/1 tensors (the official files are
float32) and leave model-specific centring (the `- 0.5`) to the caller.

Public chess-puzzle format (aks2203/easy-to-hard-data, `make_chess.py` and
`easy_to_hard_data.py::ChessPuzzleDataset`, commit ce62261)
- Lichess puzzles sorted by rating (ascending, stable); the puzzle position is the board after
  the opponent's first move; index ranges split easy from hard: train [0, 600000), default test
  [600000, 700000); any higher range is harder;
- `chess_data/data.pth`: float32 (N, 12, 8, 8) one-hot piece planes; row = rank (row 0 = rank
  1), column = file (column 0 = file a); channels 0..5 are the side to move's
  king, queen, bishop, knight, rook, pawn and channels 6..11 the opponent's, in that order;
- `chess_data/targets.pth`: int64 (N, 8, 8), 1 on the origin and destination squares of the
  solution move; the public loader applies `.flip(1)` (reverses the rank axis) to it after
  loading, and we do the same so a model sees what the published runs saw. Older releases
  (aks2203/easy-to-hard `chess/utils.py`) name the file `segment_targets.pth` and use it unflipped;
  we read that name too, also unflipped;
- `chess_data/who_moves.pth`: float (N, 1), 1 when black is to move; `rating.pth` (N, 1) the
  Lichess rating (optional here). deep-thinking's `FlippedChessPuzzleDataset`
  (aks2203/deep-thinking, `deepthinking/utils/chess_data.py`) additionally flips the rank axis
  of black-to-move positions so the mover always plays up the board; `mover_at_bottom=True`
  does that.

All `.pth` files load with `torch.load(..., weights_only=True)`: tensors only, no pickled code.
"""
from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import NamedTuple

import torch


PUBLIC_LENGTHS = tuple(range(16, 65)) + (72, 128, 256, 512)
PUBLIC_COUNT = 10_000
DISTINCT_BELOW_BITS = 24      # below this length rows are distinct integers, as in the public recipe

CHESS_TRAIN_RANGE = (0, 600_000)        # the public easy training puzzles (lowest ratings)
CHESS_TEST_RANGE = (600_000, 700_000)   # the public default hard test set


# ---------------------------------------------------------------------------------------------
# Prefix sums: the recipe
# ---------------------------------------------------------------------------------------------

def _check_prefix_sum_args(n_bits: int, count: int, seed: int) -> None:
    if isinstance(n_bits, bool) or not isinstance(n_bits, int) or n_bits < 1:
        raise ValueError(f"prefix_sums: n_bits must be an integer >= 1 (public lengths: 16..64, "
                         f"72, 128, 256, 512), got {n_bits!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"prefix_sums: count must be an integer >= 1, got {count!r}")
    if n_bits < DISTINCT_BELOW_BITS and count > 2 ** n_bits:
        raise ValueError(f"prefix_sums: count must be <= 2**n_bits = {2 ** n_bits} when n_bits < "
                         f"{DISTINCT_BELOW_BITS} (rows are distinct integers), got count={count}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"prefix_sums: seed must be an integer >= 0, got {seed!r}")


def _generator(n_bits: int, seed: int) -> torch.Generator:
    # Mix the length into the seed (as tasks.test_set does) so lengths do not share a stream.
    return torch.Generator().manual_seed(1_000_003 * seed + n_bits)


def bits_lsb_first(values: torch.Tensor, n_bits: int) -> torch.Tensor:
    """(count,) non-negative integers -> (count, n_bits) int64 bits, column j = bit j (LSB first)."""
    powers = 2 ** torch.arange(n_bits, dtype=torch.int64)
    return (values.to(torch.int64).unsqueeze(-1) & powers).ne(0).to(torch.int64)


def distinct_integers(n_bits: int, count: int = PUBLIC_COUNT, seed: int = 0) -> torch.Tensor:
    """The integers behind `prefix_sums` rows when n_bits < 24: `count` distinct values in
    [0, 2**n_bits), drawn without replacement in random order (the public `randperm` recipe)."""
    _check_prefix_sum_args(n_bits, count, seed)
    if n_bits >= DISTINCT_BELOW_BITS:
        raise ValueError(f"distinct_integers: n_bits must be < {DISTINCT_BELOW_BITS} (longer rows "
                         f"are independent fair bits), got {n_bits}")
    return torch.randperm(2 ** n_bits, generator=_generator(n_bits, seed))[:count]


def prefix_sums(n_bits: int, count: int = PUBLIC_COUNT, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """One length of the prefix-sums benchmark, by the public recipe, seeded.

    Returns (inputs, targets), both int64 (count, n_bits) of 0/1: inputs are distinct integers
    written LSB-first when n_bits < 24, otherwise independent fair bits; targets[:, i] =
    (inputs[:, 0] + ... + inputs[:, i]) mod 2.
    """
    _check_prefix_sum_args(n_bits, count, seed)
    if n_bits < DISTINCT_BELOW_BITS:
        inputs = bits_lsb_first(distinct_integers(n_bits, count, seed), n_bits)
    else:
        inputs = (torch.rand(count, n_bits, generator=_generator(n_bits, seed)) >= 0.5).to(torch.int64)
    return inputs, prefix_sum_targets(inputs)


def prefix_sum_targets(inputs: torch.Tensor) -> torch.Tensor:
    """Cumulative sum mod 2 along each row (the same function as the project's "parity" task)."""
    return torch.cumsum(inputs.to(torch.int64), dim=1) % 2


# ---------------------------------------------------------------------------------------------
# Reading the official files (only ever from disk; nothing here downloads)
# ---------------------------------------------------------------------------------------------

def _load_tensor(path: Path, what: str, mmap: bool = False) -> torch.Tensor:
    """torch.load a file that must hold one plain tensor; refuse anything that needs pickled code."""
    if not path.is_file():
        raise FileNotFoundError(f"{what}: no file at {path}")
    try:
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
        except RuntimeError:
            if not mmap:
                raise
            # Files in torch's legacy (pre-zip) format cannot be memory-mapped; read them whole.
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError) as err:
        # torch's own message goes on to suggest weights_only=False, which we never do: keep its
        # first sentence only.
        reason = str(err).strip().splitlines()[0].split(". ")[0] if str(err).strip() else ""
        raise ValueError(f"{what}: {path} is not a plain tensor file readable with "
                         f"weights_only=True ({type(err).__name__}: {reason}); expected a tensor "
                         "saved with torch.save") from None
    if not isinstance(obj, torch.Tensor):
        raise ValueError(f"{what}: {path} must hold a single tensor, found {type(obj).__name__}")
    return obj


def _as_binary(t: torch.Tensor, path: Path, what: str) -> torch.Tensor:
    if t.is_floating_point() and not torch.equal(t, t.round()):
        raise ValueError(f"{what}: {path} must hold 0/1 values, found non-integers")
    t = t.to(torch.int64)
    if t.numel() and not bool(((t == 0) | (t == 1)).all()):
        raise ValueError(f"{what}: {path} must hold 0/1 values, found {sorted(set(t.unique().tolist()))[:5]}")
    return t


def _prefix_sums_folder(root: Path, n_bits: int) -> Path:
    """Where `{n}_data.pth` lives: root/prefix_sums_data/, its older len_{n}/ subfolder, or root."""
    candidates = [root / "prefix_sums_data", root / "prefix_sums_data" / f"len_{n_bits}", root]
    for folder in candidates:
        if (folder / f"{n_bits}_data.pth").is_file():
            return folder
    tried = ", ".join(str(c / f"{n_bits}_data.pth") for c in candidates)
    raise FileNotFoundError(f"load_prefix_sums_pth: no {n_bits}_data.pth for n_bits={n_bits}; looked "
                            f"for {tried}. Expected the official layout root/prefix_sums_data/"
                            f"{{n}}_data.pth and {{n}}_targets.pth")


def load_prefix_sums_pth(root: str | os.PathLike, n_bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The official prefix-sum files for one length, in the format `prefix_sums` returns.

    Reads `{n_bits}_data.pth` and `{n_bits}_targets.pth` (float (count, n_bits), 0./1.) and returns
    int64 (inputs, targets). Checks shapes, 0/1 values and that targets are the prefix sums mod 2
    of the inputs, so a mislabelled or truncated file fails here rather than in training.
    """
    if isinstance(n_bits, bool) or not isinstance(n_bits, int) or n_bits < 1:
        raise ValueError(f"load_prefix_sums_pth: n_bits must be an integer >= 1 (public lengths: "
                         f"16..64, 72, 128, 256, 512), got {n_bits!r}")
    folder = _prefix_sums_folder(Path(root), n_bits)
    data_path, targets_path = folder / f"{n_bits}_data.pth", folder / f"{n_bits}_targets.pth"
    what = "load_prefix_sums_pth"
    inputs = _load_tensor(data_path, what)
    targets = _load_tensor(targets_path, what)
    for path, t in ((data_path, inputs), (targets_path, targets)):
        if t.dim() != 2 or t.shape[1] != n_bits:
            raise ValueError(f"{what}: {path} must be (count, {n_bits}), got {tuple(t.shape)}")
    if inputs.shape != targets.shape:
        raise ValueError(f"{what}: {data_path} is {tuple(inputs.shape)} but {targets_path} is "
                         f"{tuple(targets.shape)}; they must match")
    inputs, targets = _as_binary(inputs, data_path, what), _as_binary(targets, targets_path, what)
    if not torch.equal(targets, prefix_sum_targets(inputs)):
        raise ValueError(f"{what}: {targets_path} is not the cumulative sum mod 2 of {data_path}")
    return inputs, targets


class ChessPuzzles(NamedTuple):
    """A slice of the official chess puzzles, in rating order.

    boards:    float32 (N, 12, 8, 8) one-hot planes; [side to move: K Q B N R P, opponent: same];
               row = rank (0 = rank 1 unless mover_at_bottom flipped it), column = file (0 = a).
    targets:   int64 (N, 8, 8), 1 on the solution move's origin and destination squares, oriented
               as the public loader hands them to its models (see the module docstring).
    who_moves: int64 (N,), 1 when black is to move.
    ratings:   float32 (N,) Lichess puzzle ratings, or None when rating.pth is absent.
    """
    boards: torch.Tensor
    targets: torch.Tensor
    who_moves: torch.Tensor
    ratings: torch.Tensor | None


def load_chess(root: str | os.PathLike, start: int = CHESS_TRAIN_RANGE[0], stop: int = CHESS_TRAIN_RANGE[1],
               mover_at_bottom: bool = False) -> ChessPuzzles:
    """Puzzles [start, stop) of the official chess files under root/chess_data/ (or root itself).

    Easy = low indices (CHESS_TRAIN_RANGE), hard = higher ones (CHESS_TEST_RANGE or beyond).
    Files are memory-mapped when their format allows, so a slice does not read the ~4.6 GB board
    file whole. Unlike the public loader, a range past the end of the data is an error, not a
    silently shorter set.
    """
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"load_chess: start must be an integer >= 0, got {start!r}")
    if isinstance(stop, bool) or not isinstance(stop, int) or stop <= start:
        raise ValueError(f"load_chess: stop must be an integer > start={start}, got {stop!r}")
    root = Path(root)
    folder = root / "chess_data" if (root / "chess_data" / "data.pth").is_file() else root
    what = "load_chess"
    if not (folder / "data.pth").is_file():
        raise FileNotFoundError(f"{what}: no data.pth at {root / 'chess_data' / 'data.pth'} or "
                                f"{root / 'data.pth'}; expected the official layout root/chess_data/"
                                "{data,targets,who_moves}.pth")
    if (folder / "targets.pth").is_file():
        targets_path, flip_ranks = folder / "targets.pth", True        # current public loader
    elif (folder / "segment_targets.pth").is_file():
        targets_path, flip_ranks = folder / "segment_targets.pth", False  # older release
    else:
        raise FileNotFoundError(f"{what}: no targets.pth (or older segment_targets.pth) in {folder}")

    boards = _load_tensor(folder / "data.pth", what, mmap=True)
    targets = _load_tensor(targets_path, what, mmap=True)
    who_moves = _load_tensor(folder / "who_moves.pth", what, mmap=True)
    rating_path = folder / "rating.pth"
    ratings = _load_tensor(rating_path, what, mmap=True) if rating_path.is_file() else None

    n = boards.shape[0] if boards.dim() else 0
    if boards.dim() != 4 or tuple(boards.shape[1:]) != (12, 8, 8):
        raise ValueError(f"{what}: {folder / 'data.pth'} must be (N, 12, 8, 8), got {tuple(boards.shape)}")
    if tuple(targets.shape) != (n, 8, 8):
        raise ValueError(f"{what}: {targets_path} must be ({n}, 8, 8), got {tuple(targets.shape)}")
    if who_moves.numel() != n:
        raise ValueError(f"{what}: {folder / 'who_moves.pth'} must hold {n} entries, got {tuple(who_moves.shape)}")
    if ratings is not None and ratings.numel() != n:
        raise ValueError(f"{what}: {rating_path} must hold {n} entries, got {tuple(ratings.shape)}")
    if stop > n:
        raise ValueError(f"{what}: stop must be <= {n} (puzzles in {folder / 'data.pth'}), got {stop}")

    # Slice first, then copy: only the requested puzzles leave the memory map.
    boards = boards[start:stop].to(torch.float32).clone()
    targets = targets[start:stop].to(torch.int64).clone()
    if flip_ranks:
        targets = targets.flip(1)
    who_moves = who_moves.reshape(n)[start:stop].to(torch.int64).clone()
    if ratings is not None:
        ratings = ratings.reshape(n)[start:stop].to(torch.float32).clone()
    if mover_at_bottom:
        black = who_moves == 1
        boards[black] = boards[black].flip(2)     # (M, 12, 8, 8): dim 2 is the rank axis
        targets[black] = targets[black].flip(1)   # (M, 8, 8):     dim 1 is the rank axis
    return ChessPuzzles(boards, targets, who_moves, ratings)


# ---------------------------------------------------------------------------------------------
# Chess as a training task (task "chess" in tasks.py): only where the user supplies the files
# ---------------------------------------------------------------------------------------------

CHESS_DATA_ENV = "LOOPS_CHESS_DATA"     # folder holding chess_data/ (nothing is ever downloaded)


def chess_tokens(boards: torch.Tensor) -> torch.Tensor:
    """(N, 12, 8, 8) one-hot planes -> (N, 64) int64 square tokens, squares in the planes' row-major
    order: 0 = empty, 1 + c = a piece of plane c (1-6 the mover's K Q B N R P, 7-12 the opponent's)."""
    if boards.dim() != 4 or tuple(boards.shape[1:]) != (12, 8, 8):
        raise ValueError(f"boards: must be (N, 12, 8, 8) one-hot planes, got {tuple(boards.shape)}")
    occupied = boards.sum(1)
    if ((occupied != 0) & (occupied != 1)).any():
        raise ValueError("boards: some square holds more than one piece (planes must be one-hot)")
    tokens = (boards.argmax(1) + 1) * occupied.to(torch.int64)
    return tokens.reshape(-1, 64)


_CHESS_SETS: dict = {}


def chess_set(part: str, count: int | None = None, offset: int = 0,
              root: str | os.PathLike | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(tokens (N, 64), targets (N, 64) 0/1) of the official puzzles, mover at the bottom (deep-
    thinking's flipped dataset): part "train" reads CHESS_TRAIN_RANGE, "test" CHESS_TEST_RANGE (the
    harder, higher-rated puzzles), from `offset` for `count` puzzles (None: to the range's end).
    root: the data folder, else the LOOPS_CHESS_DATA environment variable. Cached per process."""
    ranges = {"train": CHESS_TRAIN_RANGE, "test": CHESS_TEST_RANGE}
    if part not in ranges:
        raise ValueError(f"part: must be 'train' or 'test', got {part!r}")
    root = root if root is not None else os.environ.get(CHESS_DATA_ENV)
    if not root:
        raise FileNotFoundError(f"chess: the task needs the official easy-to-hard chess files; set {CHESS_DATA_ENV} "
                                "to the folder holding chess_data/ (nothing is downloaded)")
    lo, hi = ranges[part]
    start = lo + offset
    stop = hi if count is None else min(hi, start + count)
    key = (str(root), start, stop)
    if key not in _CHESS_SETS:
        puzzles = load_chess(root, start, stop, mover_at_bottom=True)
        _CHESS_SETS[key] = (chess_tokens(puzzles.boards), puzzles.targets.reshape(-1, 64))
    return _CHESS_SETS[key]
