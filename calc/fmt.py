"""Numbers into prose.

Rules every function here follows:

- significant figures, not fixed decimals, so a non-zero value never prints as
  "0" (``0.00012`` becomes ``"0.000120"``, never ``"0.00"``);
- thousands separators in the integer part (``"1,979"``);
- ``int`` arguments are exact counts and print exactly (``num(1024)`` is
  ``"1,024"``); ``float`` arguments are rounded to ``sig`` figures;
- NaN and infinities raise ValueError: a sentence cannot use them.
"""

from __future__ import annotations

import math

_SI_PREFIXES = [
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
    (1e-15, "f"),
]

_SI_BYTES = ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
_IEC_BYTES = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def _finite(x: float) -> float:
    if isinstance(x, bool):
        raise ValueError("expected a number, got a bool")
    if not math.isfinite(x):
        raise ValueError(f"cannot put {x!r} into prose")
    return x


def round_sig(x: float, sig: int = 3) -> float:
    """``x`` rounded to ``sig`` significant figures (0 stays 0)."""
    _finite(x)
    if sig < 1:
        raise ValueError(f"sig must be >= 1, got {sig}")
    if x == 0:
        return 0.0
    exponent = math.floor(math.log10(abs(x)))
    return round(x, sig - 1 - exponent)


def _decimals_for(x: float, sig: int) -> int:
    """Digits after the point needed to show ``x`` (already rounded) to ``sig`` figures."""
    if x == 0:
        return 0
    exponent = math.floor(math.log10(abs(x)))
    return max(0, sig - 1 - exponent)


def num(x: float, sig: int = 3) -> str:
    """``x`` with thousands separators: ints exactly, floats to ``sig`` figures.

    >>> num(1979.0), num(0.000123456), num(4096)
    ('1,980', '0.000123', '4,096')
    """
    _finite(x)
    if isinstance(x, int):
        return f"{x:,}"
    r = round_sig(x, sig)
    text = f"{r:,.{_decimals_for(r, sig)}f}"
    if r != 0 and float(text.replace(",", "")) == 0:  # pragma: no cover - guard
        raise ValueError(f"{x!r} would print as zero")
    return text


def about(x: float, sig: int = 1) -> str:
    """A round value for prose, after "about": ``x`` to ``sig`` significant figures, integers
    included (``num`` prints those exactly). One figure is too coarse when the leading digit is 1
    (153 would read "200"), so such values keep two. Exact values belong in tables and widgets.

    >>> about(325), about(295.5), about(153), about(221184, 2)
    ('300', '300', '150', '220,000')
    """
    _finite(x)
    x = float(x)
    if sig == 1 and x != 0 and f"{abs(x):e}".startswith("1"):
        sig = 2
    return num(x, sig)


_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def word(n: int) -> str:
    """A small exact count as prose writes it: zero to ten in words, larger counts as ``num``
    prints them ("four warps", "32 lanes"). A float is accepted only when it is a whole number.

    >>> word(4), word(10), word(32), word(4096), word(2.0)
    ('four', 'ten', '32', '4,096', 'two')
    """
    _finite(n)
    if isinstance(n, float):
        if not n.is_integer():
            raise ValueError(f"word() is for whole counts, got {n!r}; use about() or num()")
        n = int(n)
    return _WORDS[n] if 0 <= n < len(_WORDS) else num(n)


def fixed(x: float, decimals: int) -> str:
    """``x`` with a fixed number of decimals; raises if a non-zero ``x`` would read "0".

    >>> fixed(3.14159, 2)
    '3.14'
    """
    _finite(x)
    text = f"{x:,.{decimals}f}"
    if x != 0 and float(text.replace(",", "")) == 0:
        raise ValueError(
            f"{x!r} would print as {text!r} with {decimals} decimals; "
            "use num() or more decimals"
        )
    return text


def si(x: float, unit: str, sig: int = 3) -> str:
    """``x`` with an SI prefix: ``si(1.979e15, 'FLOP/s') == '1.98 PFLOP/s'``.

    The prefix is chosen after rounding, so 999.96e9 prints as '1.00 T...'.
    """
    _finite(x)
    if x == 0:
        return f"0 {unit}"
    r = round_sig(float(x), sig)
    for scale, prefix in _SI_PREFIXES:
        if abs(r) >= scale * (1 - 1e-12):
            m = round_sig(r / scale, sig)
            return f"{num(m, sig)} {prefix}{unit}"
    scale, prefix = _SI_PREFIXES[-1]
    return f"{num(r / scale, sig)} {prefix}{unit}"


# Units for long times, each used while the rounded value is under its limit, then the next.
_DURATIONS = [(60.0, "min", 100), (3600.0, "h", 48), (86400.0, "day", 730), (365.25 * 86400, "year", math.inf)]


def duration(seconds: float, sig: int = 3) -> str:
    """A time: under 1,000 s with an SI prefix, as ``si`` prints it (``duration(0.0123) == '12.3 ms'``);
    longer, in minutes under 100, hours under 48, days under 730, else years (Julian):
    ``duration(10_700) == '2.97 h'``, ``duration(1e6) == '11.6 days'``.
    """
    _finite(seconds)
    x = float(seconds)
    if abs(round_sig(x, sig)) < 1000:
        return si(x, "s", sig)
    for scale, unit, limit in _DURATIONS:
        v = round_sig(x / scale, sig)
        if abs(v) < limit:
            return count(v, unit, sig=sig) if unit in ("day", "year") else f"{num(v, sig)} {unit}"
    raise AssertionError("unreachable: the last unit has no limit")


def _bytes(n: float, base: int, names: list[str], sig: int) -> str:
    _finite(n)
    if n < 0:
        raise ValueError(f"a byte count cannot be negative, got {n}")
    if n < base:
        return f"{num(n if isinstance(n, int) else float(n), sig)} B"
    value, i = float(n), 0
    while i < len(names) - 1 and (value >= base or round_sig(value, sig) >= base):
        value /= base
        i += 1
    return f"{num(value, sig)} {names[i]}"


def bytes_si(n: float, sig: int = 3) -> str:
    """Decimal byte units (kB = 1000 B, GB = 1e9 B): ``bytes_si(80e9) == '80.0 GB'``."""
    return _bytes(n, 1000, _SI_BYTES, sig)


def bytes_iec(n: float, sig: int = 3) -> str:
    """Binary byte units (KiB = 1024 B, GiB = 2**30 B): ``bytes_iec(2**30) == '1.00 GiB'``."""
    return _bytes(n, 1024, _IEC_BYTES, sig)


def pct(x: float, sig: int = 3) -> str:
    """A fraction as a percentage: ``pct(0.5) == '50.0%'``, ``pct(1e-5) == '0.00100%'``."""
    _finite(x)
    return f"{num(float(x) * 100, sig)}%"


def times(x: float, sig: int = 2) -> str:
    """A ratio: ``times(3.21) == '3.2×'``."""
    _finite(x)
    return f"{num(float(x), sig)}×"


def unit_word(value_text: str, singular: str, plural: str = "") -> str:
    """The unit in agreement with the printed number: singular only for exactly "1"."""
    return singular if value_text.strip() in ("1", "−1", "-1") else (plural or singular + "s")


def count(x: float, singular: str, plural: str = "", sig: int = 3, text: str = "") -> str:
    """A number and its unit in agreement: ``count(1, "FLOP") == "1 FLOP"``,
    ``count(2, "FLOP") == "2 FLOPs"``, ``count(4096, "byte") == "4,096 bytes"``.

    The number prints as ``num(x, sig)`` unless ``text`` gives its printed form;
    the unit is singular only when that text is exactly "1" ("1.00 FLOPs").
    """
    shown = text or num(x, sig)
    return f"{shown} {unit_word(shown, singular, plural)}"
