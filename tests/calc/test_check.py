import pytest

from calc.check import ClaimError, check


def test_true_claim_passes_silently():
    assert check(2 + 2 == 4, "arithmetic works") is None


def test_false_claim_raises_claim_error_with_the_claim():
    with pytest.raises(ClaimError, match="the H100 ridge point is above 1000"):
        check(295 > 1000, "the H100 ridge point is above 1000")


def test_claim_error_is_an_assertion_error():
    assert issubclass(ClaimError, AssertionError)


def test_a_claim_needs_a_message():
    with pytest.raises(ValueError):
        check(True, "")


def test_distinct_returns_the_choices_or_names_the_repeat():
    from calc.check import ClaimError, distinct
    assert distinct(["100 FLOP/s", "200 FLOP/s", "400 FLOP/s"]) == ["100 FLOP/s", "200 FLOP/s", "400 FLOP/s"]
    with pytest.raises(ClaimError, match="'100 FLOP/s' appears twice"):
        distinct(["100 FLOP/s", "100  FLOP/s ", "400 FLOP/s"])
    with pytest.raises(ValueError):
        distinct(["only one"])
    with pytest.raises(ValueError):
        distinct(["a", ""])
