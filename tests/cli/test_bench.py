"""arc4py bench: its JSON and table reports, other cores, bad options, the
plot; and --c-api's rendering, checked in process with a fake
arc4py.bench.capi (its figures are the fake's, not timings).  The real C
loops: test_bench_capi.py."""
import importlib.util
import io
import json
import sys
import types

import pytest

import arc4py
import arc4py.bench
from arc4py.__main__ import main
from arc4py.bench import report
from helpers import BENCH_PROGRESS, one_line, run_cli, without_bench_progress

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
# the fastest core in a child with no ARC4PY_BACKEND
FIRST_CORE = arc4py.backends()[0]

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
    r = run_cli("bench", *QUICK, "--json", "--rows", rows)
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
    r = run_cli("bench", *QUICK, "--json", "--compare", "--rows", "buf32,fill4k")
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


def test_numpy_column_times_numpys_scalar_draw_for_arc4random():
    # the arc4random row's numpy figure is a call numpy users make for one
    # number (a raw word), not .bytes(4); the other rows take .bytes(n)
    pytest.importorskip("numpy", reason="numpy is not installed")
    from arc4py.bench.sources import ROWS, NumpySource
    source = NumpySource()
    for row in ROWS:
        _, args = source.job(row)
        draw = args[0]
        if row.kind == "u32":
            assert draw.__name__ == "random_raw" and isinstance(draw(), int)
        else:
            assert draw.__name__ == "bytes" and len(draw(*args[1:])) == row.size


@pytest.mark.slow
def test_bench_table():
    r = run_cli("bench", *QUICK, "--compare", "--rows", "arc4random,fill4k")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "MB/s" in out and "10**6" in out
    assert "arc4random" in out and "fill 4 KiB" in out
    assert "os.urandom" in out and "GIL" in out
    assert without_bench_progress(r.stderr) == b"", r.stderr


@pytest.mark.slow
@pytest.mark.skipif(len(arc4py.backends()) < 2, reason="one core only")
def test_bench_other_cores_in_subprocesses():
    r = run_cli("bench", *QUICK, "--json", "--backend", "all", "--rows", "fill4k",
            "--threads", "1")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["columns"] == [f"arc4py:{c}" for c in arc4py.backends()]
    figures = positive_figures(report)
    assert {f["source"] for f in figures} == set(report["columns"])


def test_bench_progress_when_piped():
    # stderr a pipe (CI, `| tee`, a notebook): a start line saying how long,
    # then a line as each row is done, in order; stdout the report alone
    r = run_cli("bench", "--json", "--rows", "arc4random,buf16,fill4k",
                "--duration", "0.005", "--threads", "2")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.decode().splitlines()
    assert lines[0].startswith("arc4py bench: 6 figures of 0.005 s each, about ")
    assert [line.split(": done")[0] for line in lines[1:]] == [
        "[2/6] arc4random", "[4/6] arc4random_buf(16)", "[6/6] fill 4 KiB"]
    assert all(BENCH_PROGRESS.fullmatch(line) for line in lines), lines
    assert json.loads(r.stdout)["figures"]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_bench_progress_on_a_terminal_is_one_line(monkeypatch, capsys):
    # on a terminal the line rewrites itself and is cleared at the end:
    # no start line, no line per row
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["bench", "--json", "--rows", "arc4random,buf16",
                 "--duration", "0.005", "--threads", "1"]) == 0
    shown = terminal.getvalue()
    assert "\r\x1b[K[0/2] arc4py:" in shown and "\r\x1b[K[1/2] arc4py:" in shown
    assert shown.endswith("\r\x1b[K") and "\n" not in shown
    assert json.loads(capsys.readouterr().out)["figures"]


@pytest.mark.parametrize("opt", [["--backend", "nosuchcore"],
                                 ["--rows", "nosuchrow"],
                                 ["--threads", "0"],
                                 ["--duration", "-1"]])
def test_bench_bad_options(opt):
    r = run_cli("bench", "--json", *opt)
    assert r.returncode == 2
    assert r.stdout == b""
    one_line(r.stderr)


@pytest.mark.parametrize("seconds", ["inf", "1e308", "nan", "0", "3601"])
def test_bench_duration_out_of_range_is_a_usage_error(seconds, monkeypatch,
                                                      capsys):
    from arc4py.bench import command

    def collect(*args, **kwargs):
        raise AssertionError("the bench ran")

    monkeypatch.setattr(command, "collect", collect)
    assert main(["bench", "--rows", "buf16", "--duration", seconds]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("arc4py bench: error: --duration "), captured.err
    assert len(captured.err.splitlines()) == 1, captured.err


def test_bench_plot(tmp_path):
    png = tmp_path / "mbps.png"
    r = run_cli("bench", *QUICK, "--rows", "buf16,fill4k", "--plot", str(png))
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
    from arc4py.bench import command

    def collect(*args, **kwargs):
        raise AssertionError("the bench ran")

    monkeypatch.setattr(command, "collect", collect)
    path = tmp_path / "nonexistent" / "x.png" if where == "no folder" \
        else tmp_path
    assert main(["bench", "--rows", "buf16", "--plot", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1, captured.err
    assert captured.err.startswith("arc4py bench: error: --plot: ")
    assert not (tmp_path / "nonexistent").exists()


def test_bench_plot_to_a_missing_folder_is_one_line_at_once(tmp_path):
    r = run_cli("bench", "--plot", str(tmp_path / "nonexistent" / "x.png"))
    assert r.returncode == 2
    assert r.stdout == b""
    assert "no such folder" in one_line(r.stderr)


# ---- bench --c-api (a fake C-API bench: rendering, not timing) ---------------

FAKE_C_API = {
    "columns": ["arc4py", "libbsd", "libc", "openssl"],
    "rows": [
        {"label": "arc4random", "size": 4,
         "mbps": {"arc4py": 400.0, "libbsd": 100.0, "libc": 200.0,
                  "openssl": None},
         "spread": {"arc4py": 0.02, "libbsd": 0.05, "libc": 0.2},
         "unstable": {"arc4py": False, "libbsd": False, "libc": True}},
        {"label": "arc4random_buf(16)", "size": 16,
         "mbps": {"arc4py": 1600.0, "libbsd": 800.0, "libc": 400.0,
                  "openssl": None}},
    ],
    "skipped": {"openssl": "libcrypto.so.3 not found"},
}
TINY = ["--rows", "fill4k", "--duration", "0.005", "--threads", "1"]


def fake_module(monkeypatch, measure_c_api):
    """A stand-in arc4py.bench.capi: ``measure_c_api`` and the C loops'
    columns."""
    module = types.ModuleType("arc4py.bench.capi")
    module.measure_c_api = measure_c_api
    module.c_loops = types.SimpleNamespace(
        columns=lambda: dict.fromkeys(FAKE_C_API["columns"]))
    monkeypatch.setitem(sys.modules, "arc4py.bench.capi", module)


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
    # each figure with its spread, "!" where unstable, as the Python rows
    assert lines[3].split() == ["arc4random", "400", "±2%", "(4.00x)", "100",
                                "±5%", "200", "±20%!", "(2.00x)", "-"]
    # (a report without spreads still shows)
    assert lines[4].split() == ["arc4random_buf(16)", "1,600", "(2.00x)",
                                "800", "400", "(0.50x)", "-"]
    notes = " ".join(" ".join(lines[5:]).split())
    assert "! unstable: the figure's rounds spread by more than 10%" in notes
    assert "± is the rounds' median absolute deviation" in notes
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
    monkeypatch.setitem(sys.modules, "arc4py.bench._capi_loops", None)
    monkeypatch.delattr(arc4py.bench, "_capi_loops", raising=False)
    monkeypatch.delitem(sys.modules, "arc4py.bench.capi", raising=False)
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
    *progress, last = captured.err.splitlines()
    assert last == ("arc4py bench: error: --c-api: dlopen: "
                    "libarc4py_capi.so: cannot open shared object")
    assert without_bench_progress("\n".join(progress)) == "", progress
