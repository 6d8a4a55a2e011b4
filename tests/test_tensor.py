"""EagerTensor: immutability, Python operators against NumPy, TF strided-slice indexing,
iteration, NumPy interop, Python scalar conversions, hashing, and TF's printed forms."""
from __future__ import annotations

import copy
import operator
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kilnflow as kf
from kilnflow import errors

FAST = settings(max_examples=60, deadline=None)


# ---------------------------------------------------------------- basics, immutability

def test_properties():
    t = kf.constant([[1, 2, 3], [4, 5, 6]])
    assert t.shape == [2, 3] and isinstance(t.shape, kf.TensorShape)
    assert t.get_shape() == [2, 3] and t.ndim == 2
    assert t.dtype is kf.int32
    assert t.device.endswith("CPU:0")
    assert isinstance(t, kf.Tensor) and kf.is_tensor(t)
    assert not kf.is_tensor(np.ones(2)) and not kf.is_tensor(3)


@pytest.mark.parametrize("attr", ["name", "op", "graph"])
def test_graph_only_attributes_raise_eagerly(attr):
    with pytest.raises(AttributeError, match="eager"):
        getattr(kf.constant(1.0), attr)


def test_tensors_are_immutable():
    t = kf.constant([1, 2, 3])
    with pytest.raises(TypeError):
        t[0] = 5
    with pytest.raises(AttributeError):
        t.shape = (3,)
    with pytest.raises(AttributeError):
        t.anything = 1
    assert t.numpy().tolist() == [1, 2, 3]


def test_constant_copies_its_ndarray():
    source = np.array([1.0, 2.0])
    t = kf.constant(source)
    source[0] = 9.0
    assert t.numpy().tolist() == [1.0, 2.0]


def test_writing_to_numpy_result_leaves_tensor_unchanged():
    t = kf.constant([1, 2]) * 1
    t.numpy()[0] = 99
    assert t.numpy().tolist() == [1, 2]


def test_set_shape_checks_compatibility():
    t = kf.constant(np.zeros((2, 3)))
    t.set_shape([None, 3])
    with pytest.raises(ValueError):
        t.set_shape([3, None])


def test_copy_and_pickle():
    t = kf.constant([[1.5, 2.0]])
    assert copy.copy(t) is t and copy.deepcopy(t) is t
    restored = pickle.loads(pickle.dumps(t))
    assert restored.dtype is kf.float32 and restored.numpy().tolist() == [[1.5, 2.0]]


# ---------------------------------------------------------------- operators against NumPy

NUMERIC_DTYPES = st.sampled_from([np.int32, np.int64, np.float32, np.float64])


def _arrays(dtype, shape):
    if np.dtype(dtype).kind == "f":
        elements = st.floats(-10, 10, width=32)
    elif np.dtype(dtype).kind == "u":
        elements = st.integers(0, 40)
    else:
        elements = st.integers(-20, 20)
    return hnp.arrays(dtype, shape, elements=elements)


@st.composite
def operand_pairs(draw, dtypes=NUMERIC_DTYPES):
    """Two arrays of one dtype with broadcast-compatible shapes."""
    dtype = draw(dtypes)
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    return draw(_arrays(dtype, shapes.input_shapes[0])), draw(
        _arrays(dtype, shapes.input_shapes[1]))


def _check(result, expected):
    assert isinstance(result, kf.Tensor)
    expected = np.asarray(expected)
    got = result.numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, expected)


ARITHMETIC = [operator.add, operator.sub, operator.mul]
COMPARISONS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@FAST
@given(operand_pairs())
def test_arithmetic_and_comparison_operators_match_numpy(pair):
    a, b = pair
    x, y = kf.constant(a), kf.constant(b)
    for op in ARITHMETIC + COMPARISONS:
        _check(op(x, y), op(a, b))
    _check(-x, -a)
    _check(abs(x), np.abs(a))
    _check(+x, a)


@FAST
@given(operand_pairs(st.sampled_from([np.float32, np.float64])))
def test_true_division_matches_numpy(pair):
    a, b = pair
    b = np.where(b == 0, 1, b).astype(b.dtype)
    with np.errstate(all="ignore"):
        _check(kf.constant(a) / kf.constant(b), a / b)


@FAST
@given(operand_pairs())
def test_floor_division_and_modulo_match_python_semantics(pair):
    a, b = pair
    b = np.where(b == 0, 3, b).astype(b.dtype)
    x, y = kf.constant(a), kf.constant(b)
    with np.errstate(all="ignore"):
        _check(x // y, a // b)
        _check(x % y, a % b)


@FAST
@given(operand_pairs(st.sampled_from([np.int32, np.int64])), st.integers(0, 3))
def test_power_matches_numpy(pair, exponent):
    a, _ = pair
    x = kf.constant(a)
    _check(x ** exponent, a ** np.array(exponent, a.dtype))
    floats = kf.constant(np.abs(a).astype(np.float64) + 0.5)
    _check(floats ** 0.5, np.sqrt(np.abs(a).astype(np.float64) + 0.5))


@FAST
@given(operand_pairs(st.sampled_from([np.int32, np.int64, np.uint8])))
def test_bitwise_operators_match_numpy(pair):
    a, b = pair
    x, y = kf.constant(a), kf.constant(b)
    _check(x & y, a & b)
    _check(x | y, a | b)
    _check(x ^ y, a ^ b)
    _check(~x, ~a)


def test_logical_operators_on_bools():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    x, y = kf.constant(a), kf.constant(b)
    _check(x & y, a & b)
    _check(x | y, a | b)
    _check(x ^ y, a ^ b)
    _check(~x, ~a)
    _check(x & True, a & True)


def test_matmul_operator():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    _check(kf.constant(a) @ kf.constant(b), a @ b)
    _check(a @ kf.constant(b), a @ b)
    _check(kf.constant(a) @ b, a @ b)


def test_reflected_operators_with_python_scalars():
    x = kf.constant([1, 2, 4])
    _check(10 - x, np.array([9, 8, 6], np.int32))
    _check(2 * x, np.array([2, 4, 8], np.int32))
    _check(9 // x, np.array([9, 4, 2], np.int32))
    _check(9 % x, np.array([0, 1, 1], np.int32))
    _check(2 ** x, np.array([2, 4, 16], np.int32))
    _check(5 & x, np.array([1, 0, 4], np.int32))
    _check(1.0 / kf.constant([2.0, 4.0]), np.array([0.5, 0.25], np.float32))
    _check(x < 3, np.array([True, True, False]))
    _check(3 > x, np.array([True, True, False]))


def test_equality_with_none_and_unbroadcastable_shapes():
    x = kf.constant([1, 2])
    assert (x == None) is False  # noqa: E711 - the operator is what is tested
    assert (x != None) is True  # noqa: E711
    assert not bool(x == kf.constant([1, 2, 3]))


# ---------------------------------------------------------------- NumPy interop

def test_numpy_functions_on_tensors_return_ndarrays():
    t, u = kf.constant([1.0, 2.0]), kf.constant([3.0, 4.0])
    product = np.multiply(t, u)
    assert type(product) is np.ndarray and product.tolist() == [3.0, 8.0]
    assert np.asarray(t).dtype == np.float32
    assert np.array(t, dtype=np.float64).dtype == np.float64
    assert np.sum(t) == 3.0


def test_ndarrays_go_straight_into_ops():
    a = np.array([1.0, 2.0])
    result = kf.add(a, np.array([3.0, 4.0]))
    assert result.dtype is kf.float64 and result.numpy().tolist() == [4.0, 6.0]
    assert kf.reduce_sum(np.ones((2, 2), np.int32)).numpy() == 4
    assert (np.array([1, 2], np.int32) + kf.constant([3, 4])).numpy().tolist() == [4, 6]
    assert isinstance(np.array([1, 2], np.int32) + kf.constant([3, 4]), kf.Tensor)


def test_numpy_of_scalar_is_a_numpy_scalar():
    value = kf.constant(3.5).numpy()
    assert np.ndim(value) == 0 and value == 3.5 and value.dtype == np.float32


# ---------------------------------------------------------------- Python conversions

def test_scalar_conversions():
    assert bool(kf.constant(True)) is True and bool(kf.constant(0)) is False
    assert int(kf.constant(7)) == 7 and int(kf.constant(7.9)) == 7
    assert float(kf.constant(2)) == 2.0
    assert [10, 20, 30][kf.constant(2)] == 30
    assert operator.index(kf.constant(1, kf.int64)) == 1
    assert list(range(kf.constant(3))) == [0, 1, 2]
    assert f"{kf.constant(3.25):.1f}" == "3.2"


@pytest.mark.parametrize("convert, error", [(bool, ValueError), (int, TypeError),
                                            (float, TypeError)])
def test_non_scalar_conversions_raise_numpys_errors(convert, error):
    """As TF (which hands the conversion to NumPy): bool of many elements is a ValueError,
    int/float of anything but a 0-d tensor a TypeError; bool of a size-1 tensor works."""
    with pytest.raises(error):
        convert(kf.constant([[1, 2], [3, 4]]))
    assert bool(kf.constant([1])) is True
    with pytest.raises(TypeError):
        float(kf.constant([1.5]))


def test_float_tensor_is_not_an_index():
    with pytest.raises(TypeError):
        [1, 2][kf.constant(1.0)]


def test_len_and_iteration():
    t = kf.constant([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, kf.Tensor) for r in rows)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError):
        len(kf.constant(1))
    with pytest.raises(TypeError):
        iter(kf.constant(1))


def test_tensors_are_unhashable_but_refs_are_keys():
    t, u = kf.constant([1]), kf.constant([1])
    with pytest.raises(TypeError, match="ref"):
        hash(t)
    with pytest.raises(TypeError):
        {t: 1}
    table = {t.ref(): "t", u.ref(): "u"}
    assert table[t.ref()] == "t" and table[u.ref()] == "u"
    assert t.ref() == t.ref() and t.ref() != u.ref()
    assert t.ref().deref() is t


# ---------------------------------------------------------------- indexing

BASE = np.arange(24, dtype=np.int32).reshape(2, 3, 4)


@st.composite
def index_entries(draw):
    """A NumPy basic index for BASE (ints in range, slices, at most one Ellipsis, None)."""
    entries, dim, used_ellipsis = [], 0, False
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        if kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            entries.append(Ellipsis)
            dim = 3 - sum(1 for e in entries if e is not None and e is not Ellipsis)
            continue
        if kind == "none":
            entries.append(None)
            continue
        remaining = [i for i, e in enumerate(entries) if e is not None]
        if len(remaining) - used_ellipsis >= 3 or dim >= 3:
            break
        size = BASE.shape[dim] if not used_ellipsis else 4
        if kind == "int":
            entries.append(draw(st.integers(-size, size - 1)))
        else:
            bound = st.one_of(st.none(), st.integers(-6, 6))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
            entries.append(slice(draw(bound), draw(bound), step))
        dim += 1
    return tuple(entries)


@settings(max_examples=150, deadline=None)
@given(index_entries())
def test_getitem_matches_numpy_basic_indexing(index):
    try:
        expected = BASE[index]
    except IndexError:
        return  # the strategy can overshoot after an Ellipsis; those cases are not the point
    _check(kf.constant(BASE)[index], expected)


@pytest.mark.parametrize("index", [
    1, -1, (0, -2), (slice(1, None), slice(None, None, 2)), (slice(None, None, -1),),
    (Ellipsis, 1), (None, 0), (slice(None), None, slice(None, None, -2)),
    (Ellipsis, None), (1, Ellipsis, slice(1, 3)), (slice(5, 10),), (slice(-10, 1),)])
def test_getitem_examples(index):
    _check(kf.constant(BASE)[index], BASE[index])


def test_scalar_tensor_indices():
    x = kf.constant(BASE)
    _check(x[kf.constant(1)], BASE[1])
    _check(x[kf.constant(1, kf.int64), kf.constant(-1)], BASE[1, -1])
    _check(x[kf.constant(1):], BASE[1:])
    _check(x[:, kf.constant(0):kf.constant(3):kf.constant(2)], BASE[:, 0:3:2])
    _check(x[np.int64(1)], BASE[1])


@pytest.mark.parametrize("index", [2, -3, (0, 3), (0, 0, 0, 0)])
def test_out_of_range_indices_raise_invalid_argument(index):
    with pytest.raises(errors.InvalidArgumentError, match="StridedSlice"):
        kf.constant(BASE)[index]


@pytest.mark.parametrize("index", [1.5, "a", [0, 1]])
def test_bad_index_types_raise_type_error(index):
    with pytest.raises(TypeError):
        kf.constant(BASE)[index]


def test_two_ellipses_are_rejected_clearly():
    with pytest.raises(ValueError, match="(?i)ellips"):
        kf.constant(BASE)[..., ..., 1]


def test_zero_step_is_rejected():
    with pytest.raises(ValueError):
        kf.constant(BASE)[::0]


# ---------------------------------------------------------------- printed forms

def test_repr_matches_tf():
    assert repr(kf.constant([1.0, 2.0])) == \
        "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert repr(kf.constant([[1, 2], [3, 4]])) == (
        "<tf.Tensor: shape=(2, 2), dtype=int32, numpy=\n"
        "array([[1, 2],\n"
        "       [3, 4]], dtype=int32)>")
    assert repr(kf.constant(3.5)) == "<tf.Tensor: shape=(), dtype=float32, numpy=3.5>"
    assert repr(kf.constant(3)) == "<tf.Tensor: shape=(), dtype=int32, numpy=3>"
    assert repr(kf.constant(True)) == "<tf.Tensor: shape=(), dtype=bool, numpy=True>"
    assert repr(kf.constant([1.0, 2.0], kf.float64)) == \
        "<tf.Tensor: shape=(2,), dtype=float64, numpy=array([1., 2.])>"


def test_str_matches_tf():
    assert str(kf.constant([[2, 3], [4, 5]])) == \
        "tf.Tensor(\n[[2 3]\n [4 5]], shape=(2, 2), dtype=int32)"
    assert str(kf.constant([1.5, 2.0])) == "tf.Tensor([1.5 2. ], shape=(2,), dtype=float32)"
    assert str(kf.constant(3.0)) == "tf.Tensor(3.0, shape=(), dtype=float32)"
    assert str(kf.constant(True)) == "tf.Tensor(True, shape=(), dtype=bool)"
    assert str(kf.constant(7)) == "tf.Tensor(7, shape=(), dtype=int32)"
    assert str(kf.constant([[2, 3], [4, 5]]) + 0) == \
        "tf.Tensor(\n[[2 3]\n [4 5]], shape=(2, 2), dtype=int32)"


def test_numpy_views_of_tensors_and_variables_are_read_only():
    t = kf.constant([1.0, 2.0])
    view = np.asarray(t)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 5.0
    assert t.numpy().tolist() == [1.0, 2.0]
    assert np.shares_memory(view, t._value)  # zero-copy
    v = kf.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        np.asarray(v)[0] = 5.0
    writable = np.array(t)  # an explicit copy stays writable
    writable[0] = 3.0
    assert t.numpy().tolist() == [1.0, 2.0]


def test_version_names():
    assert kf.__version__ == kf.version.VERSION
    assert isinstance(kf.version.GIT_VERSION, str) and kf.version.COMPILER_VERSION
