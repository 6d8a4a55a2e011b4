"""kf.SparseTensor and kf.sparse against TF 2.21's recorded results
(tf_sparse_expected.txt: the same calls run under TF in a side venv), eager and inside
kf.function; the composite protocol (nest, trace keys, specs), gradients, IndexedSlices."""
import os

import numpy as np
import pytest

import kilnflow as kf

S = kf.sparse
HERE = os.path.dirname(os.path.abspath(__file__))


def _a():
    return S.SparseTensor([[0, 0], [1, 2]], [1.0, -2.0], [3, 4])


def _b():
    return S.SparseTensor([[0, 0], [2, 1]], [-1.0, 5.0], [3, 4])


M = kf.constant([[1., 2.], [3., 4.], [5., 6.]])
CASES = {
    "add": lambda a, b: S.add(a, b),
    "add_th": lambda a, b: S.add(a, b, threshold=1.5),
    "add_dense": lambda a, b: S.add(a, kf.ones([3, 4])),
    "rmax": lambda a, b: S.reduce_max(a),
    "rmax1": lambda a, b: S.reduce_max(a, axis=1),
    "rmax0s": lambda a, b: S.reduce_max(a, 1, output_is_sparse=True),
    "rmaxneg": lambda a, b: S.reduce_max(S.SparseTensor([[0, 0]], [-3.0], [2, 2]), axis=1),
    "max": lambda a, b: S.maximum(a, b),
    "min": lambda a, b: S.minimum(a, b),
    "soft": lambda a, b: S.softmax(S.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0],
                                                  [2, 3])),
    "fer": lambda a, b: S.fill_empty_rows(a, -1.0),
    "ind": lambda a, b: S.to_indicator(S.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 3, 2],
                                                      [2, 2]), 4),
    "bc": lambda a, b: S.bincount(kf.constant([1, 1, 3, 7])),
    "bc2": lambda a, b: S.bincount(kf.constant([[1, 1, 3], [2, 2, 2]]), axis=-1),
    "bcsp": lambda a, b: S.bincount(S.SparseTensor([[0, 0], [1, 1]], [3, 3], [2, 3])),
    "segsum": lambda a, b: S.segment_sum(M, kf.constant([0, 2]), kf.constant([0, 0])),
    "segsqrt": lambda a, b: S.segment_sqrt_n(M, kf.constant([0, 1, 2]),
                                             kf.constant([0, 0, 1])),
    "segsum_n": lambda a, b: S.segment_sum(M, kf.constant([0, 2]), kf.constant([0, 1]),
                                           num_segments=3),
    "eye": lambda a, b: S.eye(2, 3),
    "ed": lambda a, b: S.expand_dims(a, 1),
    "ed-1": lambda a, b: S.expand_dims(a, -1),
    "concat": lambda a, b: S.concat(1, [a, b]),
    "concat0": lambda a, b: S.concat(0, [a, b]),
    "split": lambda a, b: S.split(sp_input=a, num_split=2, axis=1),
    "slice": lambda a, b: S.slice(a, [1, 1], [2, 2]),
    "reshape": lambda a, b: S.reshape(a, [4, -1]),
    "tr": lambda a, b: S.transpose(a),
    "reorder": lambda a, b: S.reorder(S.SparseTensor([[1, 0], [0, 1]], [1, 2], [2, 2])),
    "retain": lambda a, b: S.retain(a, [False, True]),
    "sdm": lambda a, b: S.sparse_dense_matmul(a, kf.reshape(kf.range(8.0), [4, 2])),
    "sdm_dense_sp": lambda a, b: S.sparse_dense_matmul(kf.reshape(kf.range(6.0), [2, 3]), a),
    "rsum": lambda a, b: S.reduce_sum(a, axis=0, keepdims=True),
    "mapv": lambda a, b: S.map_values(kf.multiply, a, 3.0),
    "mul": lambda a, b: a * kf.constant([1.0, 2.0, 3.0, 4.0]),
    "fromdense_str": lambda a, b: S.from_dense(kf.constant([["a", ""], ["", "b"]])),
    "to_dense_default": lambda a, b: S.to_dense(a, default_value=9.0),
    "reset": lambda a, b: S.reset_shape(a),
    "cross": lambda a, b: S.cross([kf.constant([["a", "b"], ["c", "d"]]),
                                   kf.constant([["x", "y"], ["z", "w"]])]),
    "cross3": lambda a, b: S.cross([kf.constant([["a"], ["b"]]), kf.constant([[1], [2]]),
                                    kf.constant([["p", "q"], ["r", "s"]])], separator="|"),
    "cross_sp": lambda a, b: S.cross([S.SparseTensor([[0, 0], [1, 0], [1, 1]],
                                                     [b"a", b"b", b"c"], [2, 2]),
                                      kf.constant([["x"], ["y"]])]),
    "saddmm": lambda a, b: S.sampled_addmm(
        kf.constant([[0, 0], [1, 1]], kf.int64), kf.constant([1.0, 2.0]), kf.constant([2, 2]),
        kf.reshape(kf.range(6.0), [2, 3]), kf.reshape(kf.range(6.0), [3, 2]), beta=0.5,
        alpha=2.0),
}


def _lines(tag, x):
    if isinstance(x, kf.SparseTensor):
        return [(tag, "SP", x.indices.numpy().tolist(), x.values.numpy().tolist(),
                 x.dense_shape.numpy().tolist())]
    if isinstance(x, (tuple, list)):
        return [line for i, y in enumerate(x) for line in _lines(f"{tag}.{i}", y)]
    return [(tag, "T", x.dtype.name, x.numpy().tolist())]


def _expected():
    table = {}
    with open(os.path.join(HERE, "tf_sparse_expected.txt"), encoding="utf-8") as f:
        for line in f:
            tag, kind, rest = line.rstrip("\n").split(" ", 2)
            table.setdefault(tag.split(".")[0], []).append((tag, kind, rest))
    return table


EXPECTED = _expected()


def _same(got, want):
    tag, kind, rest = want
    assert got[0] == tag and got[1] == kind
    if kind == "T":
        dtype, value = rest.split(" ", 1)
        assert got[2] == dtype
        np.testing.assert_allclose(np.array(got[3], dtype=object if dtype == "string" else None),
                                   eval(value), rtol=1e-6)
    else:
        for part, text in zip(got[2:], eval("[" + rest.replace("] [", "], [") + "]")):
            if part and isinstance(np.ravel(part)[0], (bytes, str)):
                assert part == text
            else:
                np.testing.assert_allclose(np.array(part, float), np.array(text, float),
                                           rtol=1e-6)


@pytest.mark.parametrize("tag", sorted(CASES))
def test_matches_tf_eagerly_and_in_a_function(tag):
    want = EXPECTED[tag]
    got = _lines(tag, CASES[tag](_a(), _b()))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)
    compiled = kf.function(lambda a, b: CASES[tag](a, b), autograph=False)
    for g, w in zip(_lines(tag, compiled(_a(), _b())), want):
        _same(g, w)


def test_repr_and_spec_print_as_tf():
    st = S.SparseTensor([[0]], [1], [5])
    assert repr(st) == ("SparseTensor(indices=tf.Tensor([[0]], shape=(1, 1), dtype=int64), "
                        "values=tf.Tensor([1], shape=(1,), dtype=int32), "
                        "dense_shape=tf.Tensor([5], shape=(1,), dtype=int64))")
    assert repr(_a()._type_spec) == "SparseTensorSpec(TensorShape([3, 4]), tf.float32)"
    assert repr(kf.type_spec_from_value(_a())) == repr(_a()._type_spec)
    assert repr(kf.SparseTensorSpec([None, 3], kf.int64)) == \
        "SparseTensorSpec(TensorShape([None, 3]), tf.int64)"
    assert isinstance(_a()._type_spec, kf.TypeSpec)
    assert isinstance(kf.TensorSpec([1]), kf.TypeSpec)
    assert repr(kf.type_spec_from_value(kf.constant([1, 2]))) == \
        "TensorSpec(shape=(2,), dtype=tf.int32, name=None)"
    assert _a().shape == (3, 4) and _a().dtype is kf.float32 and _a().get_shape() == (3, 4)


def test_type_spec_compatibility_and_supertypes():
    spec = kf.SparseTensorSpec([3, 4], kf.float32)
    assert spec.is_compatible_with(kf.SparseTensorSpec([None, 4], kf.float32))
    assert not spec.is_compatible_with(kf.SparseTensorSpec([3, 4], kf.int32))
    assert spec.is_compatible_with(_a())
    wider = spec.most_specific_common_supertype([kf.SparseTensorSpec([5, 4], kf.float32)])
    assert wider == kf.SparseTensorSpec([None, 4], kf.float32)
    assert spec.most_specific_common_supertype([kf.SparseTensorSpec([3], kf.int32)]) is None
    assert hash(spec) == hash(kf.SparseTensorSpec([3, 4], kf.float32))
    assert spec.value_type is kf.SparseTensor


def test_bad_construction_raises_value_errors_as_tf():
    with pytest.raises(ValueError, match="not compatible"):
        S.SparseTensor([[0, 0]], [1.0, 2.0], [2, 2])
    with pytest.raises(ValueError, match="must have rank 2"):
        S.SparseTensor([0, 0], [1.0], [2, 2])
    with pytest.raises(TypeError, match="Input must be a SparseTensor"):
        S.to_dense(kf.constant([1.0]))
    with pytest.raises(ValueError, match="unsupported type"):  # as TF 2.21 raises
        kf.convert_to_tensor(_a())


def test_nest_expands_composites_and_their_specs():
    flat = kf.nest.flatten({"x": _a()}, expand_composites=True)
    assert [t.shape for t in flat] == [(2, 2), (2,), (2,)]
    assert len(kf.nest.flatten(_a())) == 1  # a leaf unless composites are expanded
    specs = kf.nest.flatten(_a()._type_spec, expand_composites=True)
    assert [repr(s) for s in specs] == [
        "TensorSpec(shape=(None, 2), dtype=tf.int64, name=None)",
        "TensorSpec(shape=(None,), dtype=tf.float32, name=None)",
        "TensorSpec(shape=(2,), dtype=tf.int64, name=None)"]
    doubled = kf.nest.map_structure(lambda t: t * 2 if t.dtype is kf.float32 else t,
                                    [_a()], expand_composites=True)
    assert isinstance(doubled[0], kf.SparseTensor)
    assert doubled[0].values.numpy().tolist() == [2.0, -4.0]
    packed = kf.nest.pack_sequence_as(_a()._type_spec, flat, expand_composites=True)
    assert packed.values.numpy().tolist() == [1.0, -2.0]


def test_function_keys_by_spec_no_retrace_for_new_nnz():
    f = kf.function(lambda x: x * 2.0, autograph=False)
    assert f(_a()).values.numpy().tolist() == [2.0, -4.0]
    out = f(S.SparseTensor([[2, 3]], [4.0], [3, 4]))
    assert out.indices.numpy().tolist() == [[2, 3]] and out.values.numpy().tolist() == [8.0]
    assert f.experimental_get_tracing_count() == 1
    f(S.SparseTensor([[0]], [4.0], [3]))  # another dense shape: a new spec, a new trace
    assert f.experimental_get_tracing_count() == 2
    assert "SparseTensorSpec" in f.explain_retracing()


def test_concrete_functions_and_input_signatures_take_specs():
    spec = kf.SparseTensorSpec([None, 4], kf.float32)
    concrete = kf.function(lambda x: x, autograph=False).get_concrete_function(spec)
    assert "SparseTensorSpec(TensorShape([None, 4]), tf.float32)" in str(concrete)
    assert concrete(_a()).values.numpy().tolist() == [1.0, -2.0]
    dense = kf.function(lambda x: S.to_dense(x), input_signature=[spec], autograph=False)
    assert dense(_a()).numpy().tolist()[1] == [0.0, 0.0, -2.0, 0.0]
    assert dense(_b()).numpy().tolist()[2] == [0.0, 5.0, 0.0, 0.0]


def test_static_shape_is_known_inside_the_trace():
    @kf.function(autograph=False)
    def f(x):
        assert x.shape == kf.TensorShape([3, 4]), x.shape
        return S.reduce_sum(x)
    assert f(_a()).numpy() == -1.0


def test_gradients_agree_with_tf():
    va = kf.Variable([1.0, -2.0])
    bd = kf.Variable(kf.reshape(kf.range(8.0), [4, 2]))
    with kf.GradientTape() as tape:
        sp = S.SparseTensor([[0, 0], [1, 2]], va, [3, 4])
        y = kf.reduce_sum(S.sparse_dense_matmul(sp, bd) ** 2)
    g_values, g_dense = tape.gradient(y, [va, bd])
    assert g_values.numpy().tolist() == [2.0, -164.0]  # TF 2.21's values
    assert g_dense.numpy().tolist() == [[0.0, 2.0], [0.0, 0.0], [32.0, 40.0], [0.0, 0.0]]
    with kf.GradientTape() as tape:
        y = kf.reduce_sum(S.to_dense(S.SparseTensor([[0, 0], [1, 2]], va, [3, 4])) * 3.0)
    assert tape.gradient(y, va).numpy().tolist() == [3.0, 3.0]
    with kf.GradientTape() as tape:
        y = S.reduce_sum(S.SparseTensor([[0, 0], [1, 2]], va * va, [3, 4]))
    assert tape.gradient(y, va).numpy().tolist() == [2.0, -4.0]


def test_gradient_inside_a_function_matches_eager():
    dense = kf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])

    def loss(values):
        with kf.GradientTape() as tape:
            tape.watch(values)
            sp = S.SparseTensor([[0, 1], [2, 3]], values, [3, 4])
            y = kf.reduce_sum(S.sparse_dense_matmul(sp, dense))
        return tape.gradient(y, values)
    eager = loss(kf.constant([1.0, 1.0]))
    compiled = kf.function(loss, autograph=False)(kf.constant([1.0, 1.0]))
    assert eager.numpy().tolist() == compiled.numpy().tolist() == [7.0, 15.0]


def test_indexed_slices_convert_and_apply():
    s = kf.IndexedSlices(kf.constant([[1., 2.], [3., 4.]]), kf.constant([0, 2]),
                         kf.constant([3, 2]))
    assert kf.convert_to_tensor(s).numpy().tolist() == [[1., 2.], [0., 0.], [3., 4.]]
    assert repr(kf.IndexedSlicesSpec([3, 2], kf.float32)) == (
        "IndexedSlicesSpec(TensorShape([3, 2]), tf.float32, tf.int64, None, "
        "TensorShape([None]))")
    masked = S.mask(s, kf.constant([2]))
    assert masked.values.numpy().tolist() == [[1.0, 2.0]]
    assert masked.indices.numpy().tolist() == [0]
    assert str(s).startswith("IndexedSlices(indices=tf.Tensor([0 2], shape=(2,), dtype=int32)")
    e = kf.Variable(kf.ones([4, 2]))
    grad = kf.IndexedSlices(kf.ones([2, 2]), kf.constant([0, 2]), kf.constant([4, 2]))
    kf.keras.optimizers.SGD(0.1).apply_gradients([(grad, e)])
    np.testing.assert_allclose(e.numpy(), [[0.9, 0.9], [1, 1], [0.9, 0.9], [1, 1]], rtol=1e-6)
    doubled = kf.function(lambda x: x, autograph=False)(s)
    assert isinstance(doubled, kf.IndexedSlices)
