# Sourced by tests/stats/run_dieharder.sh, tests/stress/run_valgrind.sh and
# tests/stress/run_sanitizers.sh: which interpreter, and which arc4py.
#
#   arc4py_python        sets PYTHON (default python3, else python) and
#                        PYEXE, the real interpreter behind it (not a pyenv
#                        or venv wrapper script: valgrind and LD_PRELOAD
#                        must see the binary)
#   arc4py_import DIR    makes `import arc4py` work from DIR (a directory
#                        that is not the checkout, whose source folder would
#                        shadow a build): the arc4py on PYTHON's path, else
#                        this checkout's in-place build (exports PYTHONPATH);
#                        status 1 if neither imports
# Needs $repo, the checkout's root.

arc4py_python() {
    PYTHON="${PYTHON:-$(command -v python3 || command -v python)}"
    PYEXE="$("$PYTHON" -c 'import sys; print(sys.executable)')"
}

arc4py_import() {
    (cd "$1" && "$PYTHON" -c 'import arc4py' 2>/dev/null) && return 0
    export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
    (cd "$1" && "$PYTHON" -c 'import arc4py' 2>/dev/null)
}
