"""kf.py_function and kf.numpy_function: Python that runs when the graph runs.

Both run `func` on every call of a kf.function or Session.run (never at trace time only),
eagerly inside even while a graph is built around them. py_function hands `func`
EagerTensors and is differentiable: its gradient runs `func` again under a GradientTape
(built here, where the tape may be imported) and asks the tape for the vector-Jacobian
product. numpy_function hands ndarrays and has no gradient.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from kilnflow import nest
from kilnflow.autodiff.tape import GradientTape
from kilnflow.ops import array
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.py_func import EAGER_PY_FUNC, PY_FUNC, PY_FUNC_STATELESS, apply


def _make_vjp(func: Callable, n_inputs: int, positions: tuple) -> Callable:
    """A function of (inputs..., output gradients...) returning the gradients of the
    inputs at `positions`: `func` re-run under a tape (its ops were unseen the first time)."""
    def vjp(*args: Any) -> list:
        xs, dys = list(args[:n_inputs]), list(args[n_inputs:])
        with GradientTape() as tape:
            for i in positions:
                tape.watch(xs[i])
            result = func(*xs)
        ys = [convert_to_tensor(y) for y in nest.flatten(result)]
        sources = [xs[i] for i in positions]
        grads = tape.gradient(ys, sources, output_gradients=dys[:len(ys)])
        return [array.zeros_like(x) if g is None else g for x, g in zip(sources, grads)]
    return vjp


def py_function(func: Callable = None, inp: Any = None, Tout: Any = None,
                name: Optional[str] = None) -> Any:
    """Wraps a Python function into an op that runs it eagerly, also inside kf.function.

    `func` receives EagerTensors and returns tensors (or Python values) of the dtypes in
    `Tout`: a single dtype gives one tensor, a list of dtypes a list. Gradients flow
    through the TensorFlow ops `func` runs. The op is stateful: it runs on every call and
    is never pruned.

    >>> import kilnflow as kf
    >>> @kf.function
    ... def f(x):
    ...     return kf.py_function(lambda t: t * 2.0, [x], kf.float32)
    >>> f(kf.constant(3.0)).numpy()
    np.float32(6.0)
    """
    if Tout is None:
        raise TypeError("py_function() missing required argument 'Tout'")
    return apply(EAGER_PY_FUNC, func, inp, Tout, name, {"make_vjp": _make_vjp})


def numpy_function(func: Callable = None, inp: Any = None, Tout: Any = None,
                   stateful: bool = True, name: Optional[str] = None) -> Any:
    """Wraps a Python function taking and returning NumPy arrays into an op.

    Not differentiable. With `stateful=False` the op may be pruned or merged like a pure
    op (TF's PyFuncStateless); by default it runs on every call.

    >>> import kilnflow as kf
    >>> kf.numpy_function(lambda a: a + 1, [kf.constant([1, 2])], kf.int32).numpy().tolist()
    [2, 3]
    """
    if Tout is None:
        raise TypeError("numpy_function() missing required argument 'Tout'")
    return apply(PY_FUNC if stateful else PY_FUNC_STATELESS, func, inp, Tout, name)
