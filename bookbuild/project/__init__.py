"""The project, read: ``_quarto.yml`` (config.py: chapters, parts, formats, execute options) and
each source ``.qmd`` split into prose, cells and inline expressions (qmd.py).

Takes the book's folder; gives a ``BookConfig`` and parsed ``Document``s. Knows nothing of
execution, Pandoc or any output format."""
