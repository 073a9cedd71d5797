"""Waits on a condition, never on a time: a process's exit (an event the kernel sends), or a
condition polled until it holds, with a generous deadline that only a hang reaches. The suite
must pass on a slow or busy machine, so no test sleeps for a fixed time and then looks."""
from __future__ import annotations

import os
import select
import time
from typing import Callable, TypeVar

from bookbuild.execute.kernel import _alive

T = TypeVar("T")


def wait_for_exit(pid: int, timeout: float) -> bool:
    """True once process ``pid`` has exited (reaped, if it is our child); False after ``timeout``
    seconds. Waits on a pidfd, which becomes readable when the process ends: no polling."""
    def gone() -> bool:
        return not _alive(pid)            # reaps our own child, as the build's kernel lease does
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    return bool(readable) and (gone() or _reaped_soon(gone))


def _reaped_soon(gone: Callable[[], bool]) -> bool:
    # the pidfd reports the exit; a zombie that is not our child is reaped by its own parent
    return until(gone, 10, "the exited process to be reaped", raise_=False)


def until(condition: Callable[[], T], timeout: float, what: str, raise_: bool = True) -> T:
    """``condition()``'s first true value, polled until it holds; AssertionError naming ``what``
    (or a false value, with ``raise_=False``) if it does not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            break
        time.sleep(0.02)   # a poll interval, not a wait for something to have happened
    if not value and raise_:
        raise AssertionError(f"timed out after {timeout} s waiting for {what}")
    return value
