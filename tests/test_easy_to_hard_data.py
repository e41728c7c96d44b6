"""Easy-to-hard data: the prefix-sum recipe against brute force, the official-file loaders on tiny
files written here, and sudoku puzzles with exactly one solution."""
from __future__ import annotations

import itertools

import pytest
import torch

from lib import easy_to_hard as e2h
from lib import sudoku
from lib import tasks


# --- prefix sums: the recipe ------------------------------------------------------------------

def brute_force_bits(value: int, n_bits: int) -> list[int]:
    """LSB first: character j of the reversed binary string is bit j."""
    return [int(ch) for ch in format(value, f"0{n_bits}b")[::-1]]


def brute_force_prefix_sums_mod2(bits: list[int]) -> list[int]:
    out, running = [], 0
    for b in bits:
        running += b
        out.append(running % 2)
    return out


def test_public_lengths_match_the_public_list():
    assert e2h.PUBLIC_LENGTHS == tuple(range(16, 65)) + (72, 128, 256, 512)
    assert len(e2h.PUBLIC_LENGTHS) == 53     # "53 different sets" in the public README


def test_bits_are_lsb_first():
    values = torch.arange(256)
    bits = e2h.bits_lsb_first(values, 8)
    for v in range(256):
        assert bits[v].tolist() == brute_force_bits(v, 8)


def test_rows_below_24_bits_read_lsb_first_are_the_drawn_distinct_integers():
    n_bits, count = 16, 3000
    inputs, targets = e2h.prefix_sums(n_bits, count, seed=3)
    drawn = e2h.distinct_integers(n_bits, count, seed=3).tolist()
    decoded = [sum(b << j for j, b in enumerate(row)) for row in inputs.tolist()]
    assert decoded == drawn
    assert len(set(drawn)) == count                          # without replacement
    assert all(0 <= v < 2 ** n_bits for v in drawn)
    assert len({tuple(row) for row in inputs.tolist()}) == count


def test_small_length_with_full_count_is_a_permutation_of_all_integers():
    inputs, _ = e2h.prefix_sums(4, 16, seed=0)
    decoded = sorted(sum(b << j for j, b in enumerate(row)) for row in inputs.tolist())
    assert decoded == list(range(16))


def test_rows_at_public_size_below_24_bits_are_distinct():
    inputs, _ = e2h.prefix_sums(23, e2h.PUBLIC_COUNT, seed=0)
    assert inputs.shape == (10_000, 23)
    assert torch.unique(inputs, dim=0).shape[0] == 10_000


def test_bits_from_24_on_are_independent_fair_coins():
    inputs, _ = e2h.prefix_sums(32, e2h.PUBLIC_COUNT, seed=0)
    assert inputs.dtype == torch.int64 and set(inputs.unique().tolist()) == {0, 1}
    assert abs(inputs.float().mean().item() - 0.5) < 0.01            # sd of the mean ~0.0009
    assert (inputs.float().mean(0) - 0.5).abs().max().item() < 0.05  # every position fair, sd 0.005
    # Not forced distinct: at 24 bits, 20,000 i.i.d. rows collide (about 12 pairs expected).
    rows24, _ = e2h.prefix_sums(24, 20_000, seed=0)
    assert torch.unique(rows24, dim=0).shape[0] < 20_000


@pytest.mark.parametrize("n_bits", [5, 17, 30, 72])
def test_targets_are_cumulative_sums_mod_2(n_bits):
    count = min(200, 2 ** n_bits)      # below 24 bits rows are distinct, so at most 2**n_bits
    inputs, targets = e2h.prefix_sums(n_bits, count, seed=1)
    assert targets.shape == inputs.shape == (count, n_bits)
    for x, y in zip(inputs.tolist(), targets.tolist()):
        assert y == brute_force_prefix_sums_mod2(x)


def test_same_seed_same_data_other_seed_other_data():
    for n_bits in (16, 40):
        a, ta = e2h.prefix_sums(n_bits, 500, seed=7)
        b, tb = e2h.prefix_sums(n_bits, 500, seed=7)
        c, _ = e2h.prefix_sums(n_bits, 500, seed=8)
        assert torch.equal(a, b) and torch.equal(ta, tb)
        assert not torch.equal(a, c)


def test_as_sequence_task_matches_the_parity_task_format():
    inputs, targets = e2h.prefix_sums(20, 10, seed=0)
    tokens, labels = tasks.as_sequence_task(inputs, targets)
    parity = tasks.make_task("parity")
    assert tokens.shape == labels.shape == (10, 21)
    assert (tokens[:, 0] == parity.bos).all() and (labels[:, 0] == tasks.IGNORE).all()
    assert torch.equal(tokens[:, 1:], inputs)
    assert torch.equal(labels[:, 1:], parity.targets(inputs))


@pytest.mark.parametrize("kwargs, named", [
    (dict(n_bits=0), "n_bits"),
    (dict(n_bits=16, count=0), "count"),
    (dict(n_bits=4, count=17), "count"),         # only 16 distinct 4-bit integers
    (dict(n_bits=16, seed=-1), "seed"),
])
def test_bad_prefix_sum_arguments_name_the_parameter(kwargs, named):
    with pytest.raises(ValueError, match=named):
        e2h.prefix_sums(**kwargs)


# --- prefix sums: the official files ----------------------------------------------------------

def write_official_prefix_sums(root, n_bits, count=12, seed=0):
    """The official layout: float32 0./1. tensors in root/prefix_sums_data/{n}_{data,targets}.pth."""
    inputs, targets = e2h.prefix_sums(n_bits, count, seed)
    folder = root / "prefix_sums_data"
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(inputs.float(), folder / f"{n_bits}_data.pth")
    torch.save(targets.float(), folder / f"{n_bits}_targets.pth")
    return inputs, targets


def test_pth_loader_reads_the_official_layout(tmp_path):
    inputs, targets = write_official_prefix_sums(tmp_path, 18)
    got_inputs, got_targets = e2h.load_prefix_sums_pth(tmp_path, 18)
    assert got_inputs.dtype == got_targets.dtype == torch.int64
    assert torch.equal(got_inputs, inputs) and torch.equal(got_targets, targets)


def test_pth_loader_missing_file_names_the_path(tmp_path):
    write_official_prefix_sums(tmp_path, 18)
    with pytest.raises(FileNotFoundError, match="20_data.pth"):
        e2h.load_prefix_sums_pth(tmp_path, 20)
    (tmp_path / "prefix_sums_data" / "18_targets.pth").unlink()
    with pytest.raises(FileNotFoundError, match="18_targets.pth"):
        e2h.load_prefix_sums_pth(tmp_path, 18)


def test_pth_loader_rejects_wrong_targets_and_wrong_shapes(tmp_path):
    inputs, targets = write_official_prefix_sums(tmp_path, 18)
    folder = tmp_path / "prefix_sums_data"
    torch.save((1 - targets).float(), folder / "18_targets.pth")
    with pytest.raises(ValueError, match="cumulative sum mod 2"):
        e2h.load_prefix_sums_pth(tmp_path, 18)
    torch.save(inputs[:, :5].float(), folder / "18_data.pth")
    with pytest.raises(ValueError, match=r"18_data.pth must be \(count, 18\)"):
        e2h.load_prefix_sums_pth(tmp_path, 18)


class NotATensor:
    pass


def test_pth_loader_refuses_pickled_objects(tmp_path):
    write_official_prefix_sums(tmp_path, 18)
    torch.save({"payload": NotATensor()}, tmp_path / "prefix_sums_data" / "18_data.pth")
    with pytest.raises(ValueError, match="weights_only"):
        e2h.load_prefix_sums_pth(tmp_path, 18)


# --- chess: the official files ----------------------------------------------------------------

def write_chess_shard(root, n=6):
    """A tiny shard in the official layout: root/chess_data/{data,targets,who_moves,rating}.pth."""
    g = torch.Generator().manual_seed(0)
    boards = (torch.rand(n, 12, 8, 8, generator=g) < 0.05).float()
    targets = torch.zeros(n, 8, 8, dtype=torch.long)
    for k in range(n):
        targets[k, k % 8, 1] = 1          # origin: rank k+1, file b
        targets[k, 7 - k % 8, 6] = 1      # destination
    who_moves = torch.tensor([[0.0], [1.0]] * (n // 2))
    ratings = torch.arange(n, dtype=torch.float32).unsqueeze(1) * 100 + 600
    folder = root / "chess_data"
    folder.mkdir(parents=True)
    torch.save(boards, folder / "data.pth")
    torch.save(targets, folder / "targets.pth")
    torch.save(who_moves, folder / "who_moves.pth")
    torch.save(ratings, folder / "rating.pth")
    return boards, targets, who_moves, ratings


def test_chess_loader_slices_the_index_range_like_the_public_loader(tmp_path):
    boards, targets, who_moves, ratings = write_chess_shard(tmp_path)
    got = e2h.load_chess(tmp_path, start=2, stop=5)
    assert got.boards.shape == (3, 12, 8, 8) and got.boards.dtype == torch.float32
    assert torch.equal(got.boards, boards[2:5])
    assert torch.equal(got.targets, targets[2:5].flip(1))     # the public loader's .flip(1)
    assert got.targets.dtype == torch.int64 and (got.targets.sum((1, 2)) == 2).all()
    assert got.who_moves.tolist() == [0, 1, 0]
    assert got.ratings.tolist() == [800.0, 900.0, 1000.0]


def test_chess_loader_can_put_the_mover_at_the_bottom(tmp_path):
    boards, targets, _, _ = write_chess_shard(tmp_path)
    got = e2h.load_chess(tmp_path, 0, 6, mover_at_bottom=True)
    # Puzzle 0: white to move, unchanged boards. Puzzle 1: black to move, ranks reversed.
    assert torch.equal(got.boards[0], boards[0]) and torch.equal(got.boards[1], boards[1].flip(1))
    # Targets: the public loader's rank flip for all, then a second flip for black undoes it.
    assert torch.equal(got.targets[0], targets[0].flip(0))
    assert torch.equal(got.targets[1], targets[1])


def test_chess_loader_bad_range_and_missing_files(tmp_path):
    write_chess_shard(tmp_path)
    with pytest.raises(ValueError, match="stop must be <= 6"):
        e2h.load_chess(tmp_path, 0, 600_000)
    with pytest.raises(ValueError, match="stop"):
        e2h.load_chess(tmp_path, 4, 4)
    with pytest.raises(ValueError, match="start"):
        e2h.load_chess(tmp_path, -1, 4)
    with pytest.raises(FileNotFoundError, match="data.pth"):
        e2h.load_chess(tmp_path / "nowhere", 0, 1)
    (tmp_path / "chess_data" / "who_moves.pth").unlink()
    with pytest.raises(FileNotFoundError, match="who_moves.pth"):
        e2h.load_chess(tmp_path, 0, 1)


# --- sudoku -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def puzzles_30():
    return sudoku.make_puzzles(40, givens=30, seed=0)


def test_every_puzzle_has_exactly_one_solution(puzzles_30):
    for puzzle, solution in puzzles_30:
        assert sudoku.count_solutions(puzzle) == 1
        assert sudoku.count_solutions(puzzle, limit=5) == 1


def test_solution_is_valid_and_agrees_with_the_givens(puzzles_30):
    for puzzle, solution in puzzles_30:
        assert sudoku.is_valid_solution(solution)
        assert all(p in (0, s) for p, s in zip(puzzle, solution))
        assert sudoku.solve(puzzle) == solution
        assert sum(1 for v in puzzle if v) == 30


def test_harder_sets_have_fewer_givens_and_stay_unique():
    for puzzle, solution in sudoku.make_puzzles(5, givens=25, seed=1):
        assert sum(1 for v in puzzle if v) == 25
        assert sudoku.count_solutions(puzzle) == 1 and sudoku.solve(puzzle) == solution


def test_solution_counter_counts_by_brute_force():
    _, solution = sudoku.make_puzzle(40, seed=0)
    assert sudoku.count_solutions(solution) == 1
    # Two full rows blanked: each column then misses two known digits, solvable both ways only if
    # the rows can swap; count against trying every choice of which row gets which digit.
    blanked = solution[:]
    for i in range(18):
        blanked[i] = 0
    brute = 0
    for swap in itertools.product([False, True], repeat=9):
        grid = solution[:]
        for c in range(9):
            if swap[c]:
                grid[c], grid[9 + c] = grid[9 + c], grid[c]
        brute += sudoku.is_valid_solution(grid)
    assert sudoku.count_solutions(blanked, limit=1000) == brute
    assert sudoku.count_solutions(sudoku.to_string(blanked).replace("0", "."), limit=1000) == brute


def test_conflicting_givens_have_no_solution():
    grid = [0] * 81
    grid[0] = grid[1] = 5
    assert sudoku.count_solutions(grid) == 0 and sudoku.solve(grid) is None


def test_sudoku_is_deterministic_under_a_seed():
    a = sudoku.make_puzzles(3, givens=32, seed=5)
    assert a == sudoku.make_puzzles(3, givens=32, seed=5)
    assert a != sudoku.make_puzzles(3, givens=32, seed=6)
    assert a[:2] == sudoku.make_puzzles(2, givens=32, seed=5)   # puzzle k does not depend on count


def test_sudoku_tensor_format(puzzles_30):
    inputs, targets = sudoku.to_tensors(puzzles_30)
    assert inputs.shape == targets.shape == (40, 81) and inputs.dtype == torch.int64
    assert inputs.min() >= 0 and inputs.max() <= 9 and targets.min() >= 1 and targets.max() <= 9
    assert ((inputs == 0) | (inputs == targets)).all()
    assert ((inputs != 0).sum(1) == 30).all()


@pytest.mark.parametrize("kwargs, named", [
    (dict(count=0, givens=30), "count"),
    (dict(count=1, givens=16), "givens"),
    (dict(count=1, givens=82), "givens"),
    (dict(count=1, givens=30, seed=-1), "seed"),
    (dict(count=1, givens=30, max_attempts=0), "max_attempts"),
])
def test_bad_sudoku_arguments_name_the_parameter(kwargs, named):
    with pytest.raises(ValueError, match=named):
        sudoku.make_puzzles(**kwargs)


def test_bad_grids_are_refused():
    with pytest.raises(ValueError, match="81 cells"):
        sudoku.count_solutions([0] * 80)
    with pytest.raises(ValueError, match="limit"):
        sudoku.count_solutions([0] * 81, limit=0)


def test_prefix_sums_task_trains_on_the_benchmark_set_and_tests_on_another():
    """The "prefix_sums" task of lib/tasks.py draws training words from the benchmark's fixed set of
    each length (recipe seed 0) and test words from a different one (recipe seed 1 + seed)."""
    from lib import tasks
    task = tasks.make_task("prefix_sums")
    train_pool = {tuple(r) for r in tasks.benchmark_set(16, 0).tolist()}
    tokens, labels = task.sample(64, 16, torch.Generator().manual_seed(3))
    assert all(tuple(r) in train_pool for r in tokens[:, 1:].tolist())
    assert torch.equal(labels[:, 1:], torch.cumsum(tokens[:, 1:], 1) % 2) and (tokens[:, 0] == task.bos).all()
    test_tokens, _ = tasks.test_set(task, 16, 200, seed=0)
    assert torch.equal(test_tokens[:, 1:], e2h.prefix_sums(16, 10_000, seed=1)[0][:200])
    assert len(tasks.benchmark_set(3, 0)) == 8            # short curriculum lengths: every word once


# --- sudoku as a training task ----------------------------------------------------------------

def test_symmetries_keep_puzzles_valid_unique_and_solved_by_the_mapped_solution(puzzles_30):
    inputs, targets = sudoku.to_tensors(puzzles_30[:12])
    x, y = sudoku.augment(inputs, targets, torch.Generator().manual_seed(3))
    assert not torch.equal(x, inputs)
    for i in range(len(x)):
        puzzle, solution = x[i].tolist(), y[i].tolist()
        assert sudoku.is_valid_solution(solution)
        assert sudoku.count_solutions(puzzle) == 1 and sudoku.solve(puzzle) == solution
        assert sum(1 for v in puzzle if v) == 30                      # same difficulty
    again = sudoku.augment(inputs, targets, torch.Generator().manual_seed(3))
    assert torch.equal(again[0], x) and torch.equal(again[1], y)      # seeded


def test_sudoku_task_batches_and_test_sets():
    from lib import tasks
    task = tasks.make_task("sudoku")
    tokens, labels = task.sample(4, 81, torch.Generator().manual_seed(0))
    assert tokens.shape == labels.shape == (4, 82)
    assert (tokens[:, 0] == task.bos).all() and (labels[:, 0] == tasks.IGNORE).all()
    given = tokens[:, 1:] != 0
    assert (given.sum(1) == sudoku.TRAIN_GIVENS).all()
    assert (labels[:, 1:][given] == tokens[:, 1:][given]).all()     # givens keep their digit as target
    for b in range(4):
        assert sudoku.solve(tokens[b, 1:].tolist()) == labels[b, 1:].tolist()
    assert torch.equal(task.targets(tokens[:2, 1:]), labels[:2, 1:])  # the solver agrees
    hard_x, hard_y = tasks.sudoku_set(28, 3, seed=0)
    assert ((hard_x[:, 1:] != 0).sum(1) == 28).all()
    with pytest.raises(ValueError, match="n: a sudoku board has 81 cells"):
        task.sample(2, 80, torch.Generator())


def test_sudoku_runs_need_a_bidirectional_model_of_81_cells():
    from lib.config import RunConfig
    with pytest.raises(ValueError, match="causal=False"):
        RunConfig(task="sudoku", n_train=81, curriculum_start=81)
    with pytest.raises(ValueError, match="n_train = curriculum_start = 81"):
        RunConfig(task="sudoku", n_train=80, curriculum_start=80, causal=False)
    cfg = RunConfig(task="sudoku", n_train=81, curriculum_start=81, causal=False, pos="learned")
    assert cfg.model_config().causal is False
    with pytest.raises(ValueError, match="streaming"):
        RunConfig(n_train=8, T_train=10, schedule="streaming", causal=False)


# --- chess as a training task (only with user-supplied files) ---------------------------------

def write_one_hot_chess_shard(root, n=10):
    """Official layout, one piece per occupied square: square k of puzzle p holds plane (p + k) % 12
    when (p + k) % 5 == 0, else nothing."""
    boards = torch.zeros(n, 12, 8, 8)
    for p in range(n):
        for k in range(64):
            if (p + k) % 5 == 0:
                boards[p, (p + k) % 12, k // 8, k % 8] = 1
    targets = torch.zeros(n, 8, 8, dtype=torch.long)
    targets[:, 0, 3] = 1
    targets[:, 5, 4] = 1
    folder = root / "chess_data"
    folder.mkdir(parents=True)
    torch.save(boards, folder / "data.pth")
    torch.save(targets, folder / "targets.pth")
    torch.save(torch.zeros(n, 1), folder / "who_moves.pth")     # white to move: no mover flip
    return boards, targets


def test_chess_tokens_name_the_piece_on_every_square(tmp_path):
    boards, _ = write_one_hot_chess_shard(tmp_path)
    tokens = e2h.chess_tokens(boards)
    assert tokens.shape == (10, 64)
    for p in range(10):
        for k in range(64):
            assert tokens[p, k] == ((p + k) % 12 + 1 if (p + k) % 5 == 0 else 0)
    bad = boards.clone()
    bad[0, :2, 0, 0] = 1
    with pytest.raises(ValueError, match="more than one piece"):
        e2h.chess_tokens(bad)


def test_chess_task_reads_the_users_files_and_nothing_else(tmp_path, monkeypatch):
    from lib import tasks
    from lib.config import RunConfig
    from lib.train import train
    boards, targets = write_one_hot_chess_shard(tmp_path)
    monkeypatch.delenv(e2h.CHESS_DATA_ENV, raising=False)
    monkeypatch.setattr(e2h, "_CHESS_SETS", {})
    monkeypatch.setattr(e2h, "CHESS_TRAIN_RANGE", (0, 6))
    monkeypatch.setattr(e2h, "CHESS_TEST_RANGE", (6, 10))
    task = tasks.make_task("chess")
    with pytest.raises(FileNotFoundError, match="LOOPS_CHESS_DATA"):
        task.sample(2, 64, torch.Generator())
    monkeypatch.setenv(e2h.CHESS_DATA_ENV, str(tmp_path))
    tokens, labels = task.sample(5, 64, torch.Generator().manual_seed(0))
    assert tokens.shape == labels.shape == (5, 65) and (tokens[:, 0] == task.bos).all()
    train_tokens = e2h.chess_tokens(boards[:6])
    for row in tokens[:, 1:]:
        assert any(torch.equal(row, t) for t in train_tokens)          # drawn from the easy range only
    flipped = targets.flip(1).reshape(-1, 64)                           # as the public loader hands them over
    assert torch.equal(labels[0, 1:], flipped[0])
    test_x, test_y = tasks.test_set(task, 64, 4, seed=0)
    assert torch.equal(test_x[:, 1:], e2h.chess_tokens(boards[6:10]))   # the hard range
    cfg = RunConfig(experiment="t", task="chess", n_train=64, T_train=2, curriculum_start=64, causal=False,
                    pos="learned", n_layers=1, d_model=16, n_heads=2, batch=4, max_steps=3, eval_count=4)
    _, metrics = train(cfg)
    assert metrics["steps"] == 3 and 0 <= metrics["final_eval"]["token_acc"] <= 1
    with pytest.raises(ValueError, match="n: a chess board has 64 cells"):
        task.sample(2, 63, torch.Generator())


def test_sudoku_pool_is_drawn_once_then_read_back_identical(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path))
    monkeypatch.setattr(sudoku, "_POOLS", {})
    drawn = sudoku.pool(30, 3, 5)
    path = sudoku.pool_file(30, 3, 5)
    assert path.is_relative_to(tmp_path) and len(path.read_text().splitlines()) == 3
    monkeypatch.setattr(sudoku, "_POOLS", {})
    monkeypatch.setattr(sudoku, "make_puzzles", lambda *a, **k: pytest.fail("the pool was drawn again"))
    read = sudoku.pool(30, 3, 5)
    assert all(torch.equal(a, b) for a, b in zip(drawn, read))
    assert torch.equal(read[0][0], sudoku.to_tensors([sudoku.make_puzzle(30, 5 * 1_000_003)])[0][0])


@pytest.mark.parametrize("damage", ["drop_line", "wrong_digit", "not_digits"])
def test_a_damaged_sudoku_pool_file_is_refused_by_name(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("LOOPS_OUTPUTS", str(tmp_path))
    monkeypatch.setattr(sudoku, "_POOLS", {})
    sudoku.pool(30, 2, 5)
    path = sudoku.pool_file(30, 2, 5)
    lines = path.read_text().splitlines()
    puzzle, solution = lines[0].split(",")
    if damage == "drop_line":
        lines = lines[:1]
    elif damage == "wrong_digit":      # a solution digit changed: no longer a valid grid
        lines[0] = puzzle + "," + str(int(solution[0]) % 9 + 1) + solution[1:]
    else:
        lines[0] = "x" * 81 + "," + solution
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(sudoku, "_POOLS", {})
    with pytest.raises(ValueError, match=f"{path.name}.*delete the file"):
        sudoku.pool(30, 2, 5)


def test_committed_sudoku_pools_are_what_the_generator_draws():
    # a pool file stands in for make_puzzles in the notebooks: its first puzzles must be the generator's
    # (puzzle k depends on (seed, k) only), or GENERATOR_VERSION was not bumped after a change
    import re
    from lib.paths import PROJECT_ROOT
    files = sorted((PROJECT_ROOT / "outputs" / "data" / "sudoku").glob("v*.csv"))
    assert files
    for path in files:
        version, givens, count, seed = map(int, re.fullmatch(r"v(\d+)_givens(\d+)_count(\d+)_seed(\d+)\.csv", path.name).groups())
        if version != sudoku.GENERATOR_VERSION:
            continue                                   # an older generator's file: pool() never reads it
        pairs = sudoku.read_pool(path, givens, count)
        for k in range(2):
            assert pairs[k] == sudoku.make_puzzle(givens, seed * 1_000_003 + k), (path.name, k)
