"""`bookbuild check`'s teaching rules (bookbuild/teaching_rules.py, issue #36): a glossary term met
before the chapter that introduces it, and a Predict whose answer stands above it: in the source,
or in what the cells made once run (read from the execution cache, as a build leaves it)."""
import dataclasses

import pytest

from bookbuild.build import Report
from bookbuild.check import check, run_check
from bookbuild.execute.run import execute_all
from bookbuild.project import config
from fixturebook import append, copy_fixture

PREDICT = ('::: {{.callout-tip .predict title="Predict"}}\n{question}\n:::\n\n'
           '::: {{.callout-note collapse="true" title="Reveal"}}\n{answer}\n:::\n')


def front(path, yaml):
    path.write_text(f"---\n{yaml}---\n\n" + path.read_text())


def with_terms(book, one_prereqs="[]"):
    """Chapter two introduces "flux capacitor"; chapter one comes first and builds on `one_prereqs`."""
    front(book / "chapters/one.qmd", f"prerequisites: {one_prereqs}\n")
    front(book / "chapters/two.qmd", 'prerequisites: [chapters/one.qmd]\nterms:\n  - term: flux capacitor\n'
                                     '    def: "What makes time travel possible."\n')
    append(book / "chapters/two.qmd", "The [flux capacitor]{.term} is defined here.\n")


def errors(book):
    """The teaching rules' findings (the fixture book has no .predict or .term filter of its own)."""
    return [f for f in check(book) if "is used here" in f.message or "Predict answered above" in f.message]


def test_term_used_before_the_chapter_that_introduces_it_is_reported(fixture_book):
    with_terms(fixture_book)
    line = append(fixture_book / "chapters/one.qmd", "Our flux capacitors hum.\n\nA flux capacitor again.\n")
    [f] = errors(fixture_book)
    assert (f.file, f.line) == ("chapters/one.qmd", line)
    assert 'term "flux capacitor" is used here (2 times) but introduced in chapters/two.qmd' in f.message


def test_term_in_code_math_or_links_is_not_a_use(fixture_book):
    with_terms(fixture_book)
    append(fixture_book / "chapters/one.qmd",
           "Call `flux capacitor` or $\\text{flux capacitor}$, see [x](flux capacitor.html).\n\n"
           "```{python}\n# flux capacitor\n1\n```\n")
    assert errors(fixture_book) == []


def test_first_use_that_links_to_the_definition_is_fine(fixture_book):
    with_terms(fixture_book)
    append(fixture_book / "chapters/one.qmd", "A [flux capacitor]{.term} hums. The flux capacitor again.\n")
    assert errors(fixture_book) == []


def test_a_heading_that_names_the_term_defined_below_it_is_fine(fixture_book):
    with_terms(fixture_book)
    one = fixture_book / "chapters/one.qmd"
    append(one, "## The flux capacitor\n\nBefore anything, the [flux capacitor]{.term} is a box.\n")
    assert errors(fixture_book) == []


def test_a_heading_whose_term_is_defined_far_below_it_is_reported(fixture_book):
    with_terms(fixture_book)
    line = append(fixture_book / "chapters/one.qmd",
                  "## Flux capacitors\n\n" + "Filler words here. " * 30 + "A [flux capacitor]{.term}.\n")
    [f] = errors(fixture_book)
    assert f.line == line


def test_a_term_from_a_chapter_this_one_builds_on_is_fine(fixture_book):
    with_terms(fixture_book, one_prereqs="[chapters/two.qmd]")
    append(fixture_book / "chapters/one.qmd", "Our flux capacitor hums.\n")
    assert errors(fixture_book) == []


def test_the_introducing_chapter_itself_and_pages_without_builds_on_are_not_read(fixture_book):
    with_terms(fixture_book)
    append(fixture_book / "chapters/two.qmd", "Another flux capacitor.\n")
    append(fixture_book / "chapters/appendix.qmd", "The appendix names a flux capacitor.\n")
    assert errors(fixture_book) == []


def test_predict_whose_answer_phrase_stands_above_it_is_reported(fixture_book):
    two = fixture_book / "chapters/two.qmd"
    append(two, "A barrel holds about forty-two apples.\n")
    line = append(two, PREDICT.format(question="How many apples fit in a barrel?",
                                      answer="Roughly forty-two apples. They are small."))
    [f] = errors(fixture_book)
    assert (f.file, f.line) == ("chapters/two.qmd", line)
    assert 'its Reveal\'s answer "forty two apples" stands in the 300 words before' in f.message


def test_predict_whose_key_figure_stands_above_it_is_reported(fixture_book):
    two = fixture_book / "chapters/two.qmd"
    append(two, '```{python}\n#| tbl-cap: "Apples: `{python} n` a barrel."\nn = 42\n```\n')
    line = append(two, PREDICT.format(question="How many apples fit in a barrel of `{python} size` litres?",
                                      answer="`{python} n`. They are small."))
    [f] = errors(fixture_book)
    assert (f.file, f.line) == ("chapters/two.qmd", line)
    assert "key figure `{python} n`" in f.message


def test_predict_with_its_answer_far_above_hidden_or_given_is_fine(fixture_book):
    two = fixture_book / "chapters/two.qmd"
    append(two, "A barrel holds forty-two apples. " + "Filler words here. " * 110 + "\n")
    append(two, PREDICT.format(question="How many apples fit in a barrel?", answer="Forty-two apples."))
    # a figure shown only in an earlier Reveal (collapsed), or one the question itself gives
    append(two, PREDICT.format(question="And pears?", answer="`{python} pears` pears."))
    append(two, PREDICT.format(question="A crate of `{python} pears` pears weighs what?",
                               answer="`{python} pears` pears weigh `{python} kg` kg."))
    append(two, PREDICT.format(question="Is it full?", answer="No. It never is."))
    assert errors(fixture_book) == []


def test_predict_answered_by_a_definition_is_reported(fixture_book):
    # issue #43: the glossary entry (the chapter's own, or one marked above) gives the Reveal away
    front(fixture_book / "chapters/one.qmd", "prerequisites: []\nterms:\n  - term: flux capacitor\n"
          '    def: "What makes time travel possible, once the car reaches eighty-eight miles an hour."\n')
    front(fixture_book / "chapters/two.qmd", "prerequisites: [chapters/one.qmd]\n")
    two = fixture_book / "chapters/two.qmd"
    question = "How fast must the car go?"
    answer = "Eighty-eight miles an hour. Slower, nothing happens."
    append(two, "Nothing marked here.\n")
    append(two, PREDICT.format(question=question, answer=answer))
    assert errors(fixture_book) == []                # chapter one's entry, not marked above: unseen
    append(two, "The [flux capacitor]{.term} again.\n")
    line = append(two, PREDICT.format(question=question, answer=answer))
    [f] = errors(fixture_book)
    assert (f.file, f.line) == ("chapters/two.qmd", line)
    assert 'by a definition: the glossary entry "flux capacitor" (shares eight, hour, miles' in f.message


def test_predict_sharing_one_word_or_an_intensity_with_a_definition(fixture_book):
    with_terms(fixture_book)
    two = fixture_book / "chapters/two.qmd"
    append(two, PREDICT.format(question="What does it need?", answer="Plutonium. Or lightning, possible."))
    assert errors(fixture_book) == []                # one stem ("possible") is no answer
    front(fixture_book / "chapters/appendix.qmd", 'terms:\n  - term: GEMV\n'
          '    def: "A matrix-vector product: 2/s FLOP per byte for s-byte elements."\n')
    append(two, "A [GEMV]{.term} below.\n")
    line = append(two, PREDICT.format(question="How fast is decode?",
                                      answer="Slow: an intensity of `{python} i` FLOP/B."))
    [f] = errors(fixture_book)
    assert f.line == line and "states the intensity its Reveal turns on" in f.message


def test_predict_answered_by_a_callout_above_it_is_reported(fixture_book):
    two = fixture_book / "chapters/two.qmd"
    answer = "Plutonium, lightning and a clocktower. Nothing else will do."
    append(two, PREDICT.format(question="What does the car need?", answer=answer))
    assert errors(fixture_book) == []                # nothing above it yet
    line_note = append(two, '::: {.callout-note .takeaway title="Takeaway"}\nThe car runs on plutonium, '
                            "or on lightning caught from a clocktower.\n:::\n")
    line = append(two, PREDICT.format(question="And again?", answer=answer))
    [f] = errors(fixture_book)
    assert f.line == line and f"by a callout: the callout at line {line_note} shares clock, light, pluto" in f.message


# -- answers a reader sees only once the cells have run ------------------------------------------
# One small page (the fixture's appendix), one section per case, run once by the build's executor
# in one kernel: each case's Reveal leads with an expression the text above never writes, so only
# what the cells print can give it away.
CASES = {
    "table": """## Apples in a table

```{python}
#| label: tbl-apples
#| tbl-cap: "Apples a barrel holds, by size."
from IPython.display import Markdown
per_barrel = 2.5 * 2**30
Markdown("| Barrel | Holds |\\n|:--|--:|\\n| large | " + f"{per_barrel / 2**30:.2f} GiB" + " |")
```

""" + PREDICT.format(question="How much does a large barrel hold?\n\n- 2.00 GiB\n- `{python} f'{per_barrel / 2**30:.2f}'` GiB",
                     answer="`{python} f'{per_barrel / 2**30:.2f} GiB'`. Apples are small."),
    "caption": """## Bytes in a figure

```{python}
#| label: fig-column
#| fig-cap: "A warp reading a column moves 1,024 bytes for 128 requested."
#| fig-alt: "Thirty-two sectors, one per lane."
from IPython.display import SVG
moved = 32 * 32
SVG('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>')
```

""" + PREDICT.format(question="How many bytes does a column read move?",
                     answer="`{python} f'{moved:,} bytes'`. Each lane has its own sector."),
    "equation": """## A running sum

The sum is rescaled when the maximum rises:

$$ \\ell' = e^{m - m'} \\ell $$ {#eq-rescale}

""" + PREDICT.format(question="What happens to the running sum?",
                     answer="It is multiplied by a factor (@eq-rescale). Old terms shrink alike."),
    "prose": """## Pears in prose

```{python}
pears = 1234
```

A crate holds `{python} f'{pears:,}'` pears.

""" + PREDICT.format(question="How many pears fit in a crate?",
                     answer="`{python} format(pears, ',')` pears. They are packed tight."),
    "fine": """## Plums, given

```{python}
plums = 4096
```

A tray holds `{python} f'{plums:,}'` plums. A plum weighs 4 g, and a basket holds 8 rows.

""" + PREDICT.format(question="A tray of `{python} format(plums, ',')` plums weighs what?",
                     answer="`{python} format(plums, ',')` plums weigh `{python} plums * 4 // 1000` kg. Heavy.")
    + "\n" + PREDICT.format(question="How many rows in a box?", answer="A box has 8, like the basket.")
    + "\n## Plums, hidden\n\n"
    + PREDICT.format(question="How many plums fill a crate?", answer="`{python} plums * 3` plums. It is deep.")
    + "\n" + PREDICT.format(question="And a second crate?", answer="`{python} str(plums * 3)` plums, as the first.")
    + "\nHalf a tray is `{python} f'{plums // 2:,}'` plums.\n"
    + "\n## Plums again\n\n"
    + PREDICT.format(question="And a sack?", answer="`{python} format(plums // 2, ',')` plums, in the sack too."),
}


@pytest.fixture(scope="module")
def cells_run(tmp_path_factory):
    """The fixture book with the cases on its appendix page, executed as a build executes it (the
    appendix alone: the other pages are not the subject); returns (book, findings, case -> the
    Predict's line)."""
    book = copy_fixture(tmp_path_factory.mktemp("predict") / "book")
    page = book / "chapters/appendix.qmd"
    lines = {}
    for name, text in CASES.items():
        start = append(page, text)
        lines[name] = start + text[:text.index(".predict")].count("\n")
    cfg = config.load(book)
    only = dataclasses.replace(cfg, chapters=[ch for ch in cfg.chapters if ch.source.name == "appendix.qmd"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BOOKBUILD_EXECUTE_DAEMON", "0")           # no kernel left behind
        execute_all(only, Report(), lambda *a: None)
    found = [f for f in check(book) if "Predict answered above" in f.message]
    return book, found, lines


def at(cells_run, case):
    _, found, lines = cells_run
    return [f for f in found if f.line == lines[case]]


def test_answer_in_a_table_a_cell_made_is_reported_with_the_cells_line(cells_run):
    # the answer is also one of the question's choices: a choice is not a given
    [f] = at(cells_run, "table")
    page = (cells_run[0] / "chapters/appendix.qmd").read_text().split("\n")
    cell = page.index("#| label: tbl-apples")              # the cell opens on the line before
    assert f.file == "chapters/appendix.qmd"
    assert f'answer "2.50 GiB" stands above it in the same section, in the output of the cell at line {cell} (tbl-apples)' in f.message


def test_answer_in_a_figure_caption_is_reported(cells_run):
    [f] = at(cells_run, "caption")
    assert 'answer "1,024 bytes"' in f.message and "(fig-column)" in f.message


def test_equation_the_reveal_cites_defined_above_is_reported(cells_run):
    [f] = at(cells_run, "equation")
    page = (cells_run[0] / "chapters/appendix.qmd").read_text().split("\n")
    eq = next(i for i, line in enumerate(page, 1) if "{#eq-rescale}" in line)
    assert f"cites @eq-rescale, which stands above it in the same section, at line {eq}" in f.message


def test_answer_in_prose_from_another_expression_is_reported(cells_run):
    [f] = at(cells_run, "prose")
    page = (cells_run[0] / "chapters/appendix.qmd").read_text().split("\n")
    said = page.index("A crate holds `{python} f'{pears:,}'` pears.") + 1
    assert f'answer "1,234" stands above it in the same section, at line {said};' in f.message


def test_numbers_the_question_gives_tiny_hidden_or_in_another_section_are_fine(cells_run):
    _, found, lines = cells_run
    assert sorted(f.line for f in found) == sorted(lines[c] for c in ("table", "caption", "equation", "prose"))


def test_without_a_build_the_outputs_are_not_read_and_check_says_so(fixture_book, capsys):
    append(fixture_book / "chapters/appendix.qmd", CASES["table"])
    assert errors(fixture_book) == []
    assert not (fixture_book / ".bookcache").exists(), "check executes nothing and writes no cache"
    run_check(fixture_book)
    said = capsys.readouterr().out
    assert "3 page(s) whose cells have not run since they changed" in said
    assert "chapters/appendix.qmd" in said


def test_a_page_whose_cells_changed_since_its_build_is_not_read(cells_run, tmp_path):
    book = copy_fixture(tmp_path / "book", cells_run[0], keep_cache=True)
    page = book / "chapters/appendix.qmd"
    assert len([f for f in check(book) if "Predict answered above" in f.message]) == 4
    page.write_text(page.read_text().replace("per_barrel = 2.5 * 2**30", "per_barrel = 2.5 * 2**30  # edited"))
    assert [f for f in check(book) if "stands above it in the same section" in f.message] == []
