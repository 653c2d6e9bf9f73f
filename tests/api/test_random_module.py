"""``import arc4py as random``: the random module's functions in arc4py.

Every function of the running Python's ``random`` module is there, with
the stdlib's signature, errors and distributions, drawing from the calling
thread's generator.  CPython's own tests of those functions (its
``SystemRandom`` suite, pointed at the module, and the module-level cases of
``TestDistributions`` and ``TestModule``) run against ``arc4py``.
"""
import inspect
import os
import pickle
import random
import secrets
import sys
import threading
import unittest
import warnings

import pytest

import arc4py
from helpers import run_child

FUNCTIONS = sorted(name for name in random.__all__
                   if not inspect.isclass(getattr(random, name)))
# The one meaning arc4py and both stdlib modules give these names.
SHARED = {"random", "choice"}
# As random.SystemRandom's: accepted (seed) or refused with a reason.
NO_STATE = {"seed", "getstate", "setstate"}


def test_every_function_of_the_random_module():
    assert "shuffle" in FUNCTIONS and "gauss" in FUNCTIONS
    missing = [n for n in FUNCTIONS if not callable(getattr(arc4py, n, None))]
    assert not missing
    assert set(FUNCTIONS) <= set(arc4py.__all__)
    assert set(FUNCTIONS) <= set(dir(arc4py))
    assert ("binomialvariate" in arc4py.__all__) == (sys.version_info >= (3, 12))


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - SHARED - NO_STATE))
def test_signature_as_the_stdlib(name):
    ours = inspect.signature(getattr(arc4py, name))
    theirs = inspect.signature(getattr(random, name))
    assert list(ours.parameters) == list(theirs.parameters)
    assert ([p.default for p in ours.parameters.values()]
            == [p.default for p in theirs.parameters.values()])
    assert ([p.kind for p in ours.parameters.values()]
            == [p.kind for p in theirs.parameters.values()])


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - SHARED))
def test_functions_are_arc4pys(name):
    # Each is bound to an exact arc4py.Random (the C fast paths serve it)
    # that keeps nothing of its own to draw from.
    owner = getattr(arc4py, name).__self__
    assert type(owner) is arc4py.Random
    assert owner is arc4py.shuffle.__self__
    assert set(vars(owner)) <= {"gauss_next"}


def test_random_and_choice_keep_their_meaning():
    x = arc4py.random()
    assert type(x) is float and 0.0 <= x < 1.0
    assert arc4py.choice([7]) == 7
    for module in (random, secrets):
        with pytest.raises(IndexError) as theirs:
            module.choice(())
        with pytest.raises(IndexError) as ours:
            arc4py.choice(())
        if sys.version_info >= (3, 11):  # before, the stdlib's indexing said it
            assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == "Cannot choose from an empty sequence"


def test_seed_does_nothing_and_state_is_refused():
    before = [arc4py.random() for _ in range(3)]
    for args in [(), (None,), (42,), ("text",), (b"bytes", 2), (3.5,)]:
        assert arc4py.seed(*args) is None
    arc4py.seed(a=1, version=2)
    after = [arc4py.random() for _ in range(3)]
    assert before != after
    doc = " ".join(arc4py.seed.__doc__.split())
    assert "CSPRNG" in doc and "random.Random(seed)" in doc
    with pytest.raises(NotImplementedError, match="CSPRNG"):
        arc4py.getstate()
    with pytest.raises(NotImplementedError, match="CSPRNG"):
        arc4py.setstate(None)


def test_a_script_for_random_runs_unchanged():
    script = """
import arc4py as random
deck = list(range(52))
random.seed(2024)
random.shuffle(deck)
assert sorted(deck) == list(range(52))
hand = random.sample(deck, 5)
roll = random.randint(1, 6)
pick = random.choice(["rock", "paper", "scissors"])
picks = random.choices("abc", weights=[5, 3, 1], k=20)
cum = random.choices("abc", cum_weights=[5, 8, 9], k=20)
step = random.randrange(0, 100, 5)
x = random.uniform(2.5, 10.0)
g = random.gauss(100, 15)
bits = random.getrandbits(256)
raw = random.randbytes(8)
assert len(hand) == 5 and 1 <= roll <= 6 and pick in ("rock", "paper", "scissors")
assert set(picks) <= set("abc") and set(cum) <= set("abc") and step % 5 == 0
assert 2.5 <= x <= 10.0 and isinstance(g, float) and bits < 2 ** 256 and len(raw) == 8
print("ok")
"""
    out = run_child(script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_each_thread_draws_from_its_own_state():
    # The functions take no lock and share nothing but the stateless
    # instance: threads drawing at once all get distinct values.
    results = []

    def worker():
        results.append([arc4py.getrandbits(64) for _ in range(2000)])

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    values = [v for r in results for v in r]
    assert len(set(values)) == len(values) == 8000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_after_fork():
    # CPython's TestModule.test_after_fork: the child's draws differ.
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(w, str(arc4py.getrandbits(128)).encode())
        finally:
            os._exit(0)
    os.close(w)
    mine = arc4py.getrandbits(128)
    with os.fdopen(r) as f:
        child = int(f.read())
    os.waitpid(pid, 0)
    assert mine != child


@pytest.mark.parametrize("name", ["shuffle", "uniform", "gauss", "choices"])
def test_functions_pickle_as_fresh_generators(name):
    func = pickle.loads(pickle.dumps(getattr(arc4py, name)))
    assert type(func.__self__) is arc4py.Random
    assert func.__name__ == name


# ---- CPython's own tests, pointed at arc4py ---------------------------------------
# CPython's Lib/test/test_random.py runs its SystemRandom suite on an instance;
# here it runs on the arc4py module, whose functions are what it calls.  Its
# tests of seeding, state and pickling are SystemRandom's (do nothing, or
# raise NotImplementedError); the module has no gauss_next and pickles as a
# module does not, so those two are restated for the module.

try:
    from test import test_random as _cpython
except ImportError:  # a Python built without its test suite
    _cpython = None

needs_cpython_tests = pytest.mark.skipif(
    _cpython is None, reason="this Python has no test.test_random "
    "(its test suite is not installed); the tests above still run")

if _cpython is not None:
    class TestCPythonSystemRandomOpsOnTheModule(
            _cpython.SystemRandom_TestBasicOps):
        gen = arc4py

        def test_gauss(self):
            # (CPython's sets gen.gauss_next; the module keeps no such value)
            self.gen.seed(100)
            self.assertFalse(hasattr(self.gen, "gauss_next"))

        def test_pickling(self):
            for proto in range(pickle.HIGHEST_PROTOCOL + 1):
                func = pickle.loads(pickle.dumps(self.gen.random, proto))
                self.assertIsInstance(func(), float)

    class TestCPythonSystemRandomOpsOnAnInstance(
            _cpython.SystemRandom_TestBasicOps):
        # arc4py.Random is a random.SystemRandom: the same suite on one.
        gen = arc4py.Random()

        def test_pickling(self):
            # (SystemRandom refuses pickling; arc4py's gives a fresh one)
            for proto in range(pickle.HIGHEST_PROTOCOL + 1):
                other = pickle.loads(pickle.dumps(self.gen, proto))
                self.assertIs(type(other), arc4py.Random)
                self.assertIsNot(other, self.gen)

    class TestCPythonDistributionsOnTheModule(unittest.TestCase):
        # TestDistributions' cases that call the module's functions (the
        # rest patch random.Random.random to script the Mersenne Twister's
        # draws; tests/api/test_random_distributions.py replays arc4py's own).
        test_von_mises_large_kappa = (
            _cpython.TestDistributions.test_von_mises_large_kappa)
        test_gammavariate_errors = (
            _cpython.TestDistributions.test_gammavariate_errors)

        def setUp(self):
            self._saved = _cpython.random
            _cpython.random = arc4py

        def tearDown(self):
            _cpython.random = self._saved

    class TestCPythonModuleOnTheModule(unittest.TestCase):
        test__all__ = _cpython.TestModule.test__all__

        def setUp(self):
            self._saved = _cpython.random
            _cpython.random = arc4py

        def tearDown(self):
            _cpython.random = self._saved


@needs_cpython_tests
def test_cpython_suites_are_collected():
    # The classes above are unittest cases, collected by pytest; this says
    # they exist on this Python (a renamed CPython class fails here).
    assert issubclass(TestCPythonSystemRandomOpsOnTheModule,
                      unittest.TestCase)


def test_a_process_wide_swap_takes_seeding_and_state_from_every_importer():
    # docs/tour.rst: sys.modules["random"] = arc4py reaches every later
    # `import random`; seed(n), Random(n) and the state are gone for each
    script = """
import sys
import arc4py
sys.modules["random"] = arc4py
import random
assert random is arc4py and random.Random is arc4py.Random
runs = []
for _ in range(2):
    random.seed(7)
    runs.append([random.random() for _ in range(4)])
assert runs[0] != runs[1]
assert random.Random(7).random() != random.Random(7).random()
for call in (random.getstate, lambda: random.setstate(None)):
    try:
        call()
    except NotImplementedError:
        pass
    else:
        raise SystemExit("state was saved or restored")
print("ok")
"""
    out = run_child(script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_the_shared_instance_is_the_stdlibs_inst():
    # random._inst: the instance the module's functions are bound to
    assert type(arc4py._inst) is arc4py.Random
    for name in sorted(set(FUNCTIONS) - SHARED):
        assert getattr(arc4py, name).__self__ is arc4py._inst, name
    from arc4py import _inst
    assert _inst is arc4py._inst
    assert "_inst" not in arc4py.__all__


def test_code_that_reaches_into_random_inst_runs_under_a_swap():
    # Libraries serve `seed=None` with the random module's own instance,
    # and test tools import it; under sys.modules["random"] = arc4py both
    # get arc4py's.
    script = """
import sys
import arc4py
sys.modules["random"] = arc4py
import random
from random import _inst

def check_random_state(seed=None):
    if seed is None:
        return random._inst
    return random.Random(seed)

rng = check_random_state()
assert rng is _inst is arc4py._inst and isinstance(rng, random.Random)
x = rng.random()
assert 0.0 <= x < 1.0 and rng.randint(1, 6) in range(1, 7)
deck = list(range(10))
rng.shuffle(deck)
assert sorted(deck) == list(range(10))
assert random.shuffle.__self__ is rng and random.gauss.__self__ is rng
print("ok")
"""
    out = run_child(script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ---- ignored seeds: arc4py.SeedIgnoredWarning, off unless a filter turns it on ----

class _Sub(arc4py.Random):
    pass


SEEDED = [("seed(42)", lambda: arc4py.seed(42)),
          ("seed(a=b'x', version=2)", lambda: arc4py.seed(a=b"x", version=2)),
          ("Random(42)", lambda: arc4py.Random(42)),
          ("Random().seed('text')", lambda: arc4py.Random().seed("text")),
          ("SystemRandom(0)", lambda: arc4py.SystemRandom(0)),
          ("a subclass(3)", lambda: _Sub(3))]
UNSEEDED = [lambda: arc4py.seed(), lambda: arc4py.seed(None),
            lambda: arc4py.seed(None, 2), lambda: arc4py.Random(),
            lambda: arc4py.Random(None), lambda: _Sub()]


@pytest.mark.parametrize("call", [c for _, c in SEEDED], ids=[i for i, _ in SEEDED])
def test_an_ignored_seed_is_warned_of_where_it_is_given(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", arc4py.SeedIgnoredWarning)
        with pytest.warns(arc4py.SeedIgnoredWarning,
                          match=r"arc4py ignores the seed .* random\.Random\(seed\)"
                          ) as caught:
            call()
    # named at the line that gave the seed, not inside arc4py or random.py
    assert [w.filename for w in caught] == [__file__]


def test_no_seed_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", arc4py.SeedIgnoredWarning)
        for call in UNSEEDED:
            call()


def test_the_seed_warning_is_off_unless_a_filter_names_it():
    assert issubclass(arc4py.SeedIgnoredWarning, UserWarning)
    assert arc4py.SeedIgnoredWarning.__module__ == "arc4py"
    assert "SeedIgnoredWarning" in arc4py.__all__
    # a blanket filter (python -W error, or pytest's) leaves it off
    script = """
import warnings
import arc4py
warnings.showwarning = lambda *a, **k: print("shown", a[0])
arc4py.seed(42)
arc4py.Random(42).random()
warnings.simplefilter("error")
arc4py.seed(42)
arc4py.Random(7)
warnings.simplefilter("error", arc4py.SeedIgnoredWarning)
arc4py.seed(None)
try:
    arc4py.seed(42)
except arc4py.SeedIgnoredWarning as exc:
    print("error:", exc)
"""
    out = run_child(script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("error: arc4py ignores the seed 42:"), out.stdout
    assert "shown" not in out.stdout and not out.stderr
