"""Start-up of the widgets' interpreter in the browser: shipped as its ``sitecustomize``.

Pyodide's core imports ``asyncio`` as it starts (it keeps ``asyncio.get_event_loop`` for awaiting
JavaScript promises), and its ``pyodide`` package installs an event loop on it.  That is 42
modules, about a sixth of the interpreter's start-up, for widgets that never run a coroutine.
Python runs ``sitecustomize`` before Pyodide's start-up code, so this module puts two stand-ins
in ``sys.modules``:

* ``asyncio``: its ``get_event_loop`` (the one name Pyodide's core reads at start-up) imports
  the real package and calls the real function;
* ``pyodide.webloop``: its ``_initialize_event_loop`` (the one name the ``pyodide`` package
  calls) only notes that the loop is wanted.

The first other attribute asked of either stand-in imports both real modules (they replace the
stand-ins in ``sys.modules``) and installs Pyodide's event loop, as its start-up would have.
``widgets/prep_runtime.mjs`` writes this file into the standard-library archive and, before it
cuts that archive, runs a coroutine through the stand-ins so that asyncio stays in it.

Imported under any other name (by the build, or a test), this module does nothing.
"""
from __future__ import annotations

import sys

LATER = ("asyncio", "pyodide.webloop")
_loop_wanted = False


def _load(name: str):
    """Import the real modules in place of the stand-ins; install the event loop if asked for."""
    global _loop_wanted
    for later in LATER:
        if type(sys.modules.get(later)) is _Later:
            del sys.modules[later]
    import asyncio  # noqa: F401
    import pyodide.webloop
    if _loop_wanted:
        _loop_wanted = False
        pyodide.webloop._initialize_event_loop()
    return sys.modules[name]


class _Later(type(sys)):
    """A module whose every attribute, other than those set on it, comes from the real one."""

    def __getattr__(self, attr):
        # The import system's questions are answered without loading, except a package's
        # __path__: "import asyncio.events" or "from asyncio import sleep" need the real package.
        if attr.startswith("__") and attr.endswith("__") and not (attr == "__path__" and self.__name__ == "asyncio"):
            raise AttributeError(attr)
        return getattr(_load(self.__name__), attr)


def _get_event_loop():
    return _load("asyncio").get_event_loop()


def _initialize_event_loop():
    global _loop_wanted
    _loop_wanted = True
    # Take the JavaScript object that importing pyodide.webloop takes, at the same moment:
    # Pyodide's memory snapshot expects its start-up's first JavaScript references in a fixed order.
    from pyodide_js._api import scheduleCallback
    sys.modules["pyodide.webloop"].scheduleCallback = scheduleCallback


def install() -> None:
    if any(name in sys.modules for name in LATER):
        return
    asyncio = _Later("asyncio")
    asyncio.get_event_loop = _get_event_loop
    webloop = _Later("pyodide.webloop")
    webloop._initialize_event_loop = _initialize_event_loop
    sys.modules.update({"asyncio": asyncio, "pyodide.webloop": webloop})


if __name__ == "sitecustomize":
    install()
