"""Writing to stdout, and what the commands do when it fails.

A reader that goes away first (``| head -1``) raises BrokenPipeError (on
Windows the C runtime's EINVAL, raised here as BrokenPipeError), on which
``arc4py`` ends quietly with status 0, as most Unix tools do.  Any
other failed write (a full disk, a closed or read-only descriptor) is a
StdoutError: one line on stderr and status 1, never a traceback."""
import errno
import os
import sys


class StdoutError(Exception):
    """stdout is closed, full or not writable."""


def silence_stdout():
    """Point fd 1 at /dev/null so that the interpreter's final flush of
    sys.stdout cannot fail again ('Exception ignored ...')."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, AttributeError, ValueError):
        pass


def reader_gone(exc):
    """Whether ``exc`` (an OSError from a write to stdout) says the reader
    has gone: BrokenPipeError, or on Windows EINVAL, the C runtime's errno
    for a write to a pipe whose read end is closed."""
    return isinstance(exc, BrokenPipeError) or (
        sys.platform == "win32" and exc.errno == errno.EINVAL)


def guard(call):
    """``call`` (a write or a flush of stdout) with its OSError raised as
    BrokenPipeError if the reader has gone, else as a StdoutError."""
    def guarded(*args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            if reader_gone(exc):
                raise BrokenPipeError(exc.errno, exc.strerror) from None
            silence_stdout()
            raise StdoutError(f"cannot write to stdout: "
                              f"{exc.strerror or exc}") from None
    return guarded


def write_stderr(text):
    """Write ``text`` to stderr, if there is one: with stderr closed
    (``2>&-``) the message is lost but the exit status stays the one it
    reports."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # None, or closed
        pass


def write_stdout(text):
    """Write ``text`` to sys.stdout and flush it."""
    guard(sys.stdout.write)(text)
    flush_stdout()


def flush_stdout():
    """Flush sys.stdout, if there is one."""
    if sys.stdout is not None and not sys.stdout.closed:
        guard(sys.stdout.flush)()
