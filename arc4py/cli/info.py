"""``arc4py info``: what this arc4py is and how it runs on this machine."""
import os

HELP = ("version, chosen and available cores, CPU features, fork protection, "
        "entropy source, state memory, reseed interval")


def add_parser(sub):
    """Add the ``info`` subcommand to the subparsers ``sub``."""
    i = sub.add_parser("info", help=HELP, description=HELP.capitalize() + ".")
    i.add_argument("--json", action="store_true",
                   help="print the facts as a JSON object")
    return i


def _numpy_status():
    """(numpy version or None, whether arc4py._numpy imports)."""
    import importlib
    try:
        import numpy
    except ImportError:
        return None, False
    try:
        importlib.import_module("arc4py._numpy")
    except ImportError:
        return numpy.__version__, False
    return numpy.__version__, True


def _os_facts():
    """_core._os_facts(), or (entropy source failing) its error in
    entropy_source and nothing named."""
    from arc4py import _core
    try:
        return _core._os_facts()
    except OSError as e:
        return {"entropy_source": f"unavailable ({e})", "state_lock": None,
                "state_exit_wipe": None}


def _python_build():
    """Whether this interpreter is a free-threaded build, and whether the
    GIL is on now (a free-threaded build turns it on for a module that
    does not declare it can run without it, or for PYTHON_GIL=1)."""
    import sys
    import sysconfig
    return {"free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
            "gil_enabled": bool(getattr(sys, "_is_gil_enabled", lambda: True)())}


def collect():
    """The facts ``arc4py info`` shows, as a dict (what --json prints)."""
    import platform

    import arc4py
    from arc4py import _core
    from arc4py._host import cpu_model

    numpy_version, numpy_ext = _numpy_status()
    return {
        "version": arc4py.__version__,
        "backend": arc4py.backend(),
        "backend_env": os.environ.get("ARC4PY_BACKEND") or None,
        "backends": list(arc4py.backends()),
        "all_backends": list(_core.ALL_BACKENDS),
        # {core: why}: the cores this build left out (ARC4PY_NO_<ISA>)
        "not_built": dict(_core._not_built),
        "cpu_model": cpu_model(),
        "cpu_features": list(arc4py.cpu_features()),
        "fork_protection": list(arc4py.fork_protection()),
        # The OS calls by name; state_lock None: some thread's state is not
        # locked in RAM.
        **_os_facts(),
        "reseed_interval": int(_core.RESEED_INTERVAL),
        "buffer_bytes": int(_core.BUFFER_BYTES),
        # The C API's arc4random_buf and fill: "avx512" or "portable".
        "c_api_hand_out": _core._capi_hand_out,
        "numpy": numpy_version,
        "numpy_support": numpy_ext,
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        **_python_build(),
        "platform": platform.platform(),
        "module_path": os.path.dirname(os.path.abspath(arc4py.__file__)),
    }


def _bytes_label(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n} bytes ({n >> shift} {unit})"
    return f"{n} bytes"


# How the C API's arc4random_buf and fill move bytes out of the buffer.
HAND_OUT_LABELS = {
    "avx512": "64 bytes per move (AVX-512 build of arc4random_buf and fill)",
    "portable": "16 bytes per move",
}


def _build_label(info):
    if not info["free_threaded"]:
        return "with a GIL"
    if not info["gil_enabled"]:
        return "free-threaded, GIL off"
    return ("free-threaded, GIL on (PYTHON_GIL=1, or a module imported that "
            "does not declare it runs without it)")


def format_info(info):
    """The facts as aligned ``name  value`` lines."""
    core = info["backend"]
    if info["backend_env"]:
        core += f" (forced by ARC4PY_BACKEND={info['backend_env']})"
    else:
        core += " (fastest here; ARC4PY_BACKEND=<name> overrides)"
    fork = ", ".join(info["fork_protection"]) or "none"
    if info["state_exit_wipe"] is None:
        memory = "unknown (no thread's state could be seeded)"
    elif info["state_lock"]:
        memory = (f"locked in RAM ({info['state_lock']}), wiped at thread "
                  f"exit ({info['state_exit_wipe']})")
    else:
        memory = (f"not locked in RAM (the OS's limit refused some thread's), "
                  f"wiped at thread exit ({info['state_exit_wipe']})")
    if info["numpy"] is None:
        numpy = "not installed (pip install 'arc4py[numpy]' for BitGenerator, "\
                "default_rng and size=)"
    elif info["numpy_support"]:
        numpy = f"{info['numpy']} (BitGenerator, default_rng and size= work)"
    else:
        numpy = f"{info['numpy']} (but arc4py._numpy is not built)"
    avail = ", ".join(info["backends"])
    notes = [f"not built: {core}, {why}"
             for core, why in info["not_built"].items()]
    # A known core is in this build; the CPU (or its OS) cannot run it.
    other = [b for b in info["all_backends"] if b not in info["backends"]]
    if other:
        notes.append(f"not on this CPU: {', '.join(other)}")
    if notes:
        avail += f"  ({'; '.join(notes)})"
    pairs = [
        ("arc4py", info["version"]),
        ("core", core),
        ("available cores", avail),
        ("CPU", info["cpu_model"]),
        ("CPU features", " ".join(info["cpu_features"]) or "none"),
        ("fork protection", fork),
        ("entropy source", info["entropy_source"]),
        ("state memory", memory),
        ("reseed interval", "at most " + _bytes_label(info["reseed_interval"])
         + ", at a random point in its last quarter"),
        ("buffer size", _bytes_label(info["buffer_bytes"])),
        ("C API copies", HAND_OUT_LABELS.get(info["c_api_hand_out"],
                                             info["c_api_hand_out"])),
        ("numpy", numpy),
        ("python", f"{info['python_version']} "
                   f"({info['python_implementation']}, {info['platform']})"),
        ("python build", _build_label(info)),
        ("installed at", info["module_path"]),
    ]
    width = max(len(k) for k, _ in pairs)
    return [f"{k.ljust(width)}  {v}" for k, v in pairs]


def run(args):
    """``arc4py info`` with parsed ``args``; the exit status."""
    from arc4py.cli.output import write_stdout
    info = collect()
    if args.json:
        import json
        write_stdout(json.dumps(info, indent=2) + "\n")
    else:
        write_stdout("\n".join(format_info(info)) + "\n")
    return 0
