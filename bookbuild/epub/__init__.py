"""The EPUB 3 edition (book.py): the pages through the filters, joined, written by Pandoc's
``epub3`` writer with ``templates/epub.css``.

Takes the pages' ASTs and the cross-reference index from pandoc/, and the cover from editions/;
gives ``_book/<book>.epub``. Must not know the HTML site or the PDFs."""
