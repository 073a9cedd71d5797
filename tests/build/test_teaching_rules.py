"""`bookbuild check`'s teaching rules (bookbuild/teaching_rules.py, issue #36): a glossary term met
before the chapter that introduces it, and a Predict whose answer stands above it."""
from bookbuild.check import check
from fixturebook import append

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
