"""The kept Jupyter kernel (``execute: daemon``, Quarto's option): a build within the idle time
reuses the kernel the last one left, each document still starts from a clean namespace and
freshly imported project modules, and the kernel goes away by itself."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from bookbuild import BuildError, build
from bookbuild.execute.kernel import _alive
from waiting import wait_for_exit


def make_book(root: Path, daemon: str) -> Path:
    root.mkdir()
    (root / "_quarto.yml").write_text(
        "project:\n  type: book\nbook:\n  title: Kept\n  chapters:\n    - index.qmd\n    - two.qmd\n"
        f"execute:\n  daemon: {daemon}\nformat:\n  html: {{}}\n")
    (root / "helper.py").write_text("VALUE = 1\n")
    (root / "index.qmd").write_text("# One\n\n```{python}\nimport helper\nsecret = 41\n```\n\n"
                                    "Helper says `{python} helper.VALUE`, secret plus one is `{python} secret + 1`.\n")
    (root / "two.qmd").write_text("# Two\n\n```{python}\nx = 2\n```\n\nTwo is `{python} x`.\n")
    return root


def page(root: Path, name: str) -> str:
    return (root / "_book" / name).read_text()


def wait_until_gone(pid: int, seconds: float) -> bool:
    """True once the kernel has exited (an event: tests/waiting.py waits on its pidfd)."""
    return wait_for_exit(pid, seconds)


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOKBUILD_EXECUTE_DAEMON", raising=False)
    pids: list[int] = []
    yield tmp_path, pids
    for pid in pids:  # do not leave kernels behind for their idle time
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def build_html(root: Path, **kw):
    return build(root, ("html",), search=False, **kw)


def test_a_second_build_reuses_the_kernel_with_a_clean_namespace_and_fresh_modules(kept):
    tmp, pids = kept
    root = make_book(tmp / "book", "60")
    first = build_html(root)
    pids.append(first.kernel_pid)
    assert first.kernel == "started" and _alive(first.kernel_pid)
    assert "Helper says 1, secret plus one is 42." in page(root, "index.html")

    # the kept kernel ran `secret = 41` in the last build; a document that no longer defines it
    # must not see it
    index = root / "index.qmd"
    index.write_text(index.read_text().replace("secret = 41\n", ""))
    with pytest.raises(BuildError) as err:
        build_html(root)
    assert "secret" in str(err.value) and err.value.line == 7

    # a changed project module is imported afresh in the same process
    (root / "helper.py").write_text("VALUE = 2\n")
    index.write_text(index.read_text().replace("import helper\n", "import helper\nsecret = 9\n"))
    again = build_html(root)
    assert again.kernel == "reused" and again.kernel_pid == first.kernel_pid
    assert "Helper says 2, secret plus one is 10." in page(root, "index.html")


def test_a_dead_kernel_is_replaced(kept):
    tmp, pids = kept
    root = make_book(tmp / "book", "60")
    first = build_html(root)
    pids.append(first.kernel_pid)
    os.kill(first.kernel_pid, signal.SIGKILL)
    assert wait_until_gone(first.kernel_pid, 5)
    (root / "two.qmd").write_text((root / "two.qmd").read_text().replace("x = 2", "x = 3"))
    second = build_html(root)
    pids.append(second.kernel_pid)
    assert second.kernel == "started" and second.kernel_pid != first.kernel_pid
    assert "Two is 3." in page(root, "two.html")


def test_restart_replaces_the_kept_kernel(kept):
    tmp, pids = kept
    root = make_book(tmp / "book", "60")
    first = build_html(root)
    pids.append(first.kernel_pid)
    (root / "two.qmd").write_text((root / "two.qmd").read_text().replace("x = 2", "x = 4"))
    second = build_html(root, restart_kernel=True)
    pids.append(second.kernel_pid)
    assert second.kernel == "started" and second.kernel_pid != first.kernel_pid
    assert wait_until_gone(first.kernel_pid, 5)


def test_the_kernel_leaves_after_its_idle_time(kept):
    """Kept while the build's lease is younger than the idle time (30 s: far longer than any gap
    between the build's end and this check, on any machine), gone once it is older. The lease's
    age is set, not waited for: the kernel checks it every min(5, idle / 4) s."""
    tmp, pids = kept
    root = make_book(tmp / "book", "30")
    report = build_html(root)
    pids.append(report.kernel_pid)
    assert _alive(report.kernel_pid), "kept after the build"
    lease = root / ".bookcache" / "kernel" / "lease"
    assert lease.exists()
    old = time.time() - 31
    os.utime(lease, (old, old))                   # as if the last build ended 31 s ago
    assert wait_until_gone(report.kernel_pid, 30), "still running after its lease grew older than the idle time"


def test_daemon_false_stops_the_kernel_with_the_build(kept):
    tmp, pids = kept
    root = make_book(tmp / "book", "false")
    report = build_html(root)
    pids.append(report.kernel_pid)
    assert report.kernel == "started"
    assert wait_until_gone(report.kernel_pid, 2)
    assert not (root / ".bookcache" / "kernel" / "state.json").exists()


def test_a_bad_daemon_value_is_an_error(kept):
    tmp, _ = kept
    root = make_book(tmp / "book", "soon")
    with pytest.raises(BuildError, match="execute.daemon") as err:
        build_html(root)
    assert err.value.file.endswith("_quarto.yml") and err.value.line == 9


def test_a_cell_that_kills_the_kernel_names_the_cell(kept):
    tmp, pids = kept
    root = make_book(tmp / "book", "60")
    two = root / "two.qmd"
    two.write_text(two.read_text().replace("x = 2", "import os\nos._exit(3)"))
    with pytest.raises(BuildError, match="kernel died") as err:
        build_html(root)
    assert err.value.file.endswith("two.qmd") and err.value.line == 3
    two.write_text(two.read_text().replace("import os\nos._exit(3)", "x = 5"))
    report = build_html(root)  # and the next build starts a new kernel
    pids.append(report.kernel_pid)
    assert report.kernel == "started" and "Two is 5." in page(root, "two.html")
