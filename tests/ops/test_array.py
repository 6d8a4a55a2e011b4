"""Array ops (kilnflow/ops/array.py): values against NumPy, gradients against central finite
differences in float64 (first and second order), bad inputs raising TF's error classes with
the op or argument named, and indexing with symbolic tensors inside @kf.function.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import array as A
from kilnflow.ops import reshaping as R
from kilnflow.ops import slicing as SL
from kilnflow.ops import sorting as SO
from kilnflow.shapes import TensorSpec

FAST = settings(max_examples=25, deadline=None)
SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + 7 * len(shape)).standard_normal(shape)


def _outputs(result: Any) -> list:
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _float_outputs(result: Any) -> list:
    return [t for t in _outputs(result) if t.dtype.is_floating]


# ---------------------------------------------------------------- gradient checking

def numeric_grad(f: Callable, arrays: list, weights: list, wrt: tuple,
                 eps: float = 1e-6) -> list:
    """Central differences of sum_k <weights[k], f(*arrays)[k]> w.r.t. arrays[i], i in wrt."""
    def loss(xs: list) -> float:
        outs = _float_outputs(f(*[kf.constant(x) for x in xs]))
        return float(sum(np.sum(w * o.numpy()) for w, o in zip(weights, outs)))

    grads = []
    for i in wrt:
        g = np.zeros_like(arrays[i])
        for index in np.ndindex(arrays[i].shape):
            up = [a.copy() for a in arrays]
            down = [a.copy() for a in arrays]
            up[i][index] += eps
            down[i][index] -= eps
            g[index] = (loss(up) - loss(down)) / (2 * eps)
        grads.append(g)
    return grads


def tape_grad(f: Callable, arrays: list, weights: list, wrt: tuple) -> list:
    tensors = [kf.constant(a) for a in arrays]
    sources = [tensors[i] for i in wrt]
    with kf.GradientTape() as tape:
        tape.watch(sources)
        outs = _float_outputs(f(*tensors))
    return tape.gradient(outs, sources, output_gradients=[kf.constant(w) for w in weights],
                         unconnected_gradients=kf.UnconnectedGradients.ZERO)


def check_grad(f: Callable, *arrays: Any, seed: int = 3) -> None:
    """The tape gradient of f (weighted by random output weights) equals finite differences
    for every float64 input."""
    arrays = [np.array(a) for a in arrays]
    wrt = tuple(i for i, a in enumerate(arrays) if a.dtype == np.float64)
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(o.shape.as_list())
               for o in _float_outputs(f(*[kf.constant(a) for a in arrays]))]
    got = tape_grad(f, arrays, weights, wrt)
    want = numeric_grad(f, arrays, weights, wrt)
    for i, g, w in zip(wrt, got, want):
        assert g.shape == w.shape, (i, g.shape, w.shape)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-6, atol=1e-7, err_msg=f"input {i}")


GRAD_CASES = {
    "identity": (kf.identity, rand(2, 3)),
    "reshape": (lambda x: kf.reshape(x, [3, -1]), rand(2, 3, 2)),
    "broadcast_to": (lambda x: kf.broadcast_to(x, [2, 3, 4]), rand(3, 1)),
    "expand_dims": (lambda x: kf.expand_dims(x, -2), rand(2, 3)),
    "squeeze_all": (R.squeeze, rand(1, 3, 1)),
    "squeeze_axis": (lambda x: R.squeeze(x, [-1]), rand(1, 3, 1)),
    "transpose": (lambda x: kf.transpose(x, [2, 0, 1]), rand(2, 3, 4)),
    "fill_value": (lambda v: kf.fill([2, 3], v), rand()),
    "tile": (lambda x: R.tile(x, [2, 1, 3]), rand(2, 3, 1)),
    "tile_zero": (lambda x: R.tile(x, [0, 2]), rand(2, 3)),
    "pad_constant": (lambda x: R.pad(x, [[1, 2], [0, 1]], constant_values=3.0), rand(2, 3)),
    "pad_reflect": (lambda x: R.pad(x, [[2, 1], [1, 2]], "REFLECT"), rand(3, 4)),
    "pad_symmetric": (lambda x: R.pad(x, [[2, 0], [3, 1]], "symmetric"), rand(2, 3)),
    "reverse": (lambda x: R.reverse(x, [0, -1]), rand(2, 3, 2)),
    "concat": (lambda x, y, z: kf.concat([x, y, z], 1), rand(2, 1), rand(2, 3), rand(2, 2)),
    "stack": (lambda x, y: kf.stack([x, y], axis=-1), rand(2, 3), rand(2, 3)),
    "unstack": (lambda x: kf.unstack(x, axis=1), rand(2, 3)),
    "split": (lambda x: kf.split(x, [1, -1], axis=1), rand(2, 4)),
    "slice": (lambda x: SL.slice(x, [1, 0], [1, -1]), rand(3, 4)),
    "getitem": (lambda x: x[1:, ::-2, None, 0], rand(3, 4, 2)),
    "getitem_int": (lambda x: x[-1, ..., 1], rand(3, 4, 2)),
    "gather_repeats": (lambda p: kf.gather(p, [2, 0, 2]), rand(3, 2)),
    "gather_axis1": (lambda p: kf.gather(p, [[1], [1]], axis=1), rand(2, 3)),
    "where": (lambda x, y: kf.where([[True], [False]], x, y), rand(2, 3), rand(3)),
    "sort": (lambda x: SO.sort(x, axis=0), rand(4, 3)),
    "sort_descending": (lambda x: SO.sort(x, direction="DESCENDING"), rand(2, 5)),
    "top_k": (lambda x: SO.top_k(x, k=2), rand(3, 4)),
    "linspace": (lambda a, b: A.linspace(a, b, 4, axis=-1), rand(2, 1), rand(3)),
    "boolean_mask": (lambda x: SL.boolean_mask(x, [[True, False], [True, True]], axis=1),
                     rand(3, 2, 2)),
    "meshgrid": (lambda x, y: SL.meshgrid(x, y), rand(3), rand(2)),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradient_matches_finite_differences(case):
    f, *arrays = GRAD_CASES[case]
    check_grad(f, *arrays)


SECOND_ORDER = ["gather_repeats", "getitem", "pad_reflect", "tile", "sort", "top_k"]


@pytest.mark.parametrize("case", SECOND_ORDER)
def test_second_order_gradient(case):
    """d/dx <grad_x sum(w * f(x)**3), v> from nested tapes against finite differences."""
    f, x = GRAD_CASES[case]
    rng = np.random.default_rng(5)
    w = [rng.standard_normal(o.shape.as_list()) for o in _float_outputs(f(kf.constant(x)))]
    v = rng.standard_normal(x.shape)

    def first_order(t: Any) -> Any:
        with kf.GradientTape() as inner:
            inner.watch(t)
            cubes = [kf.reduce_sum(o ** 3 * wk) for o, wk in zip(_float_outputs(f(t)), w)]
            loss = kf.add_n(cubes)
        return inner.gradient(loss, t)

    t = kf.constant(x)
    with kf.GradientTape() as outer:
        outer.watch(t)
        dot = kf.reduce_sum(first_order(t) * v)
    got = outer.gradient(dot, t).numpy()
    want = numeric_grad(lambda s: first_order(s) * v, [x], [np.ones(x.shape)], (0,), 1e-5)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_not_differentiable_ops_give_no_gradient():
    on = kf.constant(2.0)
    x = kf.constant([3.0, 1.0, 2.0])
    with kf.GradientTape(persistent=True) as tape:
        tape.watch([on, x])
        hot = A.one_hot([0, 2], 3, on_value=on, off_value=0.0)
        order = kf.cast(SO.argsort(x), kf.float32)
    assert tape.gradient(hot, on) is None
    assert tape.gradient(order, x) is None


# ---------------------------------------------------------------- values against NumPy

@FAST
@given(hnp.arrays(np.float32, SHAPES), st.data())
def test_reshape_transpose_reverse_expand_squeeze(x, data):
    t = kf.constant(x)
    rank = x.ndim
    np.testing.assert_array_equal(kf.reshape(t, [-1]).numpy(), x.reshape(-1))
    perm = data.draw(st.permutations(list(range(rank))))
    np.testing.assert_array_equal(kf.transpose(t, perm).numpy(), np.transpose(x, perm))
    np.testing.assert_array_equal(kf.transpose(t).numpy(), x.T)
    axes = data.draw(st.lists(st.integers(0, max(rank - 1, 0)), unique=True)) if rank else []
    np.testing.assert_array_equal(R.reverse(t, axes).numpy(), np.flip(x, axes))
    axis = data.draw(st.integers(-rank - 1, rank))
    expanded = kf.expand_dims(t, axis)
    np.testing.assert_array_equal(expanded.numpy(), np.expand_dims(x, axis))
    np.testing.assert_array_equal(R.squeeze(expanded, axis).numpy(), x)
    np.testing.assert_array_equal(R.squeeze(expanded).numpy(), np.squeeze(x[None]))
    assert kf.shape(t).numpy().tolist() == list(x.shape)
    assert int(kf.size(t)) == x.size and int(kf.rank(t)) == rank


@FAST
@given(hnp.arrays(np.int32, SHAPES, elements=st.integers(-9, 9)), st.data())
def test_tile_and_pad(x, data):
    multiples = data.draw(st.lists(st.integers(0, 3), min_size=x.ndim, max_size=x.ndim))
    np.testing.assert_array_equal(R.tile(x, multiples).numpy(), np.tile(x, multiples))
    pads = data.draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)),
                              min_size=x.ndim, max_size=x.ndim))
    pads_np = np.array(pads, np.int64).reshape(-1, 2)

    def np_pad(*args: Any, **kwargs: Any) -> np.ndarray:
        return np.pad(x, pads_np, *args, **kwargs) if x.ndim else x  # np.pad rejects 0-d

    np.testing.assert_array_equal(R.pad(x, pads_np, constant_values=-5).numpy(),
                                  np_pad(constant_values=-5))
    if all(b <= d and a <= d for (b, a), d in zip(pads, x.shape)):
        np.testing.assert_array_equal(R.pad(x, pads_np, "SYMMETRIC").numpy(),
                                      np_pad("symmetric"))
    if all(b < d and a < d for (b, a), d in zip(pads, x.shape)):
        np.testing.assert_array_equal(R.pad(x, pads_np, "REFLECT").numpy(), np_pad("reflect"))


@FAST
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=4, max_side=4)),
       st.data())
def test_getitem_basic_indices(x, data):
    index = data.draw(hnp.basic_indices(x.shape, allow_newaxis=True))
    np.testing.assert_array_equal(kf.constant(x)[index].numpy(), x[index])


@FAST
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.integers(-5, 5)), st.data())
def test_gather_slice_split_unstack(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    indices = data.draw(hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=2,
                                                              min_side=0, max_side=3),
                                   elements=st.integers(0, max(n - 1, 0))))
    if n:
        np.testing.assert_array_equal(kf.gather(x, indices, axis=axis).numpy(),
                                      np.take(x, indices, axis))
    begin = [data.draw(st.integers(0, d)) for d in x.shape]
    sizes = [data.draw(st.sampled_from([-1, d - b])) for b, d in zip(begin, x.shape)]
    want = x[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, sizes))]
    np.testing.assert_array_equal(SL.slice(x, begin, sizes).numpy(), want)
    cut = data.draw(st.integers(0, n))
    pieces = kf.split(x, [cut, n - cut], axis=axis)
    for got, ref in zip(pieces, np.split(x, [cut], axis)):
        np.testing.assert_array_equal(got.numpy(), ref)
    for got, ref in zip(kf.unstack(x, axis=axis), np.moveaxis(x, axis, 0)):
        np.testing.assert_array_equal(got.numpy(), ref)
    stacked = kf.stack(kf.unstack(x, axis=axis), axis=axis) if n else None
    if n:
        np.testing.assert_array_equal(stacked.numpy(), x)
    np.testing.assert_array_equal(kf.concat([x, x[:1]], 0).numpy(),
                                  np.concatenate([x, x[:1]], 0))


@FAST
@given(hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
                  elements=st.integers(-2, 6)), st.integers(0, 5), st.data())
def test_one_hot(indices, depth, data):
    axis = data.draw(st.sampled_from([-1] + list(range(indices.ndim + 1))))
    out = A.one_hot(indices, depth, on_value=7, off_value=-1, axis=axis)
    want = np.where(indices[..., None] == np.arange(depth), 7, -1)
    want = np.moveaxis(want, -1, axis if axis != -1 else indices.ndim)
    assert out.dtype is kf.int32
    np.testing.assert_array_equal(out.numpy(), want)
    assert A.one_hot(indices, depth).dtype is kf.float32
    assert A.one_hot(indices, depth, dtype=kf.float64).dtype is kf.float64


@FAST
@given(hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.integers(-3, 3)), st.data())
def test_sort_argsort_top_k_with_ties(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    ascending = np.argsort(x, axis=axis, kind="stable")
    descending = np.argsort(-x, axis=axis, kind="stable")  # ties keep their order
    np.testing.assert_array_equal(SO.argsort(x, axis).numpy(), ascending)
    np.testing.assert_array_equal(SO.argsort(x, axis, "DESCENDING").numpy(), descending)
    np.testing.assert_array_equal(SO.sort(x, axis).numpy(), np.sort(x, axis))
    np.testing.assert_array_equal(SO.sort(x, axis, "DESCENDING").numpy(),
                                  np.take_along_axis(x, descending, axis))
    k = data.draw(st.integers(0, x.shape[-1]))
    values, indices = SO.top_k(x, k)
    last = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    np.testing.assert_array_equal(indices.numpy(), last)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, last, -1))
    assert indices.dtype is kf.int32
    assert SO.top_k(x, k, index_type=kf.int64)[1].dtype is kf.int64


def test_sort_float_and_unsigned():
    x = np.array([[0.5, -2.0, 3.0], [1.0, 1.0, -1.0]], np.float32)
    np.testing.assert_array_equal(SO.sort(x, direction="DESCENDING").numpy(), -np.sort(-x))
    u = np.array([3, 250, 0, 7], np.uint8)  # descending must not rely on negation
    np.testing.assert_array_equal(SO.sort(u, direction="DESCENDING").numpy(), [250, 7, 3, 0])


@FAST
@given(st.floats(-5, 5), st.floats(-5, 5), st.integers(0, 6))
def test_linspace(start, stop, num):
    got = A.linspace(kf.constant(start, kf.float64), stop, num).numpy()
    np.testing.assert_allclose(got, np.linspace(start, stop, num), rtol=1e-12, atol=1e-12)


def test_linspace_batched_and_dtype():
    start, stop = np.array([0.0, 1.0], np.float32), np.array([[2.0], [4.0]], np.float32)
    got = A.linspace(start, stop, 3, axis=1)
    np.testing.assert_allclose(got.numpy(), np.linspace(start, stop, 3, axis=1))
    assert got.dtype is kf.float32 and got.shape == [2, 3, 2]
    # TF: integer ends give float64 (tests/corpus/programs/tensor_ops_battery.py)
    assert A.linspace(0, 1, 3).dtype is kf.float64
    assert A.linspace(kf.constant(0), 1, 3).numpy().tolist() == [0.0, 0.5, 1.0]


@pytest.mark.parametrize("rows, columns, batch, dtype", [
    (3, None, None, kf.float32), (2, 4, [2], kf.int32), (0, 2, [1, 2], kf.float64),
    (kf.constant(2), kf.constant(1), kf.constant([3]), kf.bool)])
def test_eye(rows, columns, batch, dtype):
    got = A.eye(rows, columns, batch_shape=batch, dtype=dtype)
    r = int(rows)
    c = r if columns is None else int(columns)
    b = [] if batch is None else list(np.asarray(batch))
    want = np.broadcast_to(np.eye(r, c, dtype=dtype.as_numpy_dtype), b + [r, c])
    assert got.dtype is dtype
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("args, dtype, want", [
    ((5,), None, np.arange(5, dtype=np.int32)),
    ((1, 2, 0.25), None, np.arange(1, 2, 0.25, dtype=np.float32)),
    ((kf.constant(4, kf.int64),), None, np.arange(4, dtype=np.int64)),
    ((kf.constant(1), kf.constant(4.0, kf.float64)), None, np.arange(1.0, 4.0)),
    ((5,), kf.float32, np.arange(5, dtype=np.float32)),
    ((3, 3), None, np.zeros(0, np.int32)),
    ((10, 1, -3), None, np.arange(10, 1, -3, dtype=np.int32)),
])
def test_range(args, dtype, want):
    got = kf.range(*args, dtype=dtype)
    assert got.dtype.as_numpy_dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)


def test_fill_zeros_ones():
    np.testing.assert_array_equal(kf.zeros(kf.TensorShape([2, 3])).numpy(), np.zeros((2, 3)))
    assert kf.zeros(3, kf.int64).dtype is kf.int64
    np.testing.assert_array_equal(kf.ones(kf.constant([2, 1]), kf.bool).numpy(),
                                  np.ones((2, 1), bool))
    np.testing.assert_array_equal(kf.ones(np.array([2])).numpy(), [1.0, 1.0])
    assert kf.zeros([]).shape == [] and kf.zeros([0, 2]).shape == [0, 2]
    np.testing.assert_array_equal(kf.fill([2], 7).numpy(), [7, 7])
    np.testing.assert_array_equal(kf.fill([1, 2], kf.constant(1.5)).numpy(), [[1.5, 1.5]])
    x = kf.constant([[1, 2]], kf.int64)
    assert kf.zeros_like(x).dtype is kf.int64 and kf.ones_like(x, kf.float32).dtype is kf.float32


def test_where_both_forms():
    c = np.array([[True, False, True]])
    x, y = rand(2, 3), rand(3)
    np.testing.assert_array_equal(kf.where(c, x, y).numpy(), np.where(c, x, y))
    np.testing.assert_array_equal(kf.where(c).numpy(), np.argwhere(c))
    np.testing.assert_array_equal(kf.where([0, 3, 0, 1]).numpy(), [[1], [3]])


@FAST
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=3)),
       st.data())
def test_boolean_mask(x, data):
    axis = data.draw(st.integers(0, x.ndim - 1))
    k = data.draw(st.integers(1, x.ndim - axis))
    mask = data.draw(hnp.arrays(np.bool_, x.shape[axis:axis + k]))
    got = SL.boolean_mask(x, mask, axis=axis)
    flat = x.reshape(x.shape[:axis] + (-1,) + x.shape[axis + k:])
    want = np.compress(mask.reshape(-1), flat, axis=axis)
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    vectors = [np.arange(3), np.arange(2) * 10, np.arange(4) * 100]
    for got, want in zip(SL.meshgrid(*vectors, indexing=indexing),
                         np.meshgrid(*vectors, indexing=indexing)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_concat_stack_convert_python_values_to_the_tensors_dtype():
    x = kf.constant([1.0], kf.float64)
    assert kf.concat([[0.5], x], 0).dtype is kf.float64
    assert kf.stack([2.0, x[0]]).dtype is kf.float64
    assert kf.concat([x], 0).numpy().tolist() == [1.0]


def test_transpose_conjugate():
    x = np.array([[1 + 2j, 3 - 1j]])
    np.testing.assert_array_equal(kf.transpose(x, conjugate=True).numpy(), x.conj().T)
    np.testing.assert_array_equal(kf.transpose(x).numpy(), x.T)


# ---------------------------------------------------------------- bad inputs

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
I = errors.InvalidArgumentError

BAD_CALLS = {
    # out-of-range axes
    "expand_dims_axis": (lambda x: kf.expand_dims(x, 4), I, ["ExpandDims", "4"]),
    "squeeze_axis": (lambda x: R.squeeze(x, 3), I, ["Squeeze", "axis 3"]),
    "squeeze_not_one": (lambda x: R.squeeze(x, 1), I, ["Squeeze", "dim[1]"]),
    "stack_axis": (lambda x: kf.stack([x, x], axis=4), I, ["Pack", "axis"]),
    "concat_axis": (lambda x: kf.concat([x, x], 3), I, ["ConcatV2", "3"]),
    "gather_axis": (lambda x: kf.gather(x, [0], axis=-4), I, ["GatherV2", "axis"]),
    "unstack_axis": (lambda x: kf.unstack(x, axis=3), I, ["Unpack", "axis"]),
    "split_axis": (lambda x: kf.split(x, 2, axis=5), I, ["SplitV", "axis"]),
    "reverse_axis": (lambda x: R.reverse(x, [3]), I, ["ReverseV2", "axis"]),
    "reverse_twice": (lambda x: R.reverse(x, [0, -3]), I, ["ReverseV2", "more than once"]),
    "sort_axis": (lambda x: SO.sort(x, axis=3), I, ["ArgSort", "axis"]),
    "one_hot_axis": (lambda x: A.one_hot([1, 2], 3, axis=3), I, ["OneHot", "axis"]),
    "linspace_axis": (lambda x: A.linspace(0.0, 1.0, 3, axis=2), I, ["LinSpace", "axis"]),
    # wrong dtypes
    "one_hot_float_indices": (lambda x: A.one_hot(x, 3), I, ["OneHot", "float32"]),
    "one_hot_vector_value": (lambda x: A.one_hot([1], 3, on_value=[1.0, 2.0]), I,
                             ["OneHot", "on_value"]),
    "one_hot_dtype_clash": (lambda x: A.one_hot([1], 3, on_value=kf.constant(1.0),
                                                dtype=kf.int32), TypeError, ["on_value"]),
    "gather_float_indices": (lambda x: kf.gather(x, [0.5]), TypeError, ["GatherV2", "indices"]),
    "pad_value_dtype": (lambda x: R.pad(x, [[0, 0]] * 3, constant_values=kf.constant(1)), I,
                        ["PadV2", "int32"]),
    "where_int_condition": (lambda x: kf.where(kf.constant([1]), x, x), TypeError,
                            ["condition"]),
    "sort_bool": (lambda x: SO.sort([True, False]), I, ["ArgSort", "bool"]),
    "top_k_bool": (lambda x: SO.top_k([True, False]), I, ["TopKV2", "bool"]),
    "gather_bool_indices": (lambda x: kf.gather(x, [True]), TypeError, ["GatherV2", "indices"]),
    "transpose_negative_perm": (lambda x: kf.transpose(x, [0, 1, -1]), I, ["Transpose"]),
    "reshape_float_shape": (lambda x: kf.reshape(x, kf.constant([4.0, 6.0])), TypeError,
                            ["Reshape", "shape"]),
    "tile_float_multiples": (lambda x: R.tile(x, [1.0, 2, 1]), TypeError,
                             ["Tile", "multiples"]),
    "shape_out_type": (lambda x: kf.shape(x, out_type=kf.float32), TypeError, ["out_type"]),
    # bad shapes
    "reshape_count": (lambda x: kf.reshape(x, [5, 5]), I, ["Reshape", "24"]),
    "reshape_two_unknown": (lambda x: kf.reshape(x, [-1, -1]), I, ["Reshape", "-1"]),
    "concat_shapes": (lambda x: kf.concat([x, x[:, :2]], 0), I, ["ConcatV2", "Dimension 1"]),
    "concat_ranks": (lambda x: kf.concat([x, x[0]], 0), I, ["ConcatV2", "Ranks"]),
    "concat_scalars": (lambda x: kf.concat([x[0, 0, 0], x[0, 0, 1]], 0), I, ["ConcatV2"]),
    "concat_empty": (lambda x: kf.concat([], 0), ValueError, ["ConcatV2", "values"]),
    "stack_shapes": (lambda x: kf.stack([x, x[0]]), I, ["Pack", "values[1]"]),
    "stack_dtypes": (lambda x: kf.stack([x, kf.cast(x, kf.int32)]), I, ["Pack", "int32"]),
    "split_sizes": (lambda x: kf.split(x, [1, 1], axis=2), I, ["SplitV", "split_dim"]),
    "split_uneven": (lambda x: kf.split(x, 3, axis=2), I, ["Split", "evenly"]),
    "unstack_num": (lambda x: kf.unstack(x, num=3), I, ["Unpack", "must equal 3"]),
    "broadcast_to": (lambda x: kf.broadcast_to(x, [2, 2, 4]), I, ["BroadcastTo"]),
    "tile_length": (lambda x: R.tile(x, [1, 2]), I, ["Tile", "length 3"]),
    "tile_negative": (lambda x: R.tile(x, [1, -1, 1]), I, ["Tile", "multiples[1]"]),
    "pad_rows": (lambda x: R.pad(x, [[1, 1]]), I, ["PadV2", "paddings"]),
    "pad_negative": (lambda x: R.pad(x, [[0, 0], [-1, 0], [0, 0]]), I, ["PadV2", "non-negative"]),
    "pad_reflect_size": (lambda x: R.pad(x, [[0, 2], [0, 0], [0, 0]], "REFLECT"), I,
                         ["MirrorPad", "less than"]),
    "pad_symmetric_size": (lambda x: R.pad(x, [[3, 0], [0, 0], [0, 0]], "SYMMETRIC"), I,
                           ["MirrorPad", "greater than"]),
    "pad_mode": (lambda x: R.pad(x, [[0, 0]] * 3, "WRAP"), ValueError, ["mode", "WRAP"]),
    "pad_matrix": (lambda x: R.pad(x, [1, 2, 3]), I, ["Pad", "2 columns"]),
    "transpose_perm": (lambda x: kf.transpose(x, [0, 1, 1]), I, ["Transpose", "perm"]),
    "slice_size": (lambda x: SL.slice(x, [1, 0, 0], [2, -1, -1]), I, ["Slice", "size[0]"]),
    "slice_begin": (lambda x: SL.slice(x, [0, 4, 0], [-1, -1, -1]), I, ["Slice", "begin[1]"]),
    "slice_length": (lambda x: SL.slice(x, [0, 0], [1, 1]), I, ["Slice", "size 3"]),
    "top_k_large": (lambda x: SO.top_k(x, k=5), I, ["TopKV2", "Had 4, needed 5"]),
    "top_k_negative": (lambda x: SO.top_k(x, k=-1), I, ["TopKV2", "k >= 0"]),
    "top_k_scalar": (lambda x: SO.top_k(x[0, 0, 0]), I, ["TopKV2", "1-D"]),
    "one_hot_depth": (lambda x: A.one_hot([1], -1), I, ["OneHot", "depth"]),
    "eye_negative": (lambda x: A.eye(-1), I, ["Eye", "num_rows"]),
    "fill_value_shape": (lambda x: kf.fill([2], [1, 2]), I, ["Fill", "scalar"]),
    "fill_negative": (lambda x: kf.zeros([2, -3]), I, ["Fill", "-3"]),
    "zeros_partial_shape": (lambda x: kf.zeros(kf.TensorShape([None, 2])), ValueError,
                            ["shape", "fully defined"]),
    "range_delta": (lambda x: kf.range(0, 5, 0), I, ["Range", "delta != 0"]),
    "range_direction": (lambda x: kf.range(5, 0), I, ["Range", "start <= limit"]),
    "range_negative_direction": (lambda x: kf.range(0, 5, -1), I, ["Range", "start >= limit"]),
    "boolean_mask_shape": (lambda x: SL.boolean_mask(x, [True, False, True]), ValueError,
                           ["boolean_mask", "incompatible"]),
    "argsort_direction": (lambda x: SO.argsort(x, direction="UP"), ValueError, ["direction"]),
    # indices
    "index_float": (lambda x: x[1.5], TypeError, ["valid indices", "1.5"]),
    "index_float_tensor": (lambda x: x[kf.constant(1.0)], TypeError, ["valid indices"]),
    "index_list": (lambda x: x[[0, 1]], TypeError, ["valid indices"]),
    "index_vector_tensor": (lambda x: x[kf.constant([0, 1])], TypeError, ["valid indices"]),
    "index_bool": (lambda x: x[True], TypeError, ["valid indices"]),
    "index_slice_float": (lambda x: x[0:1.5], TypeError, ["valid indices"]),
    "index_out_of_range": (lambda x: x[0, -4], I, ["StridedSlice", "out of bounds"]),
    "index_too_many": (lambda x: x[0, 0, 0, 0], I, ["StridedSlice", "too many"]),
    "index_two_ellipses": (lambda x: x[..., 0, ...], I, ["StridedSlice", "ellipses"]),
    "index_zero_step": (lambda x: x[::0], I, ["StridedSlice", "step"]),
    "gather_out_of_range": (lambda x: kf.gather(x, [2]), I, ["GatherV2", "not in [0, 2)"]),
    "gather_scalar": (lambda x: kf.gather(x[0, 0, 0], [0]), I, ["GatherV2", "1 dimensional"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_raises_named_error(case):
    fn, error, fragments = BAD_CALLS[case]
    with pytest.raises(error) as info:
        fn(kf.constant(X))
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    if error is I:
        assert "test_array.py" in message, f"no user line in {message!r}"


# ---------------------------------------------------------------- symbolic indices: rules

def _rule(opdef: Any, *inputs: Any, **attrs: Any) -> list:
    out = opdef.shape(*inputs, **attrs)
    return [s.shape.as_list() if s.shape.rank is not None else None
            for s in (out if isinstance(out, list) else [out])]


def test_strided_slice_rule_with_fed_values():
    x = TensorSpec([None, 4, 5], kf.float32)
    i = TensorSpec([], kf.int32)
    full = ("slice", None, None, None)
    assert _rule(SL.STRIDED_SLICE, x, i, spec=("*",)) == [[4, 5]]
    assert _rule(SL.STRIDED_SLICE, x, i, spec=(full, "*")) == [[None, 5]]
    assert _rule(SL.STRIDED_SLICE, x, i, i, spec=(("slice", "*", "*", None),)) == [[None, 4, 5]]
    assert _rule(SL.STRIDED_SLICE, x, i, spec=(full, ("slice", 1, "*", None), None)) == \
        [[None, None, 1, 5]]
    assert _rule(SL.STRIDED_SLICE, x, i, spec=("...", "*")) == [[None, 4]]
    # eager values are known: the rule resolves them and checks bounds
    assert _rule(SL.STRIDED_SLICE, kf.zeros([3, 4]), kf.constant(1),
                 spec=(full, ("slice", "*", None, None))) == [[3, 3]]
    with pytest.raises(ValueError, match="out of bounds"):
        SL.STRIDED_SLICE.shape(kf.zeros([3, 4]), kf.constant(7), spec=(full, "*"))
    with pytest.raises(TypeError, match="valid indices"):
        SL.STRIDED_SLICE.shape(x, TensorSpec([], kf.float32), spec=("*",))
    with pytest.raises(TypeError, match="valid indices"):
        SL.STRIDED_SLICE.shape(x, TensorSpec([2], kf.int32), spec=("*",))


def test_strided_slice_kernels_with_fed_values():
    x = np.arange(24.0).reshape(2, 3, 4)
    spec = (("slice", None, None, None), "*", ("slice", "*", None, "*"))
    values = (np.int32(-1), np.int64(3), np.int32(-2))
    got = SL.STRIDED_SLICE.kernel(x, *values, spec=spec)
    np.testing.assert_array_equal(got, x[:, -1, 3::-2])
    dx = SL.STRIDED_SLICE_GRAD.kernel(np.ones_like(got), np.array(x.shape), *values, spec=spec)
    want = np.zeros_like(x)
    want[:, -1, 3::-2] = 1
    np.testing.assert_array_equal(dx, want)


def test_dynamic_op_rules_keep_known_counts():
    s = TensorSpec([3], kf.int32)
    x = TensorSpec([None, 2], kf.float32)
    assert _rule(R.DYNAMIC_RESHAPE, x, s) == [[None, None, None]]
    assert _rule(R.DYNAMIC_TILE, x, TensorSpec([2], kf.int32)) == [[None, None]]
    with pytest.raises(ValueError, match="length 2"):
        R.DYNAMIC_TILE.shape(x, s)
    assert _rule(R.PAD, x, TensorSpec([], kf.float32), paddings=((1, 1), (0, 2))) == \
        [[None, 4]]
    assert _rule(SO.TOP_K, x, k=1, sorted=True, index_type=kf.int32) == [[None, 1]] * 2
    assert _rule(A.ONE_HOT, TensorSpec([None], kf.int64), TensorSpec([], kf.float32),
                 TensorSpec([], kf.float32), depth=4, axis=0) == [[4, None]]
    assert _rule(R.SQUEEZE, TensorSpec([None, 1], kf.float32), axis=None) == [None]
    assert _rule(R.SQUEEZE, TensorSpec([None, 1], kf.float32), axis=(1,)) == [[None]]


# ---------------------------------------------------------------- symbolic indices: graphs

def _function() -> Any:
    pytest.importorskip("kilnflow.function")
    if not callable(getattr(kf, "function", None)):
        pytest.skip("kf.function is not exported yet")
    return kf.function


MATRIX = TensorSpec([None, 4], kf.float64)
SCALAR = TensorSpec([], kf.int32)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the trace-time dict update is on purpose
def test_symbolic_indices_in_a_function():
    function = _function()
    shapes = {}

    @function(input_signature=[MATRIX, SCALAR, SCALAR])
    def f(x, i, j):
        parts = (x[i], x[i:j], x[:, i], x[1:, j - 1::-1], x[i, ..., None], x[-1, j:])
        shapes.update(enumerate(p.shape.as_list() for p in parts))
        return parts

    x = np.arange(20.0).reshape(5, 4)
    got = f(x, 2, 4)
    want = (x[2], x[2:4], x[:, 2], x[1:, 3::-1], x[2, ..., None], x[-1, 4:])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)
    assert shapes == {0: [4], 1: [None, 4], 2: [None], 3: [None, None], 4: [4, 1], 5: [None]}
    with pytest.raises(Exception, match="out of bounds|index"):
        f(x, 7, 1)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the loss itself is pruned, as it should
def test_symbolic_index_gradient_in_a_function():
    function = _function()

    @function(input_signature=[MATRIX, SCALAR, SCALAR])
    def grad(x, i, j):
        with kf.GradientTape() as tape:
            tape.watch(x)
            y = kf.reduce_sum(x[i:j, i] ** 2) + kf.reduce_sum(x[j] * 3.0)
        return tape.gradient(y, x)

    x = rand(5, 4)
    want = np.zeros_like(x)
    want[1:3, 1] = 2 * x[1:3, 1]
    want[3] += 3.0
    np.testing.assert_allclose(grad(x, 1, 3).numpy(), want)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dynamic_shapes_in_a_function():
    function = _function()

    @function(input_signature=[MATRIX, TensorSpec([2], kf.int32)])
    def f(x, begin):
        with kf.GradientTape() as tape:
            tape.watch(x)
            parts = [SL.slice(x, begin, [2, -1]), R.tile(x, [kf.shape(x)[0] // 2, 1]),
                     kf.concat([x, x[1:]], 0), R.pad(x, [[1, 0], [0, 2]], "REFLECT"),
                     SL.boolean_mask(x, x[:, 0] > 0), kf.reshape(x, [-1, 2]),
                     kf.fill(kf.shape(x), x[0, 0]), SO.top_k(x, 2)[0], SO.sort(x, 0)]
            loss = kf.add_n([kf.reduce_sum(p * p) for p in parts])
        return parts + [tape.gradient(loss, x)]

    x = rand(4, 4)
    got = [t.numpy() for t in f(x, np.array([1, 2], np.int32))]
    want = [x[1:3, 2:], np.tile(x, [2, 1]), np.concatenate([x, x[1:]]),
            np.pad(x, [[1, 0], [0, 2]], "reflect"), x[x[:, 0] > 0], x.reshape(-1, 2),
            np.full(x.shape, x[0, 0]), -np.sort(-x, -1)[:, :2], np.sort(x, 0)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    eager = tape_grad(lambda t: kf.add_n([kf.reduce_sum(p * p) for p in [
        SL.slice(t, [1, 2], [2, -1]), R.tile(t, [2, 1]), kf.concat([t, t[1:]], 0),
        R.pad(t, [[1, 0], [0, 2]], "REFLECT"), SL.boolean_mask(t, t[:, 0] > 0),
        kf.reshape(t, [-1, 2]), kf.fill([4, 4], t[0, 0]), SO.top_k(t, 2)[0], SO.sort(t, 0)]]),
        [x], [np.ones(())], (0,))[0]
    np.testing.assert_allclose(got[-1], eager.numpy())


def test_slicing_graph_serializes_to_json():
    """Index specs use only JSON-friendly attrs ('...' for Ellipsis, '*' for fed values)."""
    function = _function()
    graph_json = pytest.importorskip("kilnflow.saving.graph_json")
    import json

    from kilnflow.graph import Graph

    def f(x, i):
        return x[..., i], x[None, 1:, ::-1], R.pad(x, [[1, 0], [0, 1]], "SYMMETRIC")

    concrete = function(f, input_signature=[MATRIX, SCALAR]).get_concrete_function()
    text = json.dumps(graph_json.graph_to_dict(concrete.graph))
    rebuilt = graph_json.graph_from_dict(json.loads(text), Graph())
    specs = [op.attrs["spec"] for op in rebuilt.get_operations() if op.type == "StridedSlice"]
    assert ("...", "*") in specs
