"""Prose that stops being true stops the build.

The author's experiment from issue #21: in the roofline chapter, change the toy program's
intensity from half the ridge to a quarter of it. The page used to print "1 FLOPs", offer
"100 FLOP/s" twice among the predict's choices and still say "half of". Now the chapter's
guard on "half" fails and the build names the file and the line.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from bookbuild import BuildError, build

ROOT = Path(__file__).resolve().parents[2]
COPY = ["index.qmd", "references.qmd", "references.bib", "matplotlibrc", "chapters/roofline.qmd",
        "filters", "assets", "bookfigs", "calc", "widgets"]


def roofline_only_book(dest: Path) -> Path:
    """A copy of the book holding only the index and the roofline chapter."""
    for name in COPY:
        src, dst = ROOT / name, dest / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)
    conf = yaml.safe_load((ROOT / "_quarto.yml").read_text())
    conf["book"]["chapters"] = ["index.qmd", "chapters/roofline.qmd"]
    conf["book"].pop("appendices", None)
    (dest / "_quarto.yml").write_text(yaml.safe_dump(conf, sort_keys=False))
    return dest


def test_a_quarter_of_the_ridge_stops_the_build_at_the_half_claim(tmp_path):
    book = roofline_only_book(tmp_path / "book")
    chapter = book / "chapters/roofline.qmd"
    text = chapter.read_text()
    assert text.count("lo_i, hi_i = toy_ridge / 2, toy_ridge * 4") == 1
    chapter.write_text(text.replace("lo_i, hi_i = toy_ridge / 2,", "lo_i, hi_i = toy_ridge / 4,"))
    lines = chapter.read_text().splitlines()
    want = next(i for i, line in enumerate(lines, 1) if "half its capacity" in line and line.startswith("check("))
    with pytest.raises(BuildError) as info:
        build(book, ("html",), search=False)
    err = info.value
    assert err.file.endswith("chapters/roofline.qmd") and err.line == want
    assert "ClaimError" in err.message and "half its capacity" in err.message
    assert f"chapters/roofline.qmd:{want}:" in str(err)


def test_no_page_prints_a_plural_unit_after_one(built_book):
    # "1 FLOPs" is wrong; "K - 1 cycles" (a formula, as KaTeX's text layer spells it) is not
    bad = re.compile(r"(?<![\d.,−+×-])(?<![-−+×] )1 (FLOPs|bytes|warps|threads|blocks|cycles|sectors|"
                     r"registers|passes|paths|lines|tiles|words|elements|rows|columns|tokens|heads|SMs|MACs|loads|"
                     r"phases|waves|sequences|kernels|launches|operations|values|TensorCores|units|banks|steps)\b")
    for page in built_book.rglob("*.html"):
        if "pagefind" in page.parts:
            continue
        text = re.sub(r"<[^>]+>", "", page.read_text())
        assert not bad.search(text), f"{page.relative_to(built_book)}: {bad.search(text).group(0)!r}"


PREDICT_ITEM = re.compile(r"- `\{python\} (\w+)\[(\d+)\]`$")


def predict_blocks(path: Path):
    """(line, [list items]) of every Predict callout in a source file."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith(":::") and ".predict" in lines[i]:
            start, items = i + 1, []
            i += 1
            while not lines[i].startswith(":::"):
                if lines[i].startswith("- "):
                    items.append(lines[i])
                i += 1
            yield start, items
        i += 1


def test_every_predict_prints_choices_checked_distinct():
    sources = sorted(ROOT.glob("chapters/*.qmd")) + [ROOT / "index.qmd"] + sorted(ROOT.glob("appendices/*.qmd"))
    found = 0
    for path in sources:
        text = path.read_text()
        for line, items in predict_blocks(path):
            found += 1
            where = f"{path.relative_to(ROOT)}:{line}"
            assert len(items) >= 2, f"{where}: a Predict needs choices"
            matches = [PREDICT_ITEM.match(item) for item in items]
            assert all(matches), f"{where}: print each choice inline from a calc.check.distinct list: {items}"
            names = {m.group(1) for m in matches}
            assert len(names) == 1, f"{where}: the choices come from one list"
            name = names.pop()
            # distinct(...) itself, or its choices each made Markdown (choices that hold TeX)
            assert re.search(rf"^{name} = (distinct\(|\[Markdown\(c\) for c in distinct\()", text, re.M), \
                f"{where}: {name} is not made by distinct()"
            assert [int(m.group(2)) for m in matches] == list(range(len(items))), f"{where}: every choice once, in order"
    assert found >= 20
