"""The ``arc4py`` command (also ``python -m arc4py``).

    arc4py bench [options]   the bench-arc4random MB/s report  (bench/command.py)
    arc4py info [--json]     version, cores, CPU features, ...  (cli/info.py)
    arc4py bytes N|- [--hex] [--request-size K]   random bytes  (cli/bytes.py)

This module holds only the one argument parser and the dispatch: each
command module, named in ``COMMANDS`` and imported when the parser is
built, adds its own subparser (``add_parser``) and runs it (``run``).
``main(argv=None)`` returns the exit status: 0 on success, 1 for a
failure (stdout not writable included: cli/output.py), 2 for bad usage.
Building the parser imports no numpy and nothing that measures.
"""
import argparse
import importlib
import sys

from arc4py import __version__
from arc4py.cli.output import StdoutError, flush_stdout, guard, silence_stdout, write_stderr

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

#: command name -> its module's name (each has add_parser(subparsers) and
#: run(args)); the bench lives in its own package, arc4py/bench/
COMMANDS = {"bench": "arc4py.bench.command", "info": "arc4py.cli.info",
            "bytes": "arc4py.cli.bytes"}


def _command(name):
    return importlib.import_module(COMMANDS[name])


class Parser(argparse.ArgumentParser):
    """Bad usage: one line on stderr and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} "
                     f"(see '{self.prog} --help')\n")

    def _print_message(self, message, file=None):
        # argparse drops a failed write; one to stdout is an error here
        if message and file is not None and file is sys.stdout:
            guard(file.write)(message)
        else:
            super()._print_message(message, file)


def build_parser():
    """The command line's parser, every command included; its
    ``commands`` are each command's own parser."""
    p = Parser(prog="arc4py", description=DESCRIPTION, epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version",
                   version=f"arc4py {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND",
                           parser_class=Parser)
    p.commands = {name: _command(name).add_parser(sub) for name in COMMANDS}
    return p


def _parse(parser, argv):
    """The parsed arguments; SystemExit for --help, --version and bad
    usage, which a command's own parser reports."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands.get(args.command, parser).error(
            f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv=None):
    """Run the ``arc4py`` command line; returns the exit status: 0, 1 when
    it failed (stdout not writable included), 2 for bad usage."""
    parser = build_parser()
    command = "arc4py"
    try:
        try:
            args = _parse(parser, sys.argv[1:] if argv is None else list(argv))
        except SystemExit as exc:  # --help, --version and usage errors
            flush_stdout()
            return exc.code if isinstance(exc.code, int) else 2
        if args.command is None:
            if sys.stderr is not None:  # print_help(None) writes to stdout
                parser.print_help(sys.stderr)
            return 2
        command = f"arc4py {args.command}"
        if sys.stdout is None:      # fd 1 closed when the command started
            raise StdoutError("stdout is closed")
        status = _command(args.command).run(args)
        flush_stdout()
        return status
    except BrokenPipeError:         # the reader went away: end quietly
        silence_stdout()
        return 0
    except StdoutError as exc:
        write_stderr(f"{command}: error: {exc}\n")
        return 1
