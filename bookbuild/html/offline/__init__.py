"""The book offline: a service worker made at build time, and the web app manifest.

Takes the finished site folder (pages, search index, static files, the widgets' runtime under
``pyodide/``) and writes beside them:

* ``manifest.webmanifest``: the book's name, its colours (assets/css/palette.css) and icons (the
  favicon's PNGs, a maskable one among them), ``display: standalone``;
* ``sw.js`` and ``workbox-v<version>/``: the service worker, made by Workbox's ``injectManifest``
  (``sw_build.cjs``) from the site's own file list with a SHA-256 revision for each file; what it
  caches and how is described at the top of ``sw.js`` (the source in this folder);
* ``offline.json``: what "Keep this book offline" downloads (files, bytes, with and without the
  runtime), read by assets/js/offline.js to say the size before the reader downloads;
* ``_headers``: the cross-origin isolation headers (``ISOLATION``) for every path, in the file
  Netlify and Cloudflare Pages read (https://docs.netlify.com/routing/headers/,
  https://developers.cloudflare.com/pages/configuration/headers/); other hosts serve it as a file
  nobody links to. On a host that reads it, even a first visit is isolated; elsewhere the service
  worker adds the same headers to the pages it serves (sw.js).

It runs last (``project: post-render:`` in _quarto.yml, after the widget runtime), so under
``quarto render`` too; it knows nothing of how the pages were made."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from ...editions.images import page_colour
from ...errors import BuildError
from ..npm import node_modules

# Cross-origin isolation, so that an exercise's Stop interrupts Python in place (a SharedArrayBuffer
# shared with its worker: assets/js/exercises.js). require-corp, not credentialless: every browser
# with cross-origin isolation has it (Safari has no credentialless), and the book loads nothing from
# another origin that would need a Cross-Origin-Resource-Policy. The same pair is in sw.js, in
# feedback/site.py (``serve --site``) and in bookbuild preview.
ISOLATION = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}
HEADERS_FILE = "_headers"

HERE = Path(__file__).resolve().parent
SW_SOURCE = HERE / "sw.js"
BUILDER = HERE / "sw_build.cjs"


def runtime_files(site: Path) -> dict:
    """The widgets' runtime as the worker fetches it (assets/js/widgets-worker.js), its content
    key (the cache it is kept in is named by it) and its size."""
    config = site / "pyodide" / "book-runtime.mjs"
    if not config.exists():
        return {"key": "none", "files": [], "bytes": 0}
    text = config.read_text(encoding="utf-8")
    key = re.search(r'KEY\s*=\s*"([^"]+)"', text).group(1)
    packed = (re.search(r'PACKED\s*=\s*"([^"]*)"', text) or [None, ""])[1]
    names = ["book-runtime.mjs", "pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm"]
    files = [f"pyodide/{n}" for n in names]
    files += [f"pyodide/{a}{packed}?v={key}" for a in ("python_stdlib.zip", "book-py.zip", "exercises-py.zip")]
    size = sum((site / f.split("?")[0]).stat().st_size for f in files if (site / f.split("?")[0]).exists())
    return {"key": key, "files": [f for f in files if (site / f.split("?")[0]).exists()], "bytes": size}


def web_manifest(site: Path, title: str, description: str | None) -> dict:
    img = site / "assets" / "img"
    icons = [{"src": "assets/img/favicon.svg", "sizes": "any", "type": "image/svg+xml"}] if (img / "favicon.svg").exists() else []
    icons += [{"src": f"assets/img/favicon-{n}.png", "sizes": f"{n}x{n}", "type": "image/png"}
              for n in (192, 512) if (img / f"favicon-{n}.png").exists()]
    if (img / "favicon-maskable-512.png").exists():
        icons.append({"src": "assets/img/favicon-maskable-512.png", "sizes": "512x512", "type": "image/png",
                      "purpose": "maskable"})
    out = {"name": title, "short_name": title, "start_url": "./index.html", "scope": "./",
           "display": "standalone", "background_color": page_colour(site, "bg"),
           "theme_color": page_colour(site, "accent"), "icons": icons}
    if description:
        out["description"] = description
    return out


MANIFEST_LINK = re.compile(r'<link\b[^>]*\brel="manifest"')   # a tag, not a script that looks for one


def link_manifest(site: Path) -> None:
    """Every page names the manifest, which this step writes: a page of a site made without this
    step names none, so offline.js (which registers the worker only where a manifest is named) asks
    for no sw.js that is not there. Idempotent; before the revisions are taken."""
    for page in site.rglob("*.html"):
        if page.is_relative_to(site / "pyodide"):
            continue
        html = page.read_text(encoding="utf-8")
        linked = with_manifest(html, len(page.relative_to(site).parts) - 1)
        if linked != html:
            page.write_text(linked, encoding="utf-8")


def with_manifest(html: str, depth: int) -> str:
    """The page ``html`` (``depth`` folders below the site's root) naming the manifest, as this step
    leaves it; bookbuild writes its pages so already (html/site.py), and a build with nothing changed
    rewrites none of them."""
    if MANIFEST_LINK.search(html) or "</head>" not in html:
        return html
    return html.replace("</head>", f'<link rel="manifest" href="{"../" * depth}manifest.webmanifest">\n</head>', 1)


OUTPUTS = (HEADERS_FILE, "manifest.webmanifest", "sw.js", "offline.json", ".sw-src.js")


def inputs_key(site: Path, runtime: dict) -> str:
    """What the service worker is made from: every file of the site but this step's own outputs
    (by name, size and modification time: a build that rewrites nothing leaves it the same), the
    worker's source, its builder and the runtime's files. Kept in offline.json: a build with
    nothing changed does not run Node and Workbox again."""
    import hashlib
    import os
    h = hashlib.sha256()
    for source in (SW_SOURCE, BUILDER):
        h.update(source.read_bytes())
    h.update(json.dumps(runtime, sort_keys=True).encode())
    for folder, dirs, files in os.walk(site):
        rel = os.path.relpath(folder, site)
        dirs[:] = sorted(d for d in dirs if not (rel == "." and d.startswith("workbox-v")))
        for name in sorted(files):
            if rel == "." and name in OUTPUTS:
                continue
            st = os.stat(os.path.join(folder, name))
            h.update(f"{rel}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_offline(site: Path, title: str, description: str | None = None, root: Path | None = None) -> dict:
    """Write the manifest, the service worker and offline.json into ``site``; returns offline.json."""
    site = Path(site).resolve()
    if not (site / "index.html").exists():          # no HTML in this render (a PDF only)
        return {}
    link_manifest(site)
    _write_if_changed(site / HEADERS_FILE, "/*\n" + "".join(f"  {k}: {v}\n" for k, v in ISOLATION.items()))
    _write_if_changed(site / "manifest.webmanifest", json.dumps(web_manifest(site, title, description), indent=1) + "\n")
    runtime = runtime_files(site)
    inputs = inputs_key(site, runtime)
    try:
        kept = json.loads((site / "offline.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        kept = {}
    if kept.get("inputs") == inputs and (site / "sw.js").exists():
        return kept                                 # nothing the worker lists changed since it was made
    modules = node_modules(Path(root or Path.cwd()))
    made = revised_worker(site, runtime, modules)
    if made is None:
        made = workbox_worker(site, runtime, modules)
    info = {"build": made["build"], "files": made["count"] + len(runtime["files"]), "bytes": made["size"],
            "runtime_bytes": runtime["bytes"], "total_bytes": made["size"] + runtime["bytes"], "inputs": inputs}
    (site / "offline.json").write_text(json.dumps(info) + "\n", encoding="utf-8")
    return info


def workbox_worker(site: Path, runtime: dict, modules: Path) -> dict:
    """sw.js and workbox-v<version>/ made by Workbox in Node (sw_build.cjs): {count, size, build}."""
    import os
    proc = subprocess.run(["node", str(BUILDER), str(site), str(SW_SOURCE), json.dumps(runtime)],
                          cwd=modules.parent, capture_output=True, text=True,
                          env={**os.environ, "NODE_PATH": str(modules)})
    if proc.returncode != 0:
        raise BuildError("the service worker could not be made (workbox-build; run scripts/install.sh)",
                         BUILDER, detail=proc.stderr[-2000:])
    return json.loads(proc.stdout)


# Workbox's own placeholder for the precache list (injectManifest's default injectionPoint) and the
# list as it writes it in: fast-json-stable-stringify of [{url, revision}], so keys sorted.
INJECTION_POINT = "self.__WB_MANIFEST"
PRECACHE_LIST = re.compile(r'\[\{"revision":"[0-9a-f]{32}","url":.*?"\}\]')


def _js_json(value) -> str:
    """JSON as JavaScript's JSON.stringify writes it (no spaces, non-ASCII as is)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _worker_text(site: Path, runtime: dict, workbox: str, entries: list[dict], size: int) -> tuple[str, str]:
    """sw.js as sw_build.cjs writes it for this precache list, and the build's name."""
    import hashlib
    source = SW_SOURCE.read_text(encoding="utf-8").replace("__WORKBOX__", workbox).replace("__RUNTIME__", _js_json(runtime))
    listed = _js_json([{"revision": e["revision"], "url": e["url"]} for e in entries])
    build = hashlib.sha256(_js_json([{"url": e["url"], "revision": e["revision"]} for e in entries]).encode()).hexdigest()[:16]
    text = source.replace(INJECTION_POINT, listed).replace("__BUILD__", build).replace("__SIZE__", str(size))
    return text, build


def precached(rel: str) -> bool:
    """Whether Workbox lists the site file ``rel`` (sw_build.cjs's globPatterns and globIgnores, and
    glob's own rule that a name starting with a dot matches no ``*``)."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        return False
    if rel in ("sw.js", "offline.json", HEADERS_FILE) or parts[0] in ("pyodide", "pdf") or parts[0].startswith("workbox-v"):
        return False
    if rel.endswith((".pdf", ".epub")):
        return False
    return not (rel.startswith("assets/katex/fonts/") and len(parts) == 4 and rel.endswith((".ttf", ".woff")))


def revised_worker(site: Path, runtime: dict, modules: Path) -> dict | None:
    """The service worker made again without Node where only files' contents changed: the same files
    as the list in the last sw.js (same names, Workbox's order), each with its SHA-256 revision taken
    now, in the same sw.js Workbox would write. None (Node and Workbox make it) where a file came or
    went, the worker's source, the runtime or Workbox changed, or the last sw.js is not what this
    function would have written for its own list (so a hand-edited or foreign sw.js is never trusted)."""
    import hashlib
    import os
    try:
        old = (site / "sw.js").read_text(encoding="utf-8")
        version = json.loads((modules / "workbox-build" / "package.json").read_text(encoding="utf-8"))["version"]
        kept = json.loads((site / "offline.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError):
        return None
    workbox = f"workbox-v{version}"
    found = PRECACHE_LIST.findall(old)
    if not (site / workbox).is_dir() or len(found) != 1:
        return None
    entries = json.loads(found[0])
    names = []
    for folder, dirs, files in os.walk(site):
        rel = os.path.relpath(folder, site)
        rel = "" if rel == "." else rel + "/"
        names += [rel + f for f in files if precached(rel + f)]
    if sorted(names) != sorted(e["url"] for e in entries) or len(names) != len(set(names)):
        return None
    sizes = {n: (site / n).stat().st_size for n in names}
    if max(sizes.values(), default=0) > 64 * 1024 * 1024:      # sw_build.cjs's maximumFileSizeToCacheInBytes
        return None
    old_size = kept.get("bytes")
    text, build = _worker_text(site, runtime, workbox, entries, old_size)
    if text != old or build != kept.get("build"):
        return None                                  # not the sw.js this list would give: Workbox decides
    entries = [{"url": e["url"], "revision": hashlib.sha256((site / e["url"]).read_bytes()).hexdigest()[:32]}
               for e in entries]
    size = sum(sizes.values())
    text, build = _worker_text(site, runtime, workbox, entries, size)
    _write_if_changed(site / "sw.js", text)
    return {"count": len(entries), "size": size, "build": build}
