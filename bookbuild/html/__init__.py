"""The HTML edition, the site: each page's body from Pandoc, its math rendered with KaTeX
(mathrender.py), the reader's furniture written in (reader.py), wrapped in ``templates/page.html``
(site.py), the static files, the Pagefind search index, the widget runtime, and the Editions page
that lists every edition built (editions_page.py).

Takes the pages' ASTs and the cross-reference index from pandoc/; gives ``_book/``'s HTML. Must
not know the PDF or EPUB writers: what it links to of them comes from editions/."""
