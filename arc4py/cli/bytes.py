"""``arc4py bytes N``: random bytes to stdout, raw or as hex.

Large fills by default (several threads from 4 MiB on, written out in
order), or arc4random_buf(K) calls with --request-size K so that a test
battery can judge the buffered small-request path too.  Kept lean: no
numpy, nothing from the bench.
"""
import sys

# Requests of DIRECT_BYTES and more bypass the generator's buffer.
from arc4py._core import BUFFER_BYTES, DIRECT_BYTES
from arc4py.cli.output import guard, silence_stdout, write_stderr

#: Bytes generated and written per system call (small enough that a
#: generating thread's two buffers stay in its L2 cache).
CHUNK = 1 << 18
#: From this many bytes on (and for '-'), several threads generate.
PARALLEL_BYTES = 4 << 20
#: Largest --request-size: the largest request the buffer serves.
MAX_REQUEST_SIZE = DIRECT_BYTES - 1

HELP = "write N random bytes to stdout ('-' for an endless stream)"

DESCRIPTION = f"""\
Write N random bytes from arc4py's generator to stdout, as raw binary
(or with --hex as 2N lowercase hex digits and a newline).

N is an integer >= 0, optionally with a unit, in any case: K, M, G or
KiB, MiB, GiB for powers of 1024 ('4K' and '4KiB' are 4096), KB, MB, GB for
powers of 1000 ('4kB' is 4000), as dd and head take them; or '-' for an
endless stream, for piping into test batteries such as dieharder or
PractRand.  A reader that closes the pipe early
(| head -c 100) ends the command quietly with status 0; any other failed
write (a full disk, a closed stdout) with one line on stderr and status 1.

By default the bytes come from large fills, each generated straight into
the output with a one-time key.  --request-size K makes them from
arc4random_buf(K) calls instead (K from 1 to {MAX_REQUEST_SIZE}: the buffered
path that small requests take, rekeying every {BUFFER_BYTES} bytes), so that a
test battery can judge that path too."""

#: N's units (upper case), as dd(1) and head(1) read them: binary with or
#: without "iB", decimal with "B".
_UNITS = {"": 1, "K": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GIB": 1 << 30, "KB": 10 ** 3, "MB": 10 ** 6,
          "GB": 10 ** 9}


def add_parser(sub):
    """Add the ``bytes`` subcommand to the subparsers ``sub``."""
    import argparse
    y = sub.add_parser("bytes", help=HELP, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    y.add_argument("count", metavar="N",
                   help="how many bytes: an integer >= 0, with an optional "
                        "unit (K/KiB, M/MiB, G/GiB: 1024**n; KB, MB, GB: "
                        "1000**n) or '-' for an endless stream")
    y.add_argument("--hex", action="store_true",
                   help="write lowercase hex digits (2 per byte) instead of "
                        "binary, with a newline at the end of a finite N")
    y.add_argument("--request-size", metavar="K", type=int, default=None,
                   help="draw the bytes as arc4random_buf(K) calls, K from 1 "
                        f"to {MAX_REQUEST_SIZE} (the small-request path); "
                        "default: large fills")
    return y


def parse_count(text):
    """N for ``arc4py bytes``: an int >= 0, or None for '-' (endless).

    Digits, then at most one unit from ``_UNITS`` in any case; nothing
    else, not even spaces (a shell quoting slip should not pass)."""
    if text == "-":
        return None
    digits = text.rstrip("KkMmGgIiBb")
    unit = text[len(digits):].upper()
    if (not digits or not digits.isdigit() or not digits.isascii()
            or unit not in _UNITS):
        raise ValueError(f"N must be an integer >= 0, with an optional unit "
                         f"(K, KiB, KB, M, MiB, MB, G, GiB, GB), or '-', not "
                         f"{text!r}")
    return int(digits) * _UNITS[unit]


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

    write = guard(out.write)   # a failed write: cli/output.py
    if as_hex:
        from binascii import hexlify

        def emit(view):
            write(hexlify(view))
    else:
        emit = write
    size = CHUNK if count is None else max(min(count, CHUNK), 1)
    workers = _generators() if count is None or count >= PARALLEL_BYTES else 1
    if request_size is not None:
        workers = 1  # the calls hold the GIL: threads would not help
    if workers == 1:
        view = memoryview(bytearray(size))
        for n in _chunks(count, size):
            part = view if n == size else view[:n]
            fill(part)
            emit(part)
    else:
        _write_parallel(emit, fill, count, size, workers)
    if as_hex and count is not None:
        write(b"\n")


def _write_parallel(emit, fill, count, size, workers):
    """Chunk j is generated by thread j % workers into its buffer
    (j // workers) % 2 while the calling thread writes the chunks out in
    order."""
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
        except BaseException as exc:  # handed to the writer, raised there
            full[k].put((None, exc))

    threads = [threading.Thread(target=generate, args=(k,), daemon=True,
                                name=f"arc4py-bytes-{k}")
               for k in range(workers)]
    for t in threads:
        t.start()
    chunks = _chunks(count, size)
    pending = 0
    try:
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


def run(args):
    """``arc4py bytes`` with parsed ``args``; the exit status."""
    try:
        count = parse_count(args.count)
    except ValueError as exc:
        write_stderr(f"arc4py bytes: error: {exc}\n")
        return 2
    k = args.request_size
    if k is not None and not 1 <= k <= MAX_REQUEST_SIZE:
        write_stderr(f"arc4py bytes: error: --request-size must be from 1 "
                     f"to {MAX_REQUEST_SIZE}, not {k}\n")
        return 2
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        write_stderr("arc4py bytes: error: stdout is not a binary "
                     "stream\n")
        return 2
    try:
        _write_stream(out, count, args.hex, k)
        guard(out.flush)()
    except KeyboardInterrupt:
        silence_stdout()
        return 130
    return 0
