"""What every edition states about itself: version, date, licence, how to cite it.

One place for the facts the PDF's title and copyright pages, the web pages' "cite this" box,
Open Graph tags and footer, the Editions page and the EPUB's metadata all print, so that they
never disagree. The version is the commit the book was built from (``git rev-parse HEAD``) and
the date is that commit's date, so building the same commit twice gives the same PDF."""
from __future__ import annotations

import datetime as dt
import re
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..project.config import BookConfig

EDITION = "First edition"
# Quarto's `license:` values for Creative Commons (https://quarto.org/docs/authoring/front-matter.html)
CC = {"CC BY": "by", "CC BY-SA": "by-sa", "CC BY-ND": "by-nd", "CC BY-NC": "by-nc",
      "CC BY-NC-SA": "by-nc-sa", "CC BY-NC-ND": "by-nc-nd"}
CC_NAMES = {"by": "Attribution", "by-sa": "Attribution-ShareAlike", "by-nd": "Attribution-NoDerivatives",
            "by-nc": "Attribution-NonCommercial", "by-nc-sa": "Attribution-NonCommercial-ShareAlike",
            "by-nc-nd": "Attribution-NonCommercial-NoDerivatives"}
CODE_LICENSES = {"MIT": "the MIT licence", "Apache License": "the Apache License 2.0"}


def _git(root: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


@lru_cache(maxsize=8)
def _commit(root: Path) -> tuple[str, str]:
    """(full hash, ISO date) of HEAD, or ("", "") outside a git checkout."""
    out = _git(root, "log", "-1", "--format=%H %cs")
    parts = out.split()
    return (parts[0], parts[1]) if len(parts) == 2 else ("", "")


def forget() -> None:
    """Read the commit again (each build starts with this: `preview` outlives commits)."""
    _commit.cache_clear()
    _edition.cache_clear()


def license_of(cfg: BookConfig) -> dict[str, str]:
    """The book's licence from ``license:`` in _quarto.yml (a Creative Commons short name, or
    free text, or Quarto's mapping with ``text`` and ``url``)."""
    raw = cfg.raw.get("license")
    if isinstance(raw, dict):
        text, url = str(raw.get("text") or raw.get("type") or ""), str(raw.get("url") or "")
        return {"name": text, "text": text, "url": url}
    if not raw:
        return {"name": "", "text": "All rights reserved.", "url": ""}
    code = CC.get(str(raw).strip())
    if code:
        url = f"https://creativecommons.org/licenses/{code}/4.0/"
        name = f"CC {code.upper()} 4.0"
        return {"name": name, "url": url,
                "text": f"The text and figures are licensed under the Creative Commons "
                        f"{CC_NAMES[code]} 4.0 International licence ({name})."}
    return {"name": str(raw), "text": str(raw), "url": ""}


def code_license(root: Path) -> str:
    """A sentence on the code's licence, when the repository's LICENSE names one for the code."""
    path = root / "LICENSE"
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    for needle, name in CODE_LICENSES.items():
        if needle in text:
            return f"The code in this book and in its repository is licensed under {name} (see LICENSE)."
    return ""


def cite_key(cfg: BookConfig, year: str) -> str:
    words = re.findall(r"[a-z0-9]+", cfg.title.lower())
    return "".join(words[:3]) + year


def _bib_escape(text: str) -> str:
    return re.sub(r"([&%#_])", r"\\\1", text)


def citation(cfg: BookConfig, chapter: dict[str, str] | None = None) -> dict[str, str]:
    """Plain reference and BibTeX for the book, or for one chapter of it
    (``chapter``: number, title and url)."""
    info = edition(cfg)
    authors = " and ".join("{" + a + "}" for a in cfg.author) or "{Anonymous}"
    full_title = cfg.title + (f": {cfg.subtitle}" if cfg.subtitle else "")
    url = (chapter or {}).get("url") or cfg.repo_url or ""
    who = ", ".join(cfg.author)
    version = f"version {info['version']}" if info["version"] != "dev" else "development version"
    if chapter:
        label = f"Chapter {chapter['number']}, " if chapter.get("number") else ""
        plain = (f"{who} ({info['year']}). “{chapter['title']}”. {label.strip(', ') + ' of ' if label else 'In '}"
                 f"{full_title}. {EDITION}, {version}.{' ' + url if url else ''}")
        fields = [("author", authors), ("title", "{" + _bib_escape(chapter["title"]) + "}"),
                  ("booktitle", "{" + _bib_escape(full_title) + "}")]
        if chapter.get("number"):
            fields.append(("chapter", "{" + chapter["number"] + "}"))
        kind = "incollection"
        key = cite_key(cfg, info["year"]) + "-" + re.sub(r"[^a-z0-9]+", "", chapter["title"].lower())[:16]
    else:
        plain = f"{who} ({info['year']}). {full_title}. {EDITION}, {version}.{' ' + url if url else ''}"
        fields = [("author", authors), ("title", "{" + _bib_escape(full_title) + "}")]
        kind = "book"
        key = cite_key(cfg, info["year"])
    fields += [("year", "{" + info["year"] + "}"), ("edition", "{" + EDITION.split()[0] + "}"),
               ("note", "{Version " + info["version"] + "}")]
    if url:
        fields.append(("url", "{" + url + "}"))
    width = max(len(k) for k, _ in fields)
    bibtex = f"@{kind}{{{key},\n" + ",\n".join(f"  {k.ljust(width)} = {v}" for k, v in fields) + "\n}"
    return {"plain": plain, "bibtex": bibtex}


@lru_cache(maxsize=8)
def _edition(root: Path, title: str) -> dict[str, Any]:
    commit, date = _commit(root)
    return {"commit": commit, "version": commit[:7] or "dev",
            "iso_date": date or dt.date.today().isoformat()}


def edition(cfg: BookConfig) -> dict[str, Any]:
    """Everything an edition prints about itself."""
    base = _edition(cfg.root, cfg.title)
    iso = str(cfg.date or base["iso_date"])
    try:
        day = dt.date.fromisoformat(iso)
        date = f"{day.day} {day:%B %Y}"
        year = str(day.year)
        ymd = (day.year, day.month, day.day)
    except ValueError:
        date, year, ymd = iso, iso[:4], None
    lic = license_of(cfg)
    keywords = cfg.raw.get("keywords") or []
    return {
        "edition": EDITION, "version": base["version"], "commit": base["commit"], "date": date,
        "iso_date": iso, "year": year, "ymd": ymd, "lang": str(cfg.raw.get("lang") or "en"),
        "description": str(cfg.raw.get("description") or cfg.subtitle or cfg.title),
        "keywords": [str(k) for k in (keywords if isinstance(keywords, list) else [keywords])],
        "license_name": lic["name"], "license_text": lic["text"], "license_url": lic["url"],
        "code_license_text": code_license(cfg.root),
    }


def book_edition(cfg: BookConfig) -> dict[str, Any]:
    """``edition`` plus the book's plain citation, for the PDF's copyright page."""
    info = edition(cfg)
    return {**info, "citation": citation(cfg)["plain"]}
