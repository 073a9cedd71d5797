"""Command line: ``python -m bookbuild {build,check,preview}``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import BuildError


FORMATS = ("html", "pdf", "epub")


def _formats(value: str) -> tuple[str, ...]:
    if value == "all":
        return FORMATS
    chosen = tuple(v.strip() for v in value.split(","))
    wrong = [v for v in chosen if v not in FORMATS]
    if wrong or not chosen:
        raise argparse.ArgumentTypeError(f"{', '.join(wrong) or value!r}: choose all, or from {', '.join(FORMATS)}")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bookbuild", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the HTML site and the PDF")
    b.add_argument("--to", default="all", type=_formats,
                   help="all (default), or one or more of html, pdf, epub joined by commas (html,pdf)")
    b.add_argument("--no-search", action="store_true", help="skip the Pagefind index")
    b.add_argument("--root", default=".", type=Path)
    b.add_argument("--execute-daemon-restart", action="store_true",
                   help="replace the kept Jupyter kernel with a new one (as Quarto's flag)")
    c = sub.add_parser("check", help="lint the sources without a full build",
                       description="Lint the sources without executing them. Among the teaching rules: a "
                                   "Predict whose answer stands above it in its section, in prose or in "
                                   "what the last build's cells made (tables, captions, printed numbers) "
                                   "or as an equation its Reveal cites.")
    c.add_argument("--root", default=".", type=Path)
    p = sub.add_parser("preview", help="serve the site, rebuild on save, reload the browser")
    p.add_argument("--root", default=".", type=Path)
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            from .progress import run_build
            formats = args.to
            run_build(args.root, formats, search=not args.no_search,
                      restart_kernel=args.execute_daemon_restart)
        elif args.command == "check":
            from .check import run_check
            return run_check(args.root)
        elif args.command == "preview":
            from .preview import serve
            serve(args.root, args.host, args.port)
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
