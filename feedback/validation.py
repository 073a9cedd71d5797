"""Strict validation of a submission body.

``parse(body: bytes) -> Submission`` either returns a clean record or raises
``Invalid`` carrying the HTTP status and a reason that is safe to show a reader.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
import uuid
from dataclasses import asdict, dataclass

MAX_BODY_BYTES = 32 * 1024
LIMITS = {  # field: (required, max characters)
    "id": (True, 36),
    "page": (True, 500),
    "section": (True, 200),
    "version": (True, 100),
    "suggestion": (True, 5000),
    "name": (False, 100),
    "email": (False, 254),
}
SELECTOR_LIMITS = {"exact": (True, 2000), "prefix": (False, 200), "suffix": (False, 200)}
SELECTOR_TYPE = "TextQuoteSelector"
ALLOWED_FIELDS = set(LIMITS) | {"selector"}
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(rf"^[^@\s<>\"(),;:\\\[\]]{{1,64}}@{_LABEL}(?:\.{_LABEL})+$")  # local@domain.tld
_ALLOWED_CONTROLS = {"\n", "\r", "\t"}


class Invalid(ValueError):
    """A refusal: ``status`` is the HTTP status, ``reason`` the text shown to the reader."""

    def __init__(self, reason: str, status: int = 400):
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(frozen=True)
class Submission:
    id: str
    page: str
    section: str
    version: str
    suggestion: str
    exact: str | None = None
    prefix: str | None = None
    suffix: str | None = None
    name: str | None = None
    email: str | None = None

    def digest(self) -> str:
        """SHA-256 of the content: the same id with another digest is a conflict (409)."""
        content = {k: v for k, v in asdict(self).items() if k != "id"}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def parse(body: bytes) -> Submission:
    if len(body) > MAX_BODY_BYTES:
        raise Invalid(f"request body too large (max {MAX_BODY_BYTES} bytes)", 413)
    data = _load_json(body)
    if not isinstance(data, dict):
        raise Invalid("body must be a JSON object")
    _reject_unknown(data, ALLOWED_FIELDS, "")
    fields = {name: _text(data, name, *limit) for name, limit in LIMITS.items()}
    fields["id"] = _uuid(fields["id"])
    if not fields["page"].startswith("/"):
        raise Invalid("page: must be a path starting with '/'")
    if fields["version"] == "":
        raise Invalid("version: must not be empty")
    if fields["suggestion"].strip() == "":
        raise Invalid("suggestion: must not be empty")
    if fields["email"] is not None and not _EMAIL.match(fields["email"]):
        raise Invalid("email: not a valid email address")
    fields.update(_selector(data.get("selector")))
    return Submission(**fields)


def _load_json(body: bytes):
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid("body is not valid UTF-8") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
    except Invalid:
        raise
    except (ValueError, RecursionError):
        raise Invalid("malformed JSON") from None


def _no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise Invalid("malformed JSON: duplicate key")
    return dict(pairs)


def _no_constant(name):
    raise Invalid(f"malformed JSON: {name} is not allowed")


def _reject_unknown(data: dict, allowed: set, where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise Invalid(f"unknown field: {where}{unknown[0][:50]}")


def _text(data: dict, name: str, required: bool, max_chars: int, where: str = "") -> str | None:
    value = data.get(name)
    label = where + name
    if value is None or (value == "" and not required):
        if required:
            raise Invalid(f"{label}: required")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{label}: must be a string")
    if len(value) > max_chars:
        raise Invalid(f"{label}: too long (max {max_chars} characters)")
    _check_characters(value, label)
    return value


def _check_characters(value: str, label: str) -> None:
    """Refuse text a database or a terminal would mangle: lone surrogates, NUL, control characters."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid(f"{label}: invalid Unicode") from None
    for ch in value:
        if unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS:
            raise Invalid(f"{label}: control characters are not allowed")


def _uuid(value: str) -> str:
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        raise Invalid("id: must be a UUID") from None
    if str(parsed) != value.lower():
        raise Invalid("id: must be a UUID in canonical form")
    return str(parsed)


def _selector(selector) -> dict:
    if selector is None:
        return {}
    if not isinstance(selector, dict):
        raise Invalid("selector: must be an object")
    _reject_unknown(selector, set(SELECTOR_LIMITS) | {"type"}, "selector.")
    if selector.get("type") != SELECTOR_TYPE:
        raise Invalid(f"selector.type: must be {SELECTOR_TYPE!r}")
    fields = {name: _text(selector, name, *limit, where="selector.") for name, limit in SELECTOR_LIMITS.items()}
    if fields["exact"] == "":
        raise Invalid("selector.exact: must not be empty")
    return {name: value or "" for name, value in fields.items()}
