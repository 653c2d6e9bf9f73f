"""Entropy failure from the kernel's side (VALIDATION.md section 5): a real
seccomp filter makes getrandom(2) fail with EPERM (-> OSError, never output)
or ENOSYS (-> /dev/urandom), and /dev/urandom is then missing, replaced or
unopenable (-> OSError, never output).  (Split from test_hardening.py.)

tests/generator/test_entropy_failure.py covers the LD_PRELOAD getrandom shim (EPERM,
ENOSYS, EINTR from the C library's wrapper); nothing here repeats it.

glibc 2.41 and later answer getrandom() from the vDSO, with no system call
for a seccomp filter to refuse.  So the children here run with the shim
preloaded in its pass-through mode, whose getrandom() is the system call
itself: the filter refuses it whatever the C library.  Should getrandom()
still be answered without one, the child skips, saying so.
"""
import os
import textwrap

import pytest

from entropy_calls import CHILD_SOURCE, check_all_failed
from helpers import (
    LINUX,
    last_json,
    run_child,
    shim_env,
)

# Each test a child interpreter behind a seccomp filter.
pytestmark = pytest.mark.slow

# ---- 5. entropy failure from the kernel's side: seccomp, mount namespaces -----

SECCOMP_PRELUDE = r"""
import ctypes, errno, json, os, platform, sys
try:
    # numpy's own import seeds numpy.random from the OS: load it (and
    # arc4py._numpy) now, while the OS still gives entropy, so that what
    # fails below is arc4py's draw and not numpy's import.
    import numpy, numpy.random
    import arc4py._numpy
except ImportError:
    pass
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong,
                       ctypes.c_ulong, ctypes.c_ulong]
libc.syscall.restype = ctypes.c_long
# (audit arch, SYS_getrandom) per machine
ARCH = {"x86_64": (0xC000003E, 318), "aarch64": (0xC00000B7, 278)}

class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte),
                ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

def skip(reason):
    print(json.dumps({"skip": reason}))
    sys.exit(0)

def deny_getrandom(err):
    # A classic BPF seccomp program: getrandom -> ERRNO(err), all else allowed.
    if platform.machine() not in ARCH:
        skip(f"no getrandom syscall number known for {platform.machine()}")
    arch, nr = ARCH[platform.machine()]
    LD_W_ABS, JEQ_K, RET_K = 0x20, 0x15, 0x06
    ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
    prog = [(LD_W_ABS, 0, 0, 4),            # seccomp_data.arch
            (JEQ_K, 1, 0, arch),
            (RET_K, 0, 0, ALLOW),
            (LD_W_ABS, 0, 0, 0),            # seccomp_data.nr
            (JEQ_K, 0, 1, nr),
            (RET_K, 0, 0, RET_ERRNO | err),
            (RET_K, 0, 0, ALLOW)]
    insns = (SockFilter * len(prog))(*[SockFilter(*p) for p in prog])
    fprog = SockFprog(len(prog), insns)
    if libc.prctl(38, 1, 0, 0, 0) != 0:        # PR_SET_NO_NEW_PRIVS
        skip("prctl(PR_SET_NO_NEW_PRIVS) refused: "
             + os.strerror(ctypes.get_errno()))
    if libc.prctl(22, 2, ctypes.addressof(fprog), 0, 0) != 0:  # PR_SET_SECCOMP
        skip("prctl(PR_SET_SECCOMP, FILTER) refused: "
             + os.strerror(ctypes.get_errno()))
    buf = ctypes.create_string_buffer(16)
    r = libc.syscall(nr, buf, 16, 0)
    if r != -1 or ctypes.get_errno() != err:
        skip(f"the seccomp filter did not take (syscall -> {r})")
    # A C library that answers getrandom() from the vDSO never asks the
    # kernel: nothing for seccomp to deny.
    libc.getrandom.restype = ctypes.c_ssize_t
    if libc.getrandom(buf, 16, 0) == 16:
        skip("the C library serves getrandom() without a system call (vDSO)")
""" + CHILD_SOURCE


@pytest.fixture
def seccomp_child(getrandom_shim):
    """``seccomp_child(code, tmp_path, mode=None)``: run SECCOMP_PRELUDE and
    code in a child under the getrandom shim (pass-through unless mode
    says otherwise); its JSON, or a skip with the child's reason."""
    def run(code, tmp_path, mode=None):
        if not LINUX:
            pytest.skip("seccomp is Linux-only")
        res = last_json(run_child(SECCOMP_PRELUDE + textwrap.dedent(code),
                                  cwd=tmp_path,
                                  **shim_env(str(getrandom_shim), mode)))
        if "skip" in res:
            pytest.skip(res["skip"])
        return res
    return run


def test_skips_where_getrandom_makes_no_system_call(getrandom_shim,
                                                    tmp_path):
    """A C library that answers getrandom() without the system call (the
    shim's vdso mode, as glibc >= 2.41) leaves the filter nothing to
    refuse: the child says so and the tests skip rather than fail."""
    res = last_json(run_child(SECCOMP_PRELUDE + "deny_getrandom(errno.EPERM)\n"
                              "print(json.dumps({'denied': True}))",
                              cwd=tmp_path,
                              **shim_env(str(getrandom_shim), "vdso")))
    vdso = "the C library serves getrandom() without a system call (vDSO)"
    if res.get("skip") not in (None, vdso):  # e.g. qemu-user refuses seccomp
        pytest.skip(f"no seccomp filter here to check against: {res['skip']}")
    assert res == {"skip": vdso}


def test_seccomp_eperm_fails_closed(seccomp_child, tmp_path):
    """getrandom denied by a real seccomp filter (EPERM, as a container
    runtime's profile would): every call raises OSError(EPERM), in the main
    thread and a new one, and keeps failing; nothing is ever output."""
    import errno
    res = seccomp_child("""
        deny_getrandom(errno.EPERM)
        import threading
        import arc4py
        first = attempt_all()
        again = attempt_all()
        box = {}
        t = threading.Thread(target=lambda: box.update(attempt_all()))
        t.start(); t.join()
        print(json.dumps({"first": first, "again": again, "thread": box}))
    """, tmp_path)
    for part in ("first", "again", "thread"):
        check_all_failed(res[part], errno.EPERM)


def test_seccomp_eperm_after_seeding(seccomp_child, tmp_path):
    """Seeded first, then the filter goes in (a sandbox tightening): the
    live state may serve at most the rest of its reseed interval, then
    fails closed; stir() fails at once, and so does everything after it."""
    import errno
    res = seccomp_child("""
        import arc4py
        arc4py.stir()
        before = arc4py.arc4random_buf(16)
        deny_getrandom(errno.EPERM)
        drawn, err = 0, None
        while drawn < (4 << 20):
            try:
                arc4py.arc4random_buf(1000)
            except OSError as e:
                err = e.errno
                break
            drawn += 1000
        try:
            arc4py.stir()
            stir = "no error"
        except OSError as e:
            stir = e.errno
        print(json.dumps({"drawn": drawn, "err": err, "stir": stir,
                          "after": attempt_all()}))
    """, tmp_path)
    assert res["err"] == errno.EPERM
    assert res["drawn"] <= (1 << 20), "drew past the reseed interval"
    assert res["stir"] == errno.EPERM
    check_all_failed(res["after"], errno.EPERM)


def test_seccomp_enosys_uses_dev_urandom_then_fails_closed(seccomp_child,
                                                           tmp_path):
    """getrandom missing (ENOSYS from seccomp, as on a pre-3.17 kernel): the
    generator reads /dev/urandom.  When /dev/urandom cannot be opened (no
    file descriptor left: RLIMIT_NOFILE), every call raises OSError(EMFILE)
    and nothing is output; with descriptors back it works again."""
    import errno
    res = seccomp_child("""
        deny_getrandom(errno.ENOSYS)
        import resource, threading
        import arc4py
        outs = [arc4py.arc4random_buf(16) for _ in range(200)]
        big = bytearray(3 << 20)                 # several reseeds
        arc4py.fill(big)
        outs += [bytes(big[i:i + 16]) for i in range(0, len(big), 4096)]
        box = []
        t = threading.Thread(target=lambda: box.extend(
            arc4py.arc4random_buf(16) for _ in range(50)))
        t.start(); t.join()
        outs += box
        distinct = len(set(outs)) == len(outs)
        # No descriptor left below the limit: open("/dev/urandom") fails.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        lowest = os.open("/dev/null", os.O_RDONLY)
        os.close(lowest)
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowest, hard))
        try:
            try:                 # the live state must not serve on: reseed now
                arc4py.stir()
                stir = "no error"
            except OSError as e:
                stir = e.errno
            failed = attempt_all()
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        back = [arc4py.arc4random_buf(16) for _ in range(10)]
        print(json.dumps({"n": len(outs), "distinct": distinct,
                          "failed": failed, "stir": stir,
                          "back": len(set(back)) == 10 and not (set(back) & set(outs))}))
    """, tmp_path)
    assert res["distinct"] and res["n"] == 200 + 768 + 50
    assert res["stir"] == errno.EMFILE
    check_all_failed(res["failed"], errno.EMFILE)
    assert res["back"]


@pytest.mark.parametrize("how,err", [("missing", "ENOENT"), ("regular", "EIO"),
                                     ("devnull", "EIO")])
def test_enosys_and_dev_urandom_gone_or_replaced(seccomp_child, tmp_path, how,
                                                err):
    """getrandom missing (seccomp ENOSYS) and, in a private mount namespace,
    /dev/urandom missing (an empty tmpfs on /dev), replaced by a regular
    file of predictable bytes, or by /dev/null (a character device that
    reads as EOF): OSError every time, never output."""
    import errno
    if LINUX and os.geteuid() != 0:  # elsewhere seccomp_child skips
        pytest.skip("needs root for a mount namespace (unshare(CLONE_NEWNS))")
    planted = tmp_path / "planted"
    planted.write_bytes(b"A" * 4096)
    res = seccomp_child(f"""
        how = {how!r}
        if libc.unshare(0x20000) != 0:                     # CLONE_NEWNS
            skip("unshare(CLONE_NEWNS) refused: " + os.strerror(ctypes.get_errno()))
        # Private first, so that nothing mounted here reaches the host.
        if libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) != 0:
            skip("mount --make-rprivate / refused: " + os.strerror(ctypes.get_errno()))
        if how == "missing":
            r = libc.mount(b"tmpfs", b"/dev", b"tmpfs", 0, b"size=64k")
        elif how == "regular":
            r = libc.mount({str(planted).encode()!r}, b"/dev/urandom", None,
                           0x1000, None)                      # MS_BIND
        else:
            r = libc.mount(b"/dev/null", b"/dev/urandom", None, 0x1000, None)
        if r != 0:
            skip("mount refused: " + os.strerror(ctypes.get_errno()))
        deny_getrandom(errno.ENOSYS)
        import arc4py
        print(json.dumps({{"first": attempt_all(),
                          "again": attempt_all()}}))
    """, tmp_path)
    check_all_failed(res["first"], getattr(errno, err))
    check_all_failed(res["again"], getattr(errno, err))
