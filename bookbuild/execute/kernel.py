"""Run a chapter's cells and inline expressions in a Jupyter kernel (ipykernel, spoken to
over the Jupyter messaging protocol, see jupyter.py).

One kernel serves the whole build: between chapters its namespace is reset and its
working directory set, so each chapter starts clean, as Quarto starts a kernel per
document, without paying for a new kernel process (and ``import matplotlib``) each time.

Like Quarto's Jupyter daemon (``execute: daemon``, 300 s by default) the kernel outlives
the build: a build within that many seconds connects to it instead of starting one, which
is most of the cost of rebuilding one changed chapter. The kernel leaves by itself once no
build has touched its lease file for that long. ``daemon: false`` in ``_quarto.yml`` (or
``BOOKBUILD_EXECUTE_DAEMON=0``) gives each build its own kernel, stopped when it ends;
``build --execute-daemon-restart`` replaces a kept kernel with a new one.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BuildError
from ..project.qmd import Cell, Inline

DEFAULT_DAEMON = 300.0  # seconds, as Quarto

ANSI = re.compile(r"\x1b\[[0-9;]*m")
INLINE_MARK = "\x00book-inline\x00"

_SETUP = r"""
import os as __book_os, sys as __book_sys, json as __book_json
__book_os.chdir({cwd!r})
if {root!r} not in __book_sys.path:
    __book_sys.path.insert(0, {root!r})
if not hasattr(__book_sys, '_bookbuild_parts'):
    # Files of the project a cell reads (a CUDA source it prints, a data table): part of the
    # chapter's cache key, like the project modules it imports.  Once per kernel process.
    # A module that reads only a part of a file says so first, sys.audit("book.reads", path,
    # part): that open is keyed on the part (execute/freeze.py, parts_digest), not the bytes.
    __book_sys._bookbuild_read = set()
    __book_sys._bookbuild_parts = {{}}
    __book_sys._bookbuild_pending = set()
    def __book_audit(event, args, read=__book_sys._bookbuild_read, parts=__book_sys._bookbuild_parts,
                     pending=__book_sys._bookbuild_pending, os=__book_os):
        if event == 'open' and isinstance(args[0], (str, bytes, os.PathLike)):
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else 'r'
            if not any(c in mode for c in 'wax+'):
                path = os.path.abspath(os.fsdecode(os.fspath(args[0])))
                if path in pending:
                    pending.discard(path)
                else:
                    read.add(path)
        elif event == 'book.reads' and len(args) == 2:
            path = os.path.abspath(os.fsdecode(os.fspath(args[0])))
            parts.setdefault(path, set()).add(str(args[1]))
            pending.add(path)
    __book_sys.addaudithook(__book_audit)
__book_sys._bookbuild_read.clear()
__book_sys._bookbuild_parts.clear()
__book_sys._bookbuild_pending.clear()

def __book_inline(__items):
    __out = []
    for __expr in __items:
        try:
            __v = eval(compile(__expr, '<inline>', 'eval'), globals())
        except Exception as __e:
            __out.append({{'error': type(__e).__name__ + ': ' + str(__e)}})
            continue
        # What Quarto's Jupyter engine receives for an inline expression: the value's display
        # data (user_expressions), of which it inserts text/markdown as is and text/plain escaped
        # (bookbuild.execute.markdown.quarto_inline).
        __data = get_ipython().display_formatter.format(__v)[0]
        __out.append({{'data': {{k: __data[k] for k in ('text/markdown', 'text/html', 'text/latex', 'text/plain')
                                if k in __data}}}})
    print({mark!r} + __book_json.dumps(__out))
"""

# Between documents: what `%reset -f` clears (every name the cells made, the output history),
# without its gc.collect(), a fifth of a second once matplotlib is loaded.
_RESET = r"""
def __book_reset(ip, root):
    import sys
    ip.history_manager.output_hist.clear()
    import re
    keep = set(ip.user_ns_hidden) | {{'__name__', '__builtin__', '__builtins__'}}
    for name in [k for k in ip.user_ns if k not in keep or re.fullmatch(r'_i?\d+', k)]:
        del ip.user_ns[name]
    ip.user_ns.update({{'_': '', '__': '', '___': ''}})
    for name in [k for k, v in list(sys.modules.items())
                 if (getattr(v, '__file__', None) or '').startswith(root)]:
        del sys.modules[name]  # the next document imports the project's modules afresh
    if 'matplotlib.pyplot' in sys.modules:
        sys.modules['matplotlib.pyplot'].close('all')
        sys.modules['matplotlib'].rc_file_defaults()  # the project's matplotlibrc, not bare defaults
__book_reset(get_ipython(), {root!r})
"""

_MODULES = r"""
import os as __book_os, sys as __book_sys, json as __book_json
print({mark!r} + __book_json.dumps({{"files": sorted({{m.__file__ for m in list(__book_sys.modules.values())
      if getattr(m, '__file__', None) and m.__file__.startswith({root!r})}}
    | {{f for f in __book_sys._bookbuild_read if f.startswith({root!r}) and __book_os.path.isfile(f)
       and '/.bookcache/' not in f and '/__pycache__/' not in f}}),
    "parts": {{f: sorted(p) for f, p in __book_sys._bookbuild_parts.items() if f.startswith({root!r})
              and __book_os.path.isfile(f)}}}}))
"""

# Runs once in a kept kernel, in a namespace of its own (so `%reset` cannot touch it):
# leave when no build has touched the lease for `idle` seconds, or the lease is gone.
_IDLE_WATCH = """
import os, threading, time
def watch(lease, idle):
    while True:
        time.sleep(max(0.2, min(5.0, idle / 4)))
        try:
            age = time.time() - os.stat(lease).st_mtime
        except OSError:
            os._exit(0)
        if age > idle:
            os._exit(0)
threading.Thread(target=watch, args=({lease!r}, {idle!r}), daemon=True, name="bookbuild-idle").start()
"""


def matplotlibrc_files(root: Path) -> list[Path]:
    """Where matplotlib may read the project's settings from: the root and its folders."""
    return sorted([root / "matplotlibrc", *root.glob("*/matplotlibrc")])


def daemon_seconds(execute: dict[str, Any]) -> float:
    """How long a kernel is kept after a build: ``execute: daemon`` (Quarto's option:
    seconds, ``true`` for the default, ``false`` for none); the environment variable
    ``BOOKBUILD_EXECUTE_DAEMON`` overrides it."""
    env = os.environ.get("BOOKBUILD_EXECUTE_DAEMON")
    value: Any = env if env is not None else execute.get("daemon", True)
    if value is True or value is None:
        return DEFAULT_DAEMON
    if value is False:
        return 0.0
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise BuildError(f"execute.daemon must be a number of seconds, true or false (got {value!r})",
                         hint="e.g. `execute: {daemon: 300}`")
    return max(seconds, 0.0)


@dataclass
class CellResult:
    cell: Cell
    outputs: list[dict[str, Any]]


class Kernel:
    """A single Jupyter kernel, started (or reconnected to) lazily and reused across chapters."""

    def __init__(self, root: Path, keep_alive: float = 0.0, timeout: float = 600, restart: bool = False,
                 slot: int = 0):
        self.root = Path(root)
        self.keep_alive = keep_alive
        self.timeout = timeout
        self.restart = restart
        # a build may run chapters in two kernels at once; each is kept in its own folder
        self.dir = self.root / ".bookcache" / ("kernel" if slot == 0 else f"kernel-{slot}")
        self._kc: Any = None
        self._proc: subprocess.Popen | None = None
        self.pid: int | None = None
        self.reused = False
        self._fresh = True
        self._touched = 0.0
        self._connection = ""

    # -- starting, reusing, stopping ---------------------------------------------------------
    def _fingerprint(self) -> str:
        """What a kept kernel must share with this build to be reused: the interpreter, the
        idle time, and the matplotlibrc files matplotlib read when it was imported."""
        h = hashlib.sha256(f"{sys.executable}\0{self.keep_alive}".encode())
        for rc in matplotlibrc_files(self.root):
            if rc.is_file():
                h.update(rc.as_posix().encode() + b"\0" + rc.read_bytes())
        return h.hexdigest()

    def _ensure(self) -> Any:
        if self._kc is not None:
            return self._kc
        self.dir.mkdir(parents=True, exist_ok=True)
        state_path = self.dir / "state.json"
        fingerprint = self._fingerprint()
        if state_path.exists():
            try:
                state = json.loads(state_path.read_text())
            except ValueError:
                state = {}
            pid = state.get("pid")
            if (self.keep_alive and not self.restart and state.get("fingerprint") == fingerprint
                    and _alive(pid)):
                kc = self._connect(state.get("connection", ""), ready_timeout=5, pid=pid)
                if kc is not None:
                    self._kc, self.pid, self.reused, self._fresh = kc, pid, True, False
                    self._touch(force=True)
                    return kc
            _stop(pid)
            Path(state.get("connection") or self.dir / "none").unlink(missing_ok=True)
            state_path.unlink(missing_ok=True)
        self._start(state_path, fingerprint)
        return self._kc

    def _start(self, state_path: Path, fingerprint: str) -> None:
        from .jupyter import write_connection_file
        connection = str(self.dir / f"kernel-{os.getpid()}-{time.time_ns()}.json")
        write_connection_file(Path(connection))
        env = {k: v for k, v in os.environ.items() if k != "JPY_PARENT_PID"}
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        with open(self.dir / "kernel.log", "ab") as log:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "ipykernel_launcher", "-f", connection,
                 "--IPKernelApp.log_level=ERROR",
                 # SVG figures, set on the command line so that matplotlib is imported
                 # only by chapters that draw
                 "--InlineBackend.figure_formats=svg"],
                cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=bool(self.keep_alive))  # a kept kernel is not killed with the build
        self.pid = self._proc.pid
        self._connection = connection
        kc = self._connect(connection, ready_timeout=60, pid=self.pid)
        if kc is None:
            _stop(self.pid)
            raise BuildError("the Jupyter kernel did not start", detail=_tail(self.dir / "kernel.log"),
                             hint="run `python3 -m ipykernel_launcher --version` to see why")
        self._kc = kc
        if self.keep_alive:
            self._touch(force=True)
            code = _IDLE_WATCH.format(lease=str(self.dir / "lease"), idle=self.keep_alive)
            self._check(self.run(f"exec({code!r}, {{}})"), "starting the kernel's idle timer")
            state_path.write_text(json.dumps({"pid": self.pid, "connection": connection,
                                              "fingerprint": fingerprint}))

    def _connect(self, connection: str, ready_timeout: float, pid: int | None) -> Any:
        """A client for the kernel behind ``connection``, once it answers, or None.

        Readiness is a kernel_info reply on the shell channel plus any message on IOPub (so
        that no output of the first cell is missed); whether the kernel still lives is asked
        of its process, not of the heartbeat, which misses beats while a cold kernel imports.
        """
        from .jupyter import Client
        if not Path(connection).is_file():
            return None
        kc = Client(Path(connection))
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline and _alive(pid):
            kc.kernel_info()
            reply = kc.get_shell(timeout=1)
            if reply is None or reply["msg_type"] != "kernel_info_reply":  # (any: an earlier ask may answer late)
                continue
            # IOPub subscribes a moment after connecting: ask again until it hears
            if kc.get_iopub(timeout=0.05) is None:
                continue
            while kc.get_iopub(timeout=0.05) is not None:  # the rest of kernel_info's busy/idle
                pass
            return kc
        kc.close()
        return None

    def _touch(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.keep_alive and (force or now - self._touched > 1.0):
            (self.dir / "lease").touch()
            self._touched = now

    def _drop(self) -> None:
        """Close the client's sockets now: a ZeroMQ context left to the garbage collector
        terminates in whichever thread collects it, and can block that thread."""
        if self._kc is not None:
            self._kc.close()
            self._kc = None

    def close(self) -> None:
        if self._kc is None:
            return
        self._drop()
        if self.keep_alive:
            self._touch(force=True)  # the idle time counts from the end of the build
            return
        _stop(self.pid)
        if self._proc is not None:
            self._proc.wait(timeout=10)
            self._proc = None
        if self._connection:
            Path(self._connection).unlink(missing_ok=True)

    # -- running code ------------------------------------------------------------------------
    def run(self, code: str) -> list[dict[str, Any]]:
        """Execute ``code``; its outputs as notebook outputs (streams merged, as nbclient does)."""
        kc = self._ensure()
        msg_id = kc.execute(code)
        outputs: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.timeout
        while True:
            msg = kc.get_iopub(timeout=1)
            if msg is None:
                if not _alive(self.pid):
                    self._drop()
                    raise BuildError("the Jupyter kernel died while running a cell",
                                     detail=_tail(self.dir / "kernel.log"),
                                     hint="the cell may have run out of memory or crashed the interpreter")
                if time.monotonic() > deadline:
                    _stop(self.pid)  # a hung kernel is not worth keeping
                    self._drop()
                    raise BuildError(f"a cell ran longer than {self.timeout:.0f} s")
                self._touch()
                continue
            self._touch()
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content.get("execution_state") == "idle":
                while kc.get_shell(timeout=0) is not None:  # execute replies: IOPub said it all
                    pass
                break
            if kind == "stream":
                last = outputs[-1] if outputs else {}
                if last.get("output_type") == "stream" and last.get("name") == content["name"]:
                    last["text"] += content["text"]
                else:
                    outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
            elif kind in ("display_data", "execute_result"):
                out = {"output_type": kind, "data": content.get("data", {}),
                       "metadata": content.get("metadata", {})}
                if kind == "execute_result":
                    out["execution_count"] = content.get("execution_count")
                outputs.append(out)
            elif kind == "error":
                outputs.append({"output_type": "error", "ename": content.get("ename", ""),
                                "evalue": content.get("evalue", ""),
                                "traceback": content.get("traceback", [])})
            elif kind == "clear_output":
                outputs.clear()
        return outputs

    def start_document(self, cwd: Path) -> None:
        """Give the next document a clean namespace, running in ``cwd``."""
        self._ensure()
        if not self._fresh:
            self._check(self.run(_RESET.format(root=str(self.root) + "/")), "resetting the kernel")
        self._fresh = False
        self._check(self.run(_SETUP.format(cwd=str(cwd), root=str(self.root), mark=INLINE_MARK)),
                    "setting up the kernel")

    def run_cell(self, cell: Cell, path: Path) -> CellResult:
        try:
            outputs = self.run(cell.code)
        except BuildError as err:  # the kernel died or hung: name the cell
            raise err.located(path, cell.line)
        for out in outputs:
            if out.get("output_type") == "error":
                raise cell_error(cell, path, out)
        return CellResult(cell, outputs)

    def inline(self, items: list[Inline], path: Path) -> list[dict[str, str]]:
        """Each expression's display data (mime type -> text), as Quarto's engine gets it."""
        if not items:
            return []
        outputs = self.run(f"__book_inline({json.dumps([i.expr for i in items])})")
        values = self._marked(outputs, "evaluating inline expressions")
        texts = []
        for item, value in zip(items, values):
            if "error" in value:
                raise BuildError(f"inline expression `{{python}} {item.expr}` failed: {value['error']}",
                                 path, item.line,
                                 hint="define the name in a cell above this line, or fix the expression")
            texts.append(value["data"])
        return texts

    def project_modules(self) -> dict[str, Any]:
        """Files of the project's own modules imported so far and the project files the
        document's cells read (``files``), and those read only in part (``parts``: {path:
        [part, ...]}), for the cache key."""
        return self._marked(self.run(_MODULES.format(mark=INLINE_MARK, root=str(self.root) + "/")),
                            "listing modules")

    def _marked(self, outputs: list[dict[str, Any]], what: str) -> Any:
        self._check(outputs, what)
        for out in outputs:
            if out.get("output_type") == "stream":
                for line in out.get("text", "").splitlines():
                    if line.startswith(INLINE_MARK):
                        return json.loads(line[len(INLINE_MARK):])
        raise BuildError(f"kernel gave no answer while {what}")

    @staticmethod
    def _check(outputs: list[dict[str, Any]], what: str) -> None:
        for out in outputs:
            if out.get("output_type") == "error":
                raise BuildError(f"kernel failed while {what}: {out.get('ename')}: {out.get('evalue')}",
                                 detail=ANSI.sub("", "\n".join(out.get("traceback", []))))


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return False
    try:  # a kernel that exited but is not yet reaped by its parent (this process) is gone too
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _stop(pid: Any) -> None:
    if _alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def cell_error(cell: Cell, path: Path, out: dict[str, Any]) -> BuildError:
    tb = ANSI.sub("", "\n".join(out.get("traceback", [])))
    # "Cell In[12], line 4" (IPython) names the line inside the cell; the last one is innermost
    # among frames of the cell itself.
    lines = [int(m) for m in re.findall(r"Cell In\[\d+\], line (\d+)", tb)]
    line = cell.code_line + lines[-1] - 1 if lines else cell.line
    name = f"cell '{cell.label}'" if cell.label else f"cell #{cell.index + 1}"
    return BuildError(f"{name} raised {out.get('ename')}: {out.get('evalue')}", path, line,
                      detail=tb, hint="fix the code, or mark the cell `#| eval: false`")
