"""Bundle the exercises' editor (CodeMirror 6, from node_modules) into the built site.

    python3 scripts/editor_bundle.py        (a post-render script: see _quarto.yml)

Writes ``$QUARTO_PROJECT_OUTPUT_DIR/assets/js/editor.js``: scripts/editor_entry.mjs bundled by
esbuild (an ES module, minified). Quarto and bookbuild both run post-render scripts, so the same
file is there under either. The bundle depends only on the entry, esbuild's version and the
installed CodeMirror packages' versions; it is kept in the per-user cache under that key, so a
build with nothing changed copies it. The page loads it only when a reader reaches an exercise
(assets/js/exercises.js).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "scripts" / "editor_entry.mjs"
PACKAGES = ("codemirror", "@codemirror/view", "@codemirror/state", "@codemirror/commands",
            "@codemirror/language", "@codemirror/lang-python", "@lezer/python", "@lezer/highlight",
            "@lezer/lr", "@lezer/common", "esbuild")


def node_modules() -> Path:
    return ROOT / "node_modules"


def key() -> str:
    h = hashlib.sha256(ENTRY.read_bytes())
    for name in PACKAGES:
        pkg = node_modules() / name / "package.json"
        h.update(name.encode() + b"=" + (json.loads(pkg.read_text())["version"].encode() if pkg.exists() else b"-"))
    return h.hexdigest()[:16]


def bundle(out: Path) -> Path:
    esbuild = node_modules() / ".bin" / "esbuild"
    if not esbuild.exists():
        raise SystemExit("scripts/editor_bundle.py: node_modules/.bin/esbuild is missing; run `npm ci` "
                         "(package.json lists esbuild and CodeMirror)")
    sys.path.insert(0, str(ROOT))
    from usercache import user_cache_dir
    cached = user_cache_dir() / "editor-bundle" / key() / "editor.js"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp.js")
        proc = subprocess.run([str(esbuild), str(ENTRY), "--bundle", "--format=esm", "--minify",
                               "--target=es2020", "--legal-comments=eof", f"--outfile={tmp}"],
                              cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"scripts/editor_bundle.py: esbuild failed:\n{proc.stderr}")
        os.replace(tmp, cached)
    dest = out / "assets" / "js" / "editor.js"
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not dest.exists() or dest.read_bytes() != cached.read_bytes():
        shutil.copyfile(cached, dest)
    return dest


if __name__ == "__main__":
    out = os.environ.get("QUARTO_PROJECT_OUTPUT_DIR")
    if not out:
        raise SystemExit("scripts/editor_bundle.py: QUARTO_PROJECT_OUTPUT_DIR is not set (run by the build)")
    path = bundle(Path(out))
    print(f"editor bundle: {path} ({path.stat().st_size:,} bytes)")
