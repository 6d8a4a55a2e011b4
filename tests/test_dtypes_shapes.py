"""DTypes and conversion rules; TensorShape (unknown dims and rank) and TensorSpec."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kilnflow as kf
from kilnflow import dtypes, errors
from kilnflow.shapes import TensorShape, TensorSpec, broadcast_shapes

ALL_DTYPES = list(dtypes.ALL)


# ---------------------------------------------------------------- DType table

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=[d.name for d in ALL_DTYPES])
def test_as_dtype_round_trips(dtype):
    assert kf.as_dtype(dtype) is dtype
    assert kf.as_dtype(dtype.name) is dtype
    assert kf.as_dtype(dtype.as_numpy_dtype) is dtype
    assert kf.as_dtype(np.dtype(dtype.as_numpy_dtype)) is dtype
    assert repr(dtype) == f"tf.{dtype.name}"
    assert dtype.base_dtype is dtype
    assert dtype.is_compatible_with(dtype.name)


def test_public_dtype_names_mirror_tf():
    for name in ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                 "uint16", "uint32", "uint64", "bool", "complex64", "complex128"]:
        assert getattr(kf, name).name == name
    assert kf.half is kf.float16 and kf.double is kf.float64
    assert kf.as_dtype("double") is kf.float64 and kf.as_dtype("half") is kf.float16


def test_as_dtype_of_python_types():
    assert kf.as_dtype(float) is kf.float32
    assert kf.as_dtype(int) is kf.int32
    assert kf.as_dtype(bool) is kf.bool
    assert kf.as_dtype(np.float64) is kf.float64


@pytest.mark.parametrize("bad", ["floaty", "string_thing"])
def test_as_dtype_rejects_unknown(bad):
    with pytest.raises(TypeError):
        kf.as_dtype(bad)


def test_object_arrays_hold_strings():
    assert kf.as_dtype(object) is kf.string  # as TF: np.object_ is tf.string


def test_dtype_properties():
    assert kf.float32.is_floating and not kf.float32.is_integer
    assert kf.int8.is_integer and not kf.int8.is_unsigned
    assert kf.uint16.is_unsigned and kf.uint16.is_integer
    assert kf.bool.is_bool and not kf.bool.is_numeric
    assert kf.complex64.is_complex and kf.complex64.real_dtype is kf.float32
    assert kf.complex128.real_dtype is kf.float64
    assert kf.float32.real_dtype is kf.float32
    assert kf.uint8.min == 0 and kf.uint8.max == 255
    assert kf.int32.min == -2 ** 31 and kf.int32.max == 2 ** 31 - 1
    assert kf.float32.max == np.finfo(np.float32).max
    assert kf.float64.size == 8 and kf.int16.size == 2


def test_dtypes_pickle_to_the_same_object():
    import pickle
    for d in ALL_DTYPES:
        assert pickle.loads(pickle.dumps(d)) is d


# ---------------------------------------------------------------- conversion rules

@pytest.mark.parametrize("value, dtype", [
    (1.5, kf.float32), (2, kf.int32), (True, kf.bool), ([1, 2], kf.int32),
    ([[1.0], [2.0]], kf.float32), ([1, 2.5], kf.float32), (2 ** 40, kf.int64),
    (1 + 2j, kf.complex128), ([True, False], kf.bool)])
def test_python_values_convert_like_tf(value, dtype):
    assert kf.constant(value).dtype is dtype
    assert kf.convert_to_tensor(value).dtype is dtype


@pytest.mark.parametrize("np_dtype", [np.float16, np.float64, np.int8, np.int64, np.uint8,
                                      np.uint32, np.bool_, np.complex64])
def test_ndarrays_keep_their_dtype(np_dtype):
    array = np.zeros((2,), np_dtype)
    assert kf.constant(array).dtype is kf.as_dtype(np_dtype)
    assert kf.convert_to_tensor(array).dtype is kf.as_dtype(np_dtype)
    assert kf.convert_to_tensor(array[0]).dtype is kf.as_dtype(np_dtype)  # NumPy scalars too


def test_constant_with_dtype_casts_exactly_or_raises():
    assert kf.constant(1, kf.float64).dtype is kf.float64
    assert kf.constant([1.0, 2.0], kf.int32).numpy().tolist() == [1, 2]
    with pytest.raises(TypeError):
        kf.constant(1.5, kf.int32)
    with pytest.raises(TypeError):
        kf.constant(300, kf.uint8)
    with pytest.raises(TypeError):
        kf.constant("text", kf.int32)  # strings are tf.string, never cast to numbers


def test_convert_to_tensor_with_conflicting_dtype():
    t = kf.constant([1, 2])
    assert kf.convert_to_tensor(t) is t
    with pytest.raises(ValueError):
        kf.convert_to_tensor(t, kf.float32)


def test_ragged_lists_are_rejected():
    with pytest.raises(ValueError):
        kf.constant([[1, 2], [3]])


@pytest.mark.parametrize("dtype", [kf.float64, kf.float16, kf.int64, kf.int8, kf.uint8])
def test_python_scalars_take_the_other_operands_dtype(dtype):
    t = kf.constant(np.array([1, 2], dtype.as_numpy_dtype))
    for result in (t + 1, 1 + t, t * 2, 3 - t if not dtype.is_unsigned else t - 1,
                   kf.add(t, 1), kf.maximum(2, t)):
        assert result.dtype is dtype
    if dtype.is_floating:
        assert (t + 0.5).dtype is dtype
        np.testing.assert_allclose((t + 0.5).numpy(), [1.5, 2.5])


def test_python_lists_take_the_other_operands_dtype():
    t = kf.constant([1.0, 2.0], kf.float64)
    assert (t + [1, 2]).dtype is kf.float64
    assert (t + [1, 2]).numpy().tolist() == [2.0, 4.0]


def test_int_tensor_plus_python_float_is_a_type_error():
    with pytest.raises(TypeError, match="1.5"):
        kf.constant([1, 2]) + 1.5
    with pytest.raises(TypeError):
        kf.multiply(kf.constant([1, 2]), 0.5)


def test_out_of_range_python_int_is_a_type_error():
    with pytest.raises(TypeError):
        kf.constant([1, 2], kf.uint8) + 300
    with pytest.raises(TypeError):
        kf.constant([1, 2], kf.int8) + 200


def test_tensors_of_different_dtypes_are_never_promoted():
    with pytest.raises(errors.InvalidArgumentError) as info:
        kf.add(kf.constant([1, 2]), kf.constant([1.0, 2.0]))
    message = str(info.value)
    for fragment in ("AddV2", "int32", "float32"):
        assert fragment in message
    with pytest.raises(errors.InvalidArgumentError):
        kf.constant(1.0) * kf.constant(1.0, kf.float64)
    with pytest.raises(errors.InvalidArgumentError):
        kf.constant([1], kf.int64) - kf.constant([1])


def test_integer_true_division_gives_floats_like_tf():
    assert (kf.constant([1, 2]) / kf.constant([2, 4])).dtype is kf.float64
    assert (kf.constant([1, 2], kf.int16) / 2).dtype is kf.float32
    np.testing.assert_allclose((kf.constant([1, 2]) / 4).numpy(), [0.25, 0.5])


# ---------------------------------------------------------------- TensorShape

def test_tensor_shape_basics():
    s = TensorShape([2, None, 3])
    assert s.rank == 3 and s.ndims == 3 and len(s) == 3
    assert s.as_list() == [2, None, 3] and s.dims == [2, None, 3]
    assert s[0] == 2 and s[1] is None and s[-1] == 3
    assert s[1:] == TensorShape([None, 3]) and isinstance(s[1:], TensorShape)
    assert list(s) == [2, None, 3]
    assert not s.is_fully_defined() and s.num_elements() is None
    assert TensorShape([2, 3]).num_elements() == 6 and TensorShape([]).num_elements() == 1
    assert repr(s) == "TensorShape([2, None, 3])"
    assert str(s) == "(2, None, 3)" and str(TensorShape([4])) == "(4,)"
    assert str(TensorShape([])) == "()"
    assert TensorShape(5) == TensorShape([5])
    assert TensorShape(TensorShape([1, 2])) == [1, 2]


def test_unknown_rank():
    s = TensorShape(None)
    assert s.rank is None and s.dims is None
    assert str(s) == "<unknown>" and repr(s) == "TensorShape(None)"
    assert not s.is_fully_defined() and s.num_elements() is None
    with pytest.raises(ValueError):
        s.as_list()
    with pytest.raises(ValueError):
        len(s)
    assert s[0] is None and s[1:] == TensorShape(None)
    assert s.with_rank(2) == TensorShape([None, None])
    assert TensorShape([1, 2]).with_rank(2) == [1, 2]
    with pytest.raises(ValueError):
        TensorShape([1, 2]).with_rank(3)


def test_tensor_shape_equality():
    assert TensorShape([None, 3]) == TensorShape([None, 3])
    assert TensorShape([1, 2]) == [1, 2] and TensorShape([1, 2]) == (1, 2)
    assert TensorShape([1, 2]) != [2, 1]
    assert TensorShape(None) == TensorShape(None)
    assert TensorShape(None) != TensorShape([None])
    assert TensorShape([]) != TensorShape(None)
    assert hash(TensorShape([1, None])) == hash(TensorShape([1, None]))
    assert TensorShape([1]) != "not a shape"


def test_tensor_shape_rejects_bad_dims():
    with pytest.raises(TypeError):
        TensorShape(["a"])
    with pytest.raises(ValueError):
        TensorShape([1.5])
    with pytest.raises(ValueError):
        TensorShape([-3])


def test_compatibility_and_merging():
    assert TensorShape([None, 400]).is_compatible_with([64, 400])
    assert not TensorShape([None, 400]).is_compatible_with([64, 401])
    assert not TensorShape([None]).is_compatible_with([1, 2])
    assert TensorShape(None).is_compatible_with([1, 2, 3])
    assert TensorShape([None, 3]).merge_with([2, None]) == [2, 3]
    assert TensorShape(None).merge_with([1]) == [1]
    assert TensorShape([1]).merge_with(TensorShape(None)) == [1]
    with pytest.raises(ValueError):
        TensorShape([2]).merge_with([3])
    with pytest.raises(ValueError):
        TensorShape([2]).merge_with([2, 1])


def test_concatenate():
    assert TensorShape([1, None]).concatenate([3]) == [1, None, 3]
    assert TensorShape([1]).concatenate(TensorShape(None)) == TensorShape(None)
    assert TensorShape(None).concatenate([1]).rank is None


def test_most_specific_common_supertype():
    a, b = TensorShape([2, 3]), TensorShape([4, 3])
    assert a.most_specific_common_supertype(b) == [None, 3]
    assert a.most_specific_common_supertype(TensorShape([2])) == TensorShape(None)


DIMS = st.one_of(st.none(), st.integers(0, 4))
SHAPES = st.one_of(st.none(), st.lists(DIMS, max_size=4))


@settings(max_examples=100, deadline=None)
@given(SHAPES, SHAPES)
def test_compatibility_is_symmetric_and_merge_refines_both(a, b):
    a, b = TensorShape(a), TensorShape(b)
    assert a.is_compatible_with(b) == b.is_compatible_with(a)
    if a.is_compatible_with(b):
        merged = a.merge_with(b)
        assert merged.is_compatible_with(a) and merged.is_compatible_with(b)
        assert merged == b.merge_with(a)
    else:
        with pytest.raises(ValueError):
            a.merge_with(b)


@settings(max_examples=100, deadline=None)
@given(SHAPES, SHAPES)
def test_concatenate_adds_ranks(a, b):
    out = TensorShape(a).concatenate(b)
    if a is None or b is None:
        assert out.rank is None
    else:
        assert out.as_list() == a + b


KNOWN = st.lists(st.integers(1, 3), max_size=3)


@settings(max_examples=100, deadline=None)
@given(KNOWN, KNOWN, st.data())
def test_broadcast_shapes_agree_with_numpy(a, b, data):
    try:
        expected = np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        with pytest.raises(ValueError):
            broadcast_shapes(TensorShape(a), TensorShape(b))
        return
    assert broadcast_shapes(TensorShape(a), TensorShape(b)).as_list() == list(expected)
    # Forgetting some dims keeps the answer compatible with the known one.
    hidden = [None if data.draw(st.booleans()) else d for d in a]
    assert broadcast_shapes(TensorShape(hidden), TensorShape(b)).is_compatible_with(expected)


# ---------------------------------------------------------------- TensorSpec

def test_tensor_spec():
    spec = TensorSpec([None, 400], "uint8")
    assert spec.shape == [None, 400] and spec.dtype is kf.uint8 and spec.name is None
    assert repr(spec) == "TensorSpec(shape=(None, 400), dtype=tf.uint8, name=None)"
    assert repr(TensorSpec([2], kf.float32, "x")) == \
        "TensorSpec(shape=(2,), dtype=tf.float32, name='x')"
    assert TensorSpec([1]).dtype is kf.float32
    assert kf.TensorSpec is TensorSpec


def test_tensor_spec_equality_and_hash():
    a = TensorSpec([None, 2], kf.float32)
    assert a == TensorSpec([None, 2], kf.float32)
    assert hash(a) == hash(TensorSpec([None, 2], "float32"))
    assert a != TensorSpec([None, 2], kf.float64)
    assert a != TensorSpec([None, 2], kf.float32, name="x")
    assert a != TensorSpec([1, 2], kf.float32)
    assert len({a, TensorSpec([None, 2]), TensorSpec([3, 2])}) == 2


def test_tensor_spec_compatibility_and_from_tensor():
    t = kf.constant([[1, 2], [3, 4]])
    spec = TensorSpec.from_tensor(t, name="t")
    assert spec == TensorSpec([2, 2], kf.int32, "t")
    assert TensorSpec([None, 2], kf.int32).is_compatible_with(t)
    assert not TensorSpec([None, 3], kf.int32).is_compatible_with(t)
    assert not TensorSpec([None, 2], kf.int64).is_compatible_with(t)
    assert TensorSpec(None, kf.int32).is_compatible_with(TensorSpec([7], kf.int32))


def test_dtype_str_and_repr_as_tf_prints_them():
    assert str(kf.float32) == "<dtype: 'float32'>"
    assert repr(kf.int64) == "tf.int64"
