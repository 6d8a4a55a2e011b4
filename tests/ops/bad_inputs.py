"""The bad-input tier's malformed arguments and how a call's outcome is classified.

Every eager sample of the op table that calls a public function (tests/ops/samples) is called with each tensor argument
replaced, in turn, by each malformed value below. The outcome is one of:
  named     raised TF's kind of error (TypeError, ValueError, an OpError...) whose message
            names the op or the argument ("matmul: argument `b` ...", "[Op:MatMul]")
  unnamed   raised an allowed class, naming neither
  internal  let an implementation exception escape (KeyError, AttributeError, IndexError,
            RecursionError, MemoryError, OverflowError, ZeroDivisionError, ...)
  silent    returned a result for a value no op accepts (None, a string, an object...)
  accepted  returned a result for a value some ops legitimately accept (NaN, empty, bool)
  python    the malformed value's own Python behaviour ran (`"abc" % t` formats, `d[1]` on a
            dict raises KeyError in the caller's frame, `t == None` is False as in TF):
            no kilnflow code decided, so nothing to judge
scripts/bad_input_report.py prints the counts as a table.
"""
from __future__ import annotations

import os
import re
import traceback

import numpy as np

import kilnflow as kf
from kilnflow.context import ctx

_PACKAGE = os.path.dirname(os.path.abspath(kf.__file__))


def _raised_in_kilnflow(exc: BaseException) -> bool:
    """kilnflow raised it: the innermost frame outside libraries (NumPy, the standard
    library) is kilnflow's, not the caller's own code (a user lambda multiplying None)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        name = frame.filename
        if name.startswith(_PACKAGE) or name.startswith("<kilnflow"):
            return True
        if not (name.startswith("<") or "site-packages" in name or "/lib/python3" in name):
            return False
    return False

# never acceptable as a tensor argument (strings are tensors too, hence in ODD)
REJECTED = {
    "none": lambda valid: None,
    "object": lambda valid: object(),
    "ragged": lambda valid: [[1.0, 2.0], [3.0]],
    "dict": lambda valid: {"a": 1.0},
}
# acceptable to some ops: only an internal exception is a failure
ODD = {
    "string": lambda valid: "abc",
    "nan": lambda valid: np.full(valid.shape, np.nan) if valid.dtype.kind == "f" else None,
    "empty": lambda valid: np.zeros((0,) * max(valid.ndim, 1), valid.dtype),
    "bool": lambda valid: np.ones(valid.shape, bool),
    "scalar": lambda valid: np.asarray(1, valid.dtype),
    "huge": lambda valid: np.asarray(2 ** 62, np.int64),
    # the other categories: wrong dtype, mismatched shape, Inf, negative sizes and
    # indices, out-of-range axes and indices
    "dtype": lambda valid: _other_dtype(valid),
    "shape": lambda valid: np.stack([valid] * 3, axis=-1),
    "inf": lambda valid: np.full(valid.shape, np.inf, valid.dtype) if valid.dtype.kind == "f"
    else None,
    "negative": lambda valid: np.full(valid.shape, -3, valid.dtype) if valid.dtype.kind == "i"
    else None,
    "axis": lambda valid: np.full(valid.shape, 97, valid.dtype) if valid.dtype.kind in "iu"
    else None,
}


def _other_dtype(valid: np.ndarray):
    """`valid` in a dtype of another family (TF never promotes between them)."""
    kind = valid.dtype.kind
    if kind == "f":
        return np.ones(valid.shape, np.int32)
    if kind in "iub":
        return np.ones(valid.shape, np.float32)
    if kind == "c":
        return np.ones(valid.shape, np.float32)
    return None
ALLOWED = (TypeError, ValueError, kf.errors.OpError, NotImplementedError)
INTERNAL = (KeyError, AttributeError, IndexError, RecursionError, MemoryError, OverflowError,
            ZeroDivisionError, AssertionError, UnboundLocalError, NameError, LookupError)


def names_it(message: str, op: str) -> bool:
    """The message names the op (its type, or the public function as `name: ...`) or the
    argument (in backquotes)."""
    flat = message.lower().replace("_", "")
    return ("`" in message or "[op:" in flat or op.lower().replace("_", "") in flat
            or re.match(r"[\w.]+: ", message) is not None)


def _stacks() -> tuple:
    return (ctx.graph, tuple(ctx.tapes), len(ctx.control_deps), len(ctx.graph_stack))


def judge(call, op: str, rejected: bool) -> tuple:
    """(outcome, detail) of `call()`, a malformed call of op or layer `op`; `rejected`: the
    malformed value is one no op accepts (a returned result is then silent)."""
    before = _stacks()
    try:
        with np.errstate(all="ignore"):
            result = call()
    except Exception as exc:  # noqa: BLE001 - classified below
        if _stacks() != before:
            return "internal", "a context stack changed"
        if not _raised_in_kilnflow(exc):
            return "python", f"{type(exc).__name__}: {exc}"
        clean = isinstance(exc, kf.errors.OpError) or (
            isinstance(exc, ALLOWED) and not isinstance(exc, INTERNAL))
        if not clean:
            return "internal", f"{type(exc).__name__}: {exc}"
        outcome = "named" if names_it(str(exc), op) else "unnamed"
        return outcome, f"{type(exc).__name__}: {exc}"
    if _stacks() != before:
        return "internal", "a context stack changed"
    if not any(isinstance(r, kf.Tensor) for r in kf.nest.flatten(result)) \
            or rejected and op in ("Equal", "NotEqual"):
        return "python", repr(result)[:80]
    return ("silent" if rejected else "accepted"), ""


def classify(sample, position: int, category: str, make) -> tuple:
    """(outcome, detail) of calling `sample` with input `position` replaced."""
    valid = sample.inputs[position]
    bad = make(valid)
    if bad is None and category not in ("none",):
        return "skip", ""
    args = [kf.constant(a) for a in sample.inputs]
    try:
        args[position] = bad if not isinstance(bad, np.ndarray) else kf.constant(bad)
    except (TypeError, ValueError):
        return "skip", "the malformed value is not a tensor of this kind"
    return judge(lambda: sample.fn(*args), sample.op, category in REJECTED)


def case_key(sample, position: int, category: str) -> tuple:
    """(prefix, category): how scripts/bad_input_census.py and the TF record name a case."""
    return f"{sample.id}[{position}]", category


def every_case(samples):
    """(sample, position, category, make) for every eager sample and tensor input."""
    for sample in samples:
        if sample.graph_only or sample.fn.__qualname__.startswith("direct.") \
                or sample.op.endswith("Grad") or sample.op.startswith("Fused"):
            continue  # helper ops that passes and gradients apply: no public entry point
        for position in range(len(sample.inputs)):
            for category, make in list(REJECTED.items()) + list(ODD.items()):
                yield sample, position, category, make
