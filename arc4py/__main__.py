"""The ``arc4py`` command (also ``python -m arc4py``).

    arc4py bench [options]   the bench-arc4random MB/s report
    arc4py info [--json]     version, cores, CPU features, fork protection
    arc4py bytes N|- [--hex] [--request-size K]   random bytes to stdout

``main(argv=None)`` returns the exit status: 0 on success, 2 for bad usage.
The ``bytes`` path is kept lean (no numpy, no bench code) so that streaming
starts at once.
"""
import sys

from arc4py import __version__

#: Bytes generated and written per system call by ``arc4py bytes`` (small
#: enough that a generating thread's two buffers stay in its L2 cache).
CHUNK = 1 << 18
#: From this many bytes on (and for '-'), several threads generate.
PARALLEL_BYTES = 4 << 20
#: Largest --request-size: from 2 KiB on, requests bypass the buffer.
MAX_REQUEST_SIZE = 2047

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

COMMANDS = {
    "bench": "the bench-arc4random MB/s report (arc4random, arc4random_buf, "
             "fills; one and many threads; --compare with peers)",
    "info": "version, chosen and available cores, CPU features, fork "
            "protection, reseed interval",
    "bytes": "write N random bytes to stdout ('-' for an endless stream)",
}

BYTES_DESCRIPTION = """\
Write N random bytes from arc4py's generator to stdout, as raw binary
(or with --hex as 2N lowercase hex digits and a newline).

N is an integer >= 0, optionally with a suffix K, M or G (KiB, MiB, GiB:
'4K' is 4096), or '-' for an endless stream, for piping into test batteries
such as dieharder or PractRand.  A reader that closes the pipe early
(| head -c 100) ends the command quietly with status 0.

By default the bytes come from large fills, each generated straight into
the output with a one-time key.  --request-size K makes them from
arc4random_buf(K) calls instead (K from 1 to 2047: the buffered path that
small requests take, rekeying every 3 KiB), so that a test battery can
judge that path too."""

_SUFFIXES = {"": 0, "K": 10, "KIB": 10, "M": 20, "MIB": 20, "G": 30, "GIB": 30}


def _make_parser_class():
    import argparse

    class Parser(argparse.ArgumentParser):
        """Bad usage: one line on stderr and exit status 2."""

        def error(self, message):
            self.exit(2, f"{self.prog}: error: {message} "
                         f"(see '{self.prog} --help')\n")

    return argparse, Parser


def build_parser(command=None):
    """The command line's parser.  With ``command`` given, only that
    subcommand's options are built (so ``bytes`` never loads the bench)."""
    argparse, Parser = _make_parser_class()
    p = Parser(prog="arc4py", description=DESCRIPTION, epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version",
                   version=f"arc4py {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND",
                           parser_class=Parser)
    full = command is None

    if full or command == "bench":
        from arc4py import _bench
        b = sub.add_parser("bench", help=COMMANDS["bench"],
                           description=_bench.DESCRIPTION,
                           epilog=_bench.EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        _bench.add_arguments(b)
    else:
        sub.add_parser("bench", help=COMMANDS["bench"])

    i = sub.add_parser("info", help=COMMANDS["info"],
                       description=COMMANDS["info"].capitalize() + ".")
    i.add_argument("--json", action="store_true",
                   help="print the facts as a JSON object")

    y = sub.add_parser("bytes", help=COMMANDS["bytes"],
                       description=BYTES_DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    y.add_argument("count", metavar="N",
                   help="how many bytes: an integer >= 0 (suffix K, M or G "
                        "allowed) or '-' for an endless stream")
    y.add_argument("--hex", action="store_true",
                   help="write lowercase hex digits (2 per byte) instead of "
                        "binary, with a newline at the end of a finite N")
    y.add_argument("--request-size", metavar="K", type=int, default=None,
                   help="draw the bytes as arc4random_buf(K) calls, K from 1 "
                        f"to {MAX_REQUEST_SIZE} (the small-request path); "
                        "default: large fills")
    return p


def parse_count(text):
    """N for ``arc4py bytes``: an int >= 0, or None for '-' (endless)."""
    if text == "-":
        return None
    s = text.strip()
    digits = s.rstrip("KkMmGgIiBb")
    suffix = s[len(digits):].upper()
    if (not digits or not digits.isdigit() or not digits.isascii()
            or suffix not in _SUFFIXES):
        raise ValueError(f"N must be an integer >= 0 (suffix K, M or G "
                         f"allowed) or '-', not {text!r}")
    return int(digits) << _SUFFIXES[suffix]


def _silence_stdout():
    """After EPIPE: point fd 1 at /dev/null so that the interpreter's final
    flush of sys.stdout cannot fail ('Exception ignored ... BrokenPipeError')."""
    import os
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, AttributeError, ValueError):
        pass


def _chunks(count, size):
    """Chunk lengths for ``count`` bytes (endless if None)."""
    if count is None:
        while True:
            yield size
    full, rest = divmod(count, size)
    for _ in range(full):
        yield size
    if rest:
        yield rest


def _generators():
    """Threads to generate with: one per usable CPU, at most 4 (the large
    fills release the GIL, so the threads run in parallel; each has its
    own generator state)."""
    import os
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 4))


def _small_request_fill(k):
    """A fill() that makes its bytes from arc4random_buf(k) calls."""
    from arc4py import arc4random_buf

    def fill(view):
        n = len(view)
        full, rest = divmod(n, k)
        view[:full * k] = b"".join([arc4random_buf(k) for _ in range(full)])
        if rest:
            view[full * k:] = arc4random_buf(k)[:rest]

    return fill


def _write_stream(out, count, as_hex, request_size=None):
    """Write ``count`` random bytes (None: endless) to the binary stream
    ``out``, as raw bytes or hex; from arc4random_buf(request_size) calls
    if that is given, else from large fills."""
    if request_size is None:
        from arc4py import fill
    else:
        fill = _small_request_fill(request_size)

    if as_hex:
        from binascii import hexlify
        write = out.write
        emit = lambda view: write(hexlify(view))  # noqa: E731
    else:
        emit = out.write
    size = CHUNK if count is None else max(min(count, CHUNK), 1)
    workers = _generators() if count is None or count >= PARALLEL_BYTES else 1
    if request_size is not None:
        workers = 1  # the calls hold the GIL: threads would not help
    if workers == 1:
        buf = bytearray(size)
        view = memoryview(buf)
        for n in _chunks(count, size):
            part = view if n == size else view[:n]
            fill(part)
            emit(part)
    else:
        _write_parallel(emit, fill, count, size, workers)
    if as_hex and count is not None:
        out.write(b"\n")


def _write_parallel(emit, fill, count, size, workers):
    """Chunk i is generated by thread i % workers into one of its two
    buffers while the calling thread writes the chunks out in order."""
    import threading
    from queue import SimpleQueue

    free = [SimpleQueue() for _ in range(workers)]
    full = [SimpleQueue() for _ in range(workers)]

    views = [[memoryview(bytearray(size)) for _ in range(2)]
             for _ in range(workers)]

    def generate(k):
        try:
            while True:
                item = free[k].get()
                if item is None:
                    return
                slot, n = item
                view = views[k][slot]
                part = view if n == size else view[:n]
                fill(part)
                full[k].put((slot, part))
        except BaseException as exc:  # handed to the writer
            full[k].put((None, exc))

    threads = [threading.Thread(target=generate, args=(k,), daemon=True,
                                name=f"arc4py-bytes-{k}")
               for k in range(workers)]
    for t in threads:
        t.start()
    chunks = _chunks(count, size)
    pending = 0
    try:
        # chunk j goes to thread j % workers, into its buffer (j // workers) % 2
        for j in range(2 * workers):
            n = next(chunks, None)
            if n is None:
                break
            free[j % workers].put(((j // workers) % 2, n))
            pending += 1
        i = 0
        while pending:
            k = i % workers
            slot, part = full[k].get()
            pending -= 1
            if slot is None:
                raise part
            emit(part)
            n = next(chunks, None)      # chunk i + 2 * workers: same slot
            if n is not None:
                free[k].put((slot, n))
                pending += 1
            i += 1
    finally:
        for q in free:
            q.put(None)
    for t in threads:
        t.join()


def cmd_bytes(args):
    """``arc4py bytes``: the exit status."""
    try:
        count = parse_count(args.count)
    except ValueError as exc:
        sys.stderr.write(f"arc4py bytes: error: {exc}\n")
        return 2
    k = getattr(args, "request_size", None)
    if k is not None and not 1 <= k <= MAX_REQUEST_SIZE:
        sys.stderr.write(f"arc4py bytes: error: --request-size must be from 1 "
                         f"to {MAX_REQUEST_SIZE}, not {k}\n")
        return 2
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stderr.write("arc4py bytes: error: stdout is not a binary "
                         "stream\n")
        return 2
    try:
        _write_stream(out, count, args.hex, k)
        out.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        _silence_stdout()
        return 130
    return 0


class _BytesArgs:
    command = "bytes"

    def __init__(self, count, hex):
        self.count = count
        self.hex = hex


def _plain_bytes_args(argv):
    """``bytes N``, ``bytes N --hex`` or ``bytes --hex N`` with a plain N
    (digits, a suffix, or '-'): the parsed arguments, else None (argparse
    then handles it, with its help and errors)."""
    if len(argv) not in (2, 3) or argv[0] != "bytes":
        return None
    rest = argv[1:]
    as_hex = "--hex" in rest
    if as_hex:
        rest.remove("--hex")
    if len(rest) != 1:
        return None
    count = rest[0]
    if count != "-" and (count.startswith("-") or not count[:1].isdigit()):
        return None
    return _BytesArgs(count, as_hex)


def main(argv=None):
    """Run the ``arc4py`` command line; returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    argv = list(argv)
    fast = _plain_bytes_args(argv)
    if fast is not None:        # `bytes N [--hex]`: no argparse to load
        return cmd_bytes(fast)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(command if command in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "bytes":
        return cmd_bytes(args)
    if args.command == "info":
        from arc4py import _cli_info
        return _cli_info.run(args)
    from arc4py import _bench
    return _bench.run(args)


if __name__ == "__main__":
    sys.exit(main())
