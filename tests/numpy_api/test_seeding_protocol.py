"""numpy's seeding protocol with arc4py.BitGenerator: ``type(bg)(seed_seq)``
with a seed sequence that carries no seed gives a new generator, a real seed
is a TypeError naming what to use instead; spawn, Generator.spawn and jumped
give new, independent generators; state errors and reprs say arc4py."""
import pickle

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed "
                         "(pip install 'arc4py[numpy]')")

from numpy.random.bit_generator import SeedlessSeedSequence  # noqa: E402

import arc4py  # noqa: E402

NUMPY_VERSION = tuple(int(p) for p in np.__version__.split(".")[:2])


def _differ(a, b):
    """Two bit generators' next 64 raw words share no value (a copy of a
    stream, or one stream read twice, would share all of them)."""
    x, y = a.random_raw(64), b.random_raw(64)
    return not set(x.tolist()) & set(y.tolist())


# ---- seeding ---------------------------------------------------------------------

def test_seedless_seed_sequences_give_a_new_generator():
    bg = arc4py.BitGenerator()
    assert isinstance(bg.seed_seq, SeedlessSeedSequence)
    for seq in (bg.seed_seq, SeedlessSeedSequence()):
        other = type(bg)(seq)          # numpy's protocol
        assert isinstance(other, arc4py.BitGenerator)
        assert other.seed_seq is seq   # kept, as numpy's generators keep it
        assert _differ(bg, other)
        assert _differ(other, type(bg)(seed=seq))


def test_seed_seq_cannot_seed_another_bit_generator():
    # It holds no seed: numpy's generators, which expand one, fail closed.
    seq = arc4py.BitGenerator().seed_seq
    for cls in (np.random.PCG64, np.random.Philox, np.random.MT19937):
        with pytest.raises(NotImplementedError):
            cls(seq)


@pytest.mark.parametrize("seed", [
    0, 12345, 2**200, b"seed", [1, 2, 3], np.arange(4, dtype=np.uint32),
    np.random.SeedSequence(1), np.random.SeedSequence(),
    np.random.SeedSequence(1).spawn(1)[0], np.random.PCG64(1),
], ids=lambda s: type(s).__name__)
def test_real_seeds_are_refused_naming_what_to_use(seed):
    for make in (arc4py.BitGenerator, arc4py.default_rng):
        with pytest.raises(TypeError) as info:
            make(seed)
        msg = str(info.value)
        assert "cannot be seeded" in msg
        assert type(seed).__name__ in msg
        assert "numpy.random.default_rng(seed)" in msg
        assert "numpy.random.PCG64(seed)" in msg


def test_default_rng_follows_numpys_default_rng():
    bg = arc4py.BitGenerator()
    g = arc4py.default_rng(bg)
    assert g.bit_generator is bg
    assert arc4py.default_rng(g) is g
    assert arc4py.default_rng(np.random.Generator(bg)).bit_generator is bg
    assert isinstance(arc4py.default_rng(bg.seed_seq).bit_generator,
                      arc4py.BitGenerator)
    with pytest.raises(TypeError, match="cannot be seeded"):
        arc4py.default_rng(np.random.default_rng(1))


# ---- spawn and jumped ---------------------------------------------------------------

def test_bit_generator_spawn():
    bg = arc4py.BitGenerator()
    children = bg.spawn(n_children=3)
    assert [type(c) for c in children] == [arc4py.BitGenerator] * 3
    for i, c in enumerate(children):
        assert _differ(bg, c)
        assert all(_differ(c, d) for d in children[i + 1:])
    with pytest.raises(TypeError):
        bg.spawn(1.5)


@pytest.mark.skipif(NUMPY_VERSION < (1, 25),
                    reason="Generator.spawn is numpy 1.25's")
def test_generator_spawn():
    for g in (arc4py.default_rng(), np.random.Generator(arc4py.BitGenerator())):
        children = g.spawn(2)
        assert len(children) == 2
        for c in children:
            assert isinstance(c, np.random.Generator)
            assert isinstance(c.bit_generator, arc4py.BitGenerator)
            assert c.bit_generator is not g.bit_generator
        assert not np.array_equal(children[0].random(8), children[1].random(8))


def test_jumped_is_a_new_generator_sharing_no_output():
    bg = arc4py.BitGenerator()
    for jumped in (bg.jumped(), bg.jumped(1), bg.jumped(jumps=3),
                   bg.jumped(np.int64(2)), bg.jumped(0)):
        assert type(jumped) is arc4py.BitGenerator
        assert jumped is not bg
        assert _differ(bg, jumped)


@pytest.mark.parametrize("jumps, error", [(-1, ValueError), (1.5, TypeError),
                                          ("2", TypeError)])
def test_jumped_bad_jumps(jumps, error):
    with pytest.raises(error, match="jumps"):
        arc4py.BitGenerator().jumped(jumps)


def test_keywords_are_numpys():
    bg = arc4py.BitGenerator()
    assert bg.random_raw(size=2, output=False) is None
    assert bg.random_raw(size=(2, 3)).shape == (2, 3)
    assert len(bg.spawn(n_children=1)) == 1
    assert isinstance(bg.jumped(jumps=1), arc4py.BitGenerator)
    assert arc4py.BitGenerator(seed=None).state == bg.state


# ---- state and repr -----------------------------------------------------------------

def test_state_errors_say_what_a_state_is():
    bg = arc4py.BitGenerator()
    with pytest.raises(ValueError) as info:
        bg.state = {}
    msg = str(info.value)
    assert msg.startswith("state must be for an arc4py.BitGenerator")
    assert "no 'bit_generator' key" in msg and "None" not in msg.split(";")[1]
    with pytest.raises(ValueError, match="is for 'PCG64'"):
        bg.state = np.random.PCG64().state
    with pytest.raises(TypeError, match="not list"):
        bg.state = []


def test_reprs_say_arc4py():
    g = arc4py.default_rng()
    assert repr(g).startswith("Generator(arc4py.BitGenerator) at 0x")
    assert str(g) == "Generator(arc4py.BitGenerator)"
    assert "arc4py" not in repr(np.random.default_rng())
    assert repr(arc4py.BitGenerator()).startswith("<arc4py.BitGenerator object")


def test_default_rng_pickles_as_a_new_generator():
    g = arc4py.default_rng()
    g2 = pickle.loads(pickle.dumps(g))
    assert type(g2) is type(g)
    assert str(g2) == "Generator(arc4py.BitGenerator)"
    assert g2.bit_generator is not g.bit_generator
    assert not np.array_equal(g.random(8), g2.random(8))


def test_two_generators_never_pickle_alike():
    # Libraries that name work by the pickle of its arguments (dask's
    # tokenize) must not take two generators for one.  One object pickles
    # the same way each time; its copies are other objects.
    bg = arc4py.BitGenerator()
    assert pickle.dumps(bg) == pickle.dumps(bg)
    for make in (arc4py.BitGenerator, arc4py.default_rng,
                 lambda: np.random.RandomState(arc4py.BitGenerator())):
        if NUMPY_VERSION < (2, 0) and make is not arc4py.default_rng:
            continue   # numpy 1.x pickles a numpy object by its name only
        a, b = make(), make()
        assert pickle.dumps(a) != pickle.dumps(b)
        assert pickle.dumps(pickle.loads(pickle.dumps(a))) != pickle.dumps(a)
