"""Python at run time inside graphs: the ops behind kf.py_function and kf.numpy_function.

EagerPyFunc calls `func` on EagerTensors (eagerly, whatever mode the caller is in) and is
differentiable: its gradient is another EagerPyFunc whose function runs `func` again under
a GradientTape (the `make_vjp` attr, supplied by kilnflow/autodiff/py_function.py, which
may import the tape; this layer may not). PyFunc / PyFuncStateless call `func` on ndarrays
and have no gradient. EagerPyFunc and PyFunc are stateful: never pruned, merged or
reordered; PyFuncStateless may be. Output shapes are unknown until run, as in TF.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from kilnflow import errors
from kilnflow.context import eager_mode, no_tapes
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor, wrap

# A Python exception inside the function becomes TF's error class for it (as TF's py_func).
_ERROR_CLASSES = ((ValueError, errors.InvalidArgumentError),
                  (TypeError, errors.InvalidArgumentError),
                  (StopIteration, errors.OutOfRangeError),
                  (IndexError, errors.OutOfRangeError),
                  (MemoryError, errors.ResourceExhaustedError),
                  (NotImplementedError, errors.UnimplementedError))


def _raise_as_op_error(exc: Exception, op_name: str) -> None:
    if isinstance(exc, errors.OpError):
        raise exc
    cls = next((c for py, c in _ERROR_CLASSES if isinstance(exc, py)), errors.UnknownError)
    raise cls(errors.with_location(f"{type(exc).__name__}: {exc} [Op:{op_name}]")) from exc


def _outputs(result: Any, Tout: tuple, op_name: str, convert: Callable) -> tuple:
    values = [] if result is None and not Tout else \
        list(result) if isinstance(result, (list, tuple)) else [result]
    if len(values) != len(Tout):
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op_name}: the function returned {len(values)} values but Tout lists "
            f"{len(Tout)} dtypes [Op:{op_name}]"))
    return tuple(convert(v, dtype, i) for i, (v, dtype) in enumerate(zip(values, Tout)))


def _rule(*inputs: Any, func: Callable, Tout: tuple, make_vjp: Any = None) -> list:
    return [TensorSpec(TensorShape(None), dtype) for dtype in Tout]


def _eager_kernel(*arrays: Any, func: Callable, Tout: tuple, make_vjp: Any = None) -> tuple:
    def convert(value: Any, dtype: Any, i: int) -> np.ndarray:
        try:
            return np.asarray(convert_to_tensor(value, dtype)._value)
        except (TypeError, ValueError) as exc:
            raise errors.InvalidArgumentError(errors.with_location(
                f"EagerPyFunc: output {i} of the function: {exc} [Op:EagerPyFunc]")) from None

    with eager_mode(), no_tapes():  # the function's ops run now, unseen by outer tapes
        try:
            result = func(*[wrap(a) for a in arrays])
        except Exception as exc:  # noqa: BLE001 - re-raised as TF's class for it
            _raise_as_op_error(exc, "EagerPyFunc")
        return _outputs(result, Tout, "EagerPyFunc", convert)


def _numpy_kernel(op_name: str) -> Callable:
    def kernel(*arrays: Any, func: Callable, Tout: tuple) -> tuple:
        def convert(value: Any, dtype: Any, i: int) -> np.ndarray:
            if isinstance(value, np.ndarray) and value.dtype != dtype.as_numpy_dtype and \
                    not (dtype.name == "string" and value.dtype.kind in "OSU"):
                raise errors.InvalidArgumentError(errors.with_location(
                    f"{i}-th value returned by pyfunc is {value.dtype}, but expects "
                    f"{dtype.name} [Op:{op_name}]"))
            try:
                return np.asarray(convert_to_tensor(value, dtype)._value)
            except (TypeError, ValueError) as exc:
                raise errors.InvalidArgumentError(errors.with_location(
                    f"{op_name}: output {i} of the function: {exc} [Op:{op_name}]")) from None

        with eager_mode(), no_tapes():
            try:
                result = func(*[a.copy() if isinstance(a, np.ndarray) else a for a in arrays])
            except Exception as exc:  # noqa: BLE001 - re-raised as TF's class for it
                _raise_as_op_error(exc, op_name)
            return _outputs(result, Tout, op_name, convert)
    return kernel


def _eager_grad(op: Any, *dys: Any) -> list:
    xs = list(op.inputs)
    positions = tuple(i for i, x in enumerate(xs) if x.dtype.is_floating or x.dtype.is_complex)
    if not positions:
        return [None] * len(xs)
    seeds = [array.zeros_like(y) if dy is None else dy for y, dy in zip(op.outputs, dys)]
    make_vjp = op.attrs["make_vjp"]
    vjp = make_vjp(op.attrs["func"], len(xs), positions)
    grads = bind(EAGER_PY_FUNC, xs + seeds,
                 {"func": vjp, "Tout": tuple(xs[i].dtype for i in positions),
                  "make_vjp": make_vjp}, name="EagerPyFuncGrad")
    out: list = [None] * len(xs)
    for i, g, x in zip(positions, grads, xs):
        out[i] = g
    return out


def _not_differentiable(op: Any, *dys: Any) -> list:
    return [None] * len(op.inputs)


EAGER_PY_FUNC = defop("EagerPyFunc", shape=_rule, kernel=_eager_kernel, grad=_eager_grad,
                      stateful=True, multi_output=True, same_dtype=False)
PY_FUNC = defop("PyFunc", shape=lambda *inputs, func, Tout: _rule(func=func, Tout=Tout),
                kernel=_numpy_kernel("PyFunc"), grad=_not_differentiable, stateful=True,
                multi_output=True, same_dtype=False)
PY_FUNC_STATELESS = defop("PyFuncStateless",
                          shape=lambda *inputs, func, Tout: _rule(func=func, Tout=Tout),
                          kernel=_numpy_kernel("PyFuncStateless"), grad=_not_differentiable,
                          multi_output=True, same_dtype=False)


def apply(opdef: Any, func: Callable, inp: Any, Tout: Any, name: Optional[str],
          attrs: Optional[dict] = None) -> Any:
    """Convert arguments, bind `opdef` and shape the result as TF does: a single dtype
    gives one tensor, a list or tuple of dtypes a list."""
    from kilnflow import dtypes as _dtypes
    if not callable(func):
        raise TypeError(f"Expected func to be callable, got func of type {type(func)}")
    single = not isinstance(Tout, (list, tuple))
    dtypes = tuple(_dtypes.as_dtype(d) for d in ([Tout] if single else Tout))
    inputs = [x if isinstance(x, Tensor) else convert_to_tensor(x)
              for x in ([] if inp is None else list(inp))]
    outputs = bind(opdef, inputs, {"func": func, "Tout": dtypes, **(attrs or {})},
                   name=name or opdef.name)
    return outputs[0] if single else list(outputs)
