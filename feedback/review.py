"""The maintainers' review page: each suggestion beside the passage it quotes.

Everything a reader typed goes through ``html.escape``; the page is also sent
with a Content-Security-Policy that forbids scripts. Each open suggestion has a form that resolves it,
with an optional note for readers (the errata page); it posts to ``/review/resolve`` on this origin only.
"""

from __future__ import annotations

from html import escape

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
article { border-top: 1px solid #ccc; padding: 1rem 0; display: grid; gap: 0 2rem; grid-template-columns: 1fr 1fr; }
article > header { grid-column: 1 / -1; color: #555; font-size: 0.875rem; }
blockquote { margin: 0; padding-left: 1rem; border-left: 4px solid #ccc; color: #444; white-space: pre-wrap; }
mark { background: #ffe98a; color: inherit; }
.suggestion { white-space: pre-wrap; margin: 0; }
.resolved { opacity: 0.75; }
form { grid-column: 1 / -1; display: grid; gap: 0.25rem; margin-top: 0.5rem; }
textarea { font: inherit; width: 100%; box-sizing: border-box; }
button { font: inherit; min-height: 44px; justify-self: start; padding: 0.25rem 1rem; }
.errata { grid-column: 1 / -1; margin: 0.5rem 0 0; }
@media (max-width: 40rem) { article { grid-template-columns: 1fr; } }
"""


def render(records: list[dict], status: str, token: str | None = None) -> str:
    items = "\n".join(_item(r, token) for r in records) or "<p>No suggestions.</p>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Reader suggestions</title><style>{STYLE}</style></head>
<body><h1>Reader suggestions ({escape(status)}: {len(records)})</h1>
{items}
</body></html>"""


def _item(r: dict, token: str | None = None) -> str:
    where = escape(r["page"]) + (f"#{escape(r['section'])}" if r["section"] else "")
    who = ", ".join(escape(v) for v in (r["name"], r["email"]) if v) or "anonymous"
    if r["exact"] is not None:
        quote = (f'<blockquote>…{escape(r["prefix"] or "")}<mark>{escape(r["exact"])}</mark>'
                 f'{escape(r["suffix"] or "")}…</blockquote>')
    else:
        quote = "<p><em>Whole page (no passage quoted)</em></p>"
    details = " · ".join([f"<code>{escape(r['id'])}</code>", where, f"version {escape(r['version'])}",
                          escape(r["created_at"]), who, escape(r["status"])])
    return f"""<article class="{escape(r['status'])}" id="s-{escape(r['id'])}">
<header>{details}</header>
<div><h2 hidden>Passage</h2>{quote}</div>
<div><h2 hidden>Suggestion</h2><p class="suggestion">{escape(r['suggestion'])}</p></div>
{_resolve_form(r, token) if r["status"] == "open" else _errata(r)}
</article>"""


def _errata(r: dict) -> str:
    return f'<p class="errata">Errata note: {escape(r["errata"])}</p>' if r.get("errata") else ""


def _resolve_form(r: dict, token: str | None) -> str:
    field = f"note-{escape(r['id'])}"
    hidden_token = f'<input type="hidden" name="token" value="{escape(token)}">' if token else ""
    return f"""<form method="post" action="/review/resolve">
<input type="hidden" name="id" value="{escape(r['id'])}">{hidden_token}
<label for="{field}">Note for readers on the errata page (optional)</label>
<textarea id="{field}" name="errata" rows="2" maxlength="2000"></textarea>
<button type="submit">Resolve</button>
</form>"""
