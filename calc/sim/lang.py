"""The kernel language: Numba's CUDA Python, as the simulator runs it.

A kernel is written as for Numba (``numba-cuda``) and runs on a GPU unchanged::

    from numba import cuda
    import numba

    TPB = 256

    @cuda.jit
    def reduce(g_in, g_out, n):
        sdata = cuda.shared.array(TPB, numba.float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + tid
        sdata[tid] = g_in[i] if i < n else 0.0
        cuda.syncthreads()
        ...

``compile_kernel(source)`` compiles such text for the simulator. The page never loads real
Numba: the kernel's ``import numba`` / ``from numba import cuda`` / ``import math`` get this
module's own ``numba``, ``numba.cuda`` and ``math`` (a restricted ``__import__``), and nothing
else can be imported. Before compiling, the kernel's syntax tree is checked against the subset
the simulator supports (anything else is a ``KernelSyntaxError`` naming the line and the
feature) and rewritten, keeping every line number:

- *Barriers.* There are no greenlets in Pyodide, so a ``cuda.syncthreads()`` statement becomes
  ``yield`` of a barrier (the executors run the block's other threads to it), and a call of a
  device function that (transitively) synchronises becomes ``yield from``.
- *FLOPs.* ``+ - * /`` over floating-point values count one FLOP each, ``a * b + c`` (and
  ``acc += a * b``) is one fused multiply-add of two FLOPs, ``max``/``min`` of floats and
  ``math.exp``/``math.sqrt`` one each. Integer arithmetic (index math) counts nothing: an
  operation both of whose operands are integers by the kernel's own text (``cuda.threadIdx.x``,
  loop counters, literals, ``//``, ``%`` ...) stays a plain Python operator; any other becomes a
  call that counts when an operand is a float at run time (a value read from a floating-point
  array, a float literal, the result of a counted operation).
- ``cuda.shared.array(shape, dtype)`` becomes the block's shared array named after the variable
  it is assigned to; its shape must be an int literal or a module-level int constant (or a tuple
  of them), as Numba requires. ``cuda.local.array`` is a thread's own list.

What a kernel may not do, so that its counts are the whole story and the checker is out of its
reach: module-level mutable state, ``global``/``nonlocal``, ``try``/``with``/classes/nested
functions, its own ``yield``, imports other than ``numba``, ``numba.cuda`` and ``math``, names and
attributes starting with an underscore, and Python's reflective built-ins (``eval``, ``exec``,
``open``, ``getattr``, ``globals``, ``type`` ...): each refused at compile time with its line.
"""

from __future__ import annotations

import ast
import math as _math
import operator as _op
from typing import Callable, Optional

from ..cuda import WARP_SIZE
from . import arith
from . import memory as mem
from . import warp
from .errors import BarrierError, KernelError, KernelException, KernelSyntaxError, UninitializedRead
from .memory import ELEMENT_BYTES, blockDim, blockIdx, gridDim, threadIdx
from .warp import Lanes

# ------------------------------------------------------------------ the numba / numba.cuda / math the kernel imports


class DType:
    """``numba.float32`` and friends: the simulator's element type, and a cast when called."""

    __slots__ = ("name", "sim", "_cast")

    def __init__(self, name: str, sim: str, cast):
        self.name, self.sim, self._cast = name, sim, cast

    def __call__(self, x):
        return self._cast(x)

    def __repr__(self) -> str:
        return f"numba.types.{self.name}" if self.name == "float16" else f"numba.{self.name}"


DTYPES = {"float32": DType("float32", "fp32", float), "float64": DType("float64", "fp64", float),
          "float16": DType("float16", "fp16", float), "int32": DType("int32", "int32", int),
          "int8": DType("int8", "int8", int)}
#: Numba's names of the simulator's element types: numba.float32 and the others at the top level,
#: but float16 only as numba.types.float16, as numba itself has it
NUMBA_DTYPE = {d.sim: f"numba.{'types.' if d.name == 'float16' else ''}{d.name}" for d in DTYPES.values()}


def _dtype(dt, line=None) -> str:
    if isinstance(dt, DType):
        return dt.sim
    if isinstance(dt, str) and dt in ELEMENT_BYTES:
        return dt
    st = mem._ST
    raise KernelError(f"unknown element type {dt!r}; use one of {', '.join(NUMBA_DTYPE.values())}",
                      block=st.block if st else None, thread=st.thread if st else None, line=mem._kernel_line())


def _shared(name: str, shape, dtype):
    return mem.shared(name, shape, _dtype(dtype))


class _Local(list):
    """A thread's ``cuda.local.array``: its own registers (not counted as memory), which start
    uninitialised as CUDA's local memory does: reading an element before writing it is an error,
    so an accumulator nobody zeroed fails here as it may on the GPU."""

    __slots__ = ()

    def __getitem__(self, i):
        v = list.__getitem__(self, i)
        if v is mem.POISON:
            st = mem._ST
            if st is not None and st.vec:
                raise mem._fail()        # the per-thread executor says which thread and line
            err = UninitializedRead(f"read of local array element [{i}] before this thread wrote it "
                                    "(cuda.local.array starts uninitialised: set each element first, "
                                    "e.g. acc[k] = 0.0)", block=st.block if st else None,
                                    thread=st.thread if st else None, line=mem._kernel_line(), index=i)
            if st is not None and st.error is None:
                st.error = err
            raise err
        return v

    def __iter__(self):
        return (self[k] for k in range(len(self)))


def _local(shape, dtype):
    """``cuda.local.array``: the thread's own registers, uninitialised (``_Local``)."""
    _dtype(dtype)
    if isinstance(shape, tuple):
        if len(shape) != 1:
            raise KernelError("cuda.local.array: only 1-D local arrays are supported", line=mem._kernel_line())
        shape = shape[0]
    return _Local([mem.POISON] * shape)


def _grid(ndim: int):
    if ndim == 1:
        return blockIdx.x * blockDim.x + threadIdx.x
    if ndim == 2:
        return blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y
    if ndim == 3:
        return (blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y,
                blockIdx.z * blockDim.z + threadIdx.z)
    raise KernelError(f"cuda.grid({ndim!r}): ndim is 1, 2 or 3", line=mem._kernel_line())


def _gridsize(ndim: int):
    if ndim == 1:
        return gridDim.x * blockDim.x
    if ndim == 2:
        return gridDim.x * blockDim.x, gridDim.y * blockDim.y
    if ndim == 3:
        return gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z
    raise KernelError(f"cuda.gridsize({ndim!r}): ndim is 1, 2 or 3", line=mem._kernel_line())


def _atomic_add(array, index, value):
    """``cuda.atomic.add(array, index, value)``: adds and returns the old value."""
    st = mem._state()
    if st.vec:
        raise mem._fail()  # an atomic's lanes update one after another: the per-thread executor runs it
    if not isinstance(array, mem.Array):
        raise KernelError("cuda.atomic.add() takes an array, an index and a value", block=st.block,
                          thread=st.thread, line=mem._kernel_line())
    return array._atomic_add(index, value)


def _jit(*args, **kw):
    """``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit("void(float32[:])")``: the function as it is."""
    if len(args) == 1 and callable(args[0]) and not kw:
        return args[0]
    return lambda f: f


def _not_here(what):
    def f(*a, **k):
        raise KernelError(f"{what} only works in a kernel run by the simulator")
    return f


class _Namespace:
    """A module-like object of fixed attributes (``cuda.shared``, ``cuda.atomic`` ...)."""

    def __init__(self, name: str, **attrs):
        self.__dict__.update(attrs)
        self._name = name

    def __repr__(self) -> str:
        return f"<simulated {self._name}>"


cuda = _Namespace(
    "numba.cuda", threadIdx=threadIdx, blockIdx=blockIdx, blockDim=blockDim, gridDim=gridDim,
    warpsize=WARP_SIZE, laneid=None, grid=_grid, gridsize=_gridsize, syncthreads=mem.syncthreads,
    shared=_Namespace("numba.cuda.shared", array=_shared), local=_Namespace("numba.cuda.local", array=_local),
    atomic=_Namespace("numba.cuda.atomic", add=_atomic_add), jit=_jit)
numba = _Namespace("numba", cuda=cuda, types=_Namespace("numba.types", **DTYPES),
                   **{k: v for k, v in DTYPES.items() if k != "float16"})


def _exp(x):
    return arith.exp(x)


def _sqrt(x):
    return arith.counted1(_math.sqrt, x)


math = _Namespace("math", exp=_exp, sqrt=_sqrt, **{k: getattr(_math, k) for k in (
    "log", "log2", "log10", "sin", "cos", "tan", "tanh", "floor", "ceil", "fabs", "pow", "isinf", "isnan",
    "inf", "nan", "pi", "e", "erf", "expm1", "log1p", "copysign", "trunc")})

#: what a kernel may import, and the dotted names it resolves
MODULES = {"numba": numba, "numba.cuda": cuda, "math": math}

#: the cuda.* names the simulator supports (anything else is refused, naming the feature)
CUDA_API = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpsize", "grid", "gridsize", "syncthreads",
            "shared.array", "local.array", "atomic.add", "jit"}
#: the dtype names under numba.: numba.float32, ..., and numba.types.<any of them> (float16 only there)
NUMBA_DTYPE_NAMES = {n: d for n, d in DTYPES.items() if n != "float16"} | {f"types.{n}": d for n, d in DTYPES.items()}
NUMBA_API = set(NUMBA_DTYPE_NAMES) | {"cuda", "types"}


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name in MODULES:
        if fromlist or "." not in name:
            return MODULES[name]
        return MODULES[name.split(".")[0]]
    raise ImportError(f"a kernel may import only numba, numba.cuda and math, not {name}")


_SAFE_BUILTINS = {f.__name__: f for f in (range, len, abs, int, float, bool, round, divmod, pow, enumerate, zip,
                                           reversed, all, any, print, tuple, isinstance)}
_SAFE_BUILTINS.update(max=arith.counted_max, min=arith.counted_min, __import__=_import,
                      ValueError=ValueError, IndexError=IndexError, ArithmeticError=ArithmeticError,
                      ZeroDivisionError=ZeroDivisionError, True_=True)
del _SAFE_BUILTINS["True_"]

#: the names the rewritten kernel calls (dunder names, which the reader's own text may not use)
HELPERS = {"__sim_add__": arith.add_, "__sim_sub__": arith.sub_, "__sim_mul__": arith.mul_,
           "__sim_div__": arith.div_, "__sim_fma__": arith.fma_, "__sim_shared__": _shared,
           "__sim_local__": _local, "__sim_sync__": mem.syncthreads}

#: ids of the objects a kernel may reach that the warp executor knows to be lane-safe
WARP_SAFE = frozenset({id(x) for x in (cuda, numba, math, *HELPERS.values(), arith.counted_max,
                                       arith.counted_min, *DTYPES.values(),
                                       # the executors' protocol, for kernels written in it directly
                                       mem.shared, threadIdx, blockIdx, blockDim, gridDim, arith.add, arith.sub,
                                       arith.mul, arith.div, arith.fma, arith.fmax, arith.exp)})


def kernel_globals() -> dict:
    """A fresh namespace for a kernel's module: the rewriting's helpers and the restricted built-ins."""
    ns = dict(HELPERS)
    ns.update(cuda=cuda, numba=numba, math=math)
    ns["__builtins__"] = dict(_SAFE_BUILTINS)
    ns["__name__"] = "__kernel__"
    return ns


# ------------------------------------------------------------------ checking the text

#: built-ins and names a kernel may not use: reflection, I/O, the interpreter's insides
_FORBIDDEN_NAMES = {"eval", "exec", "open", "getattr", "setattr", "delattr", "hasattr", "globals", "locals", "vars",
                    "compile", "breakpoint", "input", "type", "object", "super", "id", "dir", "help", "memoryview",
                    "classmethod", "staticmethod", "property", "iter", "next", "sys", "inspect", "builtins", "os",
                    "exit", "quit", "SystemExit", "KeyboardInterrupt", "BaseException", "gc", "frame"}
#: attributes that reach around the counted accesses or into frames, generators and code
_FORBIDDEN_ATTRS = {"data", "tolist", "gi_frame", "gi_code", "gi_yieldfrom", "f_back", "f_globals", "f_locals",
                    "f_code", "f_builtins", "tb_frame", "tb_next", "cr_frame", "ag_frame", "co_code", "func_globals",
                    "_getframe", "base"}


def _fail(node, message: str) -> KernelSyntaxError:
    return KernelSyntaxError(message, line=getattr(node, "lineno", None))


def _dotted(node) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Module:
    """What the module level of a kernel's text defines: import aliases, constants, functions."""

    def __init__(self, tree: ast.Module):
        # local name -> "numba" | "numba.cuda" | "math" | "numba.cuda.X" | "math.X"; a snippet that
        # does not import them still has cuda, numba and math (a whole Numba program imports them)
        self.alias: dict = {"cuda": "numba.cuda", "numba": "numba", "math": "math"}
        self.consts: dict = {}     # module-level name -> constant value
        self.funcs: dict = {}      # name -> FunctionDef
        self.device: set = set()   # names of @cuda.jit(device=True) functions
        self.jitted: set = set()
        for node in tree.body:
            self._top(node)

    def qual(self, node) -> Optional[str]:
        """``cuda.threadIdx.x`` -> ``numba.cuda.threadIdx.x`` (None when not ours)."""
        d = _dotted(node)
        if d is None:
            return None
        head, _, rest = d.partition(".")
        base = self.alias.get(head)
        if base is None:
            return None
        return base + ("." + rest if rest else "")

    def _top(self, node) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name not in MODULES:
                    raise _fail(node, f"import {a.name}: a kernel may import only numba, numba.cuda and math")
                if a.asname:
                    self.alias[a.asname] = a.name
                else:
                    self.alias[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level or node.module not in MODULES:
                raise _fail(node, f"from {node.module or '.'} import ...: a kernel may import only numba, "
                                  "numba.cuda and math")
            for a in node.names:
                if a.name == "*":
                    raise _fail(node, f"from {node.module} import *: name what you import")
                full = f"{node.module}.{a.name}"
                if full not in MODULES and not self._known(full):
                    raise _fail(node, f"{full} is not supported by this simulator")
                self.alias[a.asname or a.name] = full
        elif isinstance(node, ast.FunctionDef):
            self._function(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                raise _fail(node, "at module level a kernel's text may only name constants (NAME = 256)")
            name = targets[0].id
            self._name_ok(targets[0], name)
            try:
                value = self._const(node.value)
            except KernelSyntaxError:
                raise _fail(node, f"module-level {name} is not a constant: Python state outside the simulator's "
                                  "arrays is not GPU memory (every thread would share it, uncounted). Keep data in "
                                  "cuda.shared.array (shared by a block) or cuda.local.array (one thread's own), "
                                  "and module level for constants (TPB = 256)") from None
            self.consts[name] = value
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            pass  # a docstring
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            raise _fail(node, "global state is not GPU memory: use cuda.shared.array or cuda.local.array")
        elif isinstance(node, ast.ClassDef):
            raise _fail(node, "a kernel's text defines functions, not classes")
        else:
            raise _fail(node, f"{type(node).__name__.lower()} at module level: a kernel's text holds imports, "
                              "constants and functions (Python state outside the simulator's arrays is not GPU "
                              "memory: use cuda.shared.array or cuda.local.array)")

    def _known(self, full: str) -> bool:
        if full.startswith("numba.cuda."):
            rest = full[len("numba.cuda."):]
            return rest in CUDA_API or rest in {"shared", "local", "atomic"}
        if full.startswith("numba."):
            return full[len("numba."):] in NUMBA_API
        if full.startswith("math."):
            return hasattr(math, full[5:])
        return False

    def _const(self, node):
        """The value of a module-level constant expression (int, float, str, dtype, tuple of them)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) and node.value is not None:
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(self._const(e) for e in node.elts)
        if isinstance(node, ast.Name) and node.id in self.consts:
            return self.consts[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self._const(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv,
                                                                ast.Mod, ast.Div, ast.Pow)):
            a, b = self._const(node.left), self._const(node.right)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                return {ast.Add: _op.add, ast.Sub: _op.sub, ast.Mult: _op.mul, ast.FloorDiv: _op.floordiv,
                        ast.Mod: _op.mod, ast.Div: _op.truediv, ast.Pow: _op.pow}[type(node.op)](a, b)
        q = self.qual(node) if isinstance(node, ast.Attribute) else None
        if q is not None and q.startswith("numba.") and q[6:] in NUMBA_DTYPE_NAMES:
            return NUMBA_DTYPE_NAMES[q[6:]]
        if q is not None and q.startswith("math.") and isinstance(getattr(math, q[5:], None), float):
            return getattr(math, q[5:])
        raise _fail(node, "not a constant")

    def _function(self, node: ast.FunctionDef) -> None:
        self._name_ok(node, node.name)
        device = jitted = False
        for d in node.decorator_list:
            call = d if isinstance(d, ast.Call) else None
            q = self.qual(call.func if call else d)
            if q != "numba.cuda.jit":
                raise _fail(d, f"decorator {ast.unparse(d)}: a kernel takes only @cuda.jit "
                               "(or @cuda.jit(device=True) for a device function)")
            jitted = True
            for kw in (call.keywords if call else ()):
                if kw.arg == "device" and isinstance(kw.value, ast.Constant):
                    device = bool(kw.value.value)
                elif kw.arg not in ("fastmath", "inline", "debug", "opt", "lineinfo", "cache", "max_registers"):
                    raise _fail(d, f"@cuda.jit({kw.arg}=...) is not supported by this simulator")
        a = node.args
        for default in a.defaults + [d for d in a.kw_defaults if d is not None]:
            try:
                self._const(default)
            except KernelSyntaxError:
                raise _fail(default, "a default argument must be a constant (a list default would be one "
                                     "object every thread shares)") from None
        if a.vararg or a.kwarg:
            raise _fail(node, f"{node.name}: *args and **kwargs are not supported in a kernel")
        self.funcs[node.name] = node
        if device:
            self.device.add(node.name)
        if jitted:
            self.jitted.add(node.name)

    @staticmethod
    def _name_ok(node, name: str) -> None:
        if name.startswith("_"):
            raise _fail(node, f"{name}: names starting with an underscore are reserved for the simulator")
        if name in _FORBIDDEN_NAMES:
            raise _fail(node, f"{name} is not available in a kernel")


class _Checker(ast.NodeVisitor):
    """What a function body may hold; the first problem raises ``KernelSyntaxError`` with its line."""

    def __init__(self, mod: _Module, fn: ast.FunctionDef):
        self.mod, self.fn = mod, fn

    def generic_visit(self, node):
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            raise _fail(node, "try/except: a CUDA kernel cannot catch exceptions (Numba compiles none), and an "
                              "error the simulator finds ends the launch whatever the kernel does")
        if isinstance(node, (ast.With, ast.AsyncWith)):
            raise _fail(node, "with: not supported in a CUDA kernel")
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            kw = "global" if isinstance(node, ast.Global) else "nonlocal"
            raise _fail(node, f"{kw} {', '.join(node.names)}: Python state outside the simulator's arrays is not "
                              "GPU memory (every thread would share it, uncounted); use cuda.shared.array (shared "
                              "by the block) or cuda.local.array (the thread's own)")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and node is not self.fn:
            raise _fail(node, "a function inside a kernel: define a device function at module level with "
                              "@cuda.jit(device=True)")
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            raise _fail(node, "yield: write cuda.syncthreads() for a barrier; the simulator makes the rest")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            raise _fail(node, "imports go at the top of the kernel's text (numba, numba.cuda, math)")
        if isinstance(node, ast.Delete):
            raise _fail(node, "del: not supported in a CUDA kernel")
        if isinstance(node, ast.Name):
            if node.id.startswith("_") or node.id in _FORBIDDEN_NAMES:
                raise _fail(node, f"{node.id} is not available in a kernel")
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_") or node.attr in _FORBIDDEN_ATTRS:
                what = ("the simulator's raw storage, which no access is counted for: index the array (A[i])"
                        if node.attr in ("data", "tolist") else "not available in a kernel")
                raise _fail(node, f".{node.attr}: {what}")
            q = self.mod.qual(node)
            if q is not None and not isinstance(getattr(node, "_parent_attr", None), ast.Attribute):
                self._api(node, q)
        super().generic_visit(node)

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Attribute):
            node.value._parent_attr = node  # type: ignore[attr-defined]
        self.generic_visit(node)

    def _api(self, node, q: str) -> None:
        """A dotted name of numba / numba.cuda / math: supported, or refused by name."""
        if q.startswith("numba.cuda."):
            rest = q[len("numba.cuda."):]
            head = rest.split(".")[0]
            if head in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
                if rest.count(".") != 1 or rest.split(".")[1] not in ("x", "y", "z"):
                    raise _fail(node, f"cuda.{rest}: use .x, .y or .z")
                return
            if rest in CUDA_API:
                return
            raise _fail(node, f"cuda.{rest} is not supported by this simulator (it runs cuda.threadIdx/blockIdx/"
                              "blockDim/gridDim, cuda.grid, cuda.gridsize, cuda.syncthreads, cuda.shared.array, "
                              "cuda.local.array and cuda.atomic.add)")
        if q.startswith("numba."):
            rest = q[len("numba."):]
            if rest in NUMBA_DTYPE_NAMES or rest == "types":
                return
            hint = " (numba has float16 only as numba.types.float16)" if rest == "float16" else ""
            raise _fail(node, f"numba.{rest} is not supported by this simulator{hint} (element types: "
                              f"{', '.join('numba.' + n for n in NUMBA_DTYPE_NAMES if '.' not in n)}, "
                              f"numba.types.float16)")
        if q.startswith("math."):
            if not hasattr(math, q[5:]):
                raise _fail(node, f"{q} is not supported by this simulator")


# ------------------------------------------------------------------ rewriting

_INT_ATTRS = {f"numba.cuda.{v}.{c}" for v in ("threadIdx", "blockIdx", "blockDim", "gridDim") for c in "xyz"}
_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr,
            ast.BitXor, ast.Pow)
_COUNTED = {ast.Add: "__sim_add__", ast.Sub: "__sim_sub__", ast.Mult: "__sim_mul__", ast.Div: "__sim_div__"}


class _Types:
    """Which local names of a function are integers by the function's own text (greatest fixpoint:
    a name is an integer while every assignment to it is an integer expression)."""

    def __init__(self, mod: _Module, fn: ast.FunctionDef):
        self.mod = mod
        self.assigns: dict = {}
        self.ints: set = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    self._target(t, node.value)
            elif isinstance(node, ast.AugAssign):
                self._target(node.target, ast.BinOp(node.target, node.op, node.value))
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._target(node.target, node.value)
            elif isinstance(node, ast.For):
                it = node.iter
                if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
                    self._target(node.target, ast.Constant(0))
                else:
                    self._target(node.target, None)
            elif isinstance(node, ast.NamedExpr):
                self._target(node.target, node.value)
            elif isinstance(node, (ast.comprehension,)):
                self._target(node.target, None)
        params = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
        for p in params:
            self.assigns.setdefault(p, []).append(None)
        self.ints = set(self.assigns)
        changed = True
        while changed:
            changed = False
            for name in list(self.ints):
                if not all(v is not None and self.is_int(v) for v in self.assigns[name]):
                    self.ints.discard(name)
                    changed = True

    def _target(self, t, value) -> None:
        if isinstance(t, ast.Name):
            self.assigns.setdefault(t.id, []).append(value)
        elif isinstance(t, (ast.Tuple, ast.List)):
            if (isinstance(value, ast.Call) and self.mod.qual(value.func) == "numba.cuda.grid") or (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "divmod"
                    and all(self.is_int(a) for a in value.args)):
                for e in t.elts:
                    self._target(e, ast.Constant(0))
            elif isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts):
                for e, v in zip(t.elts, value.elts):
                    self._target(e, v)
            else:
                for e in t.elts:
                    self._target(e, None)
        elif isinstance(t, ast.Starred):
            self._target(t.value, None)

    def is_int(self, node) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, int)
        if isinstance(node, ast.Name):
            return node.id in self.ints or isinstance(self.mod.consts.get(node.id), int) and node.id not in self.assigns
        if isinstance(node, ast.Attribute):
            q = self.mod.qual(node)
            return q in _INT_ATTRS or q == "numba.cuda.warpsize"
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, _INT_OPS) and self.is_int(node.left) and self.is_int(node.right)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)) and self.is_int(node.operand)
        if isinstance(node, ast.IfExp):
            return self.is_int(node.body) and self.is_int(node.orelse)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in ("len", "int"):
                return True
            if isinstance(node.func, ast.Name) and node.func.id in ("min", "max", "abs"):
                return bool(node.args) and all(self.is_int(a) for a in node.args)
            q = self.mod.qual(node.func)
            if q in ("numba.cuda.grid", "numba.cuda.gridsize"):
                return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == 1
            if q in ("numba.int32", "numba.int8"):
                return True
        return False


class _Rewriter(ast.NodeTransformer):
    """The barriers, the counted arithmetic and the shared arrays of one function."""

    def __init__(self, mod: _Module, fn: ast.FunctionDef, syncing: set, names: dict):
        self.mod, self.fn, self.syncing = mod, fn, syncing
        self.types = _Types(mod, fn)
        self.names = names  # shared array name -> line first declared (names are per kernel text)

    def _call(self, name: str, args, like) -> ast.Call:
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), args, []), like)

    def visit_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Call):
            q = self.mod.qual(v.func)
            if q == "numba.cuda.syncthreads":
                if v.args or v.keywords:
                    raise _fail(node, "cuda.syncthreads() takes no arguments")
                return ast.copy_location(ast.Expr(ast.copy_location(
                    ast.Yield(self._call("__sim_sync__", [], v)), v)), node)
        return self.generic_visit(node)

    def visit_Call(self, node):
        q = self.mod.qual(node.func)
        if q == "numba.cuda.syncthreads":
            raise _fail(node, "cuda.syncthreads() is a statement of its own (a barrier), not a value")
        if q in ("numba.cuda.shared.array", "numba.cuda.local.array"):
            self._shape(node)
            args = [self.visit(a) for a in node.args]
            kws = {k.arg: k.value for k in node.keywords}
            if len(args) < 2:
                args += [kws.get("shape"), kws.get("dtype")][len(args):]
            if any(a is None for a in args[:2]) or len(args) != 2:
                raise _fail(node, f"{q[len('numba.'):]}(shape, dtype) takes a shape and an element type")
            if q == "numba.cuda.local.array":
                return self._call("__sim_local__", args, node)
            name = getattr(node, "_sim_name", None) or f"shared@{node.lineno}"
            first = self.names.setdefault(name, node.lineno)
            if first != node.lineno:
                name = f"{name}@{node.lineno}"
            return self._call("__sim_shared__", [ast.copy_location(ast.Constant(name), node)] + args, node)
        node = self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.syncing:
            return ast.copy_location(ast.YieldFrom(node), node)
        return node

    def _shape(self, node) -> None:
        shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
        elts = shape.elts if isinstance(shape, ast.Tuple) else [shape]
        for e in elts:
            ok = isinstance(e, ast.Constant) and isinstance(e.value, int) or (
                isinstance(e, ast.Name) and isinstance(self.mod.consts.get(e.id), int))
            if not ok:
                what = ast.unparse(e) if e is not None else "nothing"
                raise _fail(node, f"the shape of a shared or local array must be a constant, as Numba requires: an "
                                  f"int literal or a module-level int constant (TPB = 256), not {what}")

    def visit_Assign(self, node):
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)
                and self.mod.qual(node.value.func) == "numba.cuda.shared.array"):
            node.value._sim_name = node.targets[0].id  # type: ignore[attr-defined]
        return self.generic_visit(node)

    def visit_BinOp(self, node):
        op = type(node.op)
        if op not in _COUNTED or self.types.is_int(node.left) and self.types.is_int(node.right):
            return self.generic_visit(node)
        if op is ast.Add:  # a * b + c and c + a * b: one fused multiply-add
            for prod, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(prod, ast.BinOp) and isinstance(prod.op, ast.Mult) and not (
                        self.types.is_int(prod.left) and self.types.is_int(prod.right)):
                    return self._call("__sim_fma__", [self.visit(prod.left), self.visit(prod.right),
                                                      self.visit(other)], node)
        return self._call(_COUNTED[op], [self.visit(node.left), self.visit(node.right)], node)

    def visit_AugAssign(self, node):
        op = type(node.op)
        if op not in _COUNTED or self.types.is_int(node.target) and self.types.is_int(node.value):
            return self.generic_visit(node)
        # acc += x  ->  acc = acc + x (the target read once more: a Name, or a subscript evaluated twice)
        load = _as_load(node.target)
        value = ast.copy_location(ast.BinOp(load, node.op, node.value), node)
        return ast.copy_location(ast.Assign([node.target], self.visit_BinOp(value)), node)


def _as_load(t):
    if isinstance(t, ast.Name):
        return ast.copy_location(ast.Name(t.id, ast.Load()), t)
    if isinstance(t, ast.Subscript):
        return ast.copy_location(ast.Subscript(t.value, t.slice, ast.Load()), t)
    if isinstance(t, ast.Attribute):
        return ast.copy_location(ast.Attribute(t.value, t.attr, ast.Load()), t)
    raise _fail(t, "augmented assignment to this target is not supported")


def _calls(fn: ast.FunctionDef) -> set:
    return {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _syncs(mod: _Module, fn: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Call) and mod.qual(n.func) == "numba.cuda.syncthreads" for n in ast.walk(fn))


def translate(source: str, filename: str = "<kernel>") -> tuple:
    """(the module's rewritten syntax tree, _Module): KernelSyntaxError on anything outside the subset."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as e:
        raise KernelSyntaxError(f"{e.msg}", line=e.lineno) from None
    mod = _Module(tree)
    for fn in mod.funcs.values():
        _Checker(mod, fn).visit(fn)
    syncing = {name for name, fn in mod.funcs.items() if _syncs(mod, fn)}
    changed = True
    while changed:  # a function that calls a synchronising function synchronises
        changed = False
        for name, fn in mod.funcs.items():
            if name not in syncing and _calls(fn) & syncing:
                syncing.add(name)
                changed = True
    names: dict = {}
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef):
            tree.body[i] = _Rewriter(mod, node, syncing, names).visit(node)
    ast.fix_missing_locations(tree)
    return tree, mod


def pick_kernel(mod: _Module, name: Optional[str] = None) -> str:
    """The kernel of a text: ``name``; else the one @cuda.jit function that is not a device function;
    else the one function no other function calls; else the first defined."""
    funcs = list(mod.funcs)
    if not funcs:
        raise KernelSyntaxError("the source defines no function; write `@cuda.jit` and `def kernel(...):`")
    if name is not None:
        if name not in mod.funcs:
            raise KernelSyntaxError(f"no function {name!r} is defined (defined: {', '.join(funcs)})")
        return name
    kernels = [f for f in funcs if f in mod.jitted and f not in mod.device]
    if len(kernels) == 1:
        return kernels[0]
    called = set().union(*(_calls(fn) for fn in mod.funcs.values()))
    roots = [f for f in (kernels or funcs) if f not in called and f not in mod.device]
    if roots:
        return roots[0]
    return (kernels or funcs)[0]


def compile_kernel(source: str, name: Optional[str] = None, filename: str = "<kernel>",
                   constants: Optional[dict] = None) -> Callable:
    """The kernel defined in Numba CUDA ``source`` (``name``, or see ``pick_kernel``), ready for ``launch``.

    Line numbers in errors and reports are the source's own, from 1. Text outside the supported
    subset raises ``KernelSyntaxError`` with its line; an error while defining the function
    raises ``KernelException``. ``constants`` replaces module-level constants (``{"TPB": 128}``)
    before compiling, as re-running the text with another value would on a GPU."""
    if constants:
        source = with_constants(source, constants)
    tree, mod = translate(source, filename)
    kname = pick_kernel(mod, name)
    code = compile(tree, filename, "exec")
    ns = kernel_globals()
    try:
        exec(code, ns)
    except KernelError:
        raise
    except Exception as e:
        line = None
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        raise KernelException(f"{type(e).__name__}: {e}", line=line) from e
    fn = ns[kname]
    fn.__warpsim_source__ = {k + 1: text for k, text in enumerate(source.splitlines())}
    fn.__sim_text__ = source
    return fn


def with_constants(source: str, constants: dict) -> str:
    """``source`` with the module-level lines ``NAME = ...`` of ``constants`` replaced by their values
    (a dtype given as ``"fp16"`` or a ``DType`` is written ``numba.types.float16``)."""
    lines = source.split("\n")
    left = dict(constants)
    for k, line in enumerate(lines):
        head = line.split("=", 1)[0].strip() if "=" in line and not line[:1].isspace() else None
        if head in left:
            v = left.pop(head)
            if isinstance(v, DType):
                v = repr(v)
            elif isinstance(v, str) and v in NUMBA_DTYPE:
                v = NUMBA_DTYPE[v]
            else:
                v = repr(v)
            comment = line.split("#", 1)[1] if "#" in line else None
            lines[k] = f"{head} = {v}" + (f"  # {comment.strip()}" if comment else "")
    if left:
        raise KeyError(f"no module-level constant {', '.join(left)} in the kernel's text")
    return "\n".join(lines)


mem.SIM_FILES.add(compile_kernel.__code__.co_filename)
