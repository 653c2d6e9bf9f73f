"""The C generator's rooms, checked from its object files and includes.

- Dependencies run one way: no symbol cycle between the object files of
  arc4py/csrc/*.c (``nm --defined-only`` and ``nm -u`` on each, compiled with
  and without the test hooks).
- The algorithm files include no OS header: only the C library's and the
  project's own.
- The platform files never reach back into the algorithm: none of them
  needs a symbol that an algorithm file defines, and none includes a
  header of the generator or the cores.
- Each global the hot path or the algorithm reads is defined in exactly
  one file.
- No list of OSes: a build for an OS no platform file is for fails at the
  link, naming the platform interface.
- No file of the package is over MAX_LINES lines but the SIMD cores (the
  generated C of the Cython modules aside).
"""
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from helpers import CSRC, INCLUDE, LINUX, compile_c

CBIND = CSRC.parent / "cbind"

# The algorithm and what sits beside it (numpy adapters, test views).
ALGORITHM = {"rng_keystream.c", "rng_requests.c", "rng_draws.c", "rng_bitgen.c", "rng_test_hooks.c"}
PLATFORM = {p.name for p in CSRC.glob("rng_platform_*.c")}
# ISO C headers: all an algorithm file may include besides the project's.
ISO_C = {"stddef.h", "stdint.h", "string.h", "errno.h", "stdio.h",
         "stdlib.h", "limits.h"}


def _objects(cc, tmp_path, *flags):
    objs = {}
    for src in sorted(CSRC.glob("*.c")):
        obj = tmp_path / (src.stem + ".o")
        compile_c(cc, "-O2", "-c", *flags, "-I", CSRC, src,
                  "-o", obj)
        objs[src.name] = obj
    return objs


def _symbols(nm, obj, *args):
    out = subprocess.run([nm, *args, str(obj)], capture_output=True,
                         text=True, check=True).stdout
    # "addr T name" for defined, "U name" for undefined; TLS are 'B'/'D'.
    return {line.split()[-1] for line in out.splitlines()
            if line.strip() and not line.endswith(":")}


@pytest.fixture(scope="module", params=["plain", "test-hooks"])
def graph(request, tmp_path_factory, cc):
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm on PATH (binutils) to read the object files")
    flags = ["-DARC4PY_TEST_HOOKS=1"] if request.param == "test-hooks" else []
    objs = _objects(cc, tmp_path_factory.mktemp(request.param), *flags)
    defined = {name: _symbols(nm, o, "--defined-only") for name, o in objs.items()}
    needed = {name: _symbols(nm, o, "-u") for name, o in objs.items()}
    owner = {}
    for name, syms in defined.items():
        for sym in syms:
            owner.setdefault(sym, set()).add(name)
    edges = {name: {f for sym in needed[name] for f in owner.get(sym, ())
                    if f != name}
             for name in objs}
    return defined, edges


@pytest.mark.slow
def test_no_symbol_cycle(graph):
    _, edges = graph
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                cycle = path[path.index(nxt):] + [nxt]
                pytest.fail("symbol cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    # The layers are really there: the algorithm calls the platform.
    assert edges["rng_keystream.c"] & PLATFORM, edges["rng_keystream.c"]
    assert edges["rng_requests.c"] & PLATFORM, edges["rng_requests.c"]


@pytest.mark.slow
def test_binding_c_has_no_symbol_cycle(cc, tmp_path):
    """The binding layer's C files lend each other nothing both ways: a
    helper two of them share lives in one, or in a header below both."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm on PATH (binutils) to read the object files")
    python_include = sysconfig.get_paths()["include"]
    defined, needed = {}, {}
    for src in sorted(CBIND.glob("*.c")):
        obj = tmp_path / (src.stem + ".o")
        compile_c(cc, "-O2", "-c", "-I", CSRC, "-I", CBIND, "-I", INCLUDE,
                  "-I", python_include, src, "-o", obj)
        defined[src.name] = _symbols(nm, obj, "--defined-only")
        needed[src.name] = _symbols(nm, obj, "-u")
    assert "module_calls.c" in defined and "random_methods.c" in defined
    for a in defined:
        for b in defined:
            if a < b and needed[a] & defined[b] and needed[b] & defined[a]:
                pytest.fail(f"{a} and {b} lend each other symbols: "
                            f"{sorted(needed[a] & defined[b])} and "
                            f"{sorted(needed[b] & defined[a])}")


@pytest.mark.slow
def test_platform_never_reaches_into_the_algorithm(graph):
    _, edges = graph
    for name in sorted(PLATFORM):
        assert not edges[name] & ALGORITHM, (name, edges[name] & ALGORITHM)


@pytest.mark.slow
def test_each_global_defined_once(graph):
    defined, _ = graph
    for sym in ("rng_tls_state", "rng_fork_generation", "rng_stir_generation",
                "rng_wipe", "rng_stack_scrub", "rng_platform_entropy",
                "rng_platform_state_new"):
        owners = [n for n, syms in defined.items() if sym in syms]
        assert len(owners) == 1, (sym, owners)


@pytest.mark.slow
def test_an_os_without_a_platform_file_does_not_link(cc, tmp_path):
    # Linux with __linux__ undefined stands for such an OS: every platform
    # file but the POSIX half compiles to nothing.
    if not LINUX:
        pytest.skip("stands for an OS without a platform file by undefining "
                    "__linux__ on Linux")
    cmd = [cc, "-O1", "-shared", "-fPIC", "-fvisibility=hidden", "-U__linux__",
           "-I", INCLUDE, "-I", CSRC, *sorted(CSRC.glob("*.c")),
           "-o", tmp_path / "generator.so"]
    proc = subprocess.run(list(map(str, cmd)), capture_output=True, text=True)
    assert proc.returncode != 0, "linked with no platform file for the OS"
    # (the POSIX half defines rng_platform_*: what is missing is the OS's own)
    assert "rng_os_entropy" in proc.stderr, proc.stderr


# ...and the headers they include (compiler_compat.h's <intrin.h> is the
# compiler's, not the OS's).
ALGORITHM_HEADERS = {"rng_internal.h", "rng_hot_path.h", "rng_platform.h",
                     "rng_wipe.h", "rng_test_hooks.h"}


@pytest.mark.parametrize("name", sorted(ALGORITHM | ALGORITHM_HEADERS
                                        | {"rng_wipe.c"}))
def test_algorithm_includes_no_os_header(name):
    text = (CSRC / name).read_text()
    for header in re.findall(r'#\s*include\s*<([^>]+)>', text):
        assert header in ISO_C, f"{name} includes <{header}>"
    local = set(re.findall(r'#\s*include\s*"([^"]+)"', text))
    assert not {h for h in local if h.startswith("rng_platform_")}, local


# All a platform file (or the platform's own headers) may include of the
# project's: the interface it implements, the POSIX half's, the wipe and
# the compiler constructs; never the generator's or the cores' headers.
PLATFORM_LOCAL = {"rng_platform.h", "rng_platform_posix.h", "rng_wipe.h",
                  "compiler_compat.h"}


@pytest.mark.parametrize("name", sorted(PLATFORM | (PLATFORM_LOCAL - {"compiler_compat.h"})))
def test_platform_includes_nothing_above_it(name):
    text = (CSRC / name).read_text()
    local = set(re.findall(r'#\s*include\s*"([^"]+)"', text))
    assert local <= PLATFORM_LOCAL, f"{name} includes {sorted(local - PLATFORM_LOCAL)}"


def test_generator_includes_only_its_own_headers():
    """The algorithm's files include the generator's headers, the
    compatibility header and the public ones: never the cores' internal
    headers."""
    for name in sorted(ALGORITHM):
        text = (CSRC / name).read_text()
        local = set(re.findall(r'#\s*include\s*"([^"]+)"', text))
        for header in local:
            assert (header.startswith(("rng_", "arc4py/"))
                    or header == "compiler_compat.h"), (name, header)


def test_cores_are_linked_into_one_extension_module():
    """One copy of the cores and of the dispatch state per process: every
    core's block function and the dispatch's table are in exactly one of
    the installed extension modules (arc4py._core, with the generator)."""
    import arc4py
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm on PATH (binutils) to read the extension modules")
    pkg = Path(arc4py.__file__).parent
    modules = sorted(p for p in pkg.rglob("_*")
                     if p.suffix in (".so", ".pyd"))
    assert modules, f"no extension modules in {pkg}"
    where = {}
    for mod in modules:
        out = subprocess.run([nm, "--defined-only", str(mod)],
                             capture_output=True, text=True).stdout
        if "no symbols" in out or not out.strip():
            pytest.skip(f"{mod.name} is stripped: nm sees no symbols")
        for sym in re.findall(r"\b(arc4py_chacha20_blocks_\w+|"
                              r"arc4py_chacha20_active|arc4py_rng_buf|"
                              r"rng_buf_slow)\b", out):
            where.setdefault(sym, set()).add(mod.name.split(".")[0])
    assert {"arc4py_chacha20_blocks_generic", "arc4py_chacha20_active",
            "arc4py_rng_buf", "rng_buf_slow"} <= set(where)
    for sym, mods in sorted(where.items()):
        assert mods == {"_core"}, f"{sym} is in {sorted(mods)}"


MAX_LINES = 450
SIMD_CORES = re.compile(r"chacha20_(sse2|ssse3|sse_body|avx2|avx512|neon)\.[ch]$")


def test_no_package_file_is_too_long():
    package = CSRC.parent
    sources = [p for ext in ("py", "pyx", "pxi", "pxd", "pyi", "c", "h")
               for p in [*package.rglob(f"*.{ext}"), *INCLUDE.rglob(f"*.{ext}")]
               if not SIMD_CORES.search(p.name)
               # Cython's output beside its module
               and not (p.suffix == ".c" and p.with_suffix(".pyx").exists())]
    assert any(p.name == "rng_keystream.c" for p in sources)
    long = {str(p.relative_to(package.parent)): n for p in sources
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines: {long}"
