import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc import fmt


def test_si_prefixes_match_prose_examples():
    assert fmt.si(1.979e15, "FLOP/s") == "1.98 PFLOP/s"
    assert fmt.si(3.35e12, "B/s") == "3.35 TB/s"
    assert fmt.si(2.5e-9, "s") == "2.50 ns"
    assert fmt.si(0, "W") == "0 W"


def test_si_rounding_moves_to_the_next_prefix():
    assert fmt.si(999.96e9, "FLOP/s") == "1.00 TFLOP/s"


def test_num_uses_separators_and_significant_figures():
    assert fmt.num(1979.0) == "1,980"
    assert fmt.num(1979.0, sig=4) == "1,979"
    assert fmt.num(295.3) == "295"
    assert fmt.num(1234567.0) == "1,230,000"


def test_about_rounds_integers_too():
    assert fmt.num(325, 1) == "325"          # num keeps an int exact...
    assert fmt.about(325) == "300"           # ...about rounds it for prose
    assert fmt.about(221184, 2) == "220,000"
    assert fmt.about(0.463) == "0.5"
    assert fmt.about(153) == "150" and fmt.about(0.0125) == "0.013"   # a leading 1 keeps two figures
    assert fmt.about(-153) == "-150" and fmt.about(0) == "0"
    with pytest.raises(ValueError):
        fmt.about(float("nan"))


def test_word_spells_small_counts_only():
    assert [fmt.word(n) for n in (0, 1, 4, 10)] == ["zero", "one", "four", "ten"]
    assert fmt.word(11) == "11" and fmt.word(4096) == "4,096" and fmt.word(-3) == "-3"
    assert fmt.word(3.0) == "three"
    with pytest.raises(ValueError):
        fmt.word(2.5)


def test_num_prints_integers_exactly():
    assert fmt.num(1024) == "1,024"
    assert fmt.num(2**31 - 1) == "2,147,483,647"


def test_small_values_keep_their_digits():
    assert fmt.num(0.000123456) == "0.000123"
    assert fmt.pct(1e-5) == "0.00100%"


def test_fixed_refuses_to_print_nonzero_as_zero():
    assert fmt.fixed(3.14159, 2) == "3.14"
    with pytest.raises(ValueError, match="would print as"):
        fmt.fixed(0.001, 2)


def test_bytes_decimal_and_binary_differ():
    assert fmt.bytes_si(80e9) == "80.0 GB"
    assert fmt.bytes_iec(80e9) == "74.5 GiB"
    assert fmt.bytes_iec(2**30) == "1.00 GiB"
    assert fmt.bytes_si(512) == "512 B"


def test_negative_byte_counts_are_rejected():
    with pytest.raises(ValueError):
        fmt.bytes_si(-1)


def test_ratios_and_percentages():
    assert fmt.times(3.21) == "3.2×"
    assert fmt.pct(0.5) == "50.0%"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values_cannot_enter_prose(bad):
    with pytest.raises(ValueError):
        fmt.num(bad)


@given(st.floats(min_value=1e-12, max_value=1e18, allow_nan=False))
def test_a_nonzero_value_never_prints_as_zero(x):
    for text in (fmt.num(x), fmt.si(x, "B"), fmt.pct(x)):
        digits = [c for c in text if c.isdigit()]
        assert any(c != "0" for c in digits), text


@given(st.floats(min_value=1e-9, max_value=1e15, allow_nan=False))
def test_num_is_within_rounding_of_the_value(x):
    shown = float(fmt.num(x).replace(",", ""))
    assert math.isclose(shown, x, rel_tol=5e-3)


def test_count_agrees_in_number():
    assert fmt.count(1, "FLOP") == "1 FLOP"
    assert fmt.count(2, "FLOP") == "2 FLOPs"
    assert fmt.count(1.0, "FLOP") == "1.00 FLOPs"
    assert fmt.count(1.0, "FLOP", text="1") == "1 FLOP"
    assert fmt.count(4096, "byte") == "4,096 bytes"
    assert fmt.count(1, "query", "queries") == "1 query" and fmt.count(3, "query", "queries") == "3 queries"


def test_long_durations_print_in_minutes_hours_days_and_years():
    assert fmt.duration(0.0123) == fmt.si(0.0123, "s") == "12.3 ms"
    assert fmt.duration(999.4) == "999 s"
    assert fmt.duration(999.96) == "16.7 min"          # rounds to 1.00 ks: past seconds
    assert fmt.duration(10_700) == "2.97 h"            # "10.7 ks" said nothing to a reader
    assert fmt.duration(5999) == "1.67 h"              # 99.98 min rounds to 100: hours
    assert fmt.duration(1e6) == "11.6 days"
    assert fmt.duration(344e6) == "10.9 years"
