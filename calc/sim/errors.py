"""The simulator's errors: every one a ``KernelError`` naming the thread, the source line and, for
memory, the array and index (see ``calc.sim``'s docstring for when each is raised)."""

from __future__ import annotations

from typing import Any, Optional

from ..cuda import Dim3

# ------------------------------------------------------------------ errors


class KernelError(Exception):
    """A kernel did something undefined or wrong. ``str()`` is the full message."""

    def __init__(self, message: str, *, block: Optional[Dim3] = None, thread: Optional[Dim3] = None,
                 line: Optional[int] = None, array: Optional[str] = None, index: Any = None):
        self.block, self.thread, self.line = block, thread, line
        self.array, self.index = array, index
        self.message = message
        where = []
        if line is not None:
            where.append(f"line {line}")
        if thread is not None:
            where.append(f"thread {_fmt3(thread)} of block {_fmt3(block)}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class LaunchError(KernelError, ValueError):
    """The launch itself is invalid (grid, block, shared memory, arguments)."""


class OutOfBounds(KernelError, IndexError):
    """An index outside a global or shared array."""


class UninitializedRead(KernelError):
    """A read of shared memory (or an empty global array) before anything was written there."""


class Race(KernelError):
    """Two threads touch one element with no barrier between them, at least one of them writing."""


class BarrierError(KernelError):
    """``cuda.syncthreads()`` in divergent code, or reached at different lines."""


class StepLimit(KernelError):
    """The launch made more than ``max_steps`` accesses and arithmetic calls."""


class KernelException(KernelError):
    """Any other exception raised by kernel code; ``__cause__`` is the original."""


class KernelSyntaxError(KernelError):
    """Kernel source that does not compile (``compile_kernel``)."""


def _subscript(name: str, idx) -> str:
    """``A[3]``, ``As[0, 1]``: an element as the kernel writes it."""
    return f"{name}[{', '.join(map(str, idx)) if isinstance(idx, tuple) else idx}]"


def _fmt3(d) -> str:
    if d is None:
        return "?"
    return f"({d.x}, {d.y}, {d.z})"

