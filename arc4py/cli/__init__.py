"""The ``arc4py`` command (also ``python -m arc4py``).

    arc4py bench [options]   the bench-arc4random MB/s report   (cli/bench.py)
    arc4py info [--json]     version, cores, CPU features, ...  (cli/info.py)
    arc4py bytes N|- [--hex] [--request-size K]   random bytes  (cli/bytes.py)

This module holds only the one argument parser and the dispatch: each
command module adds its own subparser (``add_parser``) and runs it
(``run``).  ``main(argv=None)`` returns the exit status: 0 on success, 2 for
bad usage.  Building the parser imports no numpy and nothing that measures.
"""
import argparse
import sys

from arc4py import __version__
from arc4py.cli import bench, bytes as bytes_cmd, info

__all__ = ["build_parser", "main"]

DESCRIPTION = """\
arc4py: an arc4random-style ChaCha20 CSPRNG (per-thread state, fast key
erasure, reseeded from the OS, fork-safe)."""

EPILOG = """\
examples:
  arc4py info                       which core runs here and how it is protected
  arc4py bench --quick --compare    MB/s beside os.urandom, secrets, numpy, libc
  arc4py bytes 1M > key.bin         1 MiB of random bytes
  arc4py bytes - | dieharder -a -g 200    an endless stream for test batteries
  arc4py bytes 16 --hex             32 hex digits

Run 'arc4py COMMAND --help' for a command's options.
ARC4PY_BACKEND=<core> in the environment forces the generator's core."""

#: command name -> its module (each has add_parser(subparsers) and run(args))
COMMANDS = {"bench": bench, "info": info, "bytes": bytes_cmd}


class Parser(argparse.ArgumentParser):
    """Bad usage: one line on stderr and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} "
                     f"(see '{self.prog} --help')\n")


def build_parser():
    """The command line's parser, every command included."""
    p = Parser(prog="arc4py", description=DESCRIPTION, epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version",
                   version=f"arc4py {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND",
                           parser_class=Parser)
    for module in COMMANDS.values():
        module.add_parser(sub)
    return p


def main(argv=None):
    """Run the ``arc4py`` command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command != "info":
        # A bad ARC4PY_BACKEND: arc4py let this command start (with the
        # fastest core) so that `arc4py info` can show it; the others
        # would measure or emit with a core nobody asked for.
        problem = info.backend_env_error()
        if problem is not None:
            sys.stderr.write(f"arc4py {args.command}: error: {problem}\n")
            return 2
    return COMMANDS[args.command].run(args)
