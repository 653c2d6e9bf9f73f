"""The command line as a whole: python -m arc4py, its usage errors and
help, and every command's write errors (stdout full, closed, read-only, or a
reader that goes away).  Each command's own output: test_bytes.py,
test_info.py, test_bench.py.

Every command runs in a child interpreter that imports the same arc4py as
the tests (helpers.child_env), from an empty directory, with no
ARC4PY_BACKEND unless a test sets one.
"""
import json
import os
import subprocess
import sys

import pytest

import arc4py
from arc4py.__main__ import main
from helpers import (
    PYTHON,
    child_env,
    one_line,
    run_cli,
    run_to_closed_pipe,
    start_python,
    without_bench_progress,
)

# ---- the command as a whole -----------------------------------------------

def test_version():
    r = run_cli("--version")
    assert r.returncode == 0
    assert arc4py.__version__ in r.stdout.decode()


def test_no_command_is_a_usage_error():
    r = run_cli()
    assert r.returncode == 2
    assert b"bench" in r.stderr and b"bytes" in r.stderr


@pytest.mark.parametrize("cmd", [[], ["bench"], ["info"], ["bytes"]])
def test_help(cmd):
    r = run_cli(*cmd, "--help")
    assert r.returncode == 0, r.stderr
    assert b"usage:" in r.stdout
    assert r.stderr == b""


def test_unknown_option_is_status_2():
    r = run_cli("bytes", "--bogus", "3")
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
    r = run_cli(*args)
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
    assert one_line(without_bench_progress(err)) == (f"arc4py {command}: error: cannot write to "
                                  f"stdout: No space left on device")


@pytest.mark.skipif(sys.platform == "win32", reason="Windows cannot start a child "
                    "without a stdout (subprocess has no preexec_fn there)")
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_closed_stdout_is_one_line_and_status_1(command, tmp_path):
    rc, err = cli_to("closed", COMMANDS[command], tmp_path)
    assert rc == 1, err
    assert one_line(err) == f"arc4py {command}: error: stdout is closed"


@pytest.mark.skipif(sys.platform == "win32", reason="Windows cannot start a "
                    "child without a stderr (subprocess has no preexec_fn there)")
def test_bench_usage_error_with_stderr_closed_is_status_2(tmp_path):
    proc = subprocess.run([PYTHON, "-m", "arc4py", "bench", "--rows", "nope"],
                          stdout=subprocess.PIPE, cwd=tmp_path, timeout=120,
                          env=child_env(ARC4PY_BACKEND=None),
                          preexec_fn=lambda: os.close(2))
    assert proc.returncode == 2
    assert proc.stdout == b""


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unwritable_stdout_is_one_line_and_status_1(command, tmp_path):
    rc, err = cli_to("read-only", COMMANDS[command], tmp_path)
    assert rc == 1, err
    assert one_line(without_bench_progress(err)) == (f"arc4py {command}: error: cannot write to "
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
    assert without_bench_progress(err) == b"", err
