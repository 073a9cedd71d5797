"""Guards for claims the prose makes.

A chapter computes a number, writes a sentence about it, and guards the
sentence with ``check``; when a spec or a formula changes so that the sentence
is no longer true, the build fails instead of printing a falsehood.
"""

from __future__ import annotations


class ClaimError(AssertionError):
    """A claim made in the prose is no longer supported by the numbers."""


def check(condition: bool, message: str) -> None:
    """Raise ``ClaimError(message)`` unless ``condition`` is true.

    ``message`` should state the claim, e.g.
    ``check(ridge > 200, "the H100 ridge point is above 200 FLOP/byte")``.
    """
    if not isinstance(message, str) or not message:
        raise ValueError("check() needs a message that states the claim")
    if not condition:
        raise ClaimError(f"claim no longer holds: {message}")


def distinct(choices, what: str = "the predict choices"):
    """Return ``choices`` (a sequence of strings) unchanged if no two print the same.

    Every predict cell passes its choices through this, so that a change of
    input that makes two options read alike ("100 FLOP/s" twice) stops the
    build instead of offering the reader the same answer twice. Comparison
    ignores case and surrounding space.
    """
    items = list(choices)
    if len(items) < 2:
        raise ValueError(f"{what}: a choice needs at least two options, got {items!r}")
    seen: dict[str, str] = {}
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"{what}: every option must be non-empty text, got {item!r}")
        key = " ".join(item.split()).lower()
        if key in seen:
            raise ClaimError(f"claim no longer holds: {what} are distinct ({seen[key]!r} appears twice)")
        seen[key] = item
    return items
