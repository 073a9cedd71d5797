"""The offline step (bookbuild/html/offline): every page names the web app manifest once, whatever
its scripts say; the step writes the hosts' header rules (_headers) for cross-origin isolation,
leaves them out of what the worker keeps, and the worker adds the same headers."""
import json
import re
from pathlib import Path

from bookbuild.html.offline import ISOLATION, link_manifest, write_offline

ROOT = Path(__file__).resolve().parents[2]

LOOKS_FOR_IT = '<script>var m=document.querySelector(\'link[rel="manifest"]\')</script>'


def test_every_page_names_the_manifest_once_even_one_whose_script_looks_for_it(tmp_path):
    (tmp_path / "chapters").mkdir()
    page = tmp_path / "chapters" / "a.html"
    page.write_text(f"<html><head>{LOOKS_FOR_IT}</head><body></body></html>", encoding="utf-8")
    index = tmp_path / "index.html"
    index.write_text('<html><head><link rel="manifest" href="manifest.webmanifest"></head></html>', encoding="utf-8")
    link_manifest(tmp_path)
    link_manifest(tmp_path)                              # idempotent
    text = page.read_text(encoding="utf-8")
    assert text.count('<link rel="manifest" href="../manifest.webmanifest">') == 1, text
    assert index.read_text(encoding="utf-8").count("<link") == 1


def test_the_step_writes_the_isolation_headers_for_hosts_and_the_worker_adds_them(tmp_path):
    (tmp_path / "index.html").write_text("<html><head></head><body>Book</body></html>", encoding="utf-8")
    write_offline(tmp_path, "A book", root=ROOT)
    rules = (tmp_path / "_headers").read_text(encoding="utf-8").splitlines()
    assert rules[0] == "/*" and sorted(r.strip() for r in rules[1:]) == sorted(f"{k}: {v}" for k, v in ISOLATION.items())
    sw = (tmp_path / "sw.js").read_text(encoding="utf-8")
    kept = re.findall(r'"url":"([^"]*)"', sw)                  # the precache manifest Workbox wrote in
    assert "index.html" in kept and "_headers" not in kept, kept
    for name, value in ISOLATION.items():
        assert json.dumps(name) in sw and json.dumps(value) in sw


def test_a_build_with_nothing_changed_rewrites_no_page_and_does_not_make_the_worker_again(warm_book):
    """The offline step names the manifest in every page; bookbuild writes its pages so already, so
    the next build finds them unchanged (it rewrote every page, and so made the search index and the
    service worker again, when the step added the link after it), and the step, seeing nothing it
    lists changed, leaves sw.js as it was."""
    from bookbuild import build
    config = warm_book / "_quarto.yml"
    config.write_text(config.read_text().replace("  execute-dir: project\n", "  execute-dir: project\n"
                                                 "  post-render:\n    - python3 -m bookbuild.html.offline\n"))
    build(warm_book, ("html",), search=False)
    site = warm_book / "_book"
    assert '<link rel="manifest" href="../manifest.webmanifest">' in (site / "chapters" / "one.html").read_text()
    outputs = [p for p in site.rglob("*") if p.is_file()]
    stamps = {p: p.stat().st_mtime_ns for p in outputs}
    build(warm_book, ("html",), search=False)
    assert {p: p.stat().st_mtime_ns for p in outputs} == stamps, "a build with nothing changed rewrote files"


def _small_site(site: Path) -> None:
    (site / "chapters").mkdir(parents=True)
    (site / "assets").mkdir()
    (site / "index.html").write_text("<html><head></head><body>Book</body></html>", encoding="utf-8")
    (site / "chapters" / "a.html").write_text("<html><head></head><body>A lot of parallelism</body></html>", encoding="utf-8")
    (site / "assets" / "book.css").write_text("body { margin: 0 }\n", encoding="utf-8")


def test_a_page_whose_text_changed_gets_the_worker_workbox_would_make_without_node(tmp_path, monkeypatch):
    """Only a file's contents changed (no file came or went): the step takes the list of the last
    sw.js and each file's SHA-256 in Python, and writes byte for byte the sw.js and offline.json
    that Node and Workbox make of the same site."""
    import bookbuild.html.offline as offline
    site = tmp_path / "site"
    _small_site(site)
    write_offline(site, "A book", root=ROOT)                    # Workbox makes the first one
    page = site / "chapters" / "a.html"
    page.write_text(page.read_text(encoding="utf-8").replace("A lot of", "Plenty of"), encoding="utf-8")
    node = offline.workbox_worker
    monkeypatch.setattr(offline, "workbox_worker", lambda *a: (_ for _ in ()).throw(AssertionError("Node ran")))
    python = write_offline(site, "A book", root=ROOT)
    ours = {n: (site / n).read_bytes() for n in ("sw.js", "offline.json")}
    (site / "sw.js").unlink()                                   # so Workbox makes it again, from scratch
    monkeypatch.setattr(offline, "workbox_worker", node)
    workbox = write_offline(site, "A book", root=ROOT)
    assert {n: (site / n).read_bytes() for n in ("sw.js", "offline.json")} == ours
    assert python == workbox and python["build"] != "", python


def test_a_new_file_or_a_foreign_worker_goes_to_workbox(tmp_path, monkeypatch):
    import bookbuild.html.offline as offline
    site = tmp_path / "site"
    _small_site(site)
    write_offline(site, "A book", root=ROOT)
    modules = offline.node_modules(ROOT)
    runtime = offline.runtime_files(site)
    assert offline.revised_worker(site, runtime, modules) is not None     # nothing came or went
    (site / "chapters" / "b.html").write_text("<html><head></head><body>B</body></html>", encoding="utf-8")
    assert offline.revised_worker(site, runtime, modules) is None         # a file came: Workbox lists it
    write_offline(site, "A book", root=ROOT)
    assert '"url":"chapters/b.html"' in (site / "sw.js").read_text(encoding="utf-8")
    (site / "sw.js").write_text((site / "sw.js").read_text(encoding="utf-8") + "// edited\n", encoding="utf-8")
    assert offline.revised_worker(site, runtime, modules) is None         # not the sw.js it would write
