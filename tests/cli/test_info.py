"""arc4py info: the text and JSON reports, and a core forced by
ARC4PY_BACKEND.  Each run is a child interpreter (helpers.run_cli)."""
import json
import sysconfig

import pytest

import arc4py
from helpers import child_env, run_cli

# the fastest core in a child with no ARC4PY_BACKEND
FIRST_CORE = arc4py.backends()[0]


def test_info_text():
    r = run_cli("info")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert arc4py.__version__ in out
    assert FIRST_CORE in out
    for word in ("core", "fork protection", "reseed interval", "buffer size",
                 "C API copies", "numpy", "CPU features", "python build"):
        assert word in out


def test_info_json():
    r = run_cli("info", "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["version"] == arc4py.__version__
    assert info["backend"] == FIRST_CORE
    assert info["backends"] == list(arc4py.backends())
    assert info["backend"] in info["backends"]
    assert info["cpu_features"] == list(arc4py.cpu_features())
    assert set(info["fork_protection"]) <= {"wipeonfork", "atfork",
                                            "dontdump", "vdso"}
    assert info["reseed_interval"] == arc4py._core.RESEED_INTERVAL > 0
    assert info["buffer_bytes"] == arc4py._core.BUFFER_BYTES > 0
    assert info["c_api_hand_out"] == arc4py._core._capi_hand_out
    assert "numpy" in info


def test_info_tells_not_built_from_not_on_this_cpu():
    """A core left out of the build is "not built", with why; a known core
    the CPU cannot run is "not on this CPU"; neither is said of the other."""
    from arc4py.cli.info import collect, format_info
    info = collect()
    info.update(backends=["sse2", "generic"], all_backends=["ssse3", "sse2", "generic"],
                not_built={"avx2": "left out by name (ARC4PY_NO_AVX2)"})
    line = next(x for x in format_info(info) if x.startswith("available cores"))
    assert "not built: avx2, left out by name (ARC4PY_NO_AVX2)" in line
    assert "not on this CPU: ssse3)" in line
    assert json.loads(run_cli("info", "--json").stdout)["not_built"] == arc4py._core._not_built


@pytest.mark.slow
def test_info_reports_a_forced_core():
    env = child_env(ARC4PY_BACKEND="generic")
    r = run_cli("info", env=env)
    assert r.returncode == 0, r.stderr
    core_line = next(line for line in r.stdout.decode().splitlines()
                     if line.startswith("core"))
    assert "generic" in core_line
    info = json.loads(run_cli("info", "--json", env=env).stdout)
    assert info["backend"] == "generic"
    assert info["backend_env"] == "generic"


FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


@pytest.mark.parametrize("gil", ["0", "1"])
def test_info_says_whether_the_build_is_free_threaded_and_the_gil_on(gil):
    """On a GIL build the GIL is always on (PYTHON_GIL=0 is refused there
    with a fatal error from 3.13 on, so the child runs without it); on a
    free-threaded one, PYTHON_GIL decides and info reports what it did."""
    env = child_env(ARC4PY_BACKEND=None, PYTHONIOENCODING="utf-8",
                    PYTHON_GIL=gil if FREE_THREADED else None)
    info = json.loads(run_cli("info", "--json", env=env).stdout)
    assert info["free_threaded"] is FREE_THREADED
    assert info["gil_enabled"] is (not FREE_THREADED or gil == "1")
    line = next(ln for ln in run_cli("info", env=env).stdout.decode().splitlines()
                if ln.startswith("python build"))
    if not FREE_THREADED:
        assert line.endswith("with a GIL")
    else:
        assert ("GIL on" if gil == "1" else "free-threaded, GIL off") in line
