"""What ``import arc4py`` checks before it goes on: the ImportError advice
when a compiled module is missing (an incomplete installation, or the
source tree shadowing the installed package, as numpy says of its own), and
how a bad ``ARC4PY_BACKEND`` is reported (a ValueError to Python code, one
line and exit status 2 from the ``arc4py`` command)."""
import os
import sys


def missing_extension(name):
    """The ImportError for a compiled module ``name`` that is not there."""
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(here, "_core.pyx")):
        return ImportError(
            f"Error importing arc4py: its compiled module {name} is missing "
            f"from {here}, so this installation is incomplete; reinstall "
            f"arc4py (pip install --force-reinstall arc4py).", name=name)
    # A source tree (numpy says the same of its own): the current directory
    # or sys.path put this folder before the installed package.
    installed = installed_elsewhere(here)
    advice = (f"the installed arc4py is in {installed}: leave the source "
              f"tree (cd elsewhere) and relaunch Python" if installed else
              "install arc4py (pip install .) and relaunch Python from "
              "another directory, or build it in place (pip install -e .)")
    return ImportError(
        f"Error importing arc4py: you should not try to import arc4py from "
        f"its source tree ({here}), where its compiled modules are not "
        f"built ({name} is missing); {advice}.", name=name)


def installed_elsewhere(here):
    """The sys.path entry holding another built arc4py, or None."""
    from importlib.machinery import EXTENSION_SUFFIXES
    this = os.path.realpath(os.path.dirname(here))
    for entry in sys.path:
        if not isinstance(entry, str):
            continue
        entry = os.path.realpath(entry or os.curdir)
        if entry != this and any(
                os.path.exists(os.path.join(entry, "arc4py", "_core" + suffix))
                for suffix in EXTENSION_SUFFIXES):
            return entry
    return None



def bad_backend(error):
    """What ``import arc4py`` raises for a bad ``ARC4PY_BACKEND``
    (``error``, kept by arc4py._core): a new ValueError with its message,
    or, where the import is the ``arc4py`` command starting, SystemExit(2)
    after that message as one line on stderr, as the command reports any
    bad usage (arc4py/cli/__init__.py)."""
    if not _importer_is_the_command():
        return ValueError(str(error))  # new: the stored one keeps no traceback
    if sys.stderr is not None:
        sys.stderr.write(f"arc4py: error: {error}\n")
        sys.stderr.flush()
    return SystemExit(2)


def _importer_is_the_command():
    """Whether the code importing arc4py is the ``arc4py`` command's
    launcher: a console script (a ``__main__`` that imports ``arc4py.cli``)
    or runpy locating ``arc4py.__main__`` for ``python -m arc4py``.  The
    package is imported before either can run a line of the command."""
    frame = sys._getframe()
    while frame is not None and frame.f_globals.get("__name__") != "arc4py":
        frame = frame.f_back
    frame = frame and frame.f_back  # above arc4py/__init__.py: the importer
    while frame is not None and frame.f_code.co_filename.startswith(
            "<frozen importlib."):
        frame = frame.f_back
    if frame is None:
        return False
    module = frame.f_globals.get("__name__")
    if module == "__main__":
        return "arc4py.cli" in frame.f_code.co_names
    return (module == "runpy"
            and frame.f_locals.get("mod_name") == "arc4py.__main__")
