"""arc4py bytes: exact lengths, hex, small requests, an endless stream into
a pipe that closes, bad counts, and what it leaves unloaded.  Each run is a
child interpreter (helpers.run_cli)."""
import os
import string
import subprocess
import sys

import pytest

from arc4py.__main__ import parse_count
from arc4py.cli.bytes import DIRECT_BYTES, MAX_REQUEST_SIZE
from helpers import PYTHON, child_env, one_line, run_child, run_cli, start_python


@pytest.mark.parametrize("n", [0, 1, 1000, 65537])
def test_bytes_exact_length(n):
    r = run_cli("bytes", str(n))
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    assert len(r.stdout) == n


def test_bytes_many_chunks():
    # past 4 MiB the chunks come from several threads: exact length, and
    # no chunk repeats another
    n = 5 * (1 << 20) + 7
    r = run_cli("bytes", str(n))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert len(out) == n
    chunks = [out[i:i + (1 << 20)] for i in range(0, 5 << 20, 1 << 20)]
    assert len(set(chunks)) == len(chunks)
    assert out.count(0) < n // 128   # about n / 256 zero bytes


def test_bytes_suffix():
    r = run_cli("bytes", "2K")
    assert r.returncode == 0
    assert len(r.stdout) == 2048


def test_parse_count():
    assert parse_count("-") is None
    assert parse_count("0") == 0
    assert parse_count("4K") == 4096
    assert parse_count("1MiB") == 1 << 20
    for bad in ("-5", "abc", "1.5", "", "5X", "0x10"):
        with pytest.raises(ValueError):
            parse_count(bad)


@pytest.mark.parametrize("n", [0, 1, 1000])
def test_bytes_hex(n):
    r = run_cli("bytes", str(n), "--hex")
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode("ascii")
    assert text.endswith("\n")
    digits = text[:-1]
    assert len(digits) == 2 * n
    assert set(digits) <= set(string.hexdigits.lower())


def test_bytes_differ_between_runs():
    assert run_cli("bytes", "32").stdout != run_cli("bytes", "32").stdout


@pytest.mark.parametrize("n, k", [(0, 16), (1, 16), (1000, 16), (1000, 7),
                                  (70000, MAX_REQUEST_SIZE), (300000, 1)])
def test_bytes_from_small_requests_exact_length(n, k):
    r = run_cli("bytes", str(n), "--request-size", str(k))
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    assert len(r.stdout) == n
    if n >= 70000:
        # random-looking: no 16-byte piece repeats, about n/256 zero bytes
        pieces = [r.stdout[i:i + 16] for i in range(0, n - 15, 16)]
        assert len(set(pieces)) == len(pieces)
        assert r.stdout.count(0) < n // 128


def test_bytes_from_small_requests_hex():
    r = run_cli("bytes", "33", "--hex", "--request-size", "4")
    assert r.returncode == 0, r.stderr
    digits = r.stdout.decode("ascii")
    assert digits.endswith("\n") and len(digits) == 67
    assert set(digits[:-1]) <= set(string.hexdigits.lower())


def test_request_size_limit_is_the_buffered_path():
    # from DIRECT_BYTES on, a request bypasses the buffer: not that path
    assert MAX_REQUEST_SIZE == DIRECT_BYTES - 1 > 0


@pytest.mark.parametrize("bad", ["0", str(DIRECT_BYTES), "-1", "x", "1.5"])
def test_bytes_bad_request_size(bad):
    r = run_cli("bytes", "10", "--request-size", bad)
    assert r.returncode == 2
    assert r.stdout == b""
    assert "--request-size" in one_line(r.stderr)


@pytest.mark.parametrize("extra", [[], ["--hex"], ["--request-size", "16"]])
def test_endless_stream_into_a_closed_pipe(extra, tmp_path):
    proc = start_python(["-m", "arc4py", "bytes", "-", *extra], cwd=tmp_path,
                        ARC4PY_BACKEND=None)
    try:
        head = proc.stdout.read(100)
        proc.stdout.close()          # the reader goes away, like head -c 100
        rc = proc.wait(timeout=60)
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert len(head) == 100
    assert rc == 0
    assert err == b""


@pytest.mark.parametrize("bad", ["-5", "abc", "1.5"])
def test_bytes_bad_count(bad):
    r = run_cli("bytes", bad)
    assert r.returncode == 2
    assert r.stdout == b""
    assert bad in one_line(r.stderr)


@pytest.mark.skipif(sys.platform == "win32", reason="Windows cannot start a "
                    "child without a stderr (subprocess has no preexec_fn there)")
@pytest.mark.parametrize("args", [["bytes", "-5"], ["bytes", "abc"],
                                  ["bytes", "8", "--request-size", "0"], []])
def test_usage_error_with_stderr_closed_is_status_2(args, tmp_path):
    # 2>&-: the message has nowhere to go, the status still says usage
    proc = subprocess.run([PYTHON, "-m", "arc4py", *args],
                          stdout=subprocess.PIPE, cwd=tmp_path, timeout=120,
                          env=child_env(ARC4PY_BACKEND=None),
                          preexec_fn=lambda: os.close(2))
    assert proc.returncode == 2
    assert proc.stdout == b""


def test_bytes_loads_no_numpy_and_no_bench_engine():
    proc = run_child("""
        import sys
        from arc4py.cli import main
        assert main(["bytes", "16"]) == 0
        heavy = [m for m in ("numpy", "matplotlib", "ctypes", "arc4py._numpy")
                 if m in sys.modules]
        sys.stderr.write(repr(heavy))
    """, env=child_env(ARC4PY_BACKEND=None), text=False)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) == 16
    assert proc.stderr == b"[]"
