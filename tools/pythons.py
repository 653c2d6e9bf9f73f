"""Which CPythons arc4py supports, where to find them here, and a venv for one.

The supported versions are pyproject.toml's "Programming Language :: Python
:: 3.X" classifiers, nowhere else: .ci/driver.py tests them and
build_wheels.py builds for them.  The free-threaded build of each from
FREE_THREADED_FROM on ("3.Xt") is supported too, and tested and built
wherever such an interpreter is installed.

An interpreter is looked for in pyenv's versions (newest patch release),
then in the folder of Debian's CPythons that .ci/driver.py keeps in the
cache (debian_pkgs.cpython()), then as python3.X[t] on PATH; each candidate
must say it is that version and that build (GIL or free-threaded).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FREE_THREADED_FROM = (3, 14)
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arc4py-ci"
DEBIAN_SUITE = "unstable"


def pyproject():
    try:
        import tomllib
    except ImportError:
        try:
            import tomli as tomllib
        except ImportError:
            raise SystemExit("reading pyproject.toml needs Python 3.11+ or tomli") from None
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def supported():
    """The classifiers' versions ("3.X"), oldest first, then the
    free-threaded builds ("3.Xt")."""
    found = []
    for c in pyproject()["project"]["classifiers"]:
        m = re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", c)
        if m:
            found.append(m.group(1))
    found.sort(key=version_tuple)
    return found + [f"{v}t" for v in found if version_tuple(v) >= FREE_THREADED_FROM]


def version_tuple(version):
    return tuple(int(x) for x in version.rstrip("t").split("."))


def debian_root():
    return CACHE / f"debian-{DEBIAN_SUITE}-{_debian_arch()}"


def _debian_arch():
    import platform
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), "unknown")


def _is(exe, version):
    """Whether exe runs and is CPython ``version`` of its build."""
    want_free = version.endswith("t")
    try:
        out = subprocess.run(
            [str(exe), "-c", "import sys, sysconfig; print('%d.%d' % sys.version_info[:2],"
             " int(bool(sysconfig.get_config_var('Py_GIL_DISABLED'))))"],
            capture_output=True, text=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return False
    return out == [version.rstrip("t"), str(int(want_free))]


def candidates(version, debian=True):
    free = "t" if version.endswith("t") else ""
    minor = version.rstrip("t")
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    pattern = re.compile(rf"{re.escape(minor)}\.(\d+){free}$")
    pyenv = []
    if root.is_dir():
        for d in root.iterdir():
            m = pattern.match(d.name)
            if m:
                pyenv.append((int(m.group(1)), d))
    for _, d in sorted(pyenv, reverse=True):
        for exe in (f"python{minor}{free}", "python3", "python"):
            if (d / "bin" / exe).exists():
                yield d / "bin" / exe
                break
    if debian:
        yield debian_root() / "usr" / "bin" / f"python{version}"
    path = shutil.which(f"python{version}")
    if path:
        yield Path(path)
    if sys.platform == "win32":  # the py launcher knows each installed CPython
        proc = subprocess.run(["py", f"-{version}", "-c", "import sys; print(sys.executable)"],
                              capture_output=True, text=True)
        if proc.returncode == 0:
            yield Path(proc.stdout.strip())


def find_python(version, debian=True):
    """The interpreter for '3.X' or '3.Xt' (a str), or None."""
    for exe in candidates(version, debian):
        if exe.exists() and _is(exe, version):
            return str(exe)
    return None


def pip_wheel():
    """A current pip wheel (cached), for an interpreter without ensurepip."""
    folder = CACHE / "pip"
    have = sorted(folder.glob("pip-*.whl"))
    if not have:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--only-binary=:all:", "-d", str(folder), "pip"], check=True)
        have = sorted(folder.glob("pip-*.whl"))
    return have[-1]


def make_venv(base, path, out=None):
    """A fresh venv of interpreter ``base`` at ``path`` with a current pip
    (its output to the file ``out``, if given).  Debian's interpreters have
    no ensurepip of their own (it is a separate package, reaching for the
    system's pip wheel): there the venv is made without pip and pip installs
    itself from its wheel."""
    path = Path(path)
    shutil.rmtree(path, ignore_errors=True)
    py = path / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    to = {"stdout": out, "stderr": subprocess.STDOUT} if out else {}
    proc = subprocess.run([str(base), "-m", "venv", str(path)], capture_output=True, text=True)
    if proc.returncode == 0:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True,
                       **to)
        return py
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(path)], check=True, **to)
    wheel = pip_wheel()
    subprocess.run([str(py), str(wheel / "pip"), "install", "-q", "--no-index", str(wheel)],
                   check=True, **to)
    return py


if __name__ == "__main__":  # the release workflow's list of CPythons, one a line
    print("\n".join(supported()))
