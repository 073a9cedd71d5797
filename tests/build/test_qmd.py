from pathlib import Path

import pytest

from bookbuild.errors import BuildError
from bookbuild.project.qmd import Cell, Markdown, inline_expressions, parse

SOURCE = """---
title: "T"
---

Text with `{python} x + 1` inline.

```{python}
#| label: fig-a
#| fig-cap: "Cap"
x = 1
```

```python
`{python} not_evaluated`
```

````{python}
print("```")
````
"""


def test_cells_options_and_lines():
    doc = parse(Path("c.qmd"), SOURCE)
    assert doc.front == {"title": "T"}
    cells = doc.cells
    assert [c.options.get("label") for c in cells] == ["fig-a", None]
    assert cells[0].code == "x = 1"
    assert cells[0].line == 7 and cells[0].code_line == 10
    assert cells[1].code == 'print("```")'


def test_plain_code_blocks_stay_markdown_and_are_not_evaluated():
    doc = parse(Path("c.qmd"), SOURCE)
    md = [c for c in doc.chunks if isinstance(c, Markdown)]
    exprs = [i.expr for m in md for i in inline_expressions(m)]
    assert exprs == ["x + 1"]
    assert any("```python" in m.text for m in md)


def test_inline_line_numbers():
    doc = parse(Path("c.qmd"), SOURCE)
    first = doc.chunks[0]
    assert inline_expressions(first)[0].line == 5


def test_bad_cell_options_name_the_line():
    with pytest.raises(BuildError) as e:
        parse(Path("c.qmd"), "# H\n\n```{python}\n#| label: [unclosed\nx=1\n```\n")
    assert e.value.line == 4 and "c.qmd" in str(e.value)


def test_unclosed_front_matter():
    with pytest.raises(BuildError, match="never closed"):
        parse(Path("c.qmd"), "---\ntitle: x\n\nbody\n")


def test_cell_options_read_with_libyaml_are_what_the_python_loader_reads_and_errors_say_the_same():
    import yaml
    from bookbuild.project.qmd import load_yaml
    text = 'label: fig-a\nfig-cap: "A [line](x.html)."\necho: false\nfig-width: 4.5\nn: 07\nwhen: 2024-01-02\nkeys: [a, b]\n'
    assert load_yaml(text) == yaml.safe_load(text)
    bad = "label: [unclosed\nfig-cap: x\n"
    with pytest.raises(yaml.YAMLError) as ours:
        load_yaml(bad)
    with pytest.raises(yaml.YAMLError) as python:
        yaml.safe_load(bad)
    assert str(ours.value) == str(python.value)
