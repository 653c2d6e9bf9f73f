"""Facts about this machine and this arc4py for ``bench`` (and bench/*.py;
the CPU model is arc4py._host's, shared with ``info``), and the environment
of a child interpreter (the bench's other cores, the tests' children):
nothing here measures anything."""
import os

from arc4py._host import cpu_model


def libc_version():
    """The C library's name and version, e.g. 'glibc 2.36' ('' if unknown)."""
    import platform
    try:
        return " ".join(v for v in platform.libc_ver() if v)
    except (OSError, ValueError):  # pragma: no cover - odd platforms
        return ""


def machine_facts():
    """What a bench report says about where it ran."""
    import platform

    import arc4py
    return {
        "arc4py_version": arc4py.__version__,
        "backend": arc4py.backend(),
        "backends": list(arc4py.backends()),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_features": list(arc4py.cpu_features()),
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
    }


def site_dirs():
    """This interpreter's site-packages directories (real paths)."""
    import site
    dirs = list(getattr(site, "getsitepackages", list)())
    if getattr(site, "ENABLE_USER_SITE", False):
        dirs.append(site.getusersitepackages())
    return {os.path.realpath(d) for d in dirs}


def child_env(*path, **extra):
    """The environment of a child interpreter that imports this same arc4py
    from any directory, even an in-place build: its parent directory goes
    first on PYTHONPATH unless it is a site-packages directory already.  The
    directories ``path`` go before it (a copy of arc4py there is the one
    the child imports; the tests' use).  ``extra`` variables are set, as
    strings; one given as None is removed (``ARC4PY_BACKEND=None``)."""
    env = dict(os.environ)
    first = [str(p) for p in path]
    home = arc4py_home()
    if os.path.realpath(home) not in site_dirs():
        first.append(home)
    if first:
        env["PYTHONPATH"] = os.pathsep.join(
            first + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                     if p])
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def arc4py_home():
    """The directory that holds the arc4py package this process imported."""
    import arc4py
    return os.path.dirname(os.path.dirname(os.path.abspath(arc4py.__file__)))
