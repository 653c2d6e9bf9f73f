#!/usr/bin/env bash
# arc4py's Python test suite on aarch64 Linux, under qemu-user, with the
# neon core.  tests/cores/test_neon_qemu.py runs the C alone on aarch64; this runs
# the extensions themselves: an arm64 Debian sysroot gives the interpreter,
# PyPI's aarch64 wheels give numpy, pytest and the rest of the test extra,
# and the extensions are cross-built on this host from a copy of the
# checkout (never in place: the checkout's own build stays the host's).
#
# Usage (as root on Debian, or with the tools below already installed):
#   tests/cross/aarch64_python.sh                 the whole suite
#   tests/cross/aarch64_python.sh tests/cores/test_cores.py ...   these instead
# Any argument is passed to pytest as is (paths are relative to the
# checkout); the deselections (DESELECT below) apply either way.
#
# Environment (all optional):
#   AARCH64_DIR       work folder; default .ci-aarch64 in the checkout
#   AARCH64_SYSROOT   the arm64 sysroot; default $AARCH64_DIR/sysroot.  Made
#                     once, reused while its stamp file is there
#   AARCH64_SUITE     Debian suite of the sysroot; default this host's when
#                     it is Debian, else bookworm
#   AARCH64_MIRROR    default: the URI this host's apt sources give the suite
#                     (security updates: AARCH64_SECURITY_MIRROR, likewise
#                     for SUITE-security; tools/debian_pkgs.py reads them)
#   AARCH64_SOURCE    worktree (default: tracked files plus untracked ones
#                     git does not ignore, as they are on disk) or head
#                     (the last commit only)
#   AARCH64_REFRESH=1 make the sysroot and the wheel folder again
#   AARCH64_NO_BINFMT=1  run children through a qemu wrapper script even
#                     where binfmt_misc works (the fallback, for checking it)
#
# Exits 0 with "aarch64_python: skipped: <why>" when the tools or the arm64
# packages cannot be had; otherwise with pytest's status (0: all passed).
set -euo pipefail

say() { echo "aarch64_python: $*"; }
skip() { say "skipped: $*"; exit 0; }
die() { say "error: $*" >&2; exit 1; }

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
work=${AARCH64_DIR:-$repo/.ci-aarch64}
mkdir -p "$work"
work=$(cd "$work" && pwd)
sysroot=${AARCH64_SYSROOT:-$work/sysroot}
mkdir -p "$(dirname "$sysroot")"
sysroot="$(cd "$(dirname "$sysroot")" && pwd)/$(basename "$sysroot")"
refresh=${AARCH64_REFRESH:-0}
start=$SECONDS
stamp() { say "[$((SECONDS - start))s] $*"; }

case "$(uname -s)/$(uname -m)" in
    Linux/aarch64 | Linux/arm64)
        skip "this host is aarch64: run the suite natively (.ci/run)" ;;
    Linux/*) ;;
    *) skip "qemu-user needs a Linux host, this is $(uname -s)" ;;
esac

# ---- host tools ---------------------------------------------------------------
# The cross compiler builds the extensions (and, under test, whatever the
# tests compile with cc); qemu-user-static runs aarch64 code without an
# aarch64 ld.so on the host; python3-venv makes the host build venv;
# debian-archive-keyring checks the arm64 package lists.
need_pkgs=""
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need_pkgs+=" gcc-aarch64-linux-gnu"
[ -e /usr/aarch64-linux-gnu/lib/libc.so ] || need_pkgs+=" libc6-dev-arm64-cross"
command -v qemu-aarch64-static >/dev/null 2>&1 || need_pkgs+=" qemu-user-static"
command -v python3 >/dev/null 2>&1 || need_pkgs+=" python3"
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_pkgs+=" python3-venv"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -e "$keyring" ] || need_pkgs+=" debian-archive-keyring"
for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (a Debian-like host is needed)"
done
if [ -n "$need_pkgs" ]; then
    [ "$(id -u)" = 0 ] || skip "missing$need_pkgs and not root to apt-get install them"
    say "installing$need_pkgs"
    # shellcheck disable=SC2086  # one word per package
    if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends $need_pkgs) \
            >"$work/apt-host.log" 2>&1; then
        tail -n 5 "$work/apt-host.log" | sed 's/^/    /'
        skip "apt-get could not install$need_pkgs (log: $work/apt-host.log)"
    fi
fi
command -v git >/dev/null 2>&1 || skip "git not found: it lists the files to copy"
qemu=$(command -v qemu-aarch64-static)

# ---- the arm64 sysroot ----------------------------------------------------------
# tools/debian_pkgs.py: a private apt state with arm64 as its only
# architecture resolves the interpreter's whole dependency closure and
# downloads it without touching this host's dpkg; dpkg-deb -x unpacks each
# .deb (no maintainer script runs).
os_field() { sed -n "s/^$1=//p" /etc/os-release 2>/dev/null | tr -d '"'; }
codename=$(os_field VERSION_CODENAME)
if [ "$(os_field ID)" = debian ] && [ -n "$codename" ]; then
    suite=${AARCH64_SUITE:-$codename}
else
    suite=${AARCH64_SUITE:-bookworm}
fi
sysroot_stamp=$sysroot/.arc4py-sysroot
debian_pkgs() {
    DEBIAN_MIRROR=${AARCH64_MIRROR:-} DEBIAN_SECURITY_MIRROR=${AARCH64_SECURITY_MIRROR:-} \
        python3 "$repo/tools/debian_pkgs.py" --arch arm64 --suite "$suite" \
        --work "$work" "$@" 2>>"$work/apt-arm64.log"
}

make_sysroot() {
    : >"$work/apt-arm64.log"
    # The suite's default python3.X (python3's dependency), unless given.
    local py=${AARCH64_PYTHON:-}
    if [ -z "$py" ]; then
        py=$(debian_pkgs --default-python) \
            || { tail -n 5 "$work/apt-arm64.log"; skip "cannot fetch Debian's arm64 lists"; }
    fi
    # The interpreter with its stdlib and headers (the -dev packages bring
    # the arm64 libc headers that go with the sysroot's libc); libstdc++6
    # for numpy's C++ parts (wheels leave it to the system).  apt adds the
    # rest: libc6, libexpat1, zlib1g, libffi8, libssl3, libbz2, liblzma,
    # libsqlite3, libncursesw, libtinfo, libuuid, libreadline, libmpdec,
    # libgcc-s1...
    local pkgs="$py lib$py lib$py-stdlib lib$py-minimal $py-minimal $py-dev
                lib$py-dev libstdc++6 libgcc-s1"
    # shellcheck disable=SC2086  # one word per package
    debian_pkgs --into "$sysroot" --refresh --with-depends $pkgs >/dev/null \
        || { tail -n 5 "$work/apt-arm64.log"; skip "cannot download $suite's arm64 $py"; }
    echo "$suite $py" >"$sysroot_stamp"
    stamp "sysroot: $suite's arm64 $py and its dependencies unpacked into $sysroot"
}

if [ "$refresh" != 0 ] || [ ! -e "$sysroot_stamp" ]; then
    stamp "making the arm64 sysroot ($suite)"
    make_sysroot
fi
read -r _ pyname <"$sysroot_stamp"   # pyname: python3.X
pyver=${pyname#python}
guest_py=$sysroot/usr/bin/$pyname
[ -x "$guest_py" ] || die "$guest_py is missing: remove $sysroot and run again"
export QEMU_LD_PREFIX=$sysroot
machine=$("$qemu" -L "$sysroot" "$guest_py" -c 'import platform; print(platform.machine())')
[ "$machine" = aarch64 ] || die "the sysroot's $pyname reports '$machine', not aarch64"

# ---- binfmt_misc --------------------------------------------------------------
# The tests start children with sys.executable (and run what they compile
# with cc): with binfmt_misc the kernel hands any aarch64 ELF to qemu, which
# finds the sysroot through QEMU_LD_PREFIX.  The F flag of Debian's entry
# opens the interpreter now, so it also works in containers and chroots.
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ] && [ "${AARCH64_NO_BINFMT:-0}" = 0 ]; then
    if [ ! -e "$binfmt/register" ]; then
        mount -t binfmt_misc binfmt_misc "$binfmt" >/dev/null 2>&1 || true
    fi
    conf=/usr/lib/binfmt.d/qemu-aarch64.conf
    if [ -w "$binfmt/register" ] && [ -r "$conf" ]; then
        cat "$conf" >"$binfmt/register" 2>/dev/null || true
    fi
fi
use_binfmt=0
if [ "${AARCH64_NO_BINFMT:-0}" = 0 ] && [ -e "$binfmt/qemu-aarch64" ] \
        && [ "$("$guest_py" -c 'import platform; print(platform.machine())' 2>/dev/null)" = aarch64 ]; then
    use_binfmt=1
    python=$guest_py
    stamp "binfmt_misc runs aarch64 programs: children and compiled test programs run"
else
    # Without binfmt the kernel cannot exec an aarch64 program, so the
    # interpreter is started through a host script that runs qemu; -0 makes
    # argv[0], hence sys.executable, that script, so children go through it
    # too.  (Programs the tests compile get the same treatment: see cc below.)
    mkdir -p "$work/bin"
    python=$work/bin/$pyname-qemu
    cat >"$python" <<EOF
#!/bin/sh
exec "$qemu" -L "$sysroot" -0 "\$0" "$guest_py" "\$@"
EOF
    chmod +x "$python"
    stamp "no binfmt_misc for aarch64 here: children run through $python"
fi
[ "$("$python" -c 'import sys; print(sys.executable)')" = "$python" ] \
    || die "$python does not see itself as sys.executable"

# ---- the aarch64 wheels -------------------------------------------------------
# The host venv (setuptools, Cython and numpy for the build) also runs pip
# for the aarch64 side: pip download with the sysroot's platform tags, then
# pip install --target, which unpacks wheels without running them.
# Made from a host CPython of the guest's version where there is one
# (tools/pythons.py finds it: the numpy pinned below may need that version),
# else python3.
hostvenv=$work/host-venv
if [ ! -x "$hostvenv/bin/python" ] || [ "$("$hostvenv/bin/python" -c \
        'import sys; print("%d.%d" % sys.version_info[:2])')" != "$pyver" ]; then
    python3 - "$pyver" "$hostvenv" <<EOF
import sys
sys.path.insert(0, "$repo/tools")
import pythons
pythons.make_venv(pythons.find_python(sys.argv[1]) or sys.executable, sys.argv[2])
EOF
fi
hostpy=$hostvenv/bin/python
"$hostpy" -c 'import tomllib' 2>/dev/null || "$hostpy" -m pip install -q tomli
toml_list() {  # toml_list KEY: pyproject.toml's list at build-system.requires or
    # project.optional-dependencies.test, one requirement a line
    "$hostpy" - "$1" <<'EOF'
import sys
try:
    import tomllib
except ImportError:
    import tomli as tomllib
with open("pyproject.toml", "rb") as f:
    data = tomllib.load(f)
for key in sys.argv[1].split("."):
    data = data[key]
print("\n".join(data))
EOF
}
mapfile -t test_reqs < <(toml_list project.optional-dependencies.test)
mapfile -t build_reqs < <(toml_list build-system.requires)
glibc=$("$python" -c 'import platform; print(platform.libc_ver()[1])')
# pip takes exact tags: every manylinux the sysroot's glibc accepts.
platforms=()
for ((minor = ${glibc#2.}; minor >= 17; minor--)); do
    platforms+=(--platform "manylinux_2_${minor}_aarch64")
done
platforms+=(--platform manylinux2014_aarch64)
pip_target=(--only-binary=:all: "${platforms[@]}" --python-version "$pyver"
            --implementation cp)
site=$work/site-$pyname
site_key="$glibc ${test_reqs[*]}"
if [ "$refresh" != 0 ] || [ ! -e "$site/.arc4py-site" ] \
        || [ "$(cat "$site/.arc4py-site")" != "$site_key" ]; then
    stamp "downloading aarch64 wheels: ${test_reqs[*]}"
    rm -rf "$work/wheels" "$site"
    "$hostpy" -m pip download -q -d "$work/wheels" "${pip_target[@]}" "${test_reqs[@]}"
    "$hostpy" -m pip install -q --no-index --no-deps --target "$site" \
        "${pip_target[@]}" "$work/wheels"/*.whl
    echo "$site_key" >"$site/.arc4py-site"
fi
numpy_ver=""
for d in "$site"/numpy-*.dist-info; do
    [ -d "$d" ] && { numpy_ver=${d##*/numpy-}; numpy_ver=${numpy_ver%.dist-info}; }
done
[ -n "$numpy_ver" ] || die "no numpy in $site"
# The host's numpy is the same release, so setup.py's numpy.get_include()
# matches; the aarch64 wheel's own headers come first anyway (CFLAGS).
build_pins=()
for req in "${build_reqs[@]}"; do
    case "$req" in numpy*) build_pins+=("numpy==$numpy_ver") ;; *) build_pins+=("$req") ;; esac
done
"$hostpy" -m pip install -q "${build_pins[@]}"

# ---- the cross-built copy -------------------------------------------------------
src=$work/src
rm -rf "$src"
mkdir -p "$src"
work_rel=${work#"$repo"/}
if [ "${AARCH64_SOURCE:-worktree}" = head ]; then
    git archive --format=tar HEAD | tar -xf - -C "$src"
    stamp "source: HEAD ($(git rev-parse --short HEAD))"
else
    # Tracked files as they are on disk (a deleted one is left out) plus
    # untracked ones git does not ignore; never this script's work folder.
    git ls-files -z -co --exclude-standard \
        | while IFS= read -r -d '' f; do
              case "$f" in "$work_rel"/*) continue ;; esac
              [ -e "$f" ] && printf '%s\0' "$f"
          done \
        | tar --null -T - -cf - | tar -xf - -C "$src"
    stamp "source: the working tree ($(git rev-parse --short HEAD) + $(git status --porcelain | wc -l) changed paths)"
fi

# The aarch64 interpreter's own compile and link flags (what pip on an
# aarch64 Debian would use), with its headers and the aarch64 numpy's.
# -isystem for the sysroot's libc headers: their warnings are not ours.
mapfile -t guest_cfg < <("$python" -c '
import sysconfig as s
for v in ("CC", "LDSHARED", "CFLAGS", "EXT_SUFFIX"):
    print(s.get_config_var(v))')
cross_cc=${guest_cfg[0]}
command -v "${cross_cc%% *}" >/dev/null 2>&1 || cross_cc=aarch64-linux-gnu-gcc
cross_ldshared=${guest_cfg[1]}
command -v "${cross_ldshared%% *}" >/dev/null 2>&1 || cross_ldshared="aarch64-linux-gnu-gcc -shared"
cross_cflags="${guest_cfg[2]} -I$sysroot/usr/include/$pyname \
-isystem $sysroot/usr/include -isystem $sysroot/usr/include/aarch64-linux-gnu \
-I$site/numpy/_core/include"
ext_suffix=${guest_cfg[3]}

stamp "cross-building the extensions ($cross_cc, $ext_suffix)"
if ! (cd "$src" && env -u ARC4PY_TEST_HOOKS -u ARC4PY_SANITIZE \
        CC="$cross_cc" LDSHARED="$cross_ldshared" CFLAGS="$cross_cflags" \
        _PYTHON_HOST_PLATFORM=linux-aarch64 SETUPTOOLS_EXT_SUFFIX="$ext_suffix" \
        "$hostpy" setup.py build_ext --inplace -j 2) >"$work/build.log" 2>&1; then
    grep -E 'error|Error' "$work/build.log" | head -n 20
    die "the cross build failed (log: $work/build.log)"
fi
built=""
for so in "$src"/arc4py/*"$ext_suffix"; do
    aarch64-linux-gnu-readelf -h "$so" | grep -q 'AArch64' || die "$so is not aarch64"
    so=${so##*/}
    built+=" ${so%"$ext_suffix"}"
done
stamp "built (aarch64):$built"

# ---- the tests ---------------------------------------------------------------
# Under test, cc is the cross compiler: what the tests compile must run on
# the machine they test (a program through binfmt, a library in the aarch64
# interpreter).  --sysroot: the sysroot's headers (Python.h's pyconfig.h
# among them) are the system's.  Without binfmt the kernel cannot exec an
# aarch64 program, so cc leaves a host script at the output path that runs
# the program (kept next to it as NAME.aarch64) under qemu.
# The tests' own extension builds (hooks_build, the C-API demo) run setup.py
# in the aarch64 interpreter, whose sysconfig already names
# aarch64-linux-gnu-gcc; CFLAGS (below) points them at the sysroot's headers
# (the host's /usr/include/python3.X would be the host's).
mkdir -p "$work/bin"
cat >"$work/bin/cc" <<CC
#!/bin/sh
# aarch64 cc for arc4py's tests under qemu (written by $0)
aarch64-linux-gnu-gcc --sysroot="$sysroot" "\$@" || exit
[ "$use_binfmt" = 1 ] && exit 0
out=a.out link=1 prev=
for a in "\$@"; do
    [ "\$prev" = -o ] && out=\$a
    case "\$a" in
        -c | -S | -E | -M | -MM | -shared | -fsyntax-only) link=0 ;;
        -o) ;;
        -o*) out=\${a#-o} ;;
    esac
    prev=\$a
done
[ "\$link" = 1 ] || exit 0
case "\$out" in /*) ;; *) out=\$PWD/\$out ;; esac
mv -f "\$out" "\$out.aarch64" || exit
printf '#!/bin/sh\\nexec "%s" -L "%s" -0 "\$0" "%s" "\$@"\\n' \\
    "$qemu" "$sysroot" "\$out.aarch64" >"\$out"
chmod +x "\$out"
CC
chmod +x "$work/bin/cc"
ln -sf cc "$work/bin/gcc"

# No arguments: the whole suite (about 5.5 minutes on 2 cores), so that new
# test files run on aarch64 too; the core of it (cores, threads, fork,
# reseed, Random, numpy, bad input, secrets helpers, uniform) takes about
# a minute alone.
if [ "$#" -gt 0 ]; then
    selection=("$@")
else
    selection=(tests)
fi
# What cannot work under qemu-user, each with why (ids as pytest --deselect
# takes them; a file deselects all its tests).
DESELECT=(
    # qemu-user answers madvise(MADV_WIPEONFORK) and madvise(MADV_DONTDUMP)
    # with 0 without passing them to the kernel: no mapping shows the wf and
    # dd flags (and fork_protection() still lists both, from madvise's 0).
    tests/generator/test_fork.py::test_smaps_shows_wipeonfork_and_dontdump
    # qemu-user keeps about 280 KB for every thread that has ended (plain
    # Python threads, no arc4py: +280 MB over 1000 threads, +8 KB natively),
    # so stress.py's VmRSS limit fails; it runs again below without that
    # one limit.
    tests/generator/test_hardening.py::test_stress_reduced
    # ThreadSanitizer does not run under qemu-user (its aarch64 runtime
    # spins at full CPU, GBs resident, past 10 minutes).  (The programs
    # built by a compiler named by name, clang's among them, skip where
    # that compiler builds for the host.)
    'tests/c/test_c_programs.py::test_c_program[stress_threads-tsan-gcc]'
)
deselect_args=()
for id in "${DESELECT[@]}"; do
    deselect_args+=(--deselect "$id")
done

cd "$src"
export PATH="$work/bin:$PATH"
# The built copy first: some tests start children from / with os.environ.
export PYTHONPATH=$src:$site
export CC="$cross_cc" LDSHARED="$cross_ldshared" CFLAGS="$cross_cflags"
unset ARC4PY_BACKEND ARC4PY_TEST_HOOKS ARC4PY_SANITIZE LD_PRELOAD PYTHONHOME \
      _PYTHON_HOST_PLATFORM SETUPTOOLS_EXT_SUFFIX
backend=$("$python" -c 'import arc4py; print(arc4py.backend())')
[ "$backend" = neon ] || die "arc4py.backend() is '$backend' on aarch64, not neon"
stamp "arc4py.backend() = neon; running pytest (${#DESELECT[@]} deselections)"
status=0
# --basetemp: this run's own temporary folder (kept until the next run), not
# one shared with other pytest runs on the machine.
"$python" -m pytest -p no:cacheprovider --basetemp="$work/tmp" \
    "${deselect_args[@]}" "${selection[@]}" || status=$?
stamp "pytest exited $status"

# test_stress_reduced again with only its VmRSS limit off (the switch it
# takes for sanitizer builds, whose quarantine holds freed memory): the
# repeat, fork, hang and state-page checks still hold under qemu.
if [ "$#" = 0 ]; then
    stress_status=0
    ARC4PY_SANITIZED=1 "$python" -m pytest -q -p no:cacheprovider \
        --basetemp="$work/tmp-stress" tests/generator/test_hardening.py::test_stress_reduced \
        || stress_status=$?
    stamp "test_stress_reduced without the VmRSS limit: pytest exited $stress_status"
    [ "$status" != 0 ] || status=$stress_status
fi
exit "$status"
