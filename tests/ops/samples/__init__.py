"""Sample applications of every OpDef: the table behind tests/ops/test_generic.py.

A Sample names an OpDef, builds the public call from tensors (`lambda x, y: kf.add(x, y)`),
and gives small input arrays (float64 where gradients are checked, some broadcasting), a
NumPy reference and whether the call is differentiable. Helper ops that only graphs or
gradient rules reach are applied directly with bind(); control-flow ops, which exist only in
graphs, are marked graph_only. UNSAMPLED lists (with reasons) the stateful and random ops
tested elsewhere; ERRORS lists calls that must raise.

One module per op family, named like the family's file in kilnflow/ops/: an op's samples
sit in tests/ops/samples/<family>.py. This module holds the records and the input makers,
and imports every family module at its end.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

import kilnflow as kf
from kilnflow import graph as _graph  # noqa: F401 - registers Placeholder and NoOp
from kilnflow import ops as _ops
from kilnflow.context import ctx
from kilnflow.core.opdef import REGISTRY, bind


def import_op_families() -> None:
    """Register every family's OpDefs, also those `import kilnflow` does not load yet."""
    for module in pkgutil.iter_modules(_ops.__path__):
        if module.name != "samples":
            importlib.import_module(f"kilnflow.ops.{module.name}")


import_op_families()


@dataclass(frozen=True)
class Sample:
    """One application of op `op`: `fn(*tensors)` on `inputs` should equal `reference`."""
    op: str
    fn: Callable[..., Any]
    inputs: tuple
    reference: Callable[..., Any]
    differentiable: bool = False
    wrt: Optional[tuple] = None  # input positions to differentiate; None: every float input
    name: str = ""
    rtol: float = 1e-6
    atol: float = 1e-9
    eps: float = 1e-6            # finite-difference step
    static_shape: bool = True    # False: the output shape depends on input values
    graph_only: bool = False     # the op appears only when fn is traced into a graph

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}" if self.name else self.op

    def grad_positions(self) -> tuple:
        if not self.differentiable:
            return ()
        if self.wrt is not None:
            return self.wrt
        return tuple(i for i, a in enumerate(self.inputs) if a.dtype.kind == "f")


@dataclass(frozen=True)
class ErrorSample:
    """A call that must raise `error` with every string of `fragments` in its message."""
    op: str
    fn: Callable[..., Any]
    inputs: tuple
    error: type
    fragments: tuple = field(default_factory=tuple)
    name: str = ""
    known_bug: str = ""  # set while the call does not raise as it must (an xfail)

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}" if self.name else self.op


class Call:
    __slots__ = ("opdef", "inputs", "attrs", "result")

    def __init__(self, opdef: Any, inputs: tuple, attrs: dict, result: Any):
        self.opdef = opdef
        self.inputs = inputs
        self.attrs = attrs
        self.result = result


class Recorder:
    """Stands among the active tapes and keeps every (opdef, inputs, attrs, result) that
    bind() reports, so tests can see which ops a public call applied and with what attrs."""

    def __init__(self) -> None:
        self.calls: list = []

    def record(self, opdef: Any, inputs: Any, attrs: dict, result: Any) -> None:
        self.calls.append(Call(opdef, tuple(inputs), dict(attrs), result))

    def of(self, op_name: str) -> list:
        return [c for c in self.calls if c.opdef.name == op_name]

    def __enter__(self) -> "Recorder":
        ctx.tapes = ctx.tapes + [self]
        return self

    def __exit__(self, *exc: Any) -> None:
        ctx.tapes = [t for t in ctx.tapes if t is not self]


def recorded_attrs(op_name: str, thunk: Callable[[], Any]) -> dict:
    """The attrs the first application of `op_name` got while `thunk()` ran."""
    with Recorder() as recorder:
        thunk()
    return recorder.of(op_name)[0].attrs


rng = np.random.default_rng(1234)


def rand(*shape: int) -> np.ndarray:
    """float64 with |x| in [0.2, 1.5]: away from the kinks of abs, sign, relu, ..."""
    magnitude = rng.uniform(0.2, 1.5, shape)
    return np.where(rng.random(shape) < 0.5, -magnitude, magnitude)


def pos(*shape: int) -> np.ndarray:
    return rng.uniform(0.5, 2.0, shape)


def ints(*shape: int, low: int = -5, high: int = 6, dtype: Any = np.int32) -> np.ndarray:
    return rng.integers(low, high, shape).astype(dtype)


def nonzero_ints(*shape: int, dtype: Any = np.int32) -> np.ndarray:
    values = ints(*shape, dtype=dtype)
    return np.where(values == 0, 3, values).astype(dtype)


def bools(*shape: int) -> np.ndarray:
    return rng.random(shape) < 0.5


def i32(values: Any) -> np.ndarray:
    return np.asarray(values, np.int32)


def direct(op_name: str, **attrs: Any) -> Callable[..., Any]:
    """Apply a helper op the public API reaches only from graphs or gradient rules."""
    return lambda *xs: bind(REGISTRY[op_name], xs, attrs)


SAMPLES: list = []


def add(op: str, fn: Callable, inputs: tuple, reference: Callable, **options: Any) -> None:
    SAMPLES.append(Sample(op, fn, tuple(np.asarray(a) for a in inputs), reference, **options))


# Ops whose behaviour is not a pure function of their inputs: each is tested where it lives.
UNSAMPLED = {
    "MakeIterator": "stateful (restarts a kf.data pipeline): tests/data/test_in_function.py",
    "IteratorGetNextAsOptional": "stateful (reads a kf.data pipeline): "
                                 "tests/data/test_in_function.py",
    "IteratorGetNext": "stateful (reads a kf.data iterator): tests/data/test_in_function.py",
    "ReadVariableOp": "stateful: reads a variable; tests/test_variables.py",
    "AssignVariableOp": "stateful: tests/test_variables.py",
    "AssignAddVariableOp": "stateful: tests/test_variables.py",
    "AssignSubVariableOp": "stateful: tests/test_variables.py",
    "RandomStandardNormal": "random: tests/ops/test_random.py",
    "RandomUniform": "random: tests/ops/test_random.py",
    "RandomUniformInt": "random: tests/ops/test_random.py",
    "TruncatedNormal": "random: tests/ops/test_random.py",
    "Multinomial": "random: tests/ops/test_random.py",
    "RandomGamma": "random: tests/ops/test_random.py",
    "RandomPoissonV2": "random: tests/ops/test_random.py",
    "RandomShuffle": "random: tests/ops/test_random.py",
    "UniformCandidateSampler": "random: tests/ops/test_random_candidates.py",
    "LogUniformCandidateSampler": "random: tests/ops/test_random_candidates.py",
    "LearnedUnigramCandidateSampler": "random: tests/ops/test_random_candidates.py",
    "FixedUnigramCandidateSampler": "random: tests/ops/test_random_candidates.py",
    "AllCandidateSampler": "random (with no draw): tests/ops/test_random_candidates.py",
    "PrintV2": "stateful (prints): tests/ops/test_logging.py",
    "Assert": "stateful (raises): tests of kf.debugging / autograph asserts",
    "If": "StatelessIf with a stateful branch: same rule, kernel and gradient as StatelessIf",
    "While": "StatelessWhile with a stateful body: same rule, kernel and gradient",
    "Placeholder": "a graph input: fed, never run; every graph test traces some",
    "Timestamp": "stateful (reads the clock): tests/ops/test_array_extra.py",
}


def ops_without_samples() -> list:
    """Registered ops that have neither a sample nor an UNSAMPLED entry."""
    covered = {s.op for s in SAMPLES} | set(UNSAMPLED)
    return sorted(name for name in REGISTRY if name not in covered)


def scatter_along(updates: np.ndarray, indices: np.ndarray, shape: Any,
                   axis: int) -> np.ndarray:
    out = np.zeros(tuple(shape), updates.dtype)
    for position in np.ndindex(indices.shape):
        target = list(position)
        target[axis] = indices[position]
        out[tuple(target)] += updates[position]
    return out


def linear_vjp(f: Callable, shape: tuple, dy: np.ndarray) -> np.ndarray:
    """The gradient of sum(f(x) * dy) for a linear f, one basis vector at a time."""
    out = np.zeros(shape)
    for i in np.ndindex(shape):
        basis = np.zeros(shape)
        basis[i] = 1.0
        out[i] = np.sum(f(basis) * dy)
    return out


ERRORS: list = []

# each family module adds its samples and error samples when imported
from tests.ops.samples import (  # noqa: E402,F401
    array,
    array_extra,
    bitwise,
    checks,
    cond,
    const,
    conv,
    critical_section,
    cross_hash,
    conv_extra,
    conv3d_transpose,
    custom_gradient,
    decompositions,
    elementwise,
    farmhash,
    fused,
    image,
    image_boxes,
    image_codec,
    image_random,
    image_transform,
    graph,
    graph_utils,
    joining,
    linalg,
    math,
    math_extra,
    matrix_functions,
    nn,
    nn_extra,
    placeholders,
    py_func,
    reduction,
    ragged_grad,
    reshaping,
    scatter,
    segment,
    signal,
    slicing,
    string_grouping,
    string_hash,
    strings,
    unicode,
    unicode_offsets,
    sorting,
    special,
    special_bessel,
    stateless_random,
    summary_ops,
    tensor_array,
    text_lookup,
    while_loop,
)
