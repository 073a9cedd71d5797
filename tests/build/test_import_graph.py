"""bookbuild's import graph, read from the source with ``ast``: no module imports one that imports
it back (directly or through others; imports inside functions count, as they run all the same),
no output-format package imports another, and the subpackages import one another in one
direction only, the order data flows (project -> execute -> pandoc -> editions -> formats -> the
commands on top)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "bookbuild"
FORMATS = ("html", "pdf", "epub")       # one package per output format
# The order data flows, bottom first: a module may import from its own layer or one before it
# (formats excepted: none imports another). A new module or package must be placed here.
LAYERS = [("errors", "cache", "typst_markup"),           # helpers for every stage and format
          ("project",), ("execute",), ("pandoc",), ("editions",),
          FORMATS,
          ("build", "check", "quarto_rules", "teaching_rules", "progress", "preview", "__main__", "bookbuild")]


def modules(root: Path = PACKAGE, top: str = "bookbuild") -> dict[str, Path]:
    """Dotted name (``bookbuild.html.site``; a package is its ``__init__``) -> file."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (*top.split("."), *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path], top: str = "bookbuild") -> set[str]:
    """The bookbuild modules ``name`` imports: ``from .x import y`` is ``x.y`` when that is a
    module, else ``x``; relative imports are resolved against the module's package."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                where = ".".join(base + ([node.module] if node.module else []))
            else:
                where = node.module or ""
            targets = [(where, a.name) for a in node.names]
        else:
            continue
        for where, member in targets:
            if not (where == top or where.startswith(top + ".")):
                continue
            if member and f"{where}.{member}" in known:
                found.add(f"{where}.{member}")
            elif where in known:
                found.add(where)
            else:
                raise AssertionError(f"{path}: imports {where}, which is not a {top} module")
    found.discard(name)
    return found


def graph(root: Path = PACKAGE, top: str = "bookbuild") -> dict[str, set[str]]:
    known = modules(root, top)
    return {name: imports(name, path, known, top) for name, path in known.items()}


# calc.sim, the kernel simulator (issue #41): one module per job, each importing only those before it
SIM = PACKAGE.parent / "calc" / "sim"
SIM_LAYERS = ["errors", "counts", "memory", "races", "warp", "arith", "lang", "thread", "launch", "kernels"]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary circle, each once, starting at its smallest module name."""
    found: list[list[str]] = []

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                found.append(path + [start])
            elif nxt > start and nxt not in path:
                walk(start, nxt, path + [nxt])

    for start in sorted(edges):
        walk(start, start, [start])
    return found


def unit(module: str) -> str:
    """The subpackage a module belongs to (``bookbuild.html``), or the top-level module itself."""
    return ".".join(module.split(".")[:2])


def package_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, targets in edges.items():
        out.setdefault(unit(a), set()).update(unit(b) for b in targets if unit(b) != unit(a))
    return out


def test_graph_reads_the_imports():
    """The reader itself: relative, absolute, nested and ``from . import module`` forms."""
    edges = graph()
    assert "bookbuild.build" in edges["bookbuild.progress"]
    assert "bookbuild.errors" in edges["bookbuild.__main__"]
    assert any(t.startswith("bookbuild.html") for t in edges["bookbuild.build"])   # ``from . import html``
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_import_circles_between_modules():
    found = cycles(graph())
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_subpackages_import_in_one_direction():
    found = cycles(package_edges(graph()))
    assert not found, "subpackages that import each other:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_submodule_hides_a_name_of_its_package():
    """Importing ``pkg.x`` sets ``pkg.x`` to the module, over a function ``x`` in ``pkg/__init__.py``."""
    hidden = []
    for name, path in modules().items():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        subs = {p.stem for p in path.parent.glob("*.py")} | {p.name for p in path.parent.iterdir() if (p / "__init__.py").exists()}
        hidden += [f"{name}.{x}" for x in sorted(defined & subs)]
    assert not hidden, f"modules named like a name their package defines: {hidden}"


def layer(module: str) -> int:
    name = unit(module).split(".")[-1]
    found = [i for i, names in enumerate(LAYERS) if name in names]
    assert found, f"{module}: not in LAYERS (place it where it belongs in the data flow)"
    return found[0]


def test_each_layer_imports_only_the_layers_before_it():
    edges = graph()
    wrong = sorted((a, b) for a, targets in edges.items() for b in targets if layer(b) > layer(a))
    assert not wrong, "imports against the data flow:\n" + "\n".join(f"{a} -> {b}" for a, b in wrong)


def test_no_format_imports_another_format():
    edges = graph()
    present = {unit(m) for m in edges}
    assert {f"bookbuild.{f}" for f in FORMATS} <= present, "a format package is missing"
    wrong = sorted((a, b) for a, targets in edges.items() for b in targets
                   if unit(a) != unit(b) and unit(a).split(".")[-1] in FORMATS
                   and unit(b).split(".")[-1] in FORMATS)
    assert not wrong, "a format imports another:\n" + "\n".join(f"{a} -> {b}" for a, b in wrong)


def test_the_simulator_has_no_import_circle_and_builds_up_in_order():
    edges = graph(SIM, "calc.sim")
    assert not cycles(edges), cycles(edges)
    names = {f"calc.sim.{m}" for m in SIM_LAYERS} | {"calc.sim"}
    assert set(edges) == names, f"place a new module of calc.sim in SIM_LAYERS: {sorted(set(edges) - names)}"
    rank = {f"calc.sim.{m}": k for k, m in enumerate(SIM_LAYERS)}
    against = [(a, b) for a, targets in edges.items() if a in rank for b in targets if rank[b] >= rank[a]]
    assert not against, f"imports against the order {SIM_LAYERS}: {against}"
