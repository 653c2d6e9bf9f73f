"""arc4py info: the text and JSON reports, and a core forced by
ARC4PY_BACKEND.  Each run is a child interpreter (helpers.run_cli)."""
import json

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
                 "C API copies", "numpy", "CPU features"):
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
