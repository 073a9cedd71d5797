"""widgets/runtime_site.py, run by CPython as the sitecustomize it is in the browser, against
stand-ins for Pyodide's modules shaped like the real ones (the build checks it in Pyodide itself)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FAKES = {
    # As Pyodide's: the package installs the event loop as it is imported.
    "pyodide/__init__.py": """
        from .webloop import _initialize_event_loop
        _initialize_event_loop()
        del _initialize_event_loop
    """,
    "pyodide/webloop.py": """
        import asyncio
        from pyodide_js._api import scheduleCallback
        installed = []
        class WebLoop(asyncio.BaseEventLoop):
            pass
        def _initialize_event_loop():
            installed.append(True)
            asyncio.set_event_loop(WebLoop())
    """,
    "pyodide_js/__init__.py": "",
    "pyodide_js/_api.py": "def scheduleCallback(f, ms=0):\n    pass\n",
}

PROBE = """
import json, sys
core_get_event_loop = sys.modules["asyncio"].get_event_loop    # what Pyodide's core keeps
import pyodide
out = {"after_start": sorted(m for m in sys.modules if m == "asyncio" or m.startswith(("asyncio.", "pyodide.web"))),
       "stand_in": type(sys.modules["asyncio"]).__name__,
       "callback_held": "pyodide_js._api" in sys.modules}
loop = core_get_event_loop()                # the core awaits a promise: the real thing loads
import pyodide.webloop as webloop
out["loop"] = type(loop).__name__
out["installed"] = webloop.installed
out["real"] = type(sys.modules["asyncio"]).__name__
out["kept_differs"] = sys.modules["asyncio"].get_event_loop is not core_get_event_loop
out["same_loop"] = core_get_event_loop() is loop   # the kept function still answers, with the one loop
print(json.dumps(out))
"""


def run(tmp_path, probe):
    for rel, text in FAKES.items():
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(text))
    (tmp_path / "sitecustomize.py").write_text((ROOT / "widgets" / "runtime_site.py").read_text())
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_asyncio_and_the_event_loop_wait_for_their_first_use(tmp_path):
    out = run(tmp_path, PROBE)
    # After start-up (pyodide imported, its loop "installed"): nothing of asyncio loaded, and the
    # JavaScript callback the real webloop takes at import is already held.
    assert out["after_start"] == ["asyncio", "pyodide.webloop"]
    assert out["stand_in"] == "_Later" and out["callback_held"]
    # The core's get_event_loop loads both real modules and installs the loop, once.
    assert out["loop"] == "WebLoop" and out["installed"] == [True]
    assert out["real"] == "module"
    # What the core kept is the stand-in's function (the real module has its own), and calling it
    # again gives the loop installed the first time, without installing another.
    assert out["kept_differs"] is True and out["same_loop"] is True


def test_any_other_attribute_loads_the_real_module(tmp_path):
    out = run(tmp_path, """
import json, sys, pyodide, asyncio
sleep = asyncio.sleep
import pyodide.webloop
print(json.dumps({"real": type(sys.modules["asyncio"]).__name__, "sleep": sleep is sys.modules["asyncio"].sleep,
                  "installed": pyodide.webloop.installed}))
""")
    assert out == {"real": "module", "sleep": True, "installed": [True]}


def test_a_submodule_or_a_from_import_loads_the_real_package_first(tmp_path):
    out = run(tmp_path, """
import json, sys, pyodide
import asyncio.events
real = type(sys.modules["asyncio"]).__name__
from asyncio import sleep
import pyodide.webloop
print(json.dumps({"real": real, "installed": pyodide.webloop.installed}))
""")
    assert out == {"real": "module", "installed": [True]}


def test_imported_under_its_own_name_it_changes_nothing():
    done = subprocess.run([sys.executable, "-c", "import sys, widgets.runtime_site; print('asyncio' in sys.modules)"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
