"""What a new user meets first, answered the way the stdlib and numpy answer
it: their keyword names, their error types and messages, numpy's error for
an import from the source tree, optional numpy that leaves names absent
rather than breaking introspection, a bad ARC4PY_BACKEND that names the
variable (the ``arc4py`` command included), and the errors that say why a
CSPRNG takes no seed and keeps no state.
"""
import doctest
import inspect
import secrets
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import arc4py
from arc4py.cli.bytes import parse_count
from helpers import NO_NUMPY_FINDER, PKG_PARENT, REPO, child_env, run_child, run_python

try:
    import numpy as np
except ImportError:
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed "
                                 "(pip install 'arc4py[numpy]')")


# ---- the secrets module's names -----------------------------------------------

def test_randbelow_takes_the_secrets_keyword():
    assert "exclusive_upper_bound" in inspect.signature(secrets.randbelow).parameters
    assert list(inspect.signature(arc4py.randbelow).parameters) == [
        "exclusive_upper_bound"]
    for bound in (1, 5, 2**32, 2**32 + 1, 10**30):
        assert 0 <= arc4py.randbelow(exclusive_upper_bound=bound) < bound
    with pytest.raises(ValueError, match="exclusive_upper_bound must be > 0"):
        arc4py.randbelow(exclusive_upper_bound=0)
    with pytest.raises(TypeError, match="exclusive_upper_bound"):
        arc4py.randbelow(1.5)


@pytest.mark.parametrize("func", [arc4py.token_bytes, arc4py.token_hex,
                                  arc4py.token_urlsafe])
def test_token_errors_name_nbytes(func):
    with pytest.raises(ValueError, match=r"^nbytes must be >= 0, not -1$"):
        func(-1)
    with pytest.raises(ValueError, match="nbytes"):
        func(nbytes=-5)
    with pytest.raises(TypeError, match="nbytes must be an int or None, not float"):
        func(1.5)
    with pytest.raises(TypeError, match="nbytes must be an int or None, not str"):
        func("3")
    assert len(arc4py.token_bytes(nbytes=3)) == 3


def test_system_random_alias():
    assert arc4py.SystemRandom is arc4py.Random
    assert "SystemRandom" in arc4py.__all__ and "SystemRandom" in dir(arc4py)
    assert isinstance(arc4py.SystemRandom(), arc4py.Random)
    # as in secrets, where SystemRandom is random.SystemRandom
    assert hasattr(secrets, "SystemRandom")


# ---- seeds and state: refused or ignored, and saying why --------------------------

def test_random_ignores_a_seed_like_system_random():
    assert arc4py.Random(42).random() != arc4py.Random(42).random()
    doc = " ".join(arc4py.Random.seed.__doc__.split())
    assert "a CSPRNG seeds itself from the OS" in doc
    assert "random.Random(seed)" in doc


def test_random_state_says_why():
    rng = arc4py.Random()
    for call in (rng.getstate, lambda: rng.setstate(None)):
        with pytest.raises(NotImplementedError,
                           match=r"CSPRNG seeded by the OS.*random\.Random\(seed\)"):
            call()


@needs_numpy
@pytest.mark.parametrize("make", ["BitGenerator", "default_rng"])
def test_numpy_seed_is_refused_with_why_and_what_instead(make):
    func = getattr(arc4py, make)
    with pytest.raises(TypeError) as info:
        func(42)
    msg = str(info.value)
    assert f"arc4py.{make} cannot be seeded" in msg
    assert "not int" in msg and "CSPRNG" in msg and "OS" in msg
    assert "numpy.random.default_rng(seed)" in msg
    with pytest.raises(TypeError, match="not ndarray"):
        func(np.arange(10**6))  # the type, not a million-element repr


@needs_numpy
def test_default_rng_takes_numpy_signature():
    try:
        numpy_params = list(inspect.signature(np.random.default_rng).parameters)
    except ValueError:   # numpy 1.x: a builtin with no signature; its docs say
        numpy_params = ["seed"]
    assert list(inspect.signature(arc4py.default_rng).parameters) == numpy_params
    for rng in (arc4py.default_rng(None), arc4py.default_rng(seed=None),
                arc4py.default_rng()):
        assert isinstance(rng, np.random.Generator)
        assert isinstance(rng.bit_generator, arc4py.BitGenerator)


# ---- size= everywhere a scalar call has an array form ------------------------------

@needs_numpy
def test_random_takes_size():
    assert isinstance(arc4py.random(), float)
    assert isinstance(arc4py.random(size=None), float)
    with pytest.raises(TypeError):  # keyword-only, as the stdlib has none
        arc4py.random(3)
    for size, shape in ((5, (5,)), ((2, 3), (2, 3)), ((), ()), (0, (0,))):
        a = arc4py.random(size=size)
        assert a.shape == shape and a.dtype == np.float64
        assert a.flags.c_contiguous and a.flags.owndata
    a = arc4py.random(size=100_000)
    assert (a >= 0.0).all() and (a < 1.0).all()
    assert 0.49 < a.mean() < 0.51
    # 53 bits: every value is a multiple of 2**-53
    assert ((a * 2.0**53) % 1 == 0).all()
    with pytest.raises(ValueError):
        arc4py.random(size=-1)
    with pytest.raises(TypeError):
        arc4py.random(size=1.5)


@needs_numpy
@pytest.mark.parametrize("bound", [1, 2, 6, 1000, 2**31 + 1, 2**32 - 1, 2**32])
def test_arc4random_uniform_takes_size(bound):
    a = arc4py.arc4random_uniform(bound, size=(50, 40))
    assert a.shape == (50, 40) and a.dtype == np.uint32 and a.flags.owndata
    assert int(a.max()) < bound
    b = arc4py.arc4random_uniform(upper_bound=bound, size=3)
    assert b.shape == (3,)
    if bound == 1:
        assert not a.any()


@needs_numpy
def test_arc4random_uniform_array_is_unbiased():
    # 3 * 2**30 leaves a third of the 32-bit words biased: a reduction
    # without rejection would put half of them, not a third, below 2**30.
    n = 3 * 2**30
    a = arc4py.arc4random_uniform(n, size=300_000)
    low = (a < 2**30).mean()
    assert abs(low - 1 / 3) < 0.01, low
    counts = np.bincount(arc4py.arc4random_uniform(6, size=600_000), minlength=6)
    assert counts.min() > 98_000 and counts.max() < 102_000, counts


@needs_numpy
def test_arc4random_uniform_size_checks_the_bound_first():
    for bad in (0, -1, 2**32 + 1):
        with pytest.raises(ValueError, match="upper_bound"):
            arc4py.arc4random_uniform(bad, size=3)
    with pytest.raises(TypeError):
        arc4py.arc4random_uniform(1.5, size=3)


def test_arc4random_uniform_zero_differs_from_c_and_says_why():
    with pytest.raises(ValueError, match=r"upper_bound must be in \[1, 2\*\*32\], not 0"):
        arc4py.arc4random_uniform(0)
    doc = arc4py.arc4random_uniform.__doc__
    assert "arc4random_uniform(0)" in doc and "returns 0" in doc


# ---- introspection -----------------------------------------------------------

@needs_numpy
def test_dir_lists_bit_generator():
    assert "BitGenerator" in dir(arc4py)
    assert "BitGenerator" in arc4py.__all__
    assert hasattr(arc4py, "BitGenerator")
    assert set(arc4py.__all__) <= set(dir(arc4py))


def test_star_import_and_dir_agree():
    names = {}
    exec("from arc4py import *", names)
    assert set(arc4py.__all__) <= set(names)
    assert arc4py.__all__ == sorted(arc4py.__all__)


def test_module_docstring_is_a_passing_doctest():
    result = doctest.testmod(arc4py, verbose=False, report=False)
    assert result.attempted >= 5
    assert result.failed == 0, result


# ---- without numpy -------------------------------------------------------------

NO_NUMPY = NO_NUMPY_FINDER


def test_without_numpy_names_are_absent_not_import_errors():
    proc = run_child(textwrap.dedent(NO_NUMPY) + textwrap.dedent("""
        import arc4py
        names = {}
        exec("from arc4py import *", names)
        assert "BitGenerator" not in names, "star import brought BitGenerator"
        assert "SystemRandom" in names and "random" in names
        assert not hasattr(arc4py, "BitGenerator")
        assert "BitGenerator" not in dir(arc4py)
        assert "BitGenerator" not in arc4py.__all__
        # (the AttributeError's words and the numpy calls' ImportError:
        # tests/numpy_api/test_numpy.py)
        assert isinstance(arc4py.random(), float)
        assert 0 <= arc4py.arc4random_uniform(6) < 6
        assert "numpy" not in sys.modules
        print("ok")
    """))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# ---- importing from the source tree -----------------------------------------------

def _source_tree(tmp_path):
    """A copy of the package's Python and Cython sources, no compiled
    module: what a checkout holds before (or beside) a build."""
    src = tmp_path / "checkout" / "arc4py"
    pkg = Path(arc4py.__file__).resolve().parent
    shutil.copytree(pkg, src, ignore=shutil.ignore_patterns(
        "*.so", "*.pyd", "*.c", "__pycache__", "build"))
    if not (src / "_core.pyx").exists():
        # an installed arc4py holds no .pyx: take the checkout's
        pyx = REPO / "arc4py" / "_core.pyx"
        if not pyx.exists():
            pytest.skip("no arc4py sources (_core.pyx) next to the tests")
        shutil.copy(pyx, src / "_core.pyx")
    return src.parent


def _no_site_env(path):
    """A child's environment with only ``path`` on PYTHONPATH; run it with
    -S, so that no site directory (and no editable install's import hook,
    which would find the compiled modules elsewhere) is seen."""
    env = child_env(ARC4PY_BACKEND=None)
    env.pop("PYTHONPATH", None)
    if path:
        env["PYTHONPATH"] = str(path)
    return env


def _failed_import(checkout, path):
    """``import arc4py`` in ``checkout`` with ``path`` on PYTHONPATH: it
    must fail; (its last stderr line, all of stderr)."""
    proc = run_python(["-S", "-c", "import arc4py"], cwd=checkout,
                      env=_no_site_env(path))
    assert proc.returncode != 0
    return proc.stderr.strip().splitlines()[-1], proc.stderr


def test_import_from_the_source_tree_says_what_happened(tmp_path):
    checkout = _source_tree(tmp_path)
    # The built arc4py is on the path too, after the checkout ('' first).
    last, stderr = _failed_import(checkout, PKG_PARENT)
    assert last.startswith("ImportError: Error importing arc4py: you should "
                           "not try to import arc4py from its source tree"), last
    assert str(checkout / "arc4py") in last
    assert "arc4py._core is missing" in last
    assert "the installed arc4py is in" in last and "leave the source tree" in last
    assert "ModuleNotFoundError" in stderr  # the cause stays chained


def test_in_the_checkout_the_command_runs_and_python_m_does_not(tmp_path):
    # docs/building.rst: the arc4py command (a script outside the checkout,
    # as pip installs it) imports the installed package; `python -m arc4py`
    # started in the checkout imports its source folder
    checkout = _source_tree(tmp_path)
    command = tmp_path / "bin" / "arc4py_command.py"
    command.parent.mkdir()
    command.write_text("import sys\nfrom arc4py.cli import main\nsys.exit(main())\n")
    ran = run_python([command, "info", "--json"], cwd=checkout)
    assert ran.returncode == 0, ran.stderr
    refused = run_python(["-m", "arc4py", "info"], cwd=checkout)
    assert refused.returncode != 0
    assert "source tree" in refused.stderr.strip().splitlines()[-1]


def test_import_from_a_source_tree_with_no_install_says_how_to_build(tmp_path):
    last, _ = _failed_import(_source_tree(tmp_path), None)
    assert "source tree" in last and "pip install -e ." in last, last


def test_an_incomplete_install_is_not_called_a_source_tree(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(Path(arc4py.__file__).resolve().parent, site / "arc4py",
                    ignore=shutil.ignore_patterns("_core.*", "*.pyx",
                                                  "__pycache__"))
    proc = run_python(["-S", "-c", "import arc4py"], env=_no_site_env(site))
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert "installation is incomplete" in last and "reinstall" in last, last


# ---- a bad ARC4PY_BACKEND -----------------------------------------------------------

@pytest.mark.parametrize("value", ["bogus", "mmx"])
def test_bad_backend_error_names_the_variable(value):
    proc = run_child("import arc4py", ARC4PY_BACKEND=value)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ValueError: ARC4PY_BACKEND={value!r} in the "
                           f"environment: unknown backend {value!r}"), last
    for name in arc4py.backends():
        assert name in last
    # the message whole: what unsetting it gives, and a full stop
    assert last.endswith(f"or unset it to use the fastest "
                         f"({arc4py.backends()[0]})."), last
    assert "arc4py info" not in last


def test_bad_backend_error_is_raised_on_every_import():
    proc = run_child("""
        import sys
        for _ in range(2):
            try:
                import arc4py
            except ValueError as exc:
                assert "ARC4PY_BACKEND" in str(exc)
            else:
                raise SystemExit("imported")
        print("ok")
    """, ARC4PY_BACKEND="bogus")
    assert proc.stdout.strip() == "ok", proc.stderr


def assert_failed_on_bad_backend(proc):
    """The command stopped at its own ``import arc4py`` as it stops on any
    bad usage: no output, exit status 2, and one line on stderr, the
    ValueError's message whole (the variable, its value, the cores here)."""
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.endswith(".\n") and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("arc4py: error: ARC4PY_BACKEND='bogus' in "
                                  "the environment: unknown backend"), proc.stderr
    for name in arc4py.backends():
        assert name in proc.stderr


@pytest.mark.parametrize("argv", [["info"], ["bytes", "16"]],
                         ids=["info", "bytes"])
def test_the_command_fails_under_a_bad_backend(argv):
    assert_failed_on_bad_backend(
        run_python(["-m", "arc4py", *argv], ARC4PY_BACKEND="bogus"))


def test_a_module_importing_the_command_gets_the_valueerror():
    # arc4py.cli imported by a module of a program (not its __main__, not
    # the command's launcher): the import's ValueError, as for any code
    script = (
        "import types\n"
        "tool = types.ModuleType('tool')\n"
        "try:\n"
        "    exec('import arc4py.cli', tool.__dict__)\n"
        "except ValueError as exc:\n"
        "    print('ValueError', str(exc)[:22])\n")
    proc = run_python(["-c", script], ARC4PY_BACKEND="bogus")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout == "ValueError ARC4PY_BACKEND='bogus'\n"


def test_the_console_script_fails_under_a_bad_backend():
    script = shutil.which("arc4py", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("no arc4py console script beside this interpreter")
    assert_failed_on_bad_backend(subprocess.run(
        [script, "info"], capture_output=True, text=True,
        env=child_env(ARC4PY_BACKEND="bogus"), timeout=120))


# ---- arc4py bytes N ----------------------------------------------------------------

@pytest.mark.parametrize("text, n", [
    ("16", 16), ("0", 0), ("1K", 1024), ("1k", 1024), ("1KiB", 1024),
    ("1kib", 1024), ("1kb", 1000), ("1KB", 1000), ("1kB", 1000),
    ("2M", 2 << 20), ("2MiB", 2 << 20), ("2MB", 2_000_000),
    ("1G", 1 << 30), ("1GB", 10**9), ("1gib", 1 << 30),
])
def test_bytes_count_units(text, n):
    assert parse_count(text) == n


@pytest.mark.parametrize("text", [" 16", "16 ", "1 K", "\t8", "1B", "1iB",
                                  "1KK", "+5", "1_000", "K", "", "1e3"])
def test_bytes_count_refuses_the_rest(text):
    with pytest.raises(ValueError, match="N must be an integer >= 0"):
        parse_count(text)


def test_bytes_cli_takes_decimal_units_and_refuses_spaces():
    r = run_python(["-m", "arc4py", "bytes", "1kb"], text=False,
                   ARC4PY_BACKEND=None)
    assert r.returncode == 0 and len(r.stdout) == 1000
    r = run_python(["-m", "arc4py", "bytes", " 16"], text=False,
                   ARC4PY_BACKEND=None)
    assert r.returncode == 2 and r.stdout == b""
    assert b"' 16'" in r.stderr


# ---- what the stubs say -----------------------------------------------------------

def test_stubs_carry_the_new_names():
    pkg = Path(arc4py.__file__).resolve().parent
    init = (pkg / "__init__.pyi").read_text()
    core = (pkg / "_core.pyi").read_text()
    assert "SystemRandom as SystemRandom" in init
    assert "SystemRandom = Random" in (pkg / "_random.pyi").read_text()
    assert "def randbelow(exclusive_upper_bound: SupportsIndex)" in core
    assert "def random(*, size: _Size) -> npt.NDArray[np.float64]" in core
    numpy_stub = (pkg / "_numpy.pyi").read_text()
    assert "def jumped(self, jumps: SupportsIndex = 1) -> Self" in numpy_stub
    assert "seed: _Seedless | BitGenerator | numpy.random.Generator" in numpy_stub
    assert textwrap.dedent("""\
        @overload
        def arc4random_uniform(upper_bound: SupportsIndex, size: _Size)""") in core
