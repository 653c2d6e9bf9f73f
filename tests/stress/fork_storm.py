"""The fork storm of tests/stress/stress.py: ``--forks`` children made while
the workers draw, alternately by os.fork() and (on x86_64 Linux with
MADV_WIPEONFORK) by the raw fork system call through ctypes, which runs no
pthread_atfork handler.  Every child draws, sends its outputs back through
a pipe and leaves with os._exit; the parent checks lengths and exit status
and collects the outputs for stress.py's distinctness check.
"""
import os
import platform
import sys
import threading
import time
import traceback

import arc4py

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers import write_all

RAW_FORK = sys.platform.startswith("linux") and platform.machine() == "x86_64"
SYS_FORK = 57  # x86_64

BIG = arc4py._core.DIRECT_BYTES    # the direct (one-time key) path
CHILD_BYTES = 8 * 16 + BIG + 16    # what every child sends
CHILD_THREAD_BYTES = 2 * 8 * 16     # and what its two threads add


def child_draw(w, with_threads):
    """In an os.fork() child: draw, send, leave.  Never returns."""
    status = 1
    try:
        out = bytearray()
        for _ in range(8):
            out += arc4py.arc4random_buf(16)
        big = bytearray(BIG)
        arc4py.fill(big)
        out += big
        out += arc4py.token_bytes(16)
        if with_threads:
            # Threads born in the child: states of their own, fresh seeds.
            res = [bytearray(), bytearray()]

            def draw(j):
                for _ in range(8):
                    res[j].extend(arc4py.arc4random_buf(16))

            ts = [threading.Thread(target=draw, args=(j,)) for j in range(2)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            out += res[0] + res[1]
        write_all(w, out)
        status = 0
    finally:
        os._exit(status)


def raw_child_draw(w, pre, cbuf, libc):
    """In the child of a raw fork syscall: draw into ``pre`` (allocated by
    the parent) and send it, never giving up the GIL and never calling
    malloc.  A raw fork skips CPython's after-fork repair: the GIL's own
    mutex, or a malloc arena lock, may have been held by another thread at
    the fork, and the child would hang on it (CPython's limit, not arc4py's;
    arc4py itself takes no lock on this path).  So: no os.write/os.close
    (they release the GIL), I/O through ctypes.PyDLL (keeps it)."""
    mv = memoryview(pre)
    for k in range(8):
        mv[16 * k:16 * k + 16] = arc4py.arc4random_buf(16)
    arc4py.fill(mv[128:128 + BIG])
    mv[128 + BIG:144 + BIG] = arc4py.token_bytes(16)
    ok = libc.write(w, cbuf, len(pre)) == len(pre)
    libc._exit(0 if ok else 1)


class GilHeldIO:
    """pipe/close/poll/read/waitpid through ctypes.PyDLL, which keeps the
    GIL across each call.  With hundreds of CPU-bound threads, every time
    the forking thread gave the GIL up it would wait its turn behind all of
    them; holding it for a whole fork cycle (a child runs for milliseconds)
    keeps the storm going at a useful rate."""

    def __init__(self):
        import ctypes
        self.ct = ctypes
        libc = ctypes.PyDLL(None, use_errno=True)
        libc.pipe2.argtypes = [ctypes.c_void_p, ctypes.c_int]
        libc.close.argtypes = [ctypes.c_int]
        libc.read.restype = ctypes.c_ssize_t
        libc.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
        libc.poll.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int]
        libc.waitpid.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
        libc.syscall.restype = ctypes.c_long
        libc.syscall.argtypes = [ctypes.c_long]
        libc.write.restype = ctypes.c_ssize_t
        libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
        libc._exit.argtypes = [ctypes.c_int]
        self.libc = libc
        self.buf = ctypes.create_string_buffer(1 << 16)

    def pipe(self):
        fds = (self.ct.c_int * 2)()
        if self.libc.pipe2(fds, os.O_CLOEXEC) != 0:
            raise OSError(self.ct.get_errno(), "pipe2")
        return fds[0], fds[1]

    def close(self, fd):
        self.libc.close(fd)

    def collect(self, r, pid, timeout):
        """The child's bytes and wait status; (None, None) and the child
        killed if it has not finished within ``timeout`` seconds."""
        ct = self.ct
        pfd = (ct.c_int * 2)(r, 1)  # struct pollfd {int fd; short events, revents}
        chunks = []
        deadline = time.monotonic() + timeout
        while True:
            left = int((deadline - time.monotonic()) * 1000)
            n = self.libc.poll(pfd, 1, max(left, 0)) if left > 0 else 0
            if n < 0 and ct.get_errno() == 4:  # EINTR
                continue
            if n <= 0:
                import signal
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None, None
            k = self.libc.read(r, self.buf, len(self.buf))
            if k < 0 and ct.get_errno() == 4:
                continue
            if k <= 0:
                break
            chunks.append(self.buf.raw[:k])
        status = ct.c_int()
        while self.libc.waitpid(pid, ct.byref(status), 0) < 0:
            if ct.get_errno() != 4:
                raise OSError(ct.get_errno(), "waitpid")
        return b"".join(chunks), status.value


def fork_storm(n_forks, duration, pauser, results, errors, stats, main_out,
               raw_every=2):
    io = GilHeldIO()
    libc = None
    if RAW_FORK and "wipeonfork" in arc4py.fork_protection():
        import ctypes
        # PyDLL: the GIL stays held across the call, so the child of a raw
        # fork owns it (a CDLL call would release it to another thread).
        libc = io.libc
        pre = bytearray(CHILD_BYTES)
        cbuf = (ctypes.c_char * CHILD_BYTES).from_buffer(pre)
    pace = duration / max(n_forks, 1)
    start = time.monotonic()
    done = raw = hung = 0
    try:
        i = 0
        while done < n_forks and i < n_forks + 20:
            # Spread over the run: fork number i waits for its moment.
            delay = start + i * pace - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            use_raw = libc is not None and i % raw_every == 1
            threads_in_child = not use_raw and i % 10 == 0
            r, w = io.pipe()
            if use_raw:
                # No thread may be waiting for the GIL at a raw fork: its
                # drop request would be inherited, and the child (alone,
                # with no thread to hand the GIL to) would wait forever at
                # its first eval-breaker check.  So the workers park first
                # (their states stay warm, mid-buffer), and go on at once.
                pid = -1
                pauser.pause()
                try:
                    pid = libc.syscall(SYS_FORK)
                    if pid == 0:
                        raw_child_draw(w, pre, cbuf, libc)
                finally:
                    if pid != 0:
                        pauser.resume()
                if pid < 0:
                    import ctypes
                    raise OSError(ctypes.get_errno(), "raw fork failed")
            else:
                pid = os.fork()
                if pid == 0:
                    os.close(r)
                    child_draw(w, threads_in_child)
            io.close(w)
            main_out += arc4py.arc4random_buf(16)
            data, status = io.collect(r, pid, timeout=30)
            io.close(r)
            i += 1
            if status is None:
                hung += 1
                errors.append(f"fork {i - 1} ({'raw' if use_raw else 'os.fork'}):"
                              f" child hung for 30 s, killed")
                continue
            expected = CHILD_BYTES + (CHILD_THREAD_BYTES if threads_in_child else 0)
            if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
                    and len(data) == expected):
                errors.append(f"fork {i - 1} ({'raw' if use_raw else 'os.fork'}): "
                              f"status {status:#x}, {len(data)} bytes, "
                              f"expected {expected}")
                continue
            results.append(data)
            done += 1
            raw += use_raw
    except BaseException:
        errors.append(f"fork storm:\n{traceback.format_exc()}")
    stats["forks"] = done
    stats["raw_forks"] = raw
    stats["hung_children"] = hung
    stats["fork_seconds"] = round(time.monotonic() - start, 2)
