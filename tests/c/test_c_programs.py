"""The C test programs of this folder, built from arc4py's C sources and run
here, each judged by its verdict: the last line it prints, one JSON object
(the format: verdict.h; helpers.c_verdict reads it).

test_c_program is parametrised over PROGRAMS; each entry says how its
program is built, its arguments, how many runs it may take and when it
cannot run here.  What each program checks is in its own header:

    core_check        a core against generic and RFC 8439: every length at odd
                      addresses between guard bytes, both counter carries, its
                      vector registers zero on return (each core in the table)
    generator_check,  the generator's draws, uniform, stir, fork; its threads
    threads_check     and thread churn (also built for every OS by
                      tests/platforms/test_platforms.py)
    dead_stack        no key that made the output survives in dead stack
    core_spills       a core's stack copied at timer signals inside its calls
                      and after them: no key or nonce word, no working word
                      of rows 1..3 (gcc and clang, -O2 and -O3); its
                      positive control (-DPLANT) must find a word left in the
                      registers the generic core saves
    fork_midfill      fork() mid-fill: no ChaCha20 state the child finds
                      reproduces any of the parent's later output
    fork_census       forks while siblings refill, fill and stir: no whole
                      key, no two words of any key (seeds, pre-mix keys, core
                      inputs) near each other or on a stack, no nonce and no
                      working words a core left, in the child's memory (a
                      test build logs them); one key word alone, or two far
                      apart, no more often than random decoys found the same
                      way (chance); its positive controls (--plant) must
                      fail it
    atfork_window     draws in atfork handlers registered before arc4py's,
                      wipe-on-fork refused: no child hands out its parent's bytes
    fork_in_handler   a raw fork from a signal handler mid-fill: no 64-byte
                      block the same in parent and child
    signal_nested     draws nested in draws (a signal handler): no bytes shared
    signal_frames     signals handled on a filling thread's own stack: no key,
                      nonce or working word of a core call in the frames they
                      leave in its dead stack (a test build logs every input)
    stir_midfill      a fill returned after stir_all returns no byte made with
                      the key stir_all retired
    stir_starve       stir_all at every chunk of a fill: it gives up (EAGAIN,
                      output wiped) after a bounded number of passes
    fault_escape      a fill into a faulting page left by siglongjmp from the
                      fault handler: the state recovers, its one-time key wiped
    uniform_fail      a bounded array draw whose redraw of a rejected word
                      fails: every word wiped, those already mapped too
    move_out_check    the hot path's copy-and-wipe as memcpy then memset, at
                      several optimisation levels, AVX-512 natively and emulated
    stress_threads    threads, stir_all, churn and forks under ThreadSanitizer
    vdso_mix          the vDSO getrandom called once per refill and per chunk;
                      each of its 32 bytes changes the key of that refill or
                      chunk (a test build: a fixed seed, the bytes rewritten)

A run whose verdict is skip checked nothing (the fork came too late, the
timer fired outside the fill): a program that needs several such runs
names how many ok verdicts it wants and within how many runs.
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

import pytest

import arc4py
from helpers import (
    CSRC,
    INCLUDE,
    LINUX,
    RFC_VECTORS,
    TESTS_DIR,
    build_generator_program,
    build_program,
    c_verdict,
    compile_c,
    core_skip_reason,
    core_table_names,
    find_cc,
    kernel_has_vdso_getrandom,
    rfc_vector_lines,
    state_pages_kib,
    try_compile,
)

SkipCheck = Callable[[str], Optional[str]]


@dataclass(frozen=True)
class Program:
    id: str
    source: str                  # a file of this folder
    args: tuple = ()
    #: "generator": with every arc4py/csrc/*.c (build_generator_program);
    #: "cores": with the chacha20_*.c sources; "headers": alone (it
    #: includes the inline code it checks)
    link: str = "generator"
    flags: tuple = ()
    compiler: str | None = None   # by name, instead of the cc fixture
    stdin: str = ""
    env: dict = field(default_factory=dict)
    runs: int = 1                # at most this many runs, until
    oks: int = 1                 # this many said ok (others said skip)
    timeout: int = 300
    #: facts every ok verdict carries (a callable: read when the test runs)
    expect: object = field(default_factory=dict)
    skip: SkipCheck | None = None     # given the compiler: why not here
    not_run: SkipCheck | None = None  # built, then: why it is not run
    slow: bool = True


def unless(condition, reason):
    return lambda cc: None if condition else reason


def _wipe_on_fork(cc):
    """The kernel itself marks the state pages (smaps' wf flag), not just
    madvise() answering 0: qemu-user answers 0 and passes nothing on."""
    if not LINUX:
        return "raw clone() and MADV_WIPEONFORK are Linux's"
    arc4py.arc4random()
    if state_pages_kib() <= 0:
        return ("no state page carries the kernel's wipe-on-fork flag "
                "(kernel < 4.14, or emulated: qemu-user ignores madvise)")
    return None


def _tsan(cc):
    if not LINUX:
        return "ThreadSanitizer runs are Linux-only here"
    probe = try_compile(cc, "int main(void){return 0;}", "-fsanitize=thread",
                        out=os.devnull)
    if probe.returncode != 0:
        return (f"{os.path.basename(cc)} cannot link -fsanitize=thread here: "
                f"{probe.stderr.strip()[-200:]}")
    return None


def _simde(cc):
    if try_compile(cc, "#include <simde/x86/avx512.h>\n").returncode != 0:
        return ("SIMDe headers missing: cc cannot include "
                "<simde/x86/avx512.h> (install libsimde-dev)")
    return None


X86_64 = platform.machine().lower() in ("x86_64", "amd64")
#: core_spills calls the cores through its own assembly here (call_core).
CALL_CORE = int((X86_64 or platform.machine().lower() in ("aarch64", "arm64"))
                and sys.platform not in ("darwin", "cygwin"))
POSIX = sys.platform != "win32"
# 301 lengths x 32 x 32 offsets; 17 of the lengths also as constants.
MOVE_OUT_CASES = {"variable_cases": 301 * 32 * 32, "constant_cases": 17 * 32 * 32}
NO_AVX512_RUN = ("this CPU cannot run the avx512 core, so the AVX-512 hand-out "
                 "was compiled, not run (the emulated case runs it)")


#: The fork and signal programs (fork_census, core_spills, signal_frames)
#: run a tenth of their forks and snapshots, so that plain `pytest` stays
#: short; ARC4PY_TEST_LONG=1 runs them whole (CI's README run does:
#: .ci/driver.py; CONTRIBUTING.md).  core_spills and signal_frames take
#: theirs at build time (-DSNAPSHOTS, -DWANT).  signal_frames must: a bound
#: read at run time changes how the compiler lays out the frames its copies
#: search.  core_spills copies from the core's first frame with the
#: registers the core saves cleared (call_core), so its layout does not
#: matter (built with the count read at run time: the same verdicts).
LONG = os.environ.get("ARC4PY_TEST_LONG", "") not in ("", "0")


def count(whole):
    """``whole`` under ARC4PY_TEST_LONG=1, else a tenth of it."""
    return whole if LONG else whole // 10


HOOKS = ("-DARC4PY_TEST_HOOKS=1",)
#: What a census finds in the children of the generator's own C: nothing.
CENSUS_CLEAN = {"whole_keys": 0, "key_words": 0, "nonces": 0, "core_words": 0,
                "working_words": 0}


def core_skip(name):
    reason = core_skip_reason(name)
    return lambda cc: reason


PROGRAMS = [
    *(Program(f"core_check-{name}", "core_check.c", (name,), link="cores",
              stdin=rfc_vector_lines(), expect={"vectors": len(RFC_VECTORS)},
              skip=core_skip(name))
      for name in core_table_names()),
    *(Program(f"generator_check-{core}", "generator_check.c", (core,),
              skip=core_skip(core) if core != "default" else None)
      for core in ("default", *core_table_names())),
    Program("threads_check", "threads_check.c"),
    *(Program(f"dead_stack-{core}", "dead_stack.c", (core,))
      for core in arc4py.backends()),
    *(Program(f"core_spills-{compiler}{opt}", "core_spills.c", link="cores",
              flags=(opt, f"-DSNAPSHOTS={count(1500)}"), compiler=compiler,
              timeout=600,
              expect={"cores": len(arc4py.backends()), "call_core": CALL_CORE},
              skip=unless(POSIX, "POSIX signals on an alternate stack"))
      for compiler in ("gcc", "clang") for opt in ("-O2", "-O3")),
    # core_spills' own test: a word left in the registers the generic core
    # saves (it saves some at every level) must be found in its copies.
    *(Program(f"core_spills-plant-{compiler}", "core_spills.c", ("generic",),
              link="cores", flags=("-O3", "-DSNAPSHOTS=150", "-DPLANT"),
              compiler=compiler, timeout=300,
              expect={"cores": 1, "call_core": CALL_CORE},
              skip=unless(POSIX, "POSIX signals on an alternate stack"))
      for compiler in ("gcc", "clang")),
    *(Program(f"fork_midfill-{core}", "fork_midfill.c", (core,), runs=40, oks=6,
              skip=unless(LINUX, "reads /proc/self/maps"), slow=False)
      for core in arc4py.backends()),
    *(Program(f"fork_census-{core}", "fork_census.c",
              ("--forks", str(count(300)), core), flags=HOOKS,
              timeout=600, expect=CENSUS_CLEAN, skip=_wipe_on_fork)
      for core in arc4py.backends()),
    # The other optimisation level and compiler, every core in one run.
    *(Program(f"fork_census-{compiler}{opt}", "fork_census.c",
              ("--forks", str(count(100)), *arc4py.backends()),
              flags=(opt, *HOOKS),
              compiler=compiler, timeout=600, expect=CENSUS_CLEAN,
              skip=_wipe_on_fork)
      for compiler, opt in (("gcc", "-O2"), ("clang", "-O2"), ("clang", "-O3"))),
    # The census's own test: a leak planted in memory the child inherits
    # must be found (the verdict is ok only then).
    *(Program(f"fork_census-plant-{what}", "fork_census.c",
              ("--forks", "60", "--plant", what, "generic"), flags=HOOKS,
              timeout=600, expect={"caught": 1}, skip=_wipe_on_fork)
      for what in ("premix", "seed", "lone")),
    Program("atfork_window", "atfork_window.c", expect={"forks": 400, "repeats": 0,
                                                        "wipe_on_fork": 0},
            skip=unless(LINUX, "refuses MADV_WIPEONFORK with its own madvise()")),
    Program("fork_in_handler", "fork_in_handler.c", runs=5, oks=3, timeout=120,
            skip=_wipe_on_fork),
    Program("signal_nested", "signal_nested.c", skip=unless(POSIX, "POSIX signals")),
    *(Program(f"signal_frames-{core}", "signal_frames.c", (core,),
              flags=(*HOOKS, f"-DWANT={count(150)}"),
              timeout=300, expect={"key": 0, "x20": 0, "round": 0},
              skip=unless(POSIX, "POSIX signals and threads"))
      for core in arc4py.backends()),
    Program("stir_midfill", "stir_midfill.c", ("40",), timeout=600,
            expect={"races": 40}, skip=unless(POSIX, "pthreads"), slow=False),
    Program("stir_starve", "stir_starve.c", flags=HOOKS, timeout=120,
            expect={"err": 11, "passes": 9, "after": 0},
            skip=unless(LINUX, "EAGAIN is 11 on Linux")),
    Program("fault_escape", "fault_escape.c", timeout=120,
            expect={"escapes": 40, "recovered": 40, "nested_from_os": 40},
            skip=unless(LINUX, "interposes getrandom(), the Linux entropy call")),
    Program("uniform_fail", "uniform_fail.c", expect={"err": 5, "left": 0},
            skip=unless(LINUX, "interposes getrandom(), the Linux entropy call")),
    *(Program(f"move_out_check{opt}", "move_out_check.c", link="headers",
              flags=(opt,), expect=MOVE_OUT_CASES, timeout=120)
      for opt in ("-O0", "-O2", "-O3")),
    *(Program(f"move_out_check-avx512{opt}", "move_out_check.c", link="headers",
              flags=(opt, "-mavx512f", "-DMOVE_OUT_AVX512"), expect=MOVE_OUT_CASES,
              timeout=120,
              skip=unless(X86_64, "the AVX-512 hand-out is x86-64 only (the "
                                  "emulated case runs it here)"),
              not_run=unless("avx512" in arc4py.backends(), NO_AVX512_RUN))
      for opt in ("-O0", "-O3")),
    Program("move_out_check-avx512-emulated", "move_out_check.c", link="headers",
            flags=("-O1", "-DMOVE_OUT_AVX512", "-DARC4PY_EMULATE_AVX512"),
            expect=MOVE_OUT_CASES, timeout=120, skip=_simde),
    # Thread-leak reports are off: a forked child of a multithreaded program
    # inherits the parent's thread list, and TSan counts those threads as
    # leaked when the child exits, which says nothing about arc4py.
    # (Checked that the build catches a race: with the stir_all generation's
    # atomic increment made a plain ``+= 1``, TSan reported the data race
    # against the hot path's atomic read.)
    *(Program(f"stress_threads-tsan-{compiler}", "stress_threads.c",
              flags=("-fsanitize=thread", "-g", "-O1"), compiler=compiler,
              env={"TSAN_OPTIONS": "report_thread_leaks=0 exitcode=66"}, timeout=600,
              skip=_tsan)
      for compiler in ("gcc", "clang")),
    Program("vdso_mix", "vdso_mix.c", flags=("-DARC4PY_TEST_HOOKS=1",), timeout=120,
            expect=lambda: {"vdso": 1, "refill_bytes": 32, "chunk_bytes": 128}
            if kernel_has_vdso_getrandom() else {"vdso": 0},
            skip=unless(LINUX, "the vDSO getrandom is Linux's")),
]


def _params():
    for p in PROGRAMS:
        yield pytest.param(p, id=p.id, marks=[pytest.mark.slow] if p.slow else [])


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """Each program built once per set of flags and compiler: its path."""
    if not CSRC.is_dir():
        pytest.skip("arc4py's C sources are not next to the tests")
    out_dir, done = tmp_path_factory.mktemp("c_programs"), {}

    def build(p, cc):
        key = (p.source, p.link, p.flags, cc)
        if key not in done:
            src = TESTS_DIR / "c" / p.source
            exe = out_dir / f"{src.stem}-{len(done)}"
            if p.link == "generator":
                build_generator_program(cc, src, exe, *p.flags)
            elif p.link == "cores":
                build_program(cc, [src, *sorted(CSRC.glob("chacha20_*.c"))], exe,
                              "-O2", "-Wall", "-Wextra", "-Werror", *p.flags)
            else:
                compile_c(cc, *p.flags, "-Wall", "-Wextra", "-Werror", "-I", INCLUDE,
                          "-I", CSRC, src, "-o", exe)
            done[key] = str(exe)
        return done[key]
    return build


def _arch(name):
    """One name per architecture (macOS and Windows say arm64 and amd64)."""
    name = name.lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name, name)


#: The running Python's architecture.
MACHINE = _arch(platform.machine())


def compiler_target(cc):
    """The architecture ``cc`` builds for (``-dumpmachine``'s first part)."""
    out = subprocess.run([cc, "-dumpmachine"], capture_output=True, text=True)
    return _arch(out.stdout.strip().split("-")[0]) or "unknown"


@pytest.mark.parametrize("program", list(_params()))
def test_c_program(program, builds, request):
    p = program
    if p.compiler is not None:
        cc = find_cc(p.compiler)
        if cc is None:
            pytest.skip(f"{p.compiler} is not on PATH")
        target = compiler_target(cc)
        if target != MACHINE:
            pytest.skip(f"the {p.compiler} on PATH builds for {target}, not for "
                        f"this {MACHINE} Python (an emulated one)")
    else:
        cc = request.getfixturevalue("cc")
    reason = p.skip and p.skip(cc)
    if reason:
        pytest.skip(reason)
    exe = builds(p, cc)
    reason = p.not_run and p.not_run(cc)
    if reason:
        pytest.skip(reason)
    env = dict(os.environ, **p.env)
    verdicts = []
    while len(verdicts) < p.runs and \
            sum(v["verdict"] == "ok" for v in verdicts) < p.oks:
        proc = subprocess.run([exe, *p.args], input=p.stdin, env=env,
                              capture_output=True, text=True, timeout=p.timeout)
        assert "Sanitizer" not in proc.stderr, proc.stderr[-6000:]
        verdict = c_verdict(proc)
        assert verdict["verdict"] != "fail", (
            f"{p.id}: {verdict['reason']}\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}")
        verdicts.append(verdict)
    oks = [v for v in verdicts if v["verdict"] == "ok"]
    assert len(oks) == p.oks, (
        f"{len(oks)} of {len(verdicts)} runs checked something, {p.oks} wanted: "
        + "; ".join(sorted({v["reason"] for v in verdicts if v["verdict"] == "skip"})))
    expect = p.expect() if callable(p.expect) else p.expect
    for v in oks:
        assert {k: v.get(k) for k in expect} == expect, v
