"""What ``import arc4py`` checks before it goes on: the ImportError advice
when a compiled module is missing (an incomplete installation, or the
source tree shadowing the installed package, as numpy says of its own)."""
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

