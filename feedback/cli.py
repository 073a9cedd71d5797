"""``python -m feedback serve|list|export|resolve|errata``."""

from __future__ import annotations

import argparse
import os
import re
import sys
import unicodedata
from datetime import date

from feedback import errata, export
from feedback.config import Config


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    config = Config.load(db=args.db, **{k: getattr(args, k, None) for k in
                                        ("allow_origins", "rate_limit", "review_token", "sqlite_synchronous")})
    return args.command(config, args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m feedback", description="Reader feedback service and tools.")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    def command(name, func, help):
        p = sub.add_parser(name, help=help, description=help)
        p.add_argument("--db", help="sqlite:///PATH or postgresql://... (env FEEDBACK_DB; default sqlite:///feedback.db)")
        p.set_defaults(command=func)
        return p

    p = command("serve", serve, "Run the HTTP service (with --site: the book, the service and the review page on one origin).")
    p.add_argument("--site", type=_site_dir, help="also serve this built book (e.g. _book) at /")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--allow-origin", dest="allow_origins", action="append",
                   help="origin allowed to POST from a browser; repeatable (env FEEDBACK_ALLOW_ORIGINS, comma-separated)")
    p.add_argument("--rate-limit", help="per-client COUNT/SECONDS or 'off' (env FEEDBACK_RATE_LIMIT; default 20/60)")
    p.add_argument("--review-token", help="token for GET /review (env FEEDBACK_REVIEW_TOKEN; default: loopback only)")
    p.add_argument("--sqlite-synchronous", choices=["FULL", "NORMAL"], help="SQLite fsync policy (default FULL)")
    p.add_argument("--access-log", action="store_true")

    p = command("list", list_, "List suggestions, oldest first.")
    p.add_argument("--page")
    p.add_argument("--status", choices=["open", "resolved"])
    p.add_argument("--since", type=date.fromisoformat, help="YYYY-MM-DD (UTC)")

    p = command("export", export_, "Write all suggestions to standard output.")
    p.add_argument("--format", choices=["json", "csv"], default="json")

    p = command("resolve", resolve, "Mark a suggestion as resolved.")
    p.add_argument("id")
    p.add_argument("--errata", metavar="NOTE", help="a note for readers, published on the book's errata page")

    p = command("errata", errata_, "Write the published errata notes as JSON (commit as errata/errata.json).")
    p.add_argument("action", choices=["export"])
    return parser


def _site_dir(path: str) -> str:
    if not (os.path.isdir(path) and os.path.isfile(os.path.join(path, "index.html"))):
        raise argparse.ArgumentTypeError(f"{path}: not a built book (no index.html); build it first")
    return path


def serve(config: Config, args) -> int:
    import uvicorn

    from feedback.app import create_app

    if args.site:
        _warn_about_endpoint(args.site)
    uvicorn.run(create_app(config, site=args.site), host=args.host, port=args.port, access_log=args.access_log,
                log_level="info", timeout_graceful_shutdown=5)
    return 0


def _repo(config: Config):
    from feedback.storage import Repository

    return Repository(config.db, config.sqlite_synchronous)


def list_(config: Config, args) -> int:
    since = args.since.isoformat() if args.since else None
    for r in _repo(config).find(args.page, args.status, since):
        where = r["page"] + (f"#{r['section']}" if r["section"] else "")
        quote = f' on "{_one_line(r["exact"], 60)}"' if r["exact"] else ""
        print(f"{r['id']}  {r['created_at'][:16]}  {r['status']:<8}  {_one_line(where, 80)}{quote}")
        print(f"    {_one_line(r['suggestion'], 200)}")
    return 0


def export_(config: Config, args) -> int:
    records = _repo(config).find()
    sys.stdout.write(export.to_csv(records) if args.format == "csv" else export.to_json(records))
    return 0


def _warn_about_endpoint(site: str) -> None:
    """Say so when the pages will not post here: a build that set an endpoint of its own keeps it
    (site.with_endpoint names this service only in pages that name none)."""
    with open(os.path.join(site, "index.html"), encoding="utf-8") as f:
        head = f.read(8192)
    own = re.search(r'name="feedback-endpoint" content="([^"]*)"', head)
    if own and own.group(1) != "/api/feedback":
        print(f"note: {site} was built with feedback.endpoint {own.group(1)} in _quarto.yml, so readers'"
              " suggestions go there, not this service; remove it (or set /api/feedback) and rebuild to use"
              " this service.", file=sys.stderr)


def errata_(config: Config, args) -> int:
    sys.stdout.write(errata.export(_repo(config).find(status="resolved")))
    return 0


def resolve(config: Config, args) -> int:
    note = args.errata.strip() if args.errata else None
    if args.errata is not None and not note:
        print("--errata needs a note", file=sys.stderr)
        return 2
    if _repo(config).resolve(args.id, note):
        print(f"resolved {args.id}" + (" (with a note for the errata page)" if note else ""))
        return 0
    print(f"no suggestion with id {args.id}", file=sys.stderr)
    return 1


def _one_line(text: str, width: int) -> str:
    """For a terminal: reader text with newlines, control and format characters made visible."""
    safe = "".join(
        "⏎" if ch == "\n" else f"\\u{ord(ch):04x}" if unicodedata.category(ch) in ("Cc", "Cf") else ch
        for ch in text
    )
    return safe if len(safe) <= width else safe[: width - 1] + "…"
