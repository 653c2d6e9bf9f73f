"""The command line: python -m arc4py bench | info | bytes.

Every command runs in a child interpreter that imports the same arc4py as
the tests (helpers.child_env), from an empty directory, with no
ARC4PY_BACKEND unless a test sets one.  The --c-api rendering is checked in
process with a fake arc4py.cli.capi: its figures are the fake's, not
timings.
"""
import importlib.util
import json
import os
import string
import subprocess
import sys
import types

import pytest

import arc4py
from arc4py.__main__ import main, parse_count
from arc4py.cli import report
from arc4py.cli.bytes import DIRECT_BYTES, MAX_REQUEST_SIZE
from helpers import PYTHON, child_env, run_child, run_python, run_to_closed_pipe, start_python

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
# the fastest core in a child with no ARC4PY_BACKEND
FIRST_CORE = arc4py.backends()[0]


def cli(*args, env=None, timeout=120):
    """Run ``python -m arc4py *args``; the CompletedProcess (bytes, UTF-8
    text: Windows' pipes otherwise get the ANSI code page)."""
    return run_python(["-m", "arc4py", *args], text=False, timeout=timeout,
                      env=env or child_env(ARC4PY_BACKEND=None, PYTHONIOENCODING="utf-8"))


def one_line(stderr):
    lines = stderr.decode().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# ---- the command as a whole -----------------------------------------------

def test_version():
    r = cli("--version")
    assert r.returncode == 0
    assert arc4py.__version__ in r.stdout.decode()


def test_no_command_is_a_usage_error():
    r = cli()
    assert r.returncode == 2
    assert b"bench" in r.stderr and b"bytes" in r.stderr


@pytest.mark.parametrize("cmd", [[], ["bench"], ["info"], ["bytes"]])
def test_help(cmd):
    r = cli(*cmd, "--help")
    assert r.returncode == 0, r.stderr
    assert b"usage:" in r.stdout
    assert r.stderr == b""


def test_unknown_option_is_status_2():
    r = cli("bytes", "--bogus", "3")
    assert r.returncode == 2
    assert "bogus" in one_line(r.stderr)


@pytest.mark.parametrize("args, command", [
    (["bytes", "4", "kB"], "arc4py bytes"),
    (["info", "extra"], "arc4py info"),
    (["bench", "--json", "extra"], "arc4py bench"),
    (["--bogus"], "arc4py"),
])
def test_usage_error_names_its_commands_help(args, command):
    # a stray argument after a command is that command's error, pointing
    # to that command's --help
    r = cli(*args)
    assert r.returncode == 2
    assert r.stdout == b""
    line = one_line(r.stderr)
    assert line.startswith(f"{command}: error: unrecognized arguments: ")
    assert line.endswith(f"(see '{command} --help')")


def test_main_in_process(capsys):
    assert main(["--version"]) == 0
    assert arc4py.__version__ in capsys.readouterr().out
    assert main(["info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["backend"] == arc4py.backend()
    assert main(["bytes", "abc"]) == 2


# ---- bytes ------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 1000, 65537])
def test_bytes_exact_length(n):
    r = cli("bytes", str(n))
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    assert len(r.stdout) == n


def test_bytes_many_chunks():
    # past 4 MiB the chunks come from several threads: exact length, and
    # no chunk repeats another
    n = 5 * (1 << 20) + 7
    r = cli("bytes", str(n))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert len(out) == n
    chunks = [out[i:i + (1 << 20)] for i in range(0, 5 << 20, 1 << 20)]
    assert len(set(chunks)) == len(chunks)
    assert out.count(0) < n // 128   # about n / 256 zero bytes


def test_bytes_suffix():
    r = cli("bytes", "2K")
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
    r = cli("bytes", str(n), "--hex")
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode("ascii")
    assert text.endswith("\n")
    digits = text[:-1]
    assert len(digits) == 2 * n
    assert set(digits) <= set(string.hexdigits.lower())


def test_bytes_differ_between_runs():
    assert cli("bytes", "32").stdout != cli("bytes", "32").stdout


@pytest.mark.parametrize("n, k", [(0, 16), (1, 16), (1000, 16), (1000, 7),
                                  (70000, MAX_REQUEST_SIZE), (300000, 1)])
def test_bytes_from_small_requests_exact_length(n, k):
    r = cli("bytes", str(n), "--request-size", str(k))
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    assert len(r.stdout) == n
    if n >= 70000:
        # random-looking: no 16-byte piece repeats, about n/256 zero bytes
        pieces = [r.stdout[i:i + 16] for i in range(0, n - 15, 16)]
        assert len(set(pieces)) == len(pieces)
        assert r.stdout.count(0) < n // 128


def test_bytes_from_small_requests_hex():
    r = cli("bytes", "33", "--hex", "--request-size", "4")
    assert r.returncode == 0, r.stderr
    digits = r.stdout.decode("ascii")
    assert digits.endswith("\n") and len(digits) == 67
    assert set(digits[:-1]) <= set(string.hexdigits.lower())


def test_request_size_limit_is_the_buffered_path():
    # from DIRECT_BYTES on, a request bypasses the buffer: not that path
    assert MAX_REQUEST_SIZE == DIRECT_BYTES - 1 > 0


@pytest.mark.parametrize("bad", ["0", str(DIRECT_BYTES), "-1", "x", "1.5"])
def test_bytes_bad_request_size(bad):
    r = cli("bytes", "10", "--request-size", bad)
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
    r = cli("bytes", bad)
    assert r.returncode == 2
    assert r.stdout == b""
    assert bad in one_line(r.stderr)


# ---- info -------------------------------------------------------------------

def test_info_text():
    r = cli("info")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert arc4py.__version__ in out
    assert FIRST_CORE in out
    for word in ("core", "fork protection", "reseed interval", "buffer size",
                 "C API copies", "numpy", "CPU features"):
        assert word in out


def test_info_json():
    r = cli("info", "--json")
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
    r = cli("info", env=env)
    assert r.returncode == 0, r.stderr
    core_line = next(line for line in r.stdout.decode().splitlines()
                     if line.startswith("core"))
    assert "generic" in core_line
    info = json.loads(cli("info", "--json", env=env).stdout)
    assert info["backend"] == "generic"
    assert info["backend_env"] == "generic"


# ---- bench ------------------------------------------------------------------

QUICK = ["--quick", "--duration", "0.01", "--threads", "2"]


def positive_figures(report):
    assert report["figures"]
    for f in report["figures"]:
        for key in ("mb_per_s", "calls_per_s", "seconds", "calls", "bytes",
                    "threads"):
            assert isinstance(f[key], (int, float)) and f[key] > 0, f
    return report["figures"]


def test_bench_quick_json():
    rows = "arc4random,buf16,fill64k"
    r = cli("bench", *QUICK, "--json", "--rows", rows)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    for key in ("arc4py_version", "backend", "python_version", "cpu_model",
                "unit"):
        assert report[key]
    assert report["arc4py_version"] == arc4py.__version__
    assert report["backend"] == FIRST_CORE
    assert report["columns"] == [f"arc4py:{FIRST_CORE}"]
    assert [row["id"] for row in report["rows"]] == rows.split(",")
    figures = positive_figures(report)
    seen = {(f["row"], f["threads"]) for f in figures}
    assert seen == {(row, t) for row in rows.split(",") for t in (1, 2)}
    sizes = {f["row"]: f["bytes"] for f in figures}
    assert sizes == {"arc4random": 4, "buf16": 16, "fill64k": 65536}


def test_bench_compare_json():
    r = cli("bench", *QUICK, "--json", "--compare", "--rows", "buf32,fill4k")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    cols = report["columns"]
    assert cols[0] == f"arc4py:{FIRST_CORE}"
    assert "os.urandom" in cols and "secrets" in cols
    # every optional peer is either measured or skipped with a reason
    for peer in ("numpy", "libc"):
        assert (peer in cols) != (peer in report["skipped"])
    figures = positive_figures(report)
    assert {f["source"] for f in figures} == set(cols)


@pytest.mark.slow
def test_bench_table():
    r = cli("bench", *QUICK, "--compare", "--rows", "arc4random,fill4k")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "MB/s" in out and "10**6" in out
    assert "arc4random" in out and "fill 4 KiB" in out
    assert "os.urandom" in out and "GIL" in out
    assert r.stderr == b""      # no progress line when stderr is not a TTY


@pytest.mark.slow
@pytest.mark.skipif(len(arc4py.backends()) < 2, reason="one core only")
def test_bench_other_cores_in_subprocesses():
    r = cli("bench", *QUICK, "--json", "--backend", "all", "--rows", "fill4k",
            "--threads", "1")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["columns"] == [f"arc4py:{c}" for c in arc4py.backends()]
    figures = positive_figures(report)
    assert {f["source"] for f in figures} == set(report["columns"])


@pytest.mark.parametrize("opt", [["--backend", "nosuchcore"],
                                 ["--rows", "nosuchrow"],
                                 ["--threads", "0"],
                                 ["--duration", "-1"]])
def test_bench_bad_options(opt):
    r = cli("bench", "--json", *opt)
    assert r.returncode == 2
    assert r.stdout == b""
    one_line(r.stderr)


def test_bench_plot(tmp_path):
    png = tmp_path / "mbps.png"
    r = cli("bench", *QUICK, "--rows", "buf16,fill4k", "--plot", str(png))
    if HAVE_MATPLOTLIB:
        assert r.returncode == 0, r.stderr
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert r.returncode == 2
        line = one_line(r.stderr)
        assert "matplotlib" in line
        assert "pip install 'arc4py[plot]'" in line
        assert not png.exists()
        assert r.stdout == b""


@pytest.mark.parametrize("where", ["no folder", "a folder"])
def test_bench_plot_path_is_checked_before_measuring(where, tmp_path,
                                                     monkeypatch, capsys):
    from arc4py.cli import bench

    def collect(*args, **kwargs):
        raise AssertionError("the bench ran")

    monkeypatch.setattr(bench, "collect", collect)
    path = tmp_path / "nonexistent" / "x.png" if where == "no folder" \
        else tmp_path
    assert main(["bench", "--rows", "buf16", "--plot", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1, captured.err
    assert captured.err.startswith("arc4py bench: error: --plot: ")
    assert not (tmp_path / "nonexistent").exists()


def test_bench_plot_to_a_missing_folder_is_one_line_at_once(tmp_path):
    r = cli("bench", "--plot", str(tmp_path / "nonexistent" / "x.png"))
    assert r.returncode == 2
    assert r.stdout == b""
    assert "no such folder" in one_line(r.stderr)


# ---- write errors: one line and status 1; a reader that leaves: quiet ---------

#: Each command, run short.
COMMANDS = {
    "bytes": ["bytes", "10M"],
    "info": ["info"],
    "bench": ["bench", "--rows", "arc4random", "--duration", "0.002",
              "--threads", "1"],
}


def cli_to(stdout, args, cwd):
    """Run ``python -m arc4py *args`` in ``cwd`` with stdout as given:
    "full" (/dev/full), "read-only" (a descriptor opened for reading only)
    or "closed" (no fd 1 at all); (exit status, stderr)."""
    argv = [PYTHON, "-m", "arc4py", *args]
    env = child_env(ARC4PY_BACKEND=None)
    if stdout == "closed":
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, env=env, cwd=cwd,
                                preexec_fn=lambda: os.close(1))
    else:
        with open("/dev/full" if stdout == "full" else os.devnull,
                  "wb" if stdout == "full" else "rb") as out:
            proc = start_python(argv[1:], stdout=out.fileno(), cwd=cwd,
                                env=env)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return proc.returncode, err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_full_disk_is_one_line_and_status_1(command, tmp_path):
    rc, err = cli_to("full", COMMANDS[command], tmp_path)
    assert rc == 1, err
    assert one_line(err) == (f"arc4py {command}: error: cannot write to "
                                  f"stdout: No space left on device")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_closed_stdout_is_one_line_and_status_1(command, tmp_path):
    rc, err = cli_to("closed", COMMANDS[command], tmp_path)
    assert rc == 1, err
    assert one_line(err) == f"arc4py {command}: error: stdout is closed"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unwritable_stdout_is_one_line_and_status_1(command, tmp_path):
    rc, err = cli_to("read-only", COMMANDS[command], tmp_path)
    assert rc == 1, err
    assert one_line(err) == (f"arc4py {command}: error: cannot write to "
                                  f"stdout: Bad file descriptor")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [["--help"], ["bytes", "--help"],
                                  ["--version"]])
def test_help_into_a_full_disk_is_one_line(args, tmp_path):
    rc, err = cli_to("full", args, tmp_path)
    assert rc == 1, err
    assert "cannot write to stdout: No space left on device" in one_line(err)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_reader_gone_ends_quietly(command, tmp_path):
    status, err = run_to_closed_pipe(["-m", "arc4py", *COMMANDS[command]], cwd=tmp_path)
    assert status == 0, err
    assert err == b""


# ---- bench --c-api (a fake C-API bench: rendering, not timing) ---------------

FAKE_C_API = {
    "columns": ["arc4py", "libbsd", "libc", "openssl"],
    "rows": [
        {"label": "arc4random", "size": 4,
         "mbps": {"arc4py": 400.0, "libbsd": 100.0, "libc": 200.0,
                  "openssl": None}},
        {"label": "arc4random_buf(16)", "size": 16,
         "mbps": {"arc4py": 1600.0, "libbsd": 800.0, "libc": 400.0,
                  "openssl": None}},
    ],
    "skipped": {"openssl": "libcrypto.so.3 not found"},
}
TINY = ["--rows", "fill4k", "--duration", "0.005", "--threads", "1"]


def fake_module(monkeypatch, measure_c_api):
    """A stand-in arc4py.cli.capi: ``measure_c_api`` and the C loops'
    columns."""
    module = types.ModuleType("arc4py.cli.capi")
    module.measure_c_api = measure_c_api
    module.c_loops = types.SimpleNamespace(
        columns=lambda: dict.fromkeys(FAKE_C_API["columns"]))
    monkeypatch.setitem(sys.modules, "arc4py.cli.capi", module)


@pytest.fixture
def fake_c_api(monkeypatch):
    """The fake's calls: (row ids, seconds per figure) of each."""
    calls = []

    def measure_c_api(rows, duration):
        calls.append(([r.id for r in rows], duration))
        return json.loads(json.dumps(FAKE_C_API))

    fake_module(monkeypatch, measure_c_api)
    return calls


def test_c_api_table(fake_c_api, capsys):
    assert main(["bench", "--c-api", "--quick", *TINY]) == 0
    # the report's rows and seconds per figure (an explicit one wins)
    assert fake_c_api == [(["fill4k"], 0.005)]
    out = capsys.readouterr().out
    assert "fill 4 KiB" in out          # the Python-level report comes first
    lines = out[out.index("C API"):].splitlines()
    assert "vs libbsd" in lines[0]
    assert lines[1].split() == ["request", "arc4py", "libbsd", "libc",
                                "openssl"]
    assert lines[3].split() == ["arc4random", "400", "(4.00x)", "100",
                                "200", "(2.00x)", "-"]
    assert lines[4].split() == ["arc4random_buf(16)", "1,600", "(2.00x)",
                                "800", "400", "(0.50x)", "-"]
    assert "openssl: skipped: libcrypto.so.3 not found." in out


def test_c_api_json(fake_c_api, capsys):
    assert main(["bench", "--c-api", "--json", *TINY]) == 0
    assert fake_c_api == [(["fill4k"], 0.005)]
    out = json.loads(capsys.readouterr().out)
    assert out["c_api"] == FAKE_C_API
    assert out["figures"]


def test_c_api_quick_shares_the_seconds_per_figure(fake_c_api, capsys):
    assert main(["bench", "--c-api", "--quick", "--json", "--rows", "buf16",
                 "--threads", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert fake_c_api == [(["buf16"], out["duration"])]


def test_c_api_without_libbsd_has_no_ratios():
    c_api = {"columns": ["arc4py", "libc"], "skipped": {"libbsd": "absent"},
             "rows": [{"label": "arc4random", "size": 4,
                       "mbps": {"arc4py": 50.0, "libc": 25.0}}]}
    lines = report.format_c_api(c_api)
    assert "ratio" not in lines[0]
    assert lines[3].split() == ["arc4random", "50.0", "25.0"]
    assert "libbsd: skipped: absent." in lines[-1]


@pytest.mark.skipif(not HAVE_MATPLOTLIB, reason="matplotlib is not installed "
                    "(pip install 'arc4py[plot]')")
def test_c_api_plot(fake_c_api, tmp_path, capsys):
    png = tmp_path / "c.png"
    assert main(["bench", "--c-api", *TINY, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot written to {png}" in capsys.readouterr().out


def test_c_api_missing_is_a_clear_error(monkeypatch, capsys):
    # None in sys.modules makes the import fail, as in a build without the
    # C loops
    monkeypatch.setitem(sys.modules, "arc4py._bench_capi_c", None)
    monkeypatch.delattr(arc4py, "_bench_capi_c", raising=False)
    monkeypatch.delitem(sys.modules, "arc4py.cli.capi", raising=False)
    assert main(["bench", "--c-api", *TINY]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "this build has no C-API bench" in captured.err
    assert len(captured.err.splitlines()) == 1


def test_c_api_failure_is_reported(monkeypatch, capsys):
    def measure_c_api(rows, duration):
        raise OSError("dlopen: libarc4py_capi.so: cannot open shared object")

    fake_module(monkeypatch, measure_c_api)
    assert main(["bench", "--c-api", *TINY]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("arc4py bench: error: --c-api: dlopen: "
                            "libarc4py_capi.so: cannot open shared object\n")


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
