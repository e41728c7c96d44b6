import pytest
import torch

from lib import curriculum, groups, tasks


def brute_force(name, word):
    if name == "parity":
        return [sum(word[: i + 1]) % 2 for i in range(len(word))]
    if name == "increment":
        value = sum(b << i for i, b in enumerate(word)) + 1         # LSB first
        return [(value >> i) & 1 for i in range(len(word))]         # carry out of the top bit dropped
    g = groups.by_name(name)
    out, acc = [], None
    for x in word:
        # compose the permutations/residues directly, not through the table
        if name.startswith("Z"):
            acc = x if acc is None else (acc + x) % g.order
        else:
            p = g.elements[x]
            acc = p if acc is None else tuple(acc[p[k]] for k in range(len(p)))
        out.append(acc if name.startswith("Z") else g.elements.index(acc))
    return out


@pytest.mark.parametrize("name", ["parity", "increment", "Z60", "S4", "S5", "A5"])
def test_targets_match_brute_force(name):
    task = tasks.make_task(name)
    gen = torch.Generator().manual_seed(0)
    for n in (1, 2, 5, 13):
        tokens, labels = task.sample(32, n, gen)
        assert tokens.shape == labels.shape == (32, n + 1)
        assert (tokens[:, 0] == task.bos).all() and (labels[:, 0] == tasks.IGNORE).all()
        for b in range(32):
            assert labels[b, 1:].tolist() == brute_force(name, tokens[b, 1:].tolist())


def test_increment_examples():
    task = tasks.make_task("increment")
    x = torch.tensor([[1, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]])    # 11, 0, 15 LSB-first
    assert task.targets(x).tolist() == [[0, 0, 1, 1], [1, 0, 0, 0], [0, 0, 0, 0]]


def test_generator_is_seeded():
    task = tasks.make_task("S4")
    a = task.sample(8, 6, torch.Generator().manual_seed(3))
    b = task.sample(8, 6, torch.Generator().manual_seed(3))
    c = task.sample(8, 6, torch.Generator().manual_seed(4))
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])
    assert torch.equal(tasks.test_set(task, 5, 16, 0)[0], tasks.test_set(task, 5, 16, 0)[0])


def test_curriculum_promotes_on_accuracy():
    c = curriculum.LengthCurriculum(final=4, start=2, step=1, promote_acc=0.9, first_acc=0.95, window=3)
    for s in range(3):
        assert not c.update(s, 0.92)               # 0.92 < 0.95, the first-stage threshold
    assert c.length == 2
    assert not c.update(3, 1.0)                    # window mean 0.947
    assert c.update(4, 1.0) and c.length == 3      # window mean 0.973 >= 0.95
    for s in range(6, 8):
        c.update(s, 0.91)
    assert c.update(8, 0.91) and c.length == 4 and c.done
    assert not c.update(9, 1.0) and c.length == 4  # never exceeds final
    state = c.state_dict()
    d = curriculum.LengthCurriculum(final=4)
    d.load_state_dict(state)
    assert d.state_dict() == state


def test_length_distribution():
    g = torch.Generator().manual_seed(0)
    assert curriculum.draw_length("max", 7, g) == 7
    draws = {curriculum.draw_length("uniform", 5, g, min_len=2) for _ in range(200)}
    assert draws == {2, 3, 4, 5}
    with pytest.raises(ValueError, match="length distribution"):
        curriculum.draw_length("zipf", 5, g)


@pytest.mark.parametrize("bad", ["S", "parity2", "mod7", ""])
def test_unknown_task(bad):
    with pytest.raises(ValueError, match="task: unknown task"):
        tasks.make_task(bad)
