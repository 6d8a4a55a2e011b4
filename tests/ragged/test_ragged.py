"""kf.RaggedTensor and kf.ragged against TF 2.21's recorded results (tf_ragged_expected.json:
the calls of ragged_cases.py run under TF in a side venv), eagerly and inside kf.function;
the composite protocol (specs, trace keys, nest), gradients and bad input."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from tests.ragged import ragged_cases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "tf_ragged_expected.json"), encoding="utf-8") as _f:
    EXPECTED = json.load(_f)
CASES = ragged_cases.cases(kf)


def _record(value):
    return json.loads(json.dumps(ragged_cases.describe(kf, value)))


def _check(tag, got):
    assert got == EXPECTED[tag]


@pytest.mark.parametrize("tag", sorted(CASES))
def test_matches_tf_eagerly(tag):
    _check(tag, _record(CASES[tag]()))


@pytest.mark.filterwarnings("ignore::kilnflow.function.diagnostics.PrunedComputationWarning")
@pytest.mark.parametrize("tag", sorted(CASES))
def test_matches_tf_inside_a_function(tag):
    result = kf.function(lambda: CASES[tag](), autograph=False)()
    got = _record(result)
    want = EXPECTED[tag]
    if isinstance(want, dict) and want["kind"] == "RT":
        # a traced result's nrows comes from the graph: compare the values, not the print
        assert got["list"] == want["list"]
    else:
        _check(tag, got)


def test_repr_str_numpy_and_specs():
    rt = kf.ragged.constant([[1, 2], [3], []])
    assert str(rt) == repr(rt) == "<tf.RaggedTensor [[1, 2], [3], []]>"
    value = rt.numpy()
    assert value.dtype == object and [r.tolist() for r in value] == [[1, 2], [3], []]
    assert repr(kf.RaggedTensorSpec([2, None], kf.int32, 1)) == \
        "RaggedTensorSpec(TensorShape([2, None]), kf.int32, 1, tf.int64)".replace("kf.", "tf.")
    specs = kf.nest.flatten(rt._type_spec, expand_composites=True)
    assert [repr(s) for s in specs] == [
        "TensorSpec(shape=(None,), dtype=tf.int32, name=None)",
        "TensorSpec(shape=(4,), dtype=tf.int64, name=None)"]
    nested = kf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert [t.numpy().tolist() for t in kf.nest.flatten(nested, expand_composites=True)] == \
        [[1, 2, 3, 4], [0, 2, 3], [0, 2, 3, 4]]
    assert rt.ragged_rank == 1 and nested.ragged_rank == 2
    assert kf.type_spec_from_value(rt) == rt._type_spec
    with pytest.raises(TypeError):
        len(rt)  # as TF: a RaggedTensor has no len()


def test_function_keys_by_spec_new_values_length_reuses_the_trace():
    f = kf.function(lambda x: x + 1, autograph=False)
    assert f(kf.ragged.constant([[1, 2], [3], []])).to_list() == [[2, 3], [4], []]
    assert f(kf.ragged.constant([[1], [2, 3, 4], [5]])).to_list() == [[2], [3, 4, 5], [6]]
    assert f.experimental_get_tracing_count() == 1  # TF 2.21 traces once too
    f(kf.ragged.constant([[1], [2, 3, 4]]))  # nrows is part of the spec: a new trace
    assert f.experimental_get_tracing_count() == 2


def test_concrete_function_of_a_spec_and_ragged_outputs():
    spec = kf.RaggedTensorSpec([None, None], kf.int32, 1)
    g = kf.function(lambda x: (x.row_lengths(), x * 2), autograph=False)
    concrete = g.get_concrete_function(spec)
    assert "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)" in str(concrete)
    lengths, doubled = concrete(kf.ragged.constant([[1, 2], [3]]))
    assert lengths.numpy().tolist() == [2, 1] and doubled.to_list() == [[2, 4], [6]]
    signed = kf.function(lambda x: x.to_tensor(), input_signature=[spec], autograph=False)
    assert signed(kf.ragged.constant([[1], [2, 3]])).numpy().tolist() == [[1, 0], [2, 3]]


def test_nest_map_structure_over_ragged_components():
    rt = kf.ragged.constant([[1.0, 2.0], [3.0]])
    out = kf.nest.map_structure(lambda t: t * 2 if t.dtype is kf.float32 else t, rt,
                                expand_composites=True)
    assert out.to_list() == [[2.0, 4.0], [6.0]]


def test_gradients_flow_through_to_tensor_and_flat_values():
    values = kf.Variable([1.0, 2.0, 3.0])
    with kf.GradientTape() as tape:
        rt = kf.RaggedTensor.from_row_lengths(values, [2, 1])
        dense = rt.to_tensor()
        y = kf.reduce_sum(dense * kf.constant([[1.0, 10.0], [100.0, 1000.0]]))
    assert tape.gradient(y, values).numpy().tolist() == [1.0, 10.0, 100.0]
    with kf.GradientTape() as tape:
        rt = kf.RaggedTensor.from_row_lengths(values, [2, 1])
        y = kf.reduce_sum(kf.ragged.map_flat_values(kf.square, rt).flat_values)
    assert tape.gradient(y, values).numpy().tolist() == [2.0, 4.0, 6.0]


def test_bad_input_raises_tf_errors():
    with pytest.raises(errors.InvalidArgumentError, match="do not form a valid RaggedTensor"):
        kf.RaggedTensor.from_row_splits([1, 2], [1, 2])
    with pytest.raises(ValueError, match="same nesting depth"):
        kf.ragged.constant([[1, [2]]])
    with pytest.raises(IndexError, match="Row key 5 out of bounds"):
        kf.ragged.constant([[1, 2], [3], []])[5]
    with pytest.raises(errors.InvalidArgumentError):
        kf.ragged.constant([[1, 2], [3], []]) + kf.ragged.constant([[1], [2]])
    with pytest.raises(ValueError, match="constructor is private"):
        kf.RaggedTensor([1], [0, 1])
    with pytest.raises(ValueError, match="unsupported type"):  # as TF 2.21 raises
        kf.convert_to_tensor(kf.ragged.constant([[1], []]))


def test_uniform_row_lengths_are_static_dims_through_functions():
    rt = kf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4], 2)
    assert rt.shape == kf.TensorShape([2, 2]) and rt.uniform_row_length.numpy() == 2
    f = kf.function(lambda x: x + 1, autograph=False)
    out = f(rt)
    assert out.shape == kf.TensorShape([2, 2]) and out.to_list() == [[2, 3], [4, 5]]
    assert kf.ragged.constant([[1], []]).uniform_row_length is None


def test_strings_split_of_a_scalar_stays_dense():
    assert kf.strings.split("a b").numpy().tolist() == [b"a", b"b"]
    compiled = kf.function(lambda s: kf.strings.split(s), autograph=False)
    assert compiled(kf.constant(["x y", "z"])).to_list() == [[b"x", b"y"], [b"z"]]
    np.testing.assert_array_equal(kf.strings.unicode_decode("hé", "UTF-8").numpy(), [104, 233])
