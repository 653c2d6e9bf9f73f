"""Fork safety: a forked child never repeats its parent's (or a sibling's)
output, however it was forked.

Children send their results back through pipes and leave with os._exit, so
no pytest machinery runs in them.  The parent always draws a few bytes first,
so its thread's buffer is warm when it forks: a child that kept the buffer
would repeat the parent's next bytes.
"""
import multiprocessing
import os
import pickle
import platform
import select
import signal
import sys
import threading
import traceback

import pytest

import arc4py
from helpers import last_json, run_child, shim_env, write_all

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"),
    # Python 3.12+ warns when forking a process that has threads.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


# Only a guard against a deadlocked child hanging the suite, not a timing test.
HANG_GUARD_SECONDS = 120


def _read_all(fd, pid):
    """Read until EOF; kill the child and fail if it hangs."""
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], HANG_GUARD_SECONDS)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"child {pid} hung (deadlock after fork?)")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def in_child(fn):
    """Run ``fn()`` in a forked child; return what it returned."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into the caller's code
        status = 1
        try:
            os.close(r)
            try:
                payload = pickle.dumps(("ok", fn()))
                status = 0
            except BaseException:
                payload = pickle.dumps(("error", traceback.format_exc()))
            write_all(w, payload)
        finally:
            os._exit(status)
    os.close(w)
    try:
        data = _read_all(r, pid)
    finally:
        os.close(r)
    _, status = os.waitpid(pid, 0)
    assert data, f"child {pid} sent nothing (wait status {status:#x})"
    kind, value = pickle.loads(data)
    assert kind == "ok", f"child failed:\n{value}"
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    return value


def draws(n=8, size=16):
    return [arc4py.arc4random_buf(size) for _ in range(n)]


def mixed_draws():
    """Output through every hot path, as one list of byte strings."""
    out = draws(4, 16)
    out.append(b"".join(arc4py.arc4random().to_bytes(4, "little")
                        for _ in range(8)))
    out.append(b"".join(arc4py.random_u64().to_bytes(8, "little")
                        for _ in range(4)))
    out.append(arc4py.arc4random_buf(arc4py._core.DIRECT_BYTES))  # direct path
    big = bytearray(1 << 16)
    arc4py.fill(big)                              # direct path, GIL released
    out.append(bytes(big))
    return out


def warm():
    """Draw a little so the calling thread's buffer holds unread bytes."""
    arc4py.arc4random_buf(7)
    arc4py.arc4random()


def assert_disjoint(a, b, what):
    common = set(a) & set(b)
    assert not common, f"{what}: {len(common)} outputs repeated"


def test_child_differs_from_parent_after_warm_buffer():
    warm()
    child = in_child(mixed_draws)
    parent = mixed_draws()
    assert len(child) == len(parent)
    for c, p in zip(child, parent):
        assert c != p
    assert_disjoint(child, parent, "child vs parent")


def test_child_differs_when_forked_mid_buffer_many_times():
    """Fork at many different buffer positions."""
    for k in range(10):
        arc4py.arc4random_buf(1 + 37 * k)
        child = in_child(lambda: draws(4))
        parent = draws(4)
        assert_disjoint(child, parent, f"fork #{k}")


def test_fifty_children_all_distinct():
    warm()
    # The parent draws nothing between forks: all 50 fork the same state.
    children = [in_child(lambda: draws(4, 32)) for _ in range(50)]
    parent = draws(4, 32)
    everything = [x for c in children for x in c] + parent
    assert len(set(everything)) == len(everything) == 51 * 4


def test_fork_from_a_non_main_thread():
    box = {}

    def body():
        try:
            warm()
            box["child"] = in_child(mixed_draws)
            box["parent_thread"] = mixed_draws()
        except BaseException:
            box["error"] = traceback.format_exc()

    warm()
    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert "error" not in box, box["error"]
    main = mixed_draws()
    assert_disjoint(box["child"], box["parent_thread"], "child vs forking thread")
    assert_disjoint(box["child"], main, "child vs main thread")


def test_grandchild():
    def child():
        warm()
        grandchild = in_child(lambda: draws(8))
        return grandchild, draws(8)

    warm()
    grandchild, child_out = in_child(child)
    parent = draws(8)
    everything = grandchild + child_out + parent
    assert len(set(everything)) == len(everything) == 24


def _pool_draw(_):
    return os.getpid(), arc4py.arc4random_buf(16), arc4py.arc4random()


def test_multiprocessing_pool_fork():
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the 'fork' start method is not available")
    ctx = multiprocessing.get_context("fork")
    warm()
    with ctx.Pool(4) as pool:
        results = pool.map_async(_pool_draw, range(64), chunksize=1).get(
            HANG_GUARD_SECONDS)
    parent = draws(4)
    bufs = [b for _, b, _ in results]
    assert len(set(bufs)) == len(bufs) == 64
    assert_disjoint(bufs, parent, "pool workers vs parent")
    # Each worker's first draw too: no two workers started alike.
    firsts = {}
    for pid, b, _ in results:
        firsts.setdefault(pid, b)
    assert len(set(firsts.values())) == len(firsts)


def test_raw_fork_syscall_relies_on_wipeonfork():
    """A fork made by the raw syscall runs no pthread_atfork handler: only
    MADV_WIPEONFORK keeps the child from repeating the parent."""
    if not sys.platform.startswith("linux") or platform.machine() != "x86_64":
        pytest.skip("raw fork syscall number 57 is x86_64 Linux only")
    if "wipeonfork" not in arc4py.fork_protection():
        pytest.skip("kernel has no MADV_WIPEONFORK: a raw fork is unprotected")
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.syscall.argtypes = [ctypes.c_long]
    SYS_fork = 57

    for _attempt in range(3):
        warm()
        r, w = os.pipe()
        pid = libc.syscall(SYS_fork)
        if pid == 0:
            # The child: a process glibc knows nothing about.  Draw, write,
            # and leave at once.
            try:
                os.write(w, arc4py.arc4random_buf(64)
                         + arc4py.arc4random().to_bytes(4, "little"))
            finally:
                os._exit(0)
        assert pid > 0, f"raw fork failed: errno {ctypes.get_errno()}"
        os.close(w)
        child = _read_all(r, pid)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        parent = (arc4py.arc4random_buf(64)
                  + arc4py.arc4random().to_bytes(4, "little"))
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert len(child) == 68
        assert child[:64] != parent[:64], "raw-fork child repeated its parent"
        assert child[64:] != parent[64:]


# A child under the getrandom shim whose state was made while madvise()
# refused MADV_WIPEONFORK (18, Linux's fixed ABI): forked by os.fork() (the
# atfork handlers run) or by the raw system call (none runs), it draws 64
# bytes and counts arc4py's getrandom calls since the fork; the parent then
# draws its next 64.
ATFORK_ONLY_CHILD = """
    import ctypes, json, os, sys
    import arc4py
    SHIM = ctypes.CDLL(os.environ["SHIM_PATH"])
    SHIM.getrandom_shim_calls.restype = ctypes.c_long
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.syscall.argtypes = [ctypes.c_long]
    SHIM.shim_fail_madvise(18)
    arc4py.arc4random_buf(7)     # the state: no wipe-on-fork, its buffer warm
    SHIM.shim_fail_madvise(0)
    protection = arc4py.fork_protection()
    r, w = os.pipe()
    before = SHIM.getrandom_shim_calls()
    pid = os.fork() if sys.argv[1] == "os.fork" else libc.syscall(57)
    if pid == 0:
        try:
            out = arc4py.arc4random_buf(64)
            reads = SHIM.getrandom_shim_calls() - before
            os.write(w, out + reads.to_bytes(8, "little"))
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 4096):
        data += chunk
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"protection": protection, "status": status,
                      "child": data[:64].hex(),
                      "child_reads": int.from_bytes(data[64:], "little"),
                      "parent": arc4py.arc4random_buf(64).hex()}))
"""


@pytest.mark.parametrize("fork", ["os.fork", "raw"])
def test_atfork_handler_alone_when_wipe_on_fork_is_refused(getrandom_shim, fork):
    """Where the state's pages have no wipe-on-fork, the pthread_atfork
    child handler wipes the inherited state: an os.fork() child reseeds
    (a getrandom call) and its next output is not the parent's.  A raw
    fork system call runs no handler, and then the child inherits the
    parent's buffer, as docs/security.rst says: the same next 64 bytes."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the LD_PRELOAD shim and MADV_WIPEONFORK are Linux's")
    if fork == "raw" and platform.machine() != "x86_64":
        pytest.skip("raw fork syscall number 57 is x86_64 Linux only")
    res = last_json(run_child(ATFORK_ONLY_CHILD, fork,
                              **shim_env(str(getrandom_shim), caller="arc4py")))
    assert "wipeonfork" not in res["protection"], res
    assert "atfork" in res["protection"], res
    assert res["status"] == 0 and len(res["child"]) == 128, res
    if fork == "os.fork":
        assert res["child_reads"] >= 1, res
        assert res["child"] != res["parent"], "the child repeated its parent"
    else:
        assert res["child_reads"] == 0, res
        assert res["child"] == res["parent"], res


def test_fork_while_eight_threads_draw():
    stop = threading.Event()
    ready = threading.Barrier(9)
    outs = [[] for _ in range(8)]
    errors = []

    def worker(i):
        try:
            buf = bytearray(1 << 15)
            out = outs[i]
            for _ in range(20):
                out.append(arc4py.arc4random_buf(16))
            ready.wait()
            while not stop.is_set():
                out.append(arc4py.arc4random_buf(16))
                arc4py.fill(buf)              # GIL released in here
                out.append(bytes(buf[:16]))
        except BaseException:
            errors.append(traceback.format_exc())

    def child():
        # New threads in the child, plus the forking thread itself.
        res = [[] for _ in range(5)]

        def draw(j):
            buf = bytearray(1 << 15)
            for _ in range(300):
                res[j].append(arc4py.arc4random_buf(16))
                arc4py.fill(buf)
                res[j].append(bytes(buf[:16]))

        ts = [threading.Thread(target=draw, args=(j,)) for j in range(4)]
        for t in ts:
            t.start()
        draw(4)
        for t in ts:
            t.join()
        return res

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    try:
        warm()
        ready.wait()
        child_res = []
        for _ in range(3):  # fork at a few different moments
            child_res.append(in_child(child))
        main_after = draws(50)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]

    parent = [x for o in outs for x in o] + main_after
    assert len(set(parent)) == len(parent)
    for res in child_res:
        child_all = [x for r in res for x in r]
        assert len(child_all) == 5 * 600
        assert len(set(child_all)) == len(child_all), \
            "threads in the child repeated each other"
        assert_disjoint(child_all, parent, "child threads vs parent threads")
    every_child = [x for res in child_res for r in res for x in r]
    assert len(set(every_child)) == len(every_child), "children repeated"


def test_smaps_shows_wipeonfork_and_dontdump():
    if not os.path.exists("/proc/self/smaps"):
        pytest.skip("no /proc/self/smaps (not Linux)")
    protections = arc4py.fork_protection()
    if "wipeonfork" not in protections:
        pytest.skip("kernel has no MADV_WIPEONFORK")
    arc4py.arc4random_buf(16)

    found = []
    header = None
    with open("/proc/self/smaps") as f:
        for line in f:
            first = line.split(" ", 1)[0]
            if "-" in first and ":" not in first:
                header = line.strip()
            elif line.startswith("VmFlags:"):
                flags = line.split()[1:]
                if "wf" in flags and "dd" in flags:
                    found.append(header)
    assert found, "no mapping with VmFlags wf and dd after using the generator"
    assert "dontdump" in protections
