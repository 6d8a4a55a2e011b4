"""keras.ops against Keras 3's recorded outputs (tests/keras/ops/expected.json, written by
scripts/record_keras_ops.py in TF 2.21's venv): every case eagerly on NumPy inputs, and
inside kf.function on kilnflow tensors; gradients of the differentiable ones against finite
differences."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import nest
from kilnflow.keras import ops

from tests.keras.ops import cases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "expected.json")) as f:
    EXPECTED = json.load(f)

# Keras's own quirks where kilnflow follows NumPy instead; each names the difference
TOLERANCE = {"erfinv": 1e-4, "i0": 1e-4, "stft": 1e-4, "stft_hamming": 1e-4, "istft": 1e-4,
             "pinv": 1e-4, "lstsq": 1e-4, "inv": 1e-4, "solve": 1e-4, "cholesky_inverse": 1e-4,
             "call:svd": 1e-4, "call:qr_product": 1e-4, "logaddexp2": 1e-5}
# where kilnflow deliberately differs from Keras's TF backend: case -> (why, NumPy reference)
KNOWN_DIFFERENCES = {
    "sparsemax": "Keras's TF sparsemax computes tau from the summed cumulative sums of the "
                 "support (a bug when the support has 2+ entries: rows do not sum to 1); "
                 "kilnflow computes the true simplex projection",
}
# results whose length depends on the values: only these may lose their static shape in graphs
DYNAMIC_SHAPE = {"nonzero", "unique", "unique_all", "where_one", "bincount", "bincount_w",
                 "segment_sum", "segment_min", "segment_prod"}
NOT_IN_GRAPH = {"shape", "dtype", "ndim", "is_tensor", "size", "call:convert_to_numpy"}


def _value(leaf: dict) -> np.ndarray:
    data = leaf["data"]
    if leaf["dtype"].startswith("complex"):
        arr = np.array([complex(float(r), float(i)) for r, i in data], dtype=leaf["dtype"])
    else:
        arr = np.array([float(v) if isinstance(v, str) else v for v in data],
                       dtype=leaf["dtype"])
    return arr.reshape(leaf["shape"])


def check(actual, expected: dict, where: str, tol: float = 1e-5, signless: bool = False) -> None:
    if "py" in expected:
        want = expected["py"]
        got = actual.numpy() if kf.is_tensor(actual) else actual
        if isinstance(want, list) or isinstance(got, tuple):
            assert list(np.asarray(got).tolist()) == list(want), where
        elif want is None:
            assert got is None, where
        else:
            assert np.asarray(got).tolist() == want, f"{where}: {got!r} != {want!r}"
        return
    if "seq" in expected:
        assert isinstance(actual, (tuple, list)), f"{where}: expected a sequence, got {actual!r}"
        assert len(actual) == len(expected["seq"]), where
        for i, (a, e) in enumerate(zip(actual, expected["seq"])):
            check(a, e, f"{where}[{i}]", tol, signless)
        return
    want = _value(expected)
    got = np.asarray(actual.numpy() if hasattr(actual, "numpy") else actual)
    assert got.shape == want.shape, f"{where}: shape {got.shape} != Keras {want.shape}"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != Keras {want.dtype}"
    if signless:  # eigen/QR vectors are unique only up to sign
        got, want = np.abs(got), np.abs(want)
    if want.dtype == np.float16:  # one half-precision ulp: rounding order differs from TF
        tol = max(tol, 2e-3)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def resolve(path: str):
    fn = ops
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def _tensors(value):
    if isinstance(value, np.ndarray):
        return kf.constant(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(_tensors(v) for v in value)
    return value


IDS = [c[0] for c in cases.CASES]
BY_ID = {c[0]: c for c in cases.CASES}


@pytest.mark.parametrize("case_id", IDS)
def test_eager_numpy_inputs(case_id):
    _, path, args, kwargs = BY_ID[case_id]
    exp = EXPECTED[case_id]
    if "error" in exp:
        pytest.skip(f"Keras raised: {exp['error'][:80]}")
    if case_id in KNOWN_DIFFERENCES:
        pytest.skip(KNOWN_DIFFERENCES[case_id])
    out = resolve(path)(*args, **kwargs)
    check(out, exp, case_id, TOLERANCE.get(case_id, 1e-5), case_id in cases.INVARIANT)


@pytest.mark.parametrize("case_id", [i for i in IDS if i not in NOT_IN_GRAPH])
def test_function_tensor_inputs(case_id):
    _, path, args, kwargs = BY_ID[case_id]
    exp = EXPECTED[case_id]
    if "error" in exp:
        pytest.skip(f"Keras raised: {exp['error'][:80]}")
    if case_id in KNOWN_DIFFERENCES:
        pytest.skip(KNOWN_DIFFERENCES[case_id])
    fn = resolve(path)
    targs = [_tensors(a) for a in args]

    @kf.function
    def run(*ts):
        return fn(*ts, **kwargs)
    check(run(*targs), exp, case_id + " (kf.function)", TOLERANCE.get(case_id, 1e-5),
          case_id in cases.INVARIANT)
    if case_id not in DYNAMIC_SHAPE:  # shapes known when the graph is built (Keras layers
        outs = run.get_concrete_function(*targs).structured_outputs  # need them)
        for out in nest.flatten(outs):
            assert not kf.is_tensor(out) or out.shape.is_fully_defined(), (case_id, out)


@pytest.mark.parametrize("name", sorted(cases.CALLS))
def test_calls(name):
    exp = EXPECTED["call:" + name]
    tol = TOLERANCE.get("call:" + name, 1e-5)
    check(cases.CALLS[name](ops), exp, name, tol)
    if "call:" + name not in NOT_IN_GRAPH:
        check(kf.function(lambda: cases.CALLS[name](ops))(), exp, name + " (kf.function)", tol)


def _first_float(out):
    if isinstance(out, (tuple, list)):
        for o in out:
            if kf.is_tensor(o) and o.dtype.is_floating:
                return o
        raise AssertionError("no float output")
    return out


@pytest.mark.parametrize("case_id", cases.GRAD)
def test_gradient_matches_finite_differences(case_id):
    _, path, args, kwargs = BY_ID[case_id]
    fn = resolve(path)
    argnum = cases.GRAD_ARG.get(case_id, 0)
    seq_arg = isinstance(args[0], list)  # concatenate([x, y]): differentiate x
    x0 = np.asarray(args[0][0] if seq_arg else args[argnum], np.float64)
    x0 = x0 + 0.0137  # off the kinks of piecewise functions (relu6, max ties...)

    def call(x):
        if case_id in cases.GRAD_SYMMETRIC:
            x = (x + kf.transpose(x)) / 2.0
        if seq_arg:
            return fn([x, args[0][1].astype(np.float64)], *args[1:], **kwargs)
        full = list(args)
        full[argnum] = x
        return fn(*full, **kwargs)

    def pick(out):
        if case_id in cases.GRAD_OUT:
            return out[cases.GRAD_OUT[case_id]]
        return _first_float(out)
    out0 = pick(call(kf.constant(x0)))
    rng = np.random.default_rng(0)
    w = rng.normal(size=out0.shape.as_list())

    def objective(x):
        return kf.reduce_sum(kf.cast(pick(call(x)), "float64") * w)
    x = kf.constant(x0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = objective(x)
    grad = tape.gradient(y, x)
    assert grad is not None, f"{case_id}: no gradient"
    grad = grad.numpy().reshape(-1)
    eps = 1e-6 if case_id not in cases.GRAD_FLOAT32 else 1e-3
    tol = 1e-4 if case_id not in cases.GRAD_FLOAT32 else 2e-2
    for k in rng.choice(x0.size, size=min(x0.size, 10), replace=False):
        d = np.zeros(x0.size)
        d[k] = eps
        d = d.reshape(x0.shape)
        fd = (float(objective(kf.constant(x0 + d))) - float(objective(kf.constant(x0 - d)))) / (
            2 * eps)
        assert abs(fd - grad[k]) <= tol * (1 + abs(fd)), (
            f"{case_id}: d/dx[{k}] tape {grad[k]} vs finite difference {fd}")


def test_sparsemax_is_the_simplex_projection():
    """The known difference from Keras's TF backend: rows sum to 1 and match the textbook
    algorithm (Martins & Astudillo 2016) computed in NumPy."""
    z = cases.A.astype(np.float64)
    out = ops.sparsemax(z).numpy()
    for row, got in zip(z, out):
        s = np.sort(row)[::-1]
        k = np.arange(1, len(s) + 1)
        support = 1 + k * s > np.cumsum(s)
        kz = k[support][-1]
        tau = (np.cumsum(s)[kz - 1] - 1) / kz
        np.testing.assert_allclose(got, np.maximum(row - tau, 0), atol=1e-12)
    np.testing.assert_allclose(out.sum(-1), 1.0)
