"""What every edition says about itself and the files it ships, for all the formats alike: the
version, date, licence and citation (edition.py), the pictures typst draws for them (images.py:
the EPUB's cover, the link-preview card, the favicons) and where each edition's files go
(files.py).

Takes the project's config (and git's HEAD); gives facts, pictures and paths. Knows no output
format: the HTML site, the PDFs and the EPUB import it, never the reverse."""
