"""arc4py's type stubs, checked by mypy.

Sample files use the API the way the docs say (mypy --strict must accept
them) and misuse it on lines marked ``# E: <code>`` (mypy must flag each of
those lines with that code, and nothing else).  mypy runs once, in a child
process, over every sample; it is checked against the same arc4py this
process imports (in-place build or installed copy).
"""
import os
import re
import site
import sysconfig
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="mypy is not installed "
                    "(pip install 'arc4py[test]' brings it)")

import arc4py
from helpers import PYTHON, run_python

try:
    import numpy  # noqa: F401
    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False

PKG_DIR = Path(arc4py.__file__).resolve().parent

GOOD_CORE = """
    import array
    from typing import List

    import arc4py
    from typing_extensions import assert_type

    assert_type(arc4py.arc4random(), int)
    assert_type(arc4py.random_u32(), int)
    assert_type(arc4py.random_u64(), int)
    assert_type(arc4py.arc4random_buf(16), bytes)
    assert_type(arc4py.arc4random_uniform(6), int)
    assert_type(arc4py.randbelow(10 ** 30), int)
    assert_type(arc4py.randbelow(exclusive_upper_bound=7), int)
    assert_type(arc4py.SystemRandom().random(), float)
    assert_type(arc4py.arc4random_uniform(6, None), int)
    assert_type(arc4py.random(size=None), float)
    assert_type(arc4py.randbits(300), int)
    assert_type(arc4py.random(), float)
    assert_type(arc4py.fill(bytearray(8)), int)
    assert_type(arc4py.fill(memoryview(bytearray(8))), int)
    assert_type(arc4py.fill(array.array("I", [0, 0])), int)
    assert_type(arc4py.stir(), None)
    assert_type(arc4py.token_bytes(), bytes)
    assert_type(arc4py.token_bytes(16), bytes)
    assert_type(arc4py.token_hex(), str)
    assert_type(arc4py.token_urlsafe(None), str)
    assert_type(arc4py.choice(["a", "b"]), str)
    assert_type(arc4py.choice((1, 2, 3)), int)
    assert_type(arc4py.compare_digest(b"a", b"b"), bool)
    assert_type(arc4py.compare_digest("a", "b"), bool)
    assert_type(arc4py.Random.random(arc4py.Random()), float)
    assert_type(arc4py.Random.getrandbits(arc4py.Random(), 9), int)
    assert_type(arc4py.Random().gauss(1.0, 2.0), float)
    assert_type(arc4py.backends(), tuple[str, ...])
    assert_type(arc4py.backend(), str)
    assert_type(arc4py.cpu_features(), tuple[str, ...])
    assert_type(arc4py.fork_protection(), tuple[str, ...])
    assert_type(arc4py.chacha20_keystream(bytes(32), bytes(12), 64, counter=1), bytes)
    assert_type(arc4py.chacha20_keystream(bytes(32), bytes(8), 64, backend="generic"), bytes)
    assert_type(arc4py.chacha20_keystream_into(bytes(32), bytes(8), bytearray(64)), int)
    assert_type(arc4py.DEFAULT_ENTROPY, int)
    assert_type(arc4py.__version__, str)

    r = arc4py.Random()
    r.seed(42)
    assert_type(r.random(), float)
    assert_type(r.getrandbits(70), int)
    assert_type(r.randbytes(4), bytes)
    assert_type(r.randrange(0, 100, 7), int)
    assert_type(r.uniform(1.0, 2.0), float)
    assert_type(r.gauss(0.0, 1.0), float)
    cards: List[int] = list(range(52))
    r.shuffle(cards)
    assert_type(r.sample(cards, 5), list[int])
    assert_type(r.choices(cards, weights=[1.0] * 52, k=3), list[int])

    # the random module's functions, and uuid
    import uuid
    arc4py.seed(42)
    arc4py.shuffle(cards)
    assert_type(arc4py.sample(cards, 5), list[int])
    assert_type(arc4py.choices(cards, cum_weights=list(range(1, 53)), k=3), list[int])
    assert_type(arc4py.randint(1, 6), int)
    assert_type(arc4py.randrange(10), int)
    assert_type(arc4py.uniform(1.0, 2.0), float)
    assert_type(arc4py.gauss(0.0, 1.0), float)
    assert_type(arc4py.getrandbits(70), int)
    assert_type(arc4py.uuid4(), uuid.UUID)
    assert_type(arc4py.uuid7(), uuid.UUID)
"""

GOOD_NUMPY = """
    import numpy as np
    import numpy.typing as npt

    import arc4py
    from typing_extensions import assert_type

    assert_type(arc4py.random_u32(size=3), npt.NDArray[np.uint32])
    assert_type(arc4py.random_u32((2, 3)), npt.NDArray[np.uint32])
    assert_type(arc4py.random_u64(size=[4]), npt.NDArray[np.uint64])
    assert_type(arc4py.random(size=(2, 2)), npt.NDArray[np.float64])
    assert_type(arc4py.arc4random_uniform(6, size=3), npt.NDArray[np.uint32])
    assert_type(arc4py.default_rng(None), np.random.Generator)
    assert_type(arc4py.fill(np.zeros((2, 2), dtype=np.float32)), int)

    bg = arc4py.BitGenerator()
    assert isinstance(bg, np.random.BitGenerator)
    assert_type(bg.random_raw(), int)
    assert_type(bg.random_raw(10), npt.NDArray[np.uint64])
    assert_type(bg.random_raw(10, output=False), None)
    assert_type(bg.spawn(2), list[arc4py.BitGenerator])
    assert_type(bg.jumped(), arc4py.BitGenerator)
    assert_type(bg.jumped(jumps=2), arc4py.BitGenerator)
    assert_type(type(bg)(bg.seed_seq), arc4py.BitGenerator)
    assert_type(arc4py.default_rng(bg), np.random.Generator)
    assert_type(arc4py.default_rng(arc4py.default_rng()), np.random.Generator)
    state = bg.state
    g = np.random.Generator(bg)
    x: float = g.random()
    assert_type(arc4py.default_rng(), np.random.Generator)
    ints = arc4py.default_rng().integers(0, 10, size=5)
"""

BAD = """
    import arc4py

    arc4py.arc4random_buf("x")  # E: arg-type
    arc4py.arc4random_buf(1.5)  # E: arg-type
    arc4py.fill(3)  # E: arg-type
    arc4py.arc4random_uniform("6")  # E: arg-type|call-overload
    s: str = arc4py.arc4random()  # E: assignment
    b: bytes = arc4py.token_hex()  # E: assignment
    arc4py.random_u32(size="3")  # E: arg-type
    arc4py.stir(1)  # E: call-arg|misc
    arc4py.no_such_function()  # E: attr-defined
    arc4py.chacha20_keystream(bytes(32), bytes(8), 64, counter="0")  # E: arg-type
    arc4py.Random.random()  # E: call-arg
    arc4py.uuid4(4)  # E: call-arg
    arc4py.Random().getstate()  # getstate() never returns:
    print("after getstate")  # E: unreachable
"""

BAD_NUMPY = """
    import arc4py

    arc4py.BitGenerator(5)  # E: arg-type
    arc4py.default_rng(1)  # E: arg-type
    arc4py.BitGenerator().jumped("2")  # E: arg-type
    arc4py.random(size="3")  # E: arg-type|call-overload
"""


def _installed(parent):
    """Whether ``parent`` is a site-packages directory (arc4py installed)."""
    candidates = set(site.getsitepackages() + [site.getusersitepackages()])
    for key in ("purelib", "platlib"):
        candidates.add(sysconfig.get_paths()[key])
    return any(os.path.realpath(parent) == os.path.realpath(c)
               for c in candidates if c)


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    """Run mypy once over every sample; return {file: [(line, code, msg)]}."""
    work = tmp_path_factory.mktemp("typing")
    samples = {"good_core.py": GOOD_CORE, "bad.py": BAD}
    if HAVE_NUMPY:
        samples.update({"good_numpy.py": GOOD_NUMPY,
                        "bad_numpy.py": BAD_NUMPY})
    for name, text in samples.items():
        (work / name).write_text(textwrap.dedent(text))
    (work / "mypy.ini").write_text(textwrap.dedent("""
        [mypy]
        strict = True
        warn_unreachable = True
        show_error_codes = True
        [mypy-matplotlib.*]
        ignore_missing_imports = True
    """))
    env = dict(os.environ)
    env.pop("MYPYPATH", None)
    parent = str(PKG_DIR.parent)
    if not _installed(parent):
        # An in-place build: point mypy at it (mypy refuses site-packages
        # in MYPYPATH; an installed arc4py is found through py.typed).
        env["MYPYPATH"] = parent
    proc = run_python(
        ["-m", "mypy", "--config-file", "mypy.ini",
         "--cache-dir", work / ".mypy_cache", "--no-color-output",
         "--python-executable", PYTHON, *sorted(samples)],
        cwd=work, env=env, timeout=540)
    errors = {}
    pattern = re.compile(r"^(.+?):(\d+): error: (.*?)(?:  \[([\w-]+)\])?$")
    for line in proc.stdout.splitlines():
        m = pattern.match(line)
        if m:
            path, lineno, msg, code = m.groups()
            errors.setdefault(os.path.basename(path) if path in samples
                              else path, []).append((int(lineno), code, msg))
    assert proc.returncode in (0, 1), (
        f"mypy crashed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return {"samples": samples, "errors": errors, "output": proc.stdout}


def test_stubs_and_marker_ship_with_the_package():
    for name in ("py.typed", "__init__.pyi", "_core.pyi", "_numpy.pyi"):
        assert (PKG_DIR / name).is_file(), f"{name} missing from {PKG_DIR}"


@pytest.mark.slow
def test_no_errors_in_stubs(mypy_run):
    others = {k: v for k, v in mypy_run["errors"].items()
              if k not in mypy_run["samples"]}
    assert not others, mypy_run["output"]


@pytest.mark.slow
@pytest.mark.parametrize("sample", [
    "good_core.py",
    pytest.param("good_numpy.py", marks=pytest.mark.skipif(
        not HAVE_NUMPY, reason="numpy is not installed")),
])
def test_correct_use_passes(mypy_run, sample):
    assert not mypy_run["errors"].get(sample), mypy_run["output"]


@pytest.mark.slow
@pytest.mark.parametrize("sample, source", [
    pytest.param("bad.py", BAD, id="bad.py"),
    pytest.param("bad_numpy.py", BAD_NUMPY, id="bad_numpy.py",
                 marks=pytest.mark.skipif(not HAVE_NUMPY,
                                          reason="numpy is not installed")),
])
def test_wrong_use_flagged(mypy_run, sample, source):
    expected = {}
    for lineno, line in enumerate(textwrap.dedent(source).splitlines(), 1):
        # "# E: a|b": mypy's code for the error, either one (the code
        # some errors get changed between mypy versions)
        m = re.search(r"# E: ([\w|-]+)", line)
        if m:
            expected[lineno] = set(m.group(1).split("|"))
    got = {}
    for lineno, code, _msg in mypy_run["errors"].get(sample, []):
        got.setdefault(lineno, set()).add(code)
    for lineno, codes in expected.items():
        assert codes & got.get(lineno, set()), (
            f"{sample}:{lineno} should be flagged {sorted(codes)}; mypy said:\n"
            + mypy_run["output"])
    unexpected = sorted(set(got) - set(expected))
    assert not unexpected, (f"{sample}: unexpected errors on lines "
                            f"{unexpected}:\n" + mypy_run["output"])


# Other modules of the package (the CLI, the bench) are plain Python, not
# stubs; stubtest checks only the stubbed API.  The Cython-made
# ``__test__`` dicts and the disjoint-base note on the Cython class
# (PEP 800; older mypy lacks ``typing_extensions.disjoint_base``; mypy 1.x
# reports it at the re-export too) are allowed.
STUBTEST_ALLOWLIST = r"""
arc4py\._core\.__test__
arc4py\._numpy\.__test__
arc4py\._numpy\.BitGenerator$
arc4py\.BitGenerator$
arc4py\.(?!_core\.|_numpy\.|_random\.)_[_a-zA-Z0-9]*\..*
"""


@pytest.mark.slow
def test_stubtest_matches_runtime(tmp_path):
    """mypy's stubtest: every stub matches what the runtime really has."""
    (tmp_path / "allow.txt").write_text(STUBTEST_ALLOWLIST.strip() + "\n")
    (tmp_path / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n")
    env = dict(os.environ)
    env.pop("MYPYPATH", None)
    parent = str(PKG_DIR.parent)
    if not _installed(parent):
        env["MYPYPATH"] = parent
        env["PYTHONPATH"] = os.pathsep.join(
            [parent] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = run_python(
        ["-m", "mypy.stubtest", "arc4py",
         "--mypy-config-file", "mypy.ini", "--allowlist", "allow.txt",
         "--ignore-unused-allowlist"],
        cwd=tmp_path, env=env, timeout=540)
    assert proc.returncode == 0, proc.stdout + proc.stderr
