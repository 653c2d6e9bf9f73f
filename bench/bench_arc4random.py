#!/usr/bin/env python3
"""The bench-arc4random MB/s report as a script: the same as ``arc4py bench``.

    python bench/bench_arc4random.py [--quick] [--compare] [--c-api]
                                     [--backend all] [--threads N] [--json]
                                     [--plot FILE.png]

The engine is arc4py.cli.bench; see ``arc4py bench --help`` for the options.
"""
import sys
from pathlib import Path

# Prefer a tree built in place next to this script over an installed arc4py.
_root = Path(__file__).resolve().parent.parent
if any((_root / "arc4py").glob("_core*.so")) or any(
        (_root / "arc4py").glob("_core*.pyd")):
    sys.path.insert(0, str(_root))

from arc4py.cli.bench import build_parser, run  # noqa: E402 - after sys.path


def main(argv=None):
    return run(build_parser(prog="bench_arc4random.py").parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
