"""Checks derived for every OpDef from the sample table in tests/ops/samples/.

(a) the shape rule agrees with the kernel (exactly for known inputs, compatibly for
unknown dims); (b) eager results equal NumPy; (c) gradients equal central finite
differences in float64; (d) second-order gradients equal finite differences of the
first-order ones; (e) bad dtypes raise InvalidArgumentError naming the op, and the ERRORS
table's calls raise TF's error classes; (f) @kf.function (generated code) and the
interpreter equal eager, with known and with unknown dims, every graph op's static spec
fits its kernel's value, and gradients taken while tracing equal the eager tape's.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors, nest
from tests.ops import samples as S
from kilnflow.core.opdef import REGISTRY, bind, declared_attrs
from kilnflow.shapes import TensorSpec

# A sample line holding two lambdas is run as written (AutoGraph cannot tell them apart).
pytestmark = pytest.mark.filterwarnings("ignore:AutoGraph could not convert <lambda>")

SAMPLES = S.SAMPLES
IDS = [s.id for s in SAMPLES]
# Gradients are checked against finite differences in float64; float32 samples are checked
# against the float64 gradient of the same call (complex ones are not checked here).
DIFFERENTIABLE = [s for s in SAMPLES if s.differentiable and s.grad_positions()
                  and all(s.inputs[i].dtype == np.float64 for i in s.grad_positions())]
FLOAT32_DIFFERENTIABLE = [s for s in SAMPLES if s.differentiable and s.grad_positions()
                          and all(s is not d for d in DIFFERENTIABLE)]
EAGER_OPS = [s for s in SAMPLES if not s.graph_only]
FIRST_OF_EACH_OP = list({s.op: s for s in reversed(EAGER_OPS)}.values())

GRAD_RTOL = 1e-5
GRAD_ATOL = 1e-6


def _tensors(sample: S.Sample) -> list:
    return [kf.constant(a) for a in sample.inputs]


def _flat(x: Any) -> list:
    return nest.flatten(list(x) if isinstance(x, (list, tuple)) else [x])


def _specs(result: Any) -> list:
    return list(result) if isinstance(result, (list, tuple)) else [result]


# ---------------------------------------------------------------- the table itself

def test_every_registered_op_has_a_sample():
    missing = S.ops_without_samples()
    assert not missing, f"ops with no sample in tests/ops/samples/<family>.py: {missing}"


def test_unsampled_allow_list_names_registered_ops_with_reasons():
    for name, reason in S.UNSAMPLED.items():
        assert name in REGISTRY, f"UNSAMPLED names an op that does not exist: {name}"
        assert reason
        # Only state, randomness and graph inputs are exempt: anything else gets samples.
        assert REGISTRY[name].stateful or REGISTRY[name].random or name == "Placeholder", name


def test_sample_ids_are_unique():
    assert len(set(IDS)) == len(IDS)


def test_differentiated_inputs_are_floating():
    for s in SAMPLES:
        if s.differentiable:
            assert s.grad_positions() or any(a.dtype.kind == "c" for a in s.inputs), s.id
            for i in s.grad_positions():
                assert s.inputs[i].dtype.kind == "f", s.id


# ---------------------------------------------------------------- (a) shape rules

def _unknown_dims(t: Any) -> TensorSpec:
    return TensorSpec([None] * t.shape.rank, t.dtype)


def _check_rule(call: S.Call, inputs: list, label: str) -> None:
    specs = _specs(call.opdef.shape(*inputs, **call.attrs))
    outputs = _specs(call.result)
    assert len(specs) == len(outputs), f"{call.opdef.name} ({label}): number of outputs"
    for k, (spec, out) in enumerate(zip(specs, outputs)):
        assert spec.dtype is out.dtype, \
            f"{call.opdef.name} ({label}) output {k}: rule says {spec.dtype}, kernel {out.dtype}"
        assert spec.shape.is_compatible_with(out.shape), \
            f"{call.opdef.name} ({label}) output {k}: rule says {spec.shape}, kernel {out.shape}"


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_shape_rule_agrees_with_kernel(sample):
    with S.Recorder() as recorder:
        sample.fn(*_tensors(sample))
    if not sample.graph_only:
        assert recorder.of(sample.op), f"{sample.id} never applied {sample.op}"
    for call in recorder.calls:  # every op the public call applied, not only sample.op
        _check_rule(call, list(call.inputs), "eager inputs")
        _check_rule(call, [_unknown_dims(t) for t in call.inputs], "unknown dims")
        try:
            unknown_rank = [TensorSpec(None, t.dtype) for t in call.inputs]
            _check_rule(call, unknown_rank, "unknown rank")
        except ValueError:
            pass  # some ops need a known rank; their public functions say so first


STATIC = [s for s in EAGER_OPS if s.static_shape]


@pytest.mark.parametrize("sample", STATIC, ids=[s.id for s in STATIC])
def test_shape_rule_is_exact_for_known_inputs(sample):
    """With fully known inputs, a rule that does not read tensor values knows every dim."""
    with S.Recorder() as recorder:
        sample.fn(*_tensors(sample))
    call = recorder.of(sample.op)[0]
    specs = _specs(call.opdef.shape(*call.inputs, **call.attrs))
    for spec, out in zip(specs, _specs(call.result)):
        assert spec.shape == out.shape, f"{sample.id}: rule {spec.shape}, kernel {out.shape}"


# ---------------------------------------------------------------- (b) values

@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_eager_matches_numpy(sample):
    outputs = _flat(sample.fn(*_tensors(sample)))
    expected = _flat(sample.reference(*sample.inputs))
    assert len(outputs) == len(expected)
    for out, ref in zip(outputs, expected):
        assert isinstance(out, kf.Tensor)
        got, ref = np.asarray(out), np.asarray(ref)  # (a string scalar's numpy() is bytes)
        assert got.dtype == ref.dtype, f"{sample.id}: dtype {got.dtype}, NumPy {ref.dtype}"
        assert got.shape == ref.shape, f"{sample.id}: shape {got.shape}, NumPy {ref.shape}"
        if got.dtype.kind in "fc":
            np.testing.assert_allclose(got, ref, rtol=sample.rtol, atol=sample.atol)
        else:
            np.testing.assert_array_equal(got, ref)


# ---------------------------------------------------------------- (c), (d) gradients

def _weights(outputs: list, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(o.shape.as_list()).astype(o.dtype.as_numpy_dtype)
            for o in outputs]


def _float_outputs(sample: S.Sample, tensors: list) -> list:
    return [o for o in _flat(sample.fn(*tensors)) if o.dtype.is_floating]


def _weighted_sum(sample: S.Sample, arrays: list, weights: list) -> float:
    outputs = _float_outputs(sample, [kf.constant(a) for a in arrays])
    return float(sum(np.sum(o.numpy().astype(np.float64) * w) for o, w in zip(outputs, weights)))


def _finite_differences(f: Any, arrays: list, positions: tuple, eps: float) -> list:
    """d f / d arrays[i] for i in positions, by central differences."""
    grads = []
    for i in positions:
        grad = np.zeros_like(arrays[i])
        for j in np.ndindex(arrays[i].shape):
            shifted = [a.copy() for a in arrays]
            shifted[i][j] += eps
            up = f(shifted)
            shifted[i][j] -= 2 * eps
            down = f(shifted)
            grad[j] = (up - down) / (2 * eps)
        grads.append(grad)
    return grads


def _tape_gradients(sample: S.Sample, arrays: list, weights: list) -> list:
    tensors = [kf.constant(a) for a in arrays]
    sources = [tensors[i] for i in sample.grad_positions()]
    with kf.GradientTape() as tape:
        tape.watch(sources)
        outputs = _float_outputs(sample, tensors)
    return tape.gradient(outputs, sources, output_gradients=[kf.constant(w) for w in weights])


@pytest.mark.parametrize("sample", DIFFERENTIABLE, ids=[s.id for s in DIFFERENTIABLE])
def test_gradient_matches_finite_differences(sample):
    arrays = [np.array(a) for a in sample.inputs]
    weights = _weights(_float_outputs(sample, [kf.constant(a) for a in arrays]), seed=7)
    analytic = _tape_gradients(sample, arrays, weights)
    numeric = _finite_differences(lambda xs: _weighted_sum(sample, xs, weights), arrays,
                                  sample.grad_positions(), sample.eps)
    for i, got, want in zip(sample.grad_positions(), analytic, numeric):
        assert got is not None, f"{sample.id}: no gradient for input {i}"
        assert got.shape == want.shape and got.dtype == kf.float64, sample.id
        np.testing.assert_allclose(got.numpy(), want, rtol=max(GRAD_RTOL, sample.rtol),
                                   atol=max(GRAD_ATOL, sample.atol),
                                   err_msg=f"{sample.id}: gradient of input {i}")


@pytest.mark.parametrize("sample", FLOAT32_DIFFERENTIABLE,
                         ids=[s.id for s in FLOAT32_DIFFERENTIABLE])
def test_float32_gradient_matches_float64(sample):
    positions = sample.grad_positions()
    arrays = [np.array(a) for a in sample.inputs]
    wide = [a.astype(np.float64) if a.dtype == np.float32 else a for a in arrays]
    weights = _weights(_float_outputs(sample, [kf.constant(a) for a in wide]), seed=5)
    narrow = _tape_gradients(sample, arrays, [w.astype(np.float32) for w in weights])
    reference = _tape_gradients(sample, wide, weights)
    for i, got, want in zip(positions, narrow, reference):
        assert got is not None and got.dtype is kf.as_dtype(arrays[i].dtype), sample.id
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{sample.id}: input {i}")


NOT_DIFFERENTIABLE = [s for s in SAMPLES if not s.differentiable and s.inputs]


@pytest.mark.parametrize("sample", NOT_DIFFERENTIABLE, ids=[s.id for s in NOT_DIFFERENTIABLE])
def test_non_differentiable_gives_no_gradient(sample):
    tensors = _tensors(sample)
    with kf.GradientTape() as tape:
        tape.watch(tensors)
        outputs = _flat(sample.fn(*tensors))
    assert all(g is None for g in tape.gradient(outputs, tensors)), sample.id


def _first_order(sample: S.Sample, tensors: list, weights: list) -> list:
    sources = [tensors[i] for i in sample.grad_positions()]
    with kf.GradientTape() as inner:
        inner.watch(sources)
        outputs = _float_outputs(sample, tensors)
    return inner.gradient(outputs, sources, output_gradients=[kf.constant(w) for w in weights])


def _first_order_dot(sample: S.Sample, arrays: list, weights: list, directions: list) -> float:
    grads = _first_order(sample, [kf.constant(a) for a in arrays], weights)
    return float(sum(np.sum(g.numpy() * v) for g, v in zip(grads, directions)
                     if g is not None))


@pytest.mark.parametrize("sample", DIFFERENTIABLE, ids=[s.id for s in DIFFERENTIABLE])
def test_second_order_gradient_matches_finite_differences(sample):
    """d/dx <grad f(x), v> from nested tapes against differences of the first-order tape."""
    arrays = [np.array(a) for a in sample.inputs]
    positions = sample.grad_positions()
    weights = _weights(_float_outputs(sample, [kf.constant(a) for a in arrays]), seed=11)
    directions = [np.random.default_rng(13 + i).standard_normal(arrays[i].shape)
                  for i in positions]
    tensors = [kf.constant(a) for a in arrays]
    sources = [tensors[i] for i in positions]
    with kf.GradientTape() as outer:
        outer.watch(sources)
        grads = _first_order(sample, tensors, weights)
        dot = kf.add_n([kf.reduce_sum(g * v) for g, v in zip(grads, directions)
                        if g is not None])
    analytic = outer.gradient(dot, sources, unconnected_gradients=kf.UnconnectedGradients.ZERO)
    eps = max(sample.eps, 1e-5)
    numeric = _finite_differences(
        lambda xs: _first_order_dot(sample, xs, weights, directions), arrays, positions, eps)
    for i, got, want in zip(positions, analytic, numeric):
        np.testing.assert_allclose(got.numpy(), want, rtol=max(1e-4, sample.rtol),
                                   atol=max(1e-5, sample.atol),
                                   err_msg=f"{sample.id}: second order, input {i}")


# ---------------------------------------------------------------- (e) dtype errors

_CANDIDATES = [kf.bool, kf.int32, kf.complex128, kf.float32, kf.uint8, kf.string]


def _as_dtype(t: Any, dtype: Any) -> Any:
    if t.dtype is kf.string:  # no cast from strings: any value of the other dtype will do
        return kf.zeros(t.shape, dtype)
    with np.errstate(all="ignore"):
        return kf.constant(np.asarray(t.numpy()).real.astype(dtype.as_numpy_dtype))


def _same_dtype_positions(opdef: Any, inputs: tuple) -> list:
    if not opdef.same_dtype:
        return []
    if opdef.same_dtype is True:
        return list(range(len(inputs)))
    return list(opdef.same_dtype)


def _recorded_call(sample: S.Sample) -> S.Call:
    with S.Recorder() as recorder:
        sample.fn(*_tensors(sample))
    return recorder.of(sample.op)[0]


@pytest.mark.parametrize("sample", FIRST_OF_EACH_OP, ids=[s.op for s in FIRST_OF_EACH_OP])
def test_disallowed_dtype_raises_invalid_argument(sample):
    call = _recorded_call(sample)
    opdef = call.opdef
    if opdef.dtypes is None or not call.inputs:
        pytest.skip(f"{opdef.name} accepts every dtype")
    bad = next((d for d in _CANDIDATES if d not in opdef.dtypes and d is not kf.string), None)
    if bad is None:
        pytest.skip(f"{opdef.name} accepts every dtype a tensor can have here")
    group = set(_same_dtype_positions(opdef, call.inputs)) | {0}
    inputs = [_as_dtype(t, bad) if i in group else t for i, t in enumerate(call.inputs)]
    with pytest.raises(errors.InvalidArgumentError) as info:
        bind(opdef, inputs, call.attrs)
    message = str(info.value)
    assert opdef.name in message and bad.name in message, message


@pytest.mark.parametrize("sample", FIRST_OF_EACH_OP, ids=[s.op for s in FIRST_OF_EACH_OP])
def test_mismatched_dtypes_raise_invalid_argument(sample):
    call = _recorded_call(sample)
    opdef = call.opdef
    group = _same_dtype_positions(opdef, call.inputs)
    if len(group) < 2:
        pytest.skip(f"{opdef.name} has no inputs that must share a dtype")
    first = call.inputs[group[0]].dtype
    other = kf.float32 if first is not kf.float32 else kf.float64
    inputs = list(call.inputs)
    inputs[group[1]] = _as_dtype(inputs[group[1]], other)
    with pytest.raises(errors.InvalidArgumentError) as info:
        bind(opdef, inputs, call.attrs)
    message = str(info.value)
    for fragment in (opdef.name, first.name, other.name):
        assert fragment in message, message


def _error_param(case: S.ErrorSample) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=case.known_bug)] if case.known_bug else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_error_param(e) for e in S.ERRORS])
def test_bad_calls_raise_tf_errors(case):
    tensors = [kf.constant(a) for a in case.inputs]
    with pytest.raises(case.error) as info:
        case.fn(*tensors)
    message = str(info.value)
    for fragment in case.fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    if case.error is errors.InvalidArgumentError:  # the user's line: the lambda, or the call
        assert "tests/ops/samples/" in message or "test_generic.py" in message, \
            f"no user line in {message!r}"


# ---------------------------------------------------------------- bugs the samples ran into

def test_sized_tensor_array_takes_element_shape_from_first_write():
    ta = kf.TensorArray(kf.float32, size=2).write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
    assert ta.stack().numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]


# ---------------------------------------------------------------- (f) graphs: @kf.function

def _function_or_skip() -> Any:
    pytest.importorskip("kilnflow.function")
    if not callable(getattr(kf, "function", None)):
        pytest.skip("kf.function is not exported yet")
    return kf.function


def _all_ops(graph: Any) -> list:
    """The graph's operations and those of every subgraph held in an attr (cond, while)."""
    found = []
    for op in graph.operations:
        found.append(op)
        for value in op.attrs.values():
            inner = getattr(value, "graph", None)
            if inner is not None and hasattr(inner, "operations"):
                found.extend(_all_ops(inner))
    return found


def _interpret_checking_specs(graph: Any, arrays: list, label: str) -> list:
    """Run `graph` op by op with the kernels; every value must fit its static spec."""
    env = {id(t): np.asarray(a) for t, a in zip(graph.inputs, arrays)}
    for op in graph.operations:
        if op.outputs and id(op.outputs[0]) in env:
            continue  # a fed placeholder
        args = [env[id(t)] for t in op.inputs]
        run = getattr(op.opdef, "interpret", None)
        result = run(op, args) if run is not None else op.opdef.kernel(*args, **op.attrs)
        values = list(result) if op.opdef.multi_output else [result]
        assert len(values) == len(op.outputs), f"{op.name} ({label}): number of outputs"
        for t, value in zip(op.outputs, values):
            if t.dtype is kf.dtypes.variant:  # an opaque host value (recorded loop states)
                env[id(t)] = value
                continue
            value = np.asarray(value)
            assert kf.as_dtype(value.dtype) is t.dtype, \
                f"{op.name} ({label}): spec says {t.dtype.name}, kernel gives {value.dtype}"
            assert t.shape.is_compatible_with(value.shape), \
                f"{op.name} ({label}): spec says {t.shape}, kernel gives {value.shape}"
            env[id(t)] = value
    return [env[id(t)] for t in graph.outputs]


def _assert_same(got: list, want: list, label: str) -> None:
    assert len(got) == len(want), label
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        g, w = [x.astype(object) if x.dtype.kind == "S" else x for x in (g, w)]  # bytes
        assert g.dtype == w.dtype and g.shape == w.shape, f"{label}: {g.dtype}{g.shape} vs " \
                                                          f"{w.dtype}{w.shape}"
        if g.dtype == object:  # strings: bytes objects compare exactly
            np.testing.assert_array_equal(g, w, err_msg=label)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, err_msg=label)


@pytest.mark.filterwarnings("ignore:.*results are never used")
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_function_matches_eager(sample):
    function = _function_or_skip()
    tensors = _tensors(sample)
    eager = [t.numpy() for t in _flat(sample.fn(*tensors))]
    compiled = function(lambda *xs: sample.fn(*xs))
    _assert_same([t.numpy() for t in _flat(compiled(*tensors))], eager, f"{sample.id} compiled")
    traced = compiled.get_concrete_function(*tensors).traced_graph
    interpreted = _interpret_checking_specs(traced, sample.inputs, "known shapes")
    _assert_same(interpreted, eager, f"{sample.id} interpreter")
    for op in _all_ops(traced):  # a loaded graph is refused any attr not declared
        undeclared = set(op.attrs) - declared_attrs(op.opdef, len(op.inputs))
        assert not undeclared, f"{sample.id}: {op.type} uses undeclared attrs {undeclared}"
    if sample.graph_only:
        assert sample.op in {op.type for op in _all_ops(traced)}, \
            f"{sample.id}: no {sample.op} in the traced graph"


@pytest.mark.filterwarnings("ignore:.*results are never used")
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_graph_with_unknown_dims_matches_eager(sample):
    """Traced with every dim unknown, shape rules must stay compatible with the kernels."""
    function = _function_or_skip()
    tensors = _tensors(sample)
    eager = [t.numpy() for t in _flat(sample.fn(*tensors))]
    specs = [kf.TensorSpec([None] * t.shape.rank, t.dtype) for t in tensors]
    try:
        concrete = function(lambda *xs: sample.fn(*xs)).get_concrete_function(*specs)
    except (ValueError, TypeError, NotImplementedError) as exc:
        pytest.skip(f"{sample.id} needs known dims to trace: {type(exc).__name__}: {exc}")
    interpreted = _interpret_checking_specs(concrete.traced_graph, sample.inputs, "unknown dims")
    _assert_same(interpreted, eager, f"{sample.id} interpreter, unknown dims")
    _assert_same([t.numpy() for t in _flat(concrete(*tensors))], eager,
                 f"{sample.id} compiled, unknown dims")


# Graph gradients that differ from eager ones because of a known bug (an xfail each).
GRAPH_GRADIENT_BUGS: dict = {}


def _graph_gradient_param(sample: S.Sample) -> Any:
    bug = GRAPH_GRADIENT_BUGS.get(sample.id)
    marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
    return pytest.param(sample, id=sample.id, marks=marks)


@pytest.mark.filterwarnings("ignore:.*results are never used")
@pytest.mark.parametrize("sample", [_graph_gradient_param(s) for s in DIFFERENTIABLE])
def test_function_gradient_matches_eager(sample):
    """Gradients taken while tracing (symbolic) equal the eager tape's."""
    function = _function_or_skip()
    tensors = _tensors(sample)
    positions = sample.grad_positions()
    weights = [kf.constant(w) for w in _weights(_float_outputs(sample, tensors), seed=3)]

    def gradients(*xs: Any) -> list:
        sources = [xs[i] for i in positions]
        with kf.GradientTape() as tape:
            tape.watch(sources)
            outputs = _float_outputs(sample, list(xs))
        return tape.gradient(outputs, sources, output_gradients=weights)

    eager = gradients(*tensors)
    compiled = function(gradients)(*tensors)
    for i, e, c in zip(positions, eager, compiled):
        assert (e is None) == (c is None), f"{sample.id}: input {i} eager {e} vs graph {c}"
        if e is not None:
            np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"{sample.id}: graph gradient of input {i}")
