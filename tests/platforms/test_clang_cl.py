"""clang-cl, the compiler setup.py uses where setuptools builds with MSVC's
toolchain for 64-bit Windows, builds every core of each target and the
register wipe: zig's clang in cl mode compiles each core's file for x64 and
ARM64 Windows, and each object defines the core's function (a core its
compiler cannot build would stop the build; one compiled to nothing would
lack it).  No Windows SDK here: a few C library declarations stand in for
its headers, enough for these files (compiled, not linked)."""
import subprocess
from pathlib import Path

import pytest

from helpers import CSRC, INCLUDE, core_table_names

# The declarations the cores, the dispatch and the wipe take from the C
# library (and clang's own intrinsics headers take from stdlib.h/malloc.h).
STUBS = {
    "string.h": "typedef unsigned long long size_t;\n"
                "void *memcpy(void *, const void *, size_t);\n"
                "void *memset(void *, int, size_t);\n"
                "int memcmp(const void *, const void *, size_t);\n"
                "int strcmp(const char *, const char *);\n",
    "stdio.h": "int snprintf(char *, unsigned long long, const char *, ...);\n",
    "stdlib.h": "typedef unsigned long long size_t;\n"
                "void *malloc(size_t); void free(void *);\n"
                "void *_aligned_malloc(size_t, size_t); void _aligned_free(void *);\n",
    "malloc.h": "#include <stdlib.h>\n",
    "setjmp.h": "typedef int jmp_buf[16];\n",  # for intrin.h, as cl.exe sees it
}
TARGETS = {"x86_64-pc-windows-msvc": ["avx512", "avx2", "ssse3", "sse2", "generic"],
           "aarch64-pc-windows-msvc": ["neon", "generic"]}


@pytest.fixture(scope="module")
def clang_cl(zig, tmp_path_factory):
    """zig's clang in cl mode: the clang-cl."""
    stubs = tmp_path_factory.mktemp("sdk-stubs")
    for name, text in STUBS.items():
        (stubs / name).write_text(text)
    import ziglang  # clang's own headers (the intrinsics) ship with zig
    resource = Path(ziglang.__file__).parent / "lib" / "include"
    return [*zig[:-1], "clang", "--driver-mode=cl", "/c", "/O2", "/X",
            "-imsvc", str(resource), "-imsvc", str(stubs),
            f"/I{INCLUDE}", f"/I{CSRC}"]


@pytest.mark.slow
@pytest.mark.parametrize("target", list(TARGETS))
def test_clang_cl_builds_every_core_of_its_target(clang_cl, target, tmp_path):
    assert set(TARGETS["x86_64-pc-windows-msvc"] + TARGETS["aarch64-pc-windows-msvc"]) \
        == set(core_table_names())
    for source in ["rng_wipe.c", *(f"chacha20_{c}.c" for c in core_table_names())]:
        obj = tmp_path / (source + ".obj")
        # (/Tc: an absolute path would read as an option)
        proc = subprocess.run([*clang_cl, f"--target={target}", f"/Fo{obj}",
                               f"/Tc{CSRC / source}"], capture_output=True, text=True)
        assert proc.returncode == 0, f"{source} for {target}:\n{proc.stdout}{proc.stderr}"
    for core in core_table_names():
        data = (tmp_path / f"chacha20_{core}.c.obj").read_bytes()
        defined = f"arc4py_chacha20_blocks_{core}\0".encode() in data
        assert defined == (core in TARGETS[target]), \
            f"{core} {'missing from' if not defined else 'in'} the {target} build"


@pytest.mark.slow
@pytest.mark.parametrize("left_out", [False, True])
def test_a_compiler_without_gnu_c_stops_the_build(clang_cl, tmp_path, left_out):
    """As MSVC's cl.exe sees the sources (-U__clang__: _MSC_VER alone), a
    core's file stops the build, saying so, unless the core is left out by
    name; the register wipe stops it whatever is left out."""
    cl = [*clang_cl, "--target=x86_64-pc-windows-msvc", "-U__clang__",
          *(["/DARC4PY_NO_AVX2"] if left_out else [])]
    core = subprocess.run([*cl, f"/Fo{tmp_path / 'a.obj'}", f"/Tc{CSRC / 'chacha20_avx2.c'}"],
                          capture_output=True, text=True)
    if left_out:
        assert core.returncode == 0, core.stdout + core.stderr
    else:
        assert core.returncode != 0
        assert "cannot build the avx2 core" in core.stdout + core.stderr
        assert "ARC4PY_NO_AVX2=1" in core.stdout + core.stderr
    wipe = subprocess.run([*cl, f"/Fo{tmp_path / 'w.obj'}", f"/Tc{CSRC / 'rng_wipe.c'}"],
                          capture_output=True, text=True)
    assert wipe.returncode != 0
    assert "register wipe" in wipe.stdout + wipe.stderr
