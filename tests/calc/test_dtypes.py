import pytest

from calc.dtypes import DTYPES, size_bits, size_bytes, tensor_bytes


@pytest.mark.parametrize("dtype,size", [
    ("fp64", 8), ("fp32", 4), ("tf32", 4), ("fp16", 2), ("bf16", 2),
    ("fp8", 1), ("int8", 1), ("int4", 0.5),
])
def test_storage_size_of_each_format(dtype, size):
    assert size_bytes(dtype) == size


def test_tf32_moves_as_many_bytes_as_fp32():
    assert size_bytes("tf32") == size_bytes("fp32")


def test_int4_is_four_bits():
    assert size_bits("int4") == 4


def test_unknown_dtype_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown dtype 'fp12'; known: fp64, fp32"):
        size_bytes("fp12")


def test_tensor_bytes_rejects_negative_counts():
    with pytest.raises(ValueError):
        tensor_bytes(-1, "fp16")
    assert tensor_bytes(1000, "bf16") == 2000


def test_every_dtype_is_listed_once():
    assert len(DTYPES) == 8
