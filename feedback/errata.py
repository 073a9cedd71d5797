"""The public side of resolved suggestions: ``errata/errata.json`` and the book's "Errata and changes" page.

``python -m feedback errata export > errata/errata.json`` writes the notes maintainers gave with
``resolve ID --errata "..."`` (only those: never a reader's words, name or email). The book's
``appendices/errata.qmd`` renders that committed file with :func:`page_markdown`, so the build reads
nothing else and stays reproducible and offline. Standard library only: the book's kernel imports it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

FORMAT = 1
FIELDS = ("id", "page", "section", "version", "exact", "prefix", "suffix", "note", "resolved_at")
CONTEXT_WORDS = 3  # words of prefix/suffix in a text fragment: enough to tell repeats apart
SPLIT_AT = 300     # a longer passage is linked by its first and last words (textStart,textEnd)
ENDS_WORDS = 5


def export(records: list[dict]) -> str:
    """The JSON committed beside the book: resolved suggestions that carry a note, oldest first."""
    entries = [
        {**{k: r[k] for k in FIELDS if k != "note"}, "note": r["errata"]}
        for r in sorted(records, key=lambda r: (r["resolved_at"] or "", r["id"]))
        if r["status"] == "resolved" and r.get("errata")
    ]
    return json.dumps({"format": FORMAT, "entries": entries}, ensure_ascii=False, indent=2) + "\n"


def load(path: str | Path) -> list[dict]:
    """Entries of an export; a missing file is an empty list, a malformed one a clear error."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}:{err.lineno}: not valid JSON: {err.msg}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), list):
        raise ValueError(f'{path}: expected {{"format": {FORMAT}, "entries": [...]}} (python -m feedback errata export)')
    for n, entry in enumerate(data["entries"]):
        missing = [k for k in ("id", "page", "version", "note", "resolved_at") if not isinstance(entry.get(k), str)]
        if missing:
            raise ValueError(f"{path}: entry {n} ({entry.get('id', '?')}): missing {', '.join(missing)}")
    return data["entries"]


# ---- text fragments (https://wicg.github.io/scroll-to-text-fragment/) ------------------------------------

def _encode(term: str) -> str:
    """Percent-encoded for a text directive: '-', ',' and '&' are syntax there, so they are encoded too."""
    return quote(term, safe="").replace("-", "%2D")


def _words(text: str) -> list[str]:
    return text.split()


def text_fragment(exact: str, prefix: str | None = None, suffix: str | None = None) -> str:
    """``:~:text=prefix-,start[,end],-suffix`` for a TextQuoteSelector.

    A term must lie in one block of the page and match whole words, so the context is cut at a line
    break (a block boundary in the text the selector was taken from), its outer word is dropped when the
    selector's 32 characters may have cut it, and a few words are kept."""
    words = _words(exact)
    if not words:
        raise ValueError("a text fragment needs a non-empty passage")
    exact_text = " ".join(words)
    parts = []
    before = _context(prefix, last=True)
    if before:
        parts.append(_encode(before) + "-")
    if len(exact_text) > SPLIT_AT and len(words) > 2 * ENDS_WORDS:
        parts += [_encode(" ".join(words[:ENDS_WORDS])), _encode(" ".join(words[-ENDS_WORDS:]))]
    else:
        parts.append(_encode(exact_text))
    after = _context(suffix, last=False)
    if after:
        parts.append("-" + _encode(after))
    return ":~:text=" + ",".join(parts)


def _context(text: str | None, last: bool) -> str:
    """A few whole words of the prefix (``last``: its end) or the suffix (its start)."""
    if not text or (text[-1] if last else text[0]).isalnum():
        return ""  # the passage starts (or ends) inside a word: no whole word touches it
    lines = text.split("\n")
    words = (lines[-1] if last else lines[0]).split()
    cut = len(lines) == 1 and len(text) >= 32 and not (text[0] if last else text[-1]).isspace()
    if cut:  # the selector's 32 characters may have cut the outer word
        words = words[1:] if last else words[:-1]
    return " ".join(words[-CONTEXT_WORDS:] if last else words[:CONTEXT_WORDS])


# ---- the page -------------------------------------------------------------------------------------------

_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~^&\"':@=%])")


def _md(text: str) -> str:
    """Plain text safe in Pandoc markdown: every punctuation mark escaped, one line."""
    return _PUNCT.sub(r"\\\1", " ".join(text.split()))


def book_page(page: str, root: Path) -> tuple[str, str] | None:
    """(output path, title) of the book page a reader's URL path names, found as the longest tail of the
    path whose .qmd exists in the book (so a book hosted under /some/prefix/ still matches)."""
    parts = [p for p in page.split("/") if p]
    if not parts or not parts[-1].endswith(".html"):
        parts.append("index.html")
    for i in range(len(parts)):
        output = "/".join(parts[i:])
        source = root / (output[: -len(".html")] + ".qmd")
        if source.is_file():
            return output, _title(source)
    return None


def _title(source: Path) -> str:
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return re.sub(r"\s*\{[^}]*\}\s*$", "", line[2:]).strip()
    return source.stem


def page_markdown(path: str | Path = "errata/errata.json", root: str | Path = ".", here: str = "appendices/errata.html") -> str:
    """Markdown for the errata page: one section per book version readers reported against (newest
    first), each entry linking to its passage with a text fragment."""
    root = Path(root)
    entries = load(root / path)
    if not entries:
        return "No corrections have been published yet.\n"
    up = "../" * here.count("/")
    groups: dict[str, list[dict]] = {}
    for entry in sorted(entries, key=lambda e: e["resolved_at"], reverse=True):
        groups.setdefault(entry["version"], []).append(entry)
    out = []
    for version, items in groups.items():
        newest = items[0]["resolved_at"][:10]
        out.append(f"## Build {_md(version)} {{.unnumbered}}\n")
        out.append(f"If you read build {_md(version)}, these passages have changed since (latest {newest}).\n")
        for e in items:
            out.append(_entry(e, root, up))
        out.append("")
    return "\n".join(out)


def _entry(e: dict, root: Path, up: str) -> str:
    found = book_page(e["page"], root)
    where = found[1] if found else _md(e["page"])  # a title is the author's markdown
    if found:
        anchor = e.get("section") or ""
        fragment = text_fragment(e["exact"], e.get("prefix"), e.get("suffix")) if e.get("exact") else ""
        href = f"{up}{found[0]}" + (f"#{anchor}{fragment}" if anchor or fragment else "")
        where = f"[{where}](<{href}>)"
    quoted = ""
    if e.get("exact"):
        shown = " ".join(e["exact"].split())
        quoted = f": “{_md(shown[:200] + ('…' if len(shown) > 200 else ''))}”"
    return f"- {where}{quoted} — {_md(e['note'])} ({e['resolved_at'][:10]})"
