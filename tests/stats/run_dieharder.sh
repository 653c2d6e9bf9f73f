#!/usr/bin/env bash
# Statistical batteries: pipe arc4py's byte stream into dieharder, once per
# ChaCha20 core.
#
#   tests/stats/run_dieharder.sh [--quick] [--request-size K] [--out DIR] [CORE ...]
#
# CORE: names from arc4py.backends(); default: every core this CPU can run.
# Each core is forced as the generator's with ARC4PY_BACKEND=CORE, and the
# stream comes from `python -m arc4py bytes -` (raw bytes, endless), read by
# dieharder as its raw stdin generator (-g 200).
#
#   --request-size K   the stream is made of arc4random_buf(K) calls
#              (1 <= K <= 2047: the buffered small-request path) rather
#              than large fills (one-time keys); logs are then named
#              dieharder-CORE-requestK.txt
#
#   (default)  the whole battery: dieharder -a (long: tens of minutes a core)
#   --quick    a short subset, well under a minute a core:
#              -d 0 (birthdays), -d 2 (32x32 rank, -p 50), -d 100 (sts_monobit),
#              -d 101 (sts_runs, -p 50), -d 202 (rgb_permutations),
#              -d 205 (dab_bytedistrib)
#
# Verdicts: every result line is PASSED, WEAK or FAILED.  A WEAK line is
# re-run alone (dieharder -d TEST -n NTUP -p PSAMPLES, fresh stream); if the
# re-run is WEAK again it is run once more with twice the psamples.  The
# script fails (exit 1) on any FAILED line, in the battery or a re-run, and
# on a WEAK that stays WEAK through both re-runs.  Exit 2: bad usage or
# dieharder missing; exit 3: arc4py cannot be imported.
#
# Environment: PYTHON (default python3, else python) runs arc4py; the arc4py
# it imports is the one on that interpreter's path from a neutral directory,
# or else the in-place build of this checkout.  NICE (default 10) is the
# niceness of both processes.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
quick=0
request=""
out=""
cores=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --request-size) shift; request="${1:?--request-size needs a number}" ;;
        --request-size=*) request="${1#--request-size=}" ;;
        --out) shift; out="${1:?--out needs a directory}" ;;
        --out=*) out="${1#--out=}" ;;
        -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run_dieharder: unknown option $1" >&2; exit 2 ;;
        *) cores+=("$1") ;;
    esac
    shift
done

if ! command -v dieharder >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "run_dieharder: installing dieharder (apt-get install dieharder)" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq dieharder) >/dev/null 2>&1
    fi
fi
if ! command -v dieharder >/dev/null 2>&1; then
    cat >&2 <<'EOF'
run_dieharder: dieharder is not installed.  On Debian/Ubuntu, as root:
    apt-get install dieharder
(elsewhere build it from its upstream source); then run this script again.
EOF
    exit 2
fi

# shellcheck source=../arc4py_env.sh
. "$here/../arc4py_env.sh"
arc4py_python
NICE="${NICE:-10}"
neutral="$(mktemp -d)"
trap 'rm -rf "$neutral"' EXIT
# From a directory that is not the checkout: from the repository root,
# `python -m arc4py` would pick up the source folder.
if ! arc4py_import "$neutral"; then
    echo "run_dieharder: cannot import arc4py with $PYTHON (install it," \
         "or build it in place: python setup.py build_ext --inplace)" >&2
    exit 3
fi
if [ ${#cores[@]} -eq 0 ]; then
    read -r -a cores <<<"$(cd "$neutral" && "$PYTHON" -c \
        'import arc4py; print(" ".join(arc4py.backends()))')"
fi
[ -n "$out" ] || out="$(mktemp -d "${TMPDIR:-/tmp}/arc4py-dieharder.XXXXXX")"
mkdir -p "$out"

bytes_args=(bytes -)
tag=""
if [ -n "$request" ]; then
    case "$request" in
        ''|*[!0-9]*) echo "run_dieharder: --request-size needs a number" >&2; exit 2 ;;
    esac
    bytes_args+=(--request-size "$request")
    tag="-request$request"
fi

# dieharder reading CORE's stream; extra arguments go to dieharder.
run_dh() {
    local core="$1"; shift
    (cd "$neutral" && ARC4PY_BACKEND="$core" nice -n "$NICE" \
        "$PYTHON" -m arc4py "${bytes_args[@]}" 2>/dev/null) \
        | nice -n "$NICE" dieharder -g 200 "$@"
}

# Result lines: "name|ntup|tsamples|psamples|p-value|ASSESSMENT"
results() { grep -E '^ *[a-z_0-9]+\| *[0-9]+\|.*\| *(PASSED|WEAK|FAILED)' "$1"; }

status=0
declare -a summary
for core in "${cores[@]}"; do
    log="$out/dieharder-$core$tag.txt"
    echo "== core $core${request:+ (arc4random_buf($request) calls)}: $([ $quick = 1 ] && echo quick subset || echo 'dieharder -a') -> $log"
    start=$(date +%s)
    : >"$log"
    if [ $quick = 1 ]; then
        for spec in "0" "2 -p 50" "100" "101 -p 50" "202" "205"; do
            # shellcheck disable=SC2086
            run_dh "$core" -d $spec >>"$log" 2>&1
        done
    else
        run_dh "$core" -a >>"$log" 2>&1
    fi
    secs=$(( $(date +%s) - start ))
    n_lines=$(results "$log" | wc -l)
    n_pass=$(results "$log" | grep -c PASSED)
    n_weak=$(results "$log" | grep -c WEAK)
    n_fail=$(results "$log" | grep -c FAILED)
    if [ "$n_lines" -eq 0 ]; then
        echo "   no results from dieharder: see $log"
        tail -5 "$log" | sed 's/^/   | /'
        status=1
        summary+=("$core$tag: NO RESULTS")
        continue
    fi
    echo "   $n_lines results in ${secs}s: $n_pass PASSED, $n_weak WEAK, $n_fail FAILED"
    results "$log" | grep -E 'WEAK|FAILED' | sed 's/^/   | /'
    [ "$n_fail" -eq 0 ] || status=1
    weak_note=""
    # Re-run each WEAK alone with its own ntup and psamples.
    while IFS='|' read -r name ntup tsamp psamp pval verdict; do
        name="$(echo "$name" | tr -d ' ')"; ntup="$(echo "$ntup" | tr -d ' ')"
        psamp="$(echo "$psamp" | tr -d ' ')"
        final=""
        for p in "$psamp" "$((psamp * 2))"; do
            rlog="$out/rerun-$core$tag-$name-n$ntup-p$p.txt"
            run_dh "$core" -d "$name" -n "$ntup" -p "$p" >"$rlog" 2>&1
            # The re-run's line(s) for this ntup (sts_serial prints two).
            line="$(results "$rlog" | awk -F'|' -v n="$ntup" '$2+0 == n+0')"
            [ -n "$line" ] || line="$(results "$rlog")"
            echo "   re-run $name -n $ntup -p $p:"
            echo "$line" | sed 's/^/   | /'
            if echo "$line" | grep -q FAILED; then final=FAILED; break; fi
            if ! echo "$line" | grep -q WEAK; then final=PASSED; break; fi
            final=WEAK
        done
        weak_note+=" $name(n=$ntup)->re-run $final;"
        [ "$final" = PASSED ] || status=1
    done < <(results "$log" | grep WEAK)
    summary+=("$core$tag: $n_lines results, $n_pass PASSED, $n_weak WEAK, $n_fail FAILED (${secs}s)${weak_note}")
done

echo "== summary ($([ $quick = 1 ] && echo quick || echo full); logs in $out)"
for s in "${summary[@]}"; do echo "   $s"; done
[ $status -eq 0 ] && echo "run_dieharder: OK" || echo "run_dieharder: FAILED"
exit $status
