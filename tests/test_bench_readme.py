"""bench/README.md blocks written by the bench tools (bench/readme_blocks.py) survive each other."""
import pytest

import bench.readme_blocks as blocks


def test_a_block_is_appended_then_replaced_in_place_and_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(blocks, "README", tmp_path / "README.md")
    blocks.README.write_text("# Benchmarks\n\ntable\n")
    blocks.write_block("paper-plan", "## plan\nold")
    blocks.write_block("ledger-cost", "## cost\n1 h")
    blocks.write_block("paper-plan", "## plan\nnew")
    text = blocks.README.read_text()
    assert text.startswith("# Benchmarks\n\ntable\n") and "old" not in text and text.count("## plan") == 1
    assert text.index("## cost") < text.index("## plan")            # BLOCKS order, the plan replaced in place
    kept = blocks.kept_blocks(text)
    assert [k.splitlines()[0] for k in kept] == ["<!-- ledger-cost:begin -->", "<!-- paper-plan:begin -->"]
    assert kept[1] == "<!-- paper-plan:begin -->\n## plan\nnew\n<!-- paper-plan:end -->"


def test_an_unknown_block_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(blocks, "README", tmp_path / "README.md")
    with pytest.raises(ValueError, match="name: unknown README block 'plan'"):
        blocks.write_block("plan", "x")
    assert not blocks.README.exists()


def test_a_new_block_goes_before_the_next_block_in_order_and_a_half_marked_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(blocks, "README", tmp_path / "README.md")
    blocks.write_block("paper-plan", "plan")
    blocks.write_block("ledger-cost", "cost")
    text = blocks.README.read_text()
    assert text.index("cost") < text.index("plan")          # the order bench/run.py keeps them in
    blocks.README.write_text(text + "\n<!-- time-to-learn:begin -->\nhalf\n")
    with pytest.raises(ValueError, match="one of its two markers"):
        blocks.write_block("time-to-learn", "x")


def test_ledger_cost_counts_cpu_seconds_by_threads_and_leaves_gpu_time_to_the_estimate():
    from lib.store import cpu_seconds                      # what bench/ledger_cost.py reads a DONE record with
    assert cpu_seconds({"train_wall_s": 50.0}) == 50.0                                 # an old record: one thread
    assert cpu_seconds({"train_wall_s": 70.0, "train_spent": {"cpu x1": 30.0, "cpu x2": 20.0}}) == 70.0
    assert cpu_seconds({"train_wall_s": 35.0, "train_spent": {"cpu x1": 30.0, "cuda": 5.0}}) is None
    assert cpu_seconds({"train_wall_s": None}) is None
