"""Executing the chapters' Python: the Jupyter kernel kept between builds (kernel.py, over the
messaging protocol in jupyter.py), the executed markdown a chapter becomes (markdown.py: cell
outputs, figures, inline expressions), and Quarto's ``freeze`` (freeze.py: a chapter runs again
only when what it read changed; prose-only edits replay the kernel's recorded answers).

Takes parsed ``Document``s from project/; gives markdown with every output in place and the
figures under ``.bookcache/figures``. Knows nothing of Pandoc or any output format."""
