"""arc4py.Random's distributions run the stdlib's algorithms in C.

The exact check replays the generator: in a hooks-enabled build the bytes a
method is about to draw are in the thread's buffer (``_core._debug_buffer``),
so the stdlib's own method, given a ``random()`` that reads those bytes,
must return the same value and consume the same bytes.  The rest checks
what the fast paths hand back to the stdlib: subclasses, unusual argument
types, the stdlib's errors and edge cases.
"""
import decimal
import fractions
import math
import random
import signal
import sys

import pytest

import arc4py
from helpers import child_env, last_json, run_child

CASES = [
    ("uniform", (1.0, 2.0)), ("uniform", (-3, 7)), ("uniform", (5.0, 5.0)),
    ("triangular", ()), ("triangular", (0.0, 10.0, 2.0)),
    ("triangular", (3, -4, 1)), ("triangular", (0.0, 1.0, 5.0)),
    ("normalvariate", (0.0, 1.0)), ("normalvariate", (10, 3)),
    ("gauss", (2.0, 0.5)), ("lognormvariate", (0.0, 0.25)),
    ("expovariate", (1.0,)), ("expovariate", (-2.5,)),
    ("vonmisesvariate", (1.0, 2.0)), ("vonmisesvariate", (-7.0, 1e-7)),
    ("vonmisesvariate", (3.0, 50.0)),
    ("gammavariate", (0.5, 1.0)), ("gammavariate", (1.0, 2.0)),
    ("gammavariate", (3.0, 0.5)), ("gammavariate", (1e-3, 1.0)),
    ("betavariate", (2.0, 3.0)), ("betavariate", (0.2, 0.7)),
    ("paretovariate", (2.0,)), ("paretovariate", (-1.5,)),
    ("weibullvariate", (1.0, 2.0)), ("weibullvariate", (3.0, 0.5)),
]
if sys.version_info >= (3, 12):
    CASES += [("binomialvariate", (1, 0.3)), ("binomialvariate", (5, 0.2)),
              ("binomialvariate", (100, 0.3)), ("binomialvariate", (100, 0.8)),
              ("binomialvariate", (10 ** 6, 0.5)), ("binomialvariate", (0, 0.5))]

# (name, args, keyword args): choices with weights and cumulative weights,
# every way the C path takes them (floats, ints, tuples, zero and negative
# weights, one dominant weight), and the unweighted form.
CHOICES_CASES = [
    ("choices", (list("abcde"), [1, 2.5, 3, 0.5, 4]), {"k": 7}),
    ("choices", (list(range(10)), [1] * 10), {"k": 3}),
    ("choices", (tuple("abcd"), (0, 0, 1, 2)), {"k": 4}),
    ("choices", (list("abc"), [3, -1, 2]), {"k": 4}),
    ("choices", (list("ab"), [1e-300, 1e300]), {"k": 4}),
    ("choices", (tuple("abc"),), {"cum_weights": [0.5, 2, 2.25], "k": 5}),
    ("choices", (list("abcd"),), {"cum_weights": (1, 2, 3, 4), "k": 5}),
    ("choices", (list(range(10)),), {"k": 10}),
]


REPLAY = """
import json, random, sys
import arc4py
import arc4py._core as C
assert arc4py.__file__.startswith(ROOT), arc4py.__file__

class Replay(random.Random):
    # The stdlib's methods over the bytes the generator's buffer holds next.
    def __init__(self, data):
        super().__init__(0)
        self.data, self.pos = data, 0
    def random(self):
        raw = self.data[self.pos:self.pos + 8]
        self.pos += 8
        return (int.from_bytes(raw, sys.byteorder) >> 11) * 2.0 ** -53

def fresh_buffer():
    # Drain the buffer, then one draw refills it: a method's draws below
    # come from one buffer, not across a refill.
    _, left = C._debug_buffer()
    while left:
        arc4py.arc4random_buf(min(left, 1024))
        _, left = C._debug_buffer()
    arc4py.random_u32()

arc4py.random_u32()  # this thread's state
rng = arc4py.Random()
bad = []
done = 0
for name, args, *kwargs in CASES:
    kwargs = kwargs[0] if kwargs else {}
    for i in range(300):
        fresh_buffer()
        buf, left = C._debug_buffer()
        pos = len(buf) - left
        got = getattr(rng, name)(*args, **kwargs)
        _, left_after = C._debug_buffer()
        replay = Replay(buf[pos:])
        if name == "gauss":  # no cached second value: normalvariate's draws
            want = random.Random.normalvariate(replay, *args)
        else:
            want = getattr(random.Random, name)(replay, *args, **kwargs)
        used = (len(buf) - left_after) - pos
        if got != want or used != replay.pos:
            bad.append([name, list(args), repr(got), repr(want), used, replay.pos])
        done += 1
print(json.dumps({"bad": bad[:10], "done": done}))
"""


def test_each_method_is_the_stdlibs_algorithm_on_the_same_draws(hooks_build,
                                                                 tmp_path):
    code = (REPLAY.replace("ROOT", repr(str(hooks_build)))
            .replace("for name, args, *kwargs in CASES:",
                     f"for name, args, *kwargs in {CASES + CHOICES_CASES!r}:"))
    res = last_json(run_child(code, cwd=tmp_path, env=child_env(hooks_build)))
    assert res["done"] == 300 * (len(CASES) + len(CHOICES_CASES))
    assert res["bad"] == []


# ---- what the fast paths leave to the stdlib --------------------------------

class Counting(arc4py.Random):
    """A subclass whose random() is its own: every method must use it."""
    calls = 0

    def random(self):
        Counting.calls += 1
        return 0.25


@pytest.mark.parametrize("name, args", CASES)
def test_a_subclass_random_is_used(name, args):
    Counting.calls = 0
    value = getattr(Counting(), name)(*args)
    assert Counting.calls >= (0 if args == (0, 0.5) else 1)
    assert isinstance(value, int if name == "binomialvariate" else float)


def test_choices_of_a_subclass_use_its_random():
    Counting.calls = 0
    assert Counting().choices("abcd", k=3) == ["b", "b", "b"]
    assert Counting.calls == 3


@pytest.mark.parametrize("name, args, error", ([
    ("expovariate", (0.0,), ZeroDivisionError),
    ("expovariate", (0,), ZeroDivisionError),
    ("gammavariate", (0.0, 1.0), ValueError),
    ("gammavariate", (1.0, -1.0), ValueError),
    ("betavariate", (-1.0, 1.0), ValueError),
    ("paretovariate", (0.0,), ZeroDivisionError),
    ("weibullvariate", (1.0, 0.0), ZeroDivisionError),
    ("uniform", ("a", "b"), TypeError),
    ("normalvariate", ("a", 1.0), TypeError),
    ("lognormvariate", (1000.0, 1e-9), OverflowError),
    ("choices", ([],), IndexError),
] + ([
    ("binomialvariate", (-1, 0.5), ValueError),
    ("binomialvariate", (3, 1.5), ValueError),
] if sys.version_info >= (3, 12) else [])))
def test_the_stdlibs_errors(name, args, error):
    with pytest.raises(error) as ours:
        getattr(arc4py.Random(), name)(*args)
    with pytest.raises(error) as theirs:
        getattr(random.Random(), name)(*args)
    assert str(ours.value) == str(theirs.value)


def test_other_number_types_keep_the_stdlibs_results():
    r = arc4py.Random()
    with pytest.raises(TypeError):  # Decimal * float, as in the stdlib
        r.uniform(decimal.Decimal(1), decimal.Decimal(2))
    f = r.uniform(fractions.Fraction(1, 3), fractions.Fraction(2, 3))
    assert type(f) is float and 1 / 3 <= f <= 2 / 3
    big = r.uniform(0, 10 ** 30)
    assert type(big) is float and 0 <= big <= 1e30
    assert r.triangular(5, 5) == 5 and type(r.triangular(5, 5)) is float
    assert r.triangular(2, 2, 2) == 2  # the stdlib's ZeroDivisionError path
    with_inf = r.uniform(0.0, math.inf)  # inf * u: inf, or nan for u == 0
    assert math.isinf(with_inf) or math.isnan(with_inf)
    assert 0.0 <= r.vonmisesvariate(0.0, 0.0) < 2 * math.pi


def test_choices_fast_path_matches_the_contract():
    r = arc4py.Random()
    pop = list(range(10))
    got = r.choices(pop, k=20000)
    assert len(got) == 20000 and set(got) == set(pop)
    assert r.choices(pop, k=0) == [] and r.choices(pop, k=-3) == []
    assert r.choices((7,), k=3) == [7, 7, 7]
    assert r.choices("ab", k=4).count("a") <= 4  # a str: the stdlib's code
    assert set(r.choices(pop, weights=[0] * 9 + [1], k=10)) == {9}
    with pytest.raises(TypeError):
        r.choices(pop, k=2.0)


@pytest.mark.parametrize("args, kwargs", [
    (("abc", [1, 2]), {}), (("abc", [0, 0, 0]), {}), (("abc", [1, -1, 0]), {}),
    (("abc", [1, 2, 3]), {"cum_weights": [1, 2, 3]}),
    (("abc",), {"cum_weights": [1, 2]}), (("abc",), {"cum_weights": [0, 0, 0.0]}),
    (("abc", [1, math.inf, 1]), {}), (("abc", [1, math.nan, 1]), {}),
    (("abc",), {"cum_weights": [1, 2, math.inf]}), (([], []), {}),
    (("abc", ["1", "2", "3"]), {}), (("abc", 5), {}),
])
def test_weighted_choices_errors_are_the_stdlibs(args, kwargs):
    outcomes = []
    for r in (arc4py.Random(), random.Random()):
        for population in (list(args[0]), tuple(args[0])):
            try:
                got = r.choices(population, *args[1:], k=3, **kwargs)
                outcomes.append(("ok", len(got), set(got) <= set(population)))
            except Exception as exc:
                outcomes.append((type(exc), str(exc)))
    assert len(set(outcomes)) == 1, outcomes


def test_weighted_choices_other_number_types():
    # Fractions, bools, ints past 2**53, a generator, a float subclass: the
    # stdlib's code, its results (and its TypeError for Decimals).
    r = arc4py.Random()
    with pytest.raises(TypeError):
        r.choices("ab", [decimal.Decimal(1), decimal.Decimal(2)])
    for weights in ([fractions.Fraction(1, 3), fractions.Fraction(2, 3)], [True, False],
                    [2 ** 60, 1], [2 ** 53, 2 ** 53], (w for w in [1.0, 2.0]),
                    [type("F", (float,), {})(1.0), 2.0]):
        got = r.choices("ab", weights, k=50)
        assert set(got) <= {"a", "b"} and len(got) == 50
    assert set(r.choices("ab", [True, False], k=50)) == {"a"}
    assert set(r.choices("ab", [2 ** 60, 0], k=50)) == {"a"}
    assert set(r.choices("ab", cum_weights=[2 ** 60, 2 ** 60], k=50)) == {"a"}


def test_signatures_follow_the_running_python():
    import inspect
    r = arc4py.Random()
    for name in ("normalvariate", "gauss"):
        params = inspect.signature(getattr(r, name)).parameters
        has_defaults = params["mu"].default == 0.0
        assert has_defaults == (sys.version_info >= (3, 11)), name
    lambd = inspect.signature(r.expovariate).parameters["lambd"]
    assert (lambd.default == 1.0) == (sys.version_info >= (3, 12))
    for name in ("uniform", "choices", "gammavariate", "gauss"):
        assert getattr(arc4py.Random, name).__qualname__ == "Random." + name


@pytest.mark.parametrize("k", [1, 7, 8, 31, 32, 33, 63, 64, 65, 100, 255, 256,
                               4095, 4096, 4097, 10000])
def test_getrandbits_every_width(k):
    """k bits exactly: never more, and the top one set in about half the
    draws (the C path serves k up to 4096 bits, the rest goes to Cython)."""
    r = arc4py.Random()
    draws = [r.getrandbits(k) for _ in range(400)]
    assert all(0 <= d < 2 ** k for d in draws)
    top = sum(d >> (k - 1) for d in draws)
    assert 120 < top < 280


def test_getrandbits_and_randbelow_errors_are_the_stdlibs():
    r, m = arc4py.Random(), random.Random()
    for call in (lambda g: g.getrandbits(-1), lambda g: g.getrandbits(1.0),
                 lambda g: g.getrandbits("8")):
        with pytest.raises((ValueError, TypeError)) as ours:
            call(r)
        with pytest.raises((ValueError, TypeError)) as theirs:
            call(m)
        assert type(ours.value) is type(theirs.value)
    with pytest.raises(ValueError, match="non-negative"):
        r.getrandbits(-1)
    assert r.getrandbits(0) == 0
    assert {r._randbelow(1) for _ in range(50)} == {0}
    assert all(r._randbelow(n) < n for n in (2, 3, 2 ** 63, 2 ** 64, 2 ** 64 + 1,
                                             2 ** 200) for _ in range(50))
    assert r._randbelow(True) == 0  # an int subclass: the Cython path


@pytest.mark.parametrize("n", [3 * 2 ** 70, 5 * 2 ** 300 + 7, 2 ** 4095 * 3])
def test_randbelow_past_64_bits_is_uniform(n):
    """The C path for ints of 65 to 4096 bits (and beyond, in Cython):
    below n, and each third of [0, n) about as likely."""
    r = arc4py.Random()
    thirds = [0, 0, 0]
    for _ in range(3000):
        v = r._randbelow(n)
        assert 0 <= v < n
        thirds[v * 3 // n] += 1
    assert all(850 < t < 1150 for t in thirds), thirds


# ---- a rejection loop that never accepts can still be interrupted --------------

@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="no SIGALRM here")
def test_a_hopeless_rejection_loop_can_be_interrupted():
    # gammavariate's loop never accepts with alpha near the largest double
    # (the stdlib's neither); the alarm's handler must still get to run,
    # as it does in the stdlib's loop in Python.  The child is killed by
    # the timeout if it does not.
    proc = run_child("""
        import signal
        import arc4py

        def stop(signum, frame):
            raise TimeoutError

        signal.signal(signal.SIGALRM, stop)
        rng = arc4py.Random()
        for call in (lambda: rng.gammavariate(1e308, 1.0),
                     lambda: rng.betavariate(1e308, 1.0),
                     lambda: rng.betavariate(1.0, 1e308),
                     lambda: arc4py.gammavariate(1.7e308, 2.0)):
            signal.alarm(1)
            try:
                call()
            except TimeoutError:
                print("interrupted")
            finally:
                signal.alarm(0)
    """, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["interrupted"] * 4, proc.stdout


def test_bad_parameters_are_refused_as_the_stdlib_does():
    rng = arc4py.Random()
    for name, args in (("gammavariate", (0.0, 1.0)), ("gammavariate", (1.0, -1.0)),
                       ("betavariate", (-1.0, 1.0)), ("betavariate", (1.0, 0.0))):
        with pytest.raises(ValueError) as ours:
            getattr(rng, name)(*args)
        with pytest.raises(ValueError) as theirs:
            getattr(random.Random(), name)(*args)
        assert str(ours.value) == str(theirs.value)



def test_ints_run_in_c_within_2_52(monkeypatch):
    # An int within 2**52 and the difference of any two are exact doubles,
    # so the C path takes it; past that the stdlib's method runs (2**53
    # would hold the ints but not uniform's b - a).
    from arc4py import _random
    fallbacks = []

    class Std(random.Random):
        def uniform(self, a, b):
            fallbacks.append(("uniform", a, b))
            return random.Random.uniform(self, a, b)

        def choices(self, population, weights=None, **kwargs):
            fallbacks.append(("choices", weights))
            return random.Random.choices(self, population, weights, **kwargs)

    monkeypatch.setattr(_random, "_std", Std)
    r = arc4py.Random()
    for edge in (2 ** 52, -2 ** 52):
        assert abs(r.uniform(-edge, edge)) <= 2 ** 52
        assert r.choices(["a", "b"], [abs(edge), 1], k=3)
    assert fallbacks == []
    for past in (2 ** 52 + 1, -2 ** 52 - 1):
        assert abs(r.uniform(0, past)) <= 2 ** 52 + 1
        assert r.choices(["a", "b"], [abs(past), 1], k=3)
    assert [f[0] for f in fallbacks] == ["uniform", "choices"] * 2
