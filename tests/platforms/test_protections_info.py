"""What ``arc4py info`` names of the OS's part (the entropy source, whether
every thread's state is locked in RAM, what wipes a state at thread exit),
each checked against the OS itself rather than against arc4py's word.

    Linux    the getrandom shim (tests/shims) counts the reads and can
             refuse getrandom (-> /dev/urandom) or mlock; /proc/self/smaps
             shows which state mappings (VmFlags "wf") are locked ("lo")
    Windows  ctypes: bcryptprimitives.dll's ProcessPrng, loaded from
             System32 as the platform file loads it; QueryWorkingSetEx's
             Locked bit (Wine 8 does not report it: that test skips there);
             VirtualQuery for the state's pages after its thread exits
"""
import json
import os
import shutil
import sys
import threading

import pytest

from arc4py import _core
from helpers import last_json, run_child, run_python, shim_env

LINUX = sys.platform.startswith("linux")
WINDOWS = sys.platform == "win32"
on_linux = pytest.mark.skipif(not LINUX, reason="reads /proc/self/smaps: Linux only")
on_windows = pytest.mark.skipif(not WINDOWS, reason="asks kernel32 through ctypes: Windows only")

EXIT_WIPE = "TLS callback" if WINDOWS else "pthread key destructor"


def in_new_thread(body):
    """body() run in a fresh thread (a state of its own): its result."""
    out = []
    t = threading.Thread(target=lambda: out.append(body()))
    t.start()
    t.join()
    return out[0]


def test_info_shows_the_facts_of_the_process():
    """--json carries _os_facts() as they are in the command's process, and
    the text view says them in words."""
    facts = json.loads(run_python(["-m", "arc4py", "info", "--json"]).stdout)
    mine = _core._os_facts()
    assert facts["entropy_source"] == mine["entropy_source"]
    assert facts["state_exit_wipe"] == mine["state_exit_wipe"] == EXIT_WIPE
    text = run_python(["-m", "arc4py", "info"]).stdout
    assert f"entropy source   {facts['entropy_source']}\n" in text
    if facts["state_lock"] is None:
        assert "state memory     not locked in RAM" in text
    else:
        assert (f"state memory     locked in RAM ({facts['state_lock']}), wiped "
                f"at thread exit ({EXIT_WIPE})\n") in text


# ---- Linux ---------------------------------------------------------------------

# The generator's state mappings: wipe-on-fork ("wf"), less the droppable
# ones ("dp": the kernel's vDSO getrandom states, also wipe-on-fork), as
# [KiB, locked] pairs.  Adjacent states with the same flags can share one
# mapping, so tests compare sizes, not counts.
STATE_MAPS = """
def state_maps():
    out, size = [], 0
    with open("/proc/self/smaps") as f:
        for line in f:
            if line.startswith("Size:"):
                size = int(line.split()[1])
            elif line.startswith("VmFlags:"):
                flags = line.split()[1:]
                if "wf" in flags and "dp" not in flags:
                    out.append([size, "lo" in flags])
    return out

def join_os_thread(t, kib_before):
    # join() returns once the Python thread is done, a moment before the
    # OS thread exits and its key destructors run: wait (up to 60 s) for
    # the state mappings to shrink back to what they were before t.
    import time
    t.join()
    deadline = time.monotonic() + 60
    while (sum(size for size, _ in state_maps()) > kib_before
           and time.monotonic() < deadline):
        time.sleep(0.01)
"""


def kib(maps, locked=None):
    """Total KiB of the state mappings (only the locked or unlocked ones
    when locked is given)."""
    return sum(size for size, lo in maps if locked is None or lo == locked)


def linux_child(code, shim, mode=None):
    """code (after STATE_MAPS, with arc4py._core and the shim's ctypes
    handle SHIM) in a child under the getrandom shim for arc4py's calls:
    the JSON of its last line."""
    prelude = ("import ctypes, json, os, threading\nfrom arc4py import _core\n"
               "SHIM = ctypes.CDLL(os.environ['SHIM_PATH'])\n"
               "SHIM.getrandom_shim_calls.restype = ctypes.c_long\n")
    return last_json(run_child(prelude + STATE_MAPS + code,
                               **shim_env(shim, mode, "arc4py")))


@on_linux
def test_entropy_source_is_getrandom(getrandom_shim):
    res = linux_child("""
print(json.dumps({"facts": _core._os_facts(),
                  "calls": SHIM.getrandom_shim_calls()}))
""", str(getrandom_shim))
    assert res["facts"]["entropy_source"] == "getrandom"
    assert res["calls"] > 0, "no getrandom() call reached the shim"


@on_linux
def test_entropy_source_names_dev_urandom_where_getrandom_is_missing(getrandom_shim):
    """ENOSYS (a kernel before 3.17) sends the reads to /dev/urandom, and
    info says so."""
    res = linux_child("""
print(json.dumps({"facts": _core._os_facts(),
                  "calls": SHIM.getrandom_shim_calls()}))
""", str(getrandom_shim), mode="enosys")
    assert res["calls"] > 0
    assert res["facts"]["entropy_source"] == "/dev/urandom"


@on_linux
def test_state_lock_matches_smaps(getrandom_shim):
    """"mlock" is named exactly when every state mapping is locked: with
    mlock working, and with a thread whose mlock was refused (then named
    again once that thread has exited)."""
    res = linux_child("""
def refused():
    SHIM.shim_fail_mlock(1)
    try:
        return {"facts": _core._os_facts(), "maps": state_maps()}
    finally:
        SHIM.shim_fail_mlock(0)

first = {"facts": _core._os_facts(), "maps": state_maps()}
out = []
kib_before = sum(size for size, _ in first["maps"])
t = threading.Thread(target=lambda: out.append(refused()))
t.start()
join_os_thread(t, kib_before)
print(json.dumps({"first": first, "refused": out[0],
                  "after": {"facts": _core._os_facts(), "maps": state_maps()}}))
""", str(getrandom_shim))
    first, refused, after = res["first"], res["refused"], res["after"]
    one = kib(first["maps"])
    if one == 0:
        pytest.skip("no state mapping is marked wipe-on-fork (kernel < 4.14): "
                    "smaps cannot single the states out")
    for seen in (first, refused, after):
        named = seen["facts"]["state_lock"] == "mlock"
        assert named == (kib(seen["maps"], locked=False) == 0), seen
    assert refused["facts"]["state_lock"] is None
    assert (kib(refused["maps"]), kib(refused["maps"], locked=False)) == (2 * one, one)
    assert kib(after["maps"]) == one


@on_linux
def test_exit_wipe_unmaps_the_state():
    """The pthread key destructor named: a thread's state mapping is gone
    once the thread has exited."""
    code = STATE_MAPS + """
import json, threading
from arc4py import _core
_core._os_facts()
kib_before = sum(size for size, _ in state_maps())
during = []
t = threading.Thread(target=lambda: during.append(
    (_core._os_facts()["state_exit_wipe"], state_maps())))
t.start()
join_os_thread(t, kib_before)
print(json.dumps({"during": during[0], "after": state_maps()}))
"""
    res = last_json(run_child(code))
    (wipe, during), after = res["during"], res["after"]
    assert wipe == "pthread key destructor"
    if kib(during) == 0:
        pytest.skip("no state mapping is marked wipe-on-fork (kernel < 4.14)")
    assert kib(during) == 2 * kib(after) > 0



@on_linux
def test_a_64_kib_memlock_limit_locks_four_states():
    """Each state takes 16 KiB of RLIMIT_MEMLOCK: under 64 KiB, of six
    threads' states four are locked, and the lock is not named.  Root's
    CAP_IPC_LOCK lifts the limit, so as root the child runs as nobody."""
    prefix = ()
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root is not bound by RLIMIT_MEMLOCK, and setpriv "
                        "(util-linux) is not here to run the child as nobody")
        prefix = (setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                  "--inh-caps=-all")
        probe = run_python(["-c", "import arc4py"], prefix=prefix)
        if probe.returncode != 0:
            pytest.skip("nobody cannot run this interpreter with arc4py (a "
                        "folder on its path is not readable by other users): "
                        + probe.stderr.strip()[-200:])
    code = STATE_MAPS + """
import json, resource, threading
from arc4py import _core
resource.setrlimit(resource.RLIMIT_MEMLOCK, (64 << 10, 64 << 10))
go, made = threading.Event(), []
def draw():
    _core.arc4random_buf(16)
    made.append(1)
    go.wait()
threads = [threading.Thread(target=draw) for _ in range(6)]
for t in threads:
    t.start()
while len(made) < 6:
    go.wait(0.01)
print(json.dumps({"maps": state_maps(), "lock": _core._os_facts()["state_lock"]}))
go.set()
for t in threads:
    t.join()
"""
    res = last_json(run_python(["-c", code], prefix=prefix))
    if kib(res["maps"]) == 0:
        pytest.skip("no state mapping is marked wipe-on-fork (kernel < 4.14)")
    assert (kib(res["maps"]), kib(res["maps"], locked=True)) == (6 * 16, 4 * 16), res
    assert res["lock"] is None


# ---- Windows -------------------------------------------------------------------

def kernel32():
    import ctypes
    from ctypes import wintypes
    k32 = ctypes.WinDLL("kernel32", use_last_error=True)
    k32.LoadLibraryExW.restype = ctypes.c_void_p
    k32.LoadLibraryExW.argtypes = [wintypes.LPCWSTR, ctypes.c_void_p, wintypes.DWORD]
    k32.GetProcAddress.restype = ctypes.c_void_p
    k32.GetProcAddress.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    k32.VirtualAlloc.restype = ctypes.c_void_p
    k32.VirtualAlloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t, wintypes.DWORD,
                                 wintypes.DWORD]
    k32.VirtualLock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    k32.VirtualFree.argtypes = [ctypes.c_void_p, ctypes.c_size_t, wintypes.DWORD]
    k32.VirtualQuery.restype = ctypes.c_size_t
    k32.VirtualQuery.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    k32.GetCurrentProcess.restype = wintypes.HANDLE
    k32.K32QueryWorkingSetEx.argtypes = [wintypes.HANDLE, ctypes.c_void_p, wintypes.DWORD]
    return k32


@on_windows
def test_entropy_source_matches_system32():
    """ProcessPrng where System32's bcryptprimitives.dll exports it (Windows
    10 and later), else BCryptGenRandom (Wine 8 has no ProcessPrng)."""
    k32 = kernel32()
    LOAD_LIBRARY_SEARCH_SYSTEM32 = 0x800
    prims = k32.LoadLibraryExW("bcryptprimitives.dll", None, LOAD_LIBRARY_SEARCH_SYSTEM32)
    found = bool(prims) and bool(k32.GetProcAddress(prims, b"ProcessPrng"))
    want = "ProcessPrng" if found else "BCryptGenRandom"
    assert _core._os_facts()["entropy_source"] == want
    assert in_new_thread(_core._os_facts)["entropy_source"] == want


PAGE = 4096
LOCKED_BIT = 1 << 22   # PSAPI_WORKING_SET_EX_BLOCK.Locked


def locked_pages(k32, base, size):
    """How many of the pages [base, base + size) QueryWorkingSetEx reports
    locked."""
    import ctypes

    class Entry(ctypes.Structure):
        _fields_ = [("VirtualAddress", ctypes.c_void_p),
                    ("VirtualAttributes", ctypes.c_size_t)]

    n = size // PAGE
    entries = (Entry * n)(*[Entry(base + i * PAGE, 0) for i in range(n)])
    if not k32.K32QueryWorkingSetEx(k32.GetCurrentProcess(), entries,
                                    ctypes.sizeof(entries)):
        raise OSError(ctypes.get_last_error(), "QueryWorkingSetEx failed")
    return sum(bool(e.VirtualAttributes & LOCKED_BIT) for e in entries)


def small_private_locked_pages(k32):
    """Locked pages in the committed private regions of at most 64 KiB
    (a state's VirtualAlloc is one such region)."""
    import ctypes

    class MemoryBasicInformation(ctypes.Structure):
        _fields_ = [("BaseAddress", ctypes.c_void_p), ("AllocationBase", ctypes.c_void_p),
                    ("AllocationProtect", ctypes.c_uint32), ("PartitionId", ctypes.c_uint16),
                    ("RegionSize", ctypes.c_size_t), ("State", ctypes.c_uint32),
                    ("Protect", ctypes.c_uint32), ("Type", ctypes.c_uint32)]

    MEM_COMMIT, MEM_PRIVATE = 0x1000, 0x20000
    info = MemoryBasicInformation()
    addr, total = 0, 0
    while k32.VirtualQuery(addr, ctypes.byref(info), ctypes.sizeof(info)):
        base = info.BaseAddress or 0
        if (info.State == MEM_COMMIT and info.Type == MEM_PRIVATE
                and info.RegionSize <= 64 * 1024):
            total += locked_pages(k32, base, info.RegionSize)
        addr = base + info.RegionSize
    return total


@on_windows
def test_state_lock_matches_working_set():
    """"VirtualLock" named: a new thread's state adds locked pages."""
    k32 = kernel32()
    MEM_COMMIT_RESERVE, MEM_RELEASE, PAGE_READWRITE = 0x3000, 0x8000, 0x04
    probe = k32.VirtualAlloc(None, PAGE, MEM_COMMIT_RESERVE, PAGE_READWRITE)
    try:
        assert k32.VirtualLock(probe, PAGE)
        if locked_pages(k32, probe, PAGE) != 1:
            pytest.skip("QueryWorkingSetEx does not report the Locked bit here "
                        "(Wine 8): a page the test VirtualLock()ed reads unlocked")
    finally:
        k32.VirtualFree(probe, 0, MEM_RELEASE)
    before = small_private_locked_pages(k32)
    facts, during = in_new_thread(
        lambda: (_core._os_facts(), small_private_locked_pages(k32)))
    assert facts["state_lock"] == "VirtualLock"
    assert during > before


# The committed private allocations of at most 64 KiB (a state is one), as
# {base: size}, and a thread made before arc4py's extension loads: the TLS
# callback must release the state of a thread the loader never saw start.
EXIT_RELEASE = """
import ctypes, json, threading
from ctypes import wintypes

class MemoryBasicInformation(ctypes.Structure):
    _fields_ = [("BaseAddress", ctypes.c_void_p), ("AllocationBase", ctypes.c_void_p),
                ("AllocationProtect", ctypes.c_uint32), ("PartitionId", ctypes.c_uint16),
                ("RegionSize", ctypes.c_size_t), ("State", ctypes.c_uint32),
                ("Protect", ctypes.c_uint32), ("Type", ctypes.c_uint32)]

k32 = ctypes.WinDLL("kernel32", use_last_error=True)
k32.VirtualQuery.restype = ctypes.c_size_t
k32.VirtualQuery.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
k32.OpenThread.restype = wintypes.HANDLE
k32.OpenThread.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
k32.WaitForSingleObject.restype = wintypes.DWORD
k32.WaitForSingleObject.argtypes = [wintypes.HANDLE, wintypes.DWORD]
k32.CloseHandle.argtypes = [wintypes.HANDLE]
MEM_COMMIT, MEM_PRIVATE, SYNCHRONIZE = 0x1000, 0x20000, 0x00100000

def small_allocations():
    info = MemoryBasicInformation()
    addr, found = 0, {}
    while k32.VirtualQuery(addr, ctypes.byref(info), ctypes.sizeof(info)):
        base = info.BaseAddress or 0
        if (info.State == MEM_COMMIT and info.Type == MEM_PRIVATE
                and base == (info.AllocationBase or 0) and info.RegionSize <= 65536):
            found[base] = info.RegionSize
        addr = base + info.RegionSize
    return found

go = threading.Event()
made = {}

def body():
    go.wait()
    from arc4py import _core
    before = small_allocations()
    _core._os_facts()  # makes this thread's state
    made.update({b: s for b, s in small_allocations().items() if b not in before})

t = threading.Thread(target=body)
t.start()
handle = k32.OpenThread(SYNCHRONIZE, False, t.native_id)
import arc4py  # the extension loads after t began
go.set()
t.join()
# join() returns before the OS thread's exit callbacks have run: its handle
# is signalled after them.
waited = k32.WaitForSingleObject(handle, 60000)
k32.CloseHandle(handle)
left = small_allocations()
print(json.dumps({"made": sorted(made.values()), "waited": waited,
                  "left": sorted(s for b, s in made.items() if left.get(b) == s)}))
"""


@on_windows
def test_exit_wipe_releases_the_state_of_a_thread_older_than_the_module():
    """The TLS callback named: a thread that began before the extension
    loaded makes its state (one new allocation of four pages at most) and
    exits, and the state's pages are released."""
    res = last_json(run_child(EXIT_RELEASE))
    assert res["waited"] == 0, res  # WAIT_OBJECT_0: the thread has exited
    assert len(res["made"]) == 1 and res["made"][0] <= 4 * PAGE, res
    assert res["left"] == [], res
