"""Every internal link of the built book resolves: each href and src of every page a reader can open
names a file that was built, and each #fragment an element of that page (the way a reader's click
would find it). External links, mailto: and data: are not followed. The PDF and EPUB editions are
checked only where the build made them (the suite's book is HTML only; test_book_editions covers them)."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from bs4 import BeautifulSoup

from a11y_site import pages  # noqa: E402  (same folder)

ATTRS = (("a", "href"), ("link", "href"), ("img", "src"), ("script", "src"), ("source", "src"),
         ("iframe", "src"), ("object", "data"))


def ids_of(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        cache[path] = {el["id"] for el in soup.select("[id]")} | {el["name"] for el in soup.select("a[name]")}
    return cache[path]


def broken_links(book: Path) -> list[str]:
    root = book.resolve()
    editions = {s for s in (".pdf", ".epub") if any(root.rglob("*" + s))}
    ids: dict[Path, set[str]] = {}
    broken = []
    for name in pages(book):
        html = book / name
        soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
        ids[html.resolve()] = {el["id"] for el in soup.select("[id]")} | {el["name"] for el in soup.select("a[name]")}
        for tag, attr in ATTRS:
            for el in soup.find_all(tag):
                url = el.get(attr)
                if not url:
                    continue
                parts = urlsplit(url)
                if parts.scheme or parts.netloc:  # http(s), mailto:, data:, javascript:
                    continue
                if parts.path.startswith("/"):
                    target = (root / unquote(parts.path).lstrip("/")).resolve()
                else:
                    target = (html.parent / unquote(parts.path)).resolve() if parts.path else html.resolve()
                if target.is_dir():
                    target = target / "index.html"
                if target.suffix in (".pdf", ".epub") and target.suffix not in editions:
                    continue
                if root not in target.parents and target != root or not target.is_file():
                    broken.append(f"{name}: <{tag} {attr}={url!r}> names no built file")
                    continue
                fragment = unquote(parts.fragment.split(":~:", 1)[0])  # a text fragment is not an id
                if fragment and target.suffix == ".html" and fragment not in ids_of(target, ids):
                    broken.append(f"{name}: <{tag} {attr}={url!r}> names no element #{fragment}")
    return broken


@pytest.mark.slow
def test_every_internal_link_and_anchor_resolves(built_book):
    names = pages(built_book)
    assert len(names) >= 10, names
    broken = broken_links(built_book)
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:60])


def test_the_crawl_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    (tmp_path / "a.html").write_text('<a href="b.html#here">b</a><a href="#top">top</a><p id="top"></p>'
                                     '<a href="b.html#gone">x</a><a href="c.html">c</a><img src="/img/x.svg" alt=""><a href="book.pdf">pdf</a>'
                                     '<a href="https://example.org/nope">ext</a><a href="#frag:~:text=a">t</a>')
    (tmp_path / "b.html").write_text('<h2 id="here">here</h2>')
    broken = broken_links(tmp_path)
    assert broken == [
        "a.html: <a href='b.html#gone'> names no element #gone",
        "a.html: <a href='c.html'> names no built file",
        "a.html: <a href='#frag:~:text=a'> names no element #frag",
        "a.html: <img src='/img/x.svg'> names no built file",
    ], broken
