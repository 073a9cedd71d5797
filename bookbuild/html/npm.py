"""The npm packages the site is made with (KaTeX renders its math, Pagefind indexes it for search),
found where node finds them."""
from __future__ import annotations

from pathlib import Path


def node_modules(root: Path) -> Path:
    """The npm packages folder, found as node finds it (here or in a parent folder), else the one
    installed beside this build tool (a book built from elsewhere, e.g. a test's copy)."""
    tool = Path(__file__).resolve().parent.parent.parent
    for folder in (root, *root.parents, tool, *tool.parents):
        if (folder / "node_modules").is_dir():
            return folder / "node_modules"
    return root / "node_modules"
