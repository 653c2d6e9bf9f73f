"""``python -m arc4py``: the ``arc4py`` command (see arc4py/cli/)."""
import sys

from arc4py.cli import main
from arc4py.cli.bytes import parse_count

__all__ = ["main", "parse_count"]

if __name__ == "__main__":
    sys.exit(main())
