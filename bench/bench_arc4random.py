#!/usr/bin/env python3
"""The bench-arc4random MB/s report as a script: ``arc4py bench`` itself.

    python bench/bench_arc4random.py [--quick] [--compare] [--c-api]
                                     [--backend all] [--threads N] [--json]
                                     [--plot FILE.png]

See ``arc4py bench --help`` for the options.
"""
import sys
from pathlib import Path

# Prefer a tree built in place next to this script over an installed arc4py.
_root = Path(__file__).resolve().parent.parent
if any((_root / "arc4py").glob("_core*.so")) or any(
        (_root / "arc4py").glob("_core*.pyd")):
    sys.path.insert(0, str(_root))

from arc4py.cli import main  # noqa: E402 - after sys.path

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
