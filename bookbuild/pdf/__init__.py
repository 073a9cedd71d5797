"""The print editions: every page through the filters to typst, joined into the book
(book.py) and compiled one page at a time too (chapters.py), both with ``templates/book.typ``
(template.py), by the typst compiler kept warm between builds (typstd.py).

Takes the pages' ASTs and the cross-reference index from pandoc/; gives ``_book/<book>.pdf`` and
``_book/pdf/*.pdf``. Must not know the HTML site or the EPUB."""
