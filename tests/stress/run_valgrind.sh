#!/usr/bin/env bash
# valgrind memcheck over tests/stress/smoke.py (every public call, threads,
# a fork), with PYTHONMALLOC=malloc so that every Python allocation is seen.
#
#   tests/stress/run_valgrind.sh [--keep]
#
# One log per process (the forked child has its own).  Prints each log's
# 'ERROR SUMMARY', how many of its errors are attributable to arc4py (a
# frame in arc4py's extension modules in the error's stack or, with
# --track-origins, in the stack that created the bad value), and which error
# contexts do not also occur in a baseline run of the same interpreter
# without arc4py (CPython and numpy are not memcheck-clean by themselves).
# Fails (exit 1) if any error is attributable to arc4py or smoke.py fails.
# Exit 2: valgrind missing (Debian: apt-get install valgrind).
#
# Environment: PYTHON (default python3); the arc4py it imports from a
# neutral directory, else this checkout's in-place build.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
keep=0
[ "${1:-}" = "--keep" ] && keep=1

if ! command -v valgrind >/dev/null 2>&1; then
    echo "run_valgrind: valgrind is not installed (apt-get install valgrind)" >&2
    exit 2
fi
# shellcheck source=../arc4py_env.sh
. "$here/../arc4py_env.sh"
arc4py_python
work="$(mktemp -d "${TMPDIR:-/tmp}/arc4py-valgrind.XXXXXX")"
[ $keep = 1 ] || trap 'rm -rf "$work"' EXIT
arc4py_import "$work" || { echo "run_valgrind: cannot import arc4py with $PYTHON" >&2; exit 3; }
(cd "$work" && "$PYEXE" -c 'import arc4py, sys; print("arc4py from", arc4py.__file__)') || exit 3

vg=(valgrind --tool=memcheck --error-limit=no --track-origins=yes
    --num-callers=40 --show-leak-kinds=none --leak-check=no)

# Baseline: the same interpreter importing what smoke.py imports, minus
# arc4py, and doing some of the same stdlib work.  Its reports are
# CPython's and numpy's own (a pyenv/optimised CPython is not clean under
# memcheck even with PYTHONMALLOC=malloc).
echo "== valgrind memcheck baseline: $PYEXE without arc4py (PYTHONMALLOC=malloc)"
(cd "$work" && PYTHONMALLOC=malloc nice -n 10 "${vg[@]}" \
    --log-file="$work/base.%p.log" "$PYEXE" -c '
import array, mmap, os, sys, threading, base64, random, json, ctypes
import numpy as np
g = np.random.default_rng(1); g.normal(size=5); g.integers(0, 10, 5)
x = int.from_bytes(os.urandom(64), "little") >> 3
ts = [threading.Thread(target=lambda: os.urandom(16)) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
random.Random(1).shuffle(list(range(52)))
pid = os.fork()
if pid == 0: os._exit(0)
os.waitpid(pid, 0)
') >"$work/base.out" 2>&1

echo "== valgrind memcheck: $PYEXE tests/stress/smoke.py (PYTHONMALLOC=malloc)"
start=$(date +%s)
(cd "$work" && PYTHONMALLOC=malloc nice -n 10 "${vg[@]}" \
    --log-file="$work/vg.%p.log" "$PYEXE" "$here/smoke.py") >"$work/smoke.out" 2>&1
rc=$?
echo "   smoke.py exit $rc in $(( $(date +%s) - start ))s: $(tail -1 "$work/smoke.out")"
status=0
[ $rc -eq 0 ] || status=1

# Classify each error: attributable to arc4py if its stack or the origin
# stack (--track-origins) has a frame in arc4py's extension modules; and
# whether its context (kind + top 4 functions) also occurs in the baseline.
"$PYEXE" - "$work" <<'PYEOF'
import glob, os, re, sys
work = sys.argv[1]

def blocks(path):
    cur = []
    for line in open(path, errors="replace"):
        line = re.sub(r"^==\d+== ?", "", line.rstrip("\n"))
        if line.strip() == "":
            if cur:
                yield cur
            cur = []
        else:
            cur.append(line)
    if cur:
        yield cur

def errors(path):
    out = []
    for b in blocks(path):
        head = b[0]
        if not b[1:] or not b[1].lstrip().startswith("at 0x"):
            continue
        funcs = [m.group(1) for m in (re.match(r"\s+(?:at|by) 0x[0-9A-F]+: (\S+)", l)
                                      for l in b[1:]) if m][:4]
        ours = any(re.search(r"arc4py/_(core|numpy)|arc4py_", l) for l in b)
        out.append(((head, tuple(funcs)), ours))
    return out

def summary(path):
    for line in open(path, errors="replace"):
        if "ERROR SUMMARY" in line:
            last = line
    m = re.search(r"ERROR SUMMARY: (\d+) errors from (\d+) contexts", last)
    return int(m.group(1)), int(m.group(2))

base = set()
base_total = 0
for p in glob.glob(os.path.join(work, "base.*.log")):
    base |= {c for c, _ in errors(p)}
    base_total += summary(p)[0]
total = ours = 0
new = set()
for p in sorted(glob.glob(os.path.join(work, "vg.*.log"))):
    n, ctx = summary(p)
    errs = errors(p)
    mine = sum(1 for _, o in errs if o)
    fresh = {c for c, _ in errs} - base
    new |= fresh
    total += n
    ours += mine
    print(f"   {os.path.basename(p)}: ERROR SUMMARY {n} errors from {ctx} contexts; "
          f"{mine} with an arc4py frame; {len(fresh)} contexts not in the baseline")
print(f"   baseline (no arc4py): {base_total} errors, {len(base)} contexts")
for head, funcs in sorted(new):
    print(f"   not in baseline: {head} at {' < '.join(funcs)}")
print(f"== valgrind: {total} errors in all, {ours} attributable to arc4py")
open(os.path.join(work, "ours"), "w").write(str(ours))
PYEOF
ours="$(cat "$work/ours" 2>/dev/null || echo 1)"
[ "$ours" = 0 ] || status=1
[ $keep = 1 ] && echo "   kept: $work"
[ $status -eq 0 ] && echo "run_valgrind: OK" || echo "run_valgrind: FAILED"
exit $status
