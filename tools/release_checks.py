#!/usr/bin/env python3
"""The release workflow's checks on what it built (.github/workflows/wheels.yml).

    python tools/release_checks.py tag TAG          TAG is v + arc4py.__version__
    python tools/release_checks.py reproducible DIR [SDIST]
        DIR's cp3X manylinux_x86_64 and win_amd64 wheels (X: this Python's;
        those DIR has) built again from SDIST (default: DIR's), in another
        work folder, byte for byte (tools/build_wheels.py sets
        SOURCE_DATE_EPOCH to the last commit's time unless given)
    python tools/release_checks.py macos WHEEL...
        each extension's minimum macOS (LC_BUILD_VERSION or
        LC_VERSION_MIN_MACOSX) is its wheel tag's, and not older than
        MACOS_MINIMUM says for its architecture

Exits non-zero, saying why, on the first failure.
"""
import ast
import filecmp
import re
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: the oldest macOS each architecture's wheel may claim: getentropy (the
#: entropy source) is 10.12's; arm64 Macs start at 11.0
MACOS_MINIMUM = {"x86_64": (10, 12), "arm64": (11, 0)}


def fail(why):
    raise SystemExit(f"release_checks: {why}")


def version():
    """arc4py.__version__, read from the file as setuptools reads it."""
    tree = ast.parse((REPO / "arc4py" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "__version__" for t in node.targets):
            return ast.literal_eval(node.value)
    fail("arc4py/__init__.py has no __version__ = '...'")


def check_tag(tag):
    if tag != f"v{version()}":
        fail(f"the tag {tag} is not v{version()} (arc4py.__version__)")
    print(f"release_checks: tag {tag} is arc4py {version()}")


#: the wheels built twice (build_wheels.py's targets)
AGAIN = ("manylinux_x86_64", "windows_x86_64")


def platforms(wheel_or_tag):
    """The platform tags of a wheel (its file name's last field) or of a
    compressed tag set, as a set: auditwheel may order them either way."""
    name = Path(wheel_or_tag).name
    return frozenset(name[:-4].split("-")[-1].split(".") if name.endswith(".whl")
                     else name.split("."))


def check_reproducible(dist, sdist=None):
    dist = Path(dist).resolve()
    if sdist is None:
        (sdist,) = dist.glob("arc4py-*.tar.gz")
    v = f"{sys.version_info[0]}.{sys.version_info[1]}"
    cp = f"cp{v.replace('.', '')}"
    from wheel_targets import TARGETS, WINDOWS_TARGETS  # tools/, beside this script
    wheels = [platforms(w) for w in dist.glob(f"*-{cp}-*.whl")]
    targets = [t for t in AGAIN
               if platforms({**TARGETS, **WINDOWS_TARGETS}[t].tag) in wheels]
    if not targets:
        fail(f"{dist} has no {cp} wheel of {', '.join(AGAIN)} to build again")
    with tempfile.TemporaryDirectory(prefix="arc4py-again-") as tmp:
        subprocess.run([sys.executable, str(REPO / "tools" / "build_wheels.py"),
                        "--sdist", str(sdist), "--out", f"{tmp}/out", "--work", f"{tmp}/work",
                        "--pythons", v, "--targets", ",".join(targets)], check=True)
        again = sorted(Path(tmp, "out").glob("*.whl"))
        if not again:
            fail("the second build made no wheel")
        for wheel in again:
            first = dist / wheel.name
            if not wheel.name.split("-")[2] == cp or not first.exists():
                fail(f"{wheel.name} is not among the first build's wheels")
            if not filecmp.cmp(first, wheel, shallow=False):
                fail(f"{wheel.name}: two builds differ ({', '.join(differences(first, wheel))})")
            print(f"release_checks: {wheel.name}: two builds byte-identical")


def differences(a, b):
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        ia = {i.filename: (i.date_time, i.CRC) for i in za.infolist()}
        ib = {i.filename: (i.date_time, i.CRC) for i in zb.infolist()}
    return sorted(n for n in ia.keys() | ib.keys() if ia.get(n) != ib.get(n)) or ["zip layout"]


# ---- macOS: the minimum OS an extension was linked for ------------------------

LC_VERSION_MIN_MACOSX, LC_BUILD_VERSION = 0x24, 0x32
MH_MAGIC_64 = 0xFEEDFACF
CPU_TYPES = {0x01000007: "x86_64", 0x0100000C: "arm64"}


def macho_minimum(data):
    """(architecture, (major, minor)) of a thin 64-bit Mach-O file."""
    magic, cputype, _, _, ncmds = struct.unpack_from("<IiiII", data)
    if magic != MH_MAGIC_64 or cputype not in CPU_TYPES:
        fail("not a thin 64-bit x86_64 or arm64 Mach-O file")
    offset = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, offset)
        if cmd == LC_BUILD_VERSION:       # platform, minos, sdk, ntools
            (minos,) = struct.unpack_from("<I", data, offset + 12)
            break
        if cmd == LC_VERSION_MIN_MACOSX:  # version, sdk
            (minos,) = struct.unpack_from("<I", data, offset + 8)
            break
        offset += size
    else:
        fail("no minimum-OS load command")
    return CPU_TYPES[cputype], (minos >> 16, (minos >> 8) & 0xFF)


def check_macos(wheels):
    for wheel in wheels:
        m = re.search(r"-macosx_(\d+)_(\d+)_(x86_64|arm64)\.whl$", str(wheel))
        if not m:
            fail(f"{wheel}: not a single-architecture macOS wheel")
        tagged, arch = (int(m.group(1)), int(m.group(2))), m.group(3)
        if tagged < MACOS_MINIMUM[arch]:
            fail(f"{wheel}: tagged macOS {tagged}, before {MACOS_MINIMUM[arch]} for {arch}")
        with zipfile.ZipFile(wheel) as z:
            sos = [n for n in z.namelist() if n.endswith(".so")]
            if not sos:
                fail(f"{wheel}: no extension module")
            for so in sos:
                got_arch, minimum = macho_minimum(z.read(so))
                if got_arch != arch or minimum != tagged:
                    fail(f"{wheel}: {so} is {got_arch} for macOS {minimum}, "
                         f"the tag says {arch} {tagged}")
        print(f"release_checks: {Path(wheel).name}: every extension for macOS "
              f"{'.'.join(map(str, tagged))}, as tagged")


def main(argv):
    if len(argv) >= 2 and argv[0] == "tag":
        check_tag(argv[1])
    elif len(argv) in (2, 3) and argv[0] == "reproducible":
        check_reproducible(*argv[1:])
    elif len(argv) >= 2 and argv[0] == "macos":
        check_macos(argv[1:])
    else:
        fail(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
