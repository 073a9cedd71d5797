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
