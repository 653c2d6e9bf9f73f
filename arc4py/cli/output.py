"""Writing to stdout when the reader may go away first (``| head -1``):
the commands end quietly, with status 0, instead of with a BrokenPipeError
traceback, and nothing more is written."""
import errno
import os
import sys


def reader_gone(exc):
    """Whether ``exc`` (an OSError from a write to stdout) says the reader
    has gone: BrokenPipeError, or on Windows EINVAL, the C runtime's errno
    for a write to a pipe whose read end is closed."""
    return isinstance(exc, BrokenPipeError) or (
        sys.platform == "win32" and exc.errno == errno.EINVAL)


def silence_stdout():
    """After EPIPE: point fd 1 at /dev/null so that the interpreter's
    final flush of sys.stdout cannot fail ('Exception ignored ...
    BrokenPipeError')."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, AttributeError, ValueError):
        pass


def write_stdout(text):
    """Write ``text`` to sys.stdout and flush it; False if the reader has
    gone away (stdout is silenced then: nobody is left to read the rest)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        if not reader_gone(e):
            raise
        silence_stdout()
        return False
    return True
