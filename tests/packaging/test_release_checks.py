"""tools/release_checks.py, the release workflow's checks: the tag against
the version, and a macOS wheel's extensions against its tag (Mach-O files
made here by zig for the minimum each names)."""
import importlib.util
import subprocess
import zipfile

import pytest

import arc4py
from helpers import REPO

TOOL = REPO / "tools" / "release_checks.py"
if not TOOL.exists():
    pytest.skip("tools/ is not next to the tests", allow_module_level=True)
spec = importlib.util.spec_from_file_location("release_checks", TOOL)
release_checks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(release_checks)


def test_the_tag_is_the_version():
    release_checks.check_tag(f"v{arc4py.__version__}")
    with pytest.raises(SystemExit, match="is not v"):
        release_checks.check_tag(f"v{arc4py.__version__}.1")


@pytest.fixture(scope="module")
def dylib(zig, tmp_path_factory):
    """{zig target: a shared library linked for it}."""
    folder = tmp_path_factory.mktemp("macho")
    (folder / "m.c").write_text("int f(void) { return 1; }\n")
    out = {}
    for target in ("x86_64-macos.10.12", "x86_64-macos.10.9", "aarch64-macos.11.0"):
        out[target] = folder / f"{target}.so"
        subprocess.run([*zig, "-target", target, "-shared", "-o", str(out[target]),
                        str(folder / "m.c")], check=True)
    return out


@pytest.mark.parametrize("tag, target, wrong", [
    ("macosx_10_12_x86_64", "x86_64-macos.10.12", None),
    ("macosx_11_0_arm64", "aarch64-macos.11.0", None),
    ("macosx_10_12_x86_64", "x86_64-macos.10.9", "the tag says"),   # linked for older
    ("macosx_10_9_x86_64", "x86_64-macos.10.9", "before"),          # no getentropy
    ("macosx_11_0_x86_64", "aarch64-macos.11.0", "the tag says"),   # another CPU
])
def test_a_macos_wheel_is_linked_for_its_tag(tmp_path, dylib, tag, target, wrong):
    wheel = tmp_path / f"arc4py-0-cp311-cp311-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(dylib[target], "arc4py/_core.cpython-311-darwin.so")
    if wrong is None:
        release_checks.check_macos([wheel])
    else:
        with pytest.raises(SystemExit, match=wrong):
            release_checks.check_macos([wheel])
