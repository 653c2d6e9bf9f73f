"""Debian packages of another architecture, unpacked into a folder, without
touching this host's dpkg (no dpkg --add-architecture, nothing installed).

Used by build_wheels.py and test_wheels.py for musl's runtime (its libc.so,
which is also its dynamic loader) on x86_64 and aarch64, and for Debian's
CPython headers.  The same way as tests/cross/aarch64_python.sh: a private
apt state whose only architecture is the one asked for, the suite and
archive this host's apt sources name, the packages downloaded with
``apt-get download`` and unpacked with ``dpkg-deb -x`` (no maintainer
script runs).

    unpack(["musl"], "arm64", work_dir)  ->  the folder they are unpacked in

Environment: DEBIAN_SUITE and DEBIAN_MIRROR override what is read from
/etc/os-release and /etc/apt.
"""
import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
#: Debian's name for each uname -m
DEBIAN_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


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
    if os.environ.get("DEBIAN_MIRROR"):
        return os.environ["DEBIAN_MIRROR"]
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


def unpack(packages, arch, work):
    """Download ``packages`` (no dependencies) for Debian architecture
    ``arch`` into a private apt state under ``work``, unpack them into one
    folder and return it; reused while the same packages are asked for."""
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise Unavailable(f"{tool} not found (a Debian-like host is needed)")
    if not os.path.exists(KEYRING):
        raise Unavailable(f"{KEYRING} is missing (apt-get install debian-archive-keyring)")
    suite = host_suite()
    work = Path(work)
    root = work / f"debian-{suite}-{arch}"
    stamp = root / ".arc4py-packages"
    want = " ".join(sorted(packages))
    if stamp.exists() and stamp.read_text() == want:
        return root
    mirror = host_mirror(suite)
    apt = work / f"apt-{suite}-{arch}"
    for sub in ("state/lists/partial", "cache/archives/partial", "sources.list.d",
                "preferences.d", "debs"):
        (apt / sub).mkdir(parents=True, exist_ok=True)
    (apt / "state" / "status").touch()
    (apt / "sources.list").write_text(
        f"deb [arch={arch} signed-by={KEYRING}] {mirror} {suite} main\n")
    opts = []
    for key, value in {
            "APT::Architecture": arch, "APT::Architectures": arch,
            "Dir::State": apt / "state", "Dir::State::status": apt / "state" / "status",
            "Dir::Cache": apt / "cache", "Dir::Etc::SourceList": apt / "sources.list",
            "Dir::Etc::SourceParts": apt / "sources.list.d",
            "Dir::Etc::Preferences": apt / "preferences",
            "Dir::Etc::PreferencesParts": apt / "preferences.d",
            "Debug::NoLocking": 1, "Acquire::Retries": 3,
            # the download lands in a folder of ours, not one _apt may write
            "APT::Sandbox::User": "root"}.items():
        opts += ["-o", f"{key}={value}"]

    def apt_get(*args, cwd=None):
        proc = subprocess.run(["apt-get", *opts, "-qq", *args], cwd=cwd,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise Unavailable(f"apt-get {' '.join(args)} ({arch}, {suite}) failed: "
                              f"{(proc.stderr or proc.stdout).strip()[-600:]}")

    apt_get("update")
    debs = apt / "debs"
    for old in debs.glob("*.deb"):
        old.unlink()
    apt_get("download", *packages, cwd=debs)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    stamp.write_text(want)
    return root


def musl_libdir(arch, work):
    """The folder holding musl's libc.so (the library and the loader in one)
    for uname -m ``arch``, from Debian's musl package."""
    root = unpack(["musl"], DEBIAN_ARCH[arch], work)
    for libdir in (root / "lib" / f"{arch}-linux-musl",
                   root / "usr" / "lib" / f"{arch}-linux-musl"):
        if (libdir / "libc.so").exists():
            return libdir
    raise Unavailable(f"Debian's musl package has no {arch}-linux-musl/libc.so")
