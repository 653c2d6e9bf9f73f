"""arc4py.Random instances: pickled and copied as fresh generators, and a
method set on an instance used wherever random.Random would use it."""
import copy
import multiprocessing
import pickle
import random
import sys

import pytest

import arc4py


class Sub(arc4py.Random):
    pass


# ---- pickling and copying -------------------------------------------------------

@pytest.mark.parametrize("cls", [arc4py.Random, Sub])
def test_pickle_gives_a_fresh_generator(cls):
    rng = cls()
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        other = pickle.loads(pickle.dumps(rng, proto))
        assert type(other) is cls and other is not rng
        assert [other.random() for _ in range(4)] != [rng.random() for _ in range(4)]
        assert other.getrandbits(128) != rng.getrandbits(128)
    assert "fresh" in arc4py.Random.__doc__ and "nothing to replay" in arc4py.Random.__doc__


@pytest.mark.parametrize("make_copy", [copy.copy, copy.deepcopy])
def test_copy_gives_a_fresh_generator(make_copy):
    rng = arc4py.Random()
    other = make_copy(rng)
    assert type(other) is arc4py.Random and other is not rng
    assert other.getrandbits(128) != rng.getrandbits(128)
    assert type(make_copy(Sub())) is Sub


def test_state_stays_refused():
    rng = arc4py.Random()
    with pytest.raises(NotImplementedError, match="fresh generator"):
        rng.getstate()
    with pytest.raises(NotImplementedError):
        rng.setstate(None)


def _draw_with(rng):
    return type(rng).__name__, [rng.getrandbits(64) for _ in range(4)]


@pytest.mark.parametrize("method", sorted({"spawn", "fork"}
                                          & set(multiprocessing.get_all_start_methods())))
def test_a_process_pool_receives_one(method):
    rng = arc4py.Random()
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as pool:
        got = pool.map(_draw_with, [rng, rng])
    assert [name for name, _ in got] == ["Random", "Random"]
    values = [v for _, vs in got for v in vs]
    assert len(set(values)) == 8
    assert not set(values) & {rng.getrandbits(64) for _ in range(100)}


# ---- a method set on an instance ---------------------------------------------------

def test_random_set_on_an_instance_is_used():
    r, mt = arc4py.Random(), random.Random()
    r.random = mt.random = lambda: 0.5
    assert r.uniform(0, 10) == 5.0 == mt.uniform(0, 10)
    assert isinstance(r, arc4py.Random)
    assert repr(r).startswith("<arc4py.Random object")
    other = pickle.loads(pickle.dumps(r))  # fresh, without the override
    assert type(other) is arc4py.Random and other.random() != 0.5


CALLS = [
    ("uniform", (1.0, 3.0)), ("triangular", (0.0, 10.0, 2.0)), ("triangular", ()),
    ("normalvariate", (1.0, 2.0)), ("lognormvariate", (0.0, 0.5)),
    ("expovariate", (2.0,)), ("vonmisesvariate", (1.0, 2.0)),
    ("vonmisesvariate", (1.0, 1e-9)),
    ("gammavariate", (0.5, 1.0)), ("gammavariate", (1.0, 2.0)),
    ("gammavariate", (3.0, 1.0)), ("betavariate", (2.0, 3.0)),
    ("paretovariate", (2.0,)), ("weibullvariate", (1.0, 2.0)),
    ("choices", (list(range(10)),), {"k": 5}),
    ("choices", ("abc", [5, 3, 1]), {"k": 5}),
    ("choices", ("abc",), {"cum_weights": [1.0, 2.5, 3.0], "k": 5}),
]
if sys.version_info >= (3, 12):
    CALLS += [("binomialvariate", (20, 0.3)), ("binomialvariate", (1000, 0.4))]


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c[0])
def test_every_distribution_calls_the_instance_random(call):
    # The same scripted random() on an instance of each class: the same
    # values, the stdlib's code run over the instance's draws.
    name, args = call[0], call[1]
    kwargs = call[2] if len(call) > 2 else {}
    script = [random.Random(i).random() for i in range(4000)]
    results = []
    for cls in (random.Random, arc4py.Random):
        r = cls()
        r.random = script[:].pop
        results.append([getattr(r, name)(*args, **kwargs) for _ in range(20)])
    assert results[0] == results[1]


def test_gauss_runs_through_the_instance():
    # gauss keeps no second value (unlike the stdlib's): it is the
    # instance's normalvariate, which draws the instance's random().
    r = arc4py.Random()
    r.random = lambda: 0.5
    assert r.gauss(3.0, 2.0) == 3.0
    r.normalvariate = lambda mu, sigma: 7.0
    assert r.gauss(0.0, 1.0) == 7.0


def test_methods_the_stdlib_calls_by_name():
    r = arc4py.Random()
    r.normalvariate = lambda mu, sigma: 0.0
    assert r.lognormvariate(0.0, 1.0) == 1.0
    r = arc4py.Random()
    r.gammavariate = lambda alpha, beta: alpha
    assert r.betavariate(1.0, 3.0) == 0.25
    # randrange, randint, shuffle, sample, choice go through getrandbits,
    # as random.Random's do
    got = []
    for cls in (random.Random, arc4py.Random):
        r = cls()
        r.getrandbits = lambda k: 0
        deck = list(range(6))
        r.shuffle(deck)
        got.append((r.randrange(10), r.randint(5, 9), r.choice("xyz"),
                    r.sample(range(5), 2), deck))
    assert got[0] == got[1] and got[0][:3] == (0, 5, "x")
    r = arc4py.Random()
    r._randbelow = lambda n: n - 1
    deck = [1, 2, 3]
    r.shuffle(deck)
    assert deck == [1, 2, 3] and r.randrange(4) == 3


def test_other_attributes_keep_the_fast_class():
    r = arc4py.Random()
    r.gauss_next = None
    r.label = "mine"
    assert type(r) is arc4py.Random
    s = Sub()
    s.random = lambda: 0.25
    assert type(s) is Sub and s.uniform(0, 4) == 1.0
