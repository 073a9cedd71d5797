"""Settings from command-line flags, falling back to environment variables, then defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_DB = "sqlite:///feedback.db"
DEFAULT_RATE_LIMIT = "20/60"  # a burst of 20, then one every 3 s, per client address


@dataclass(frozen=True)
class Config:
    db: str = DEFAULT_DB
    allow_origins: tuple[str, ...] = ()
    rate_limit: str = DEFAULT_RATE_LIMIT
    review_token: str | None = None
    sqlite_synchronous: str = "FULL"  # NORMAL survives a killed process but not a power cut

    @classmethod
    def load(cls, environ=None, **flags) -> "Config":
        """``flags`` that are None fall back to FEEDBACK_DB, FEEDBACK_ALLOW_ORIGINS (comma-separated),
        FEEDBACK_RATE_LIMIT, FEEDBACK_REVIEW_TOKEN and FEEDBACK_SQLITE_SYNCHRONOUS."""
        env = os.environ if environ is None else environ
        origins = flags.get("allow_origins") or _split(env.get("FEEDBACK_ALLOW_ORIGINS", ""))
        sync = (flags.get("sqlite_synchronous") or env.get("FEEDBACK_SQLITE_SYNCHRONOUS") or "FULL").upper()
        if sync not in ("FULL", "NORMAL"):
            raise ValueError("FEEDBACK_SQLITE_SYNCHRONOUS must be FULL or NORMAL")
        return cls(
            db=flags.get("db") or env.get("FEEDBACK_DB") or DEFAULT_DB,
            allow_origins=tuple(origins),
            rate_limit=flags.get("rate_limit") or env.get("FEEDBACK_RATE_LIMIT") or DEFAULT_RATE_LIMIT,
            review_token=flags.get("review_token") or env.get("FEEDBACK_REVIEW_TOKEN") or None,
            sqlite_synchronous=sync,
        )


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]
