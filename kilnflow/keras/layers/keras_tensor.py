"""KerasTensor, the symbolic value the functional API passes around, and Node, one
layer call on KerasTensors (split from layers/base.py, which re-exports both)."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import dtypes as _dtypes
from kilnflow import nest
from kilnflow.keras import backend
from kilnflow.shapes import TensorShape


class KerasTensor:
    """A symbolic input or output in a functional model: a shape, a dtype, and the layer
    call (`_keras_history`) that produced it. Python operators on it become layers."""

    __array_priority__ = 200

    def __init__(self, shape: Any, dtype: Any = None, name: Optional[str] = None,
                 history: Optional[tuple] = None):
        self.shape = TensorShape(shape)
        self.dtype = _dtypes.as_dtype(dtype or backend.floatx())
        self.name = name
        self._keras_history = history  # (layer, node index, output index)

    @property
    def ndim(self) -> Optional[int]:
        return self.shape.rank

    def __repr__(self) -> str:
        layer = self._keras_history[0].name if self._keras_history else None
        return (f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}, "
                f"name={self.name or layer}>")

    def _op(self, fn: Any, *others: Any, name: str) -> "KerasTensor":
        from kilnflow.keras.layers.core import Lambda
        return Lambda(fn, name=backend.unique_object_name(name))(self, *others)

    def _merge(self, other: Any, layer_name: str, fn: Any, swap: bool = False) -> Any:
        """Two KerasTensors combine through the merge layer (Add, Subtract, Multiply), which
        a saved model can rebuild; anything else becomes a Lambda."""
        if isinstance(other, KerasTensor):
            from kilnflow.keras.layers import core
            pair = [other, self] if swap else [self, other]
            return getattr(core, layer_name)()(pair)
        return self._op(fn, other, name=backend.to_snake_case(layer_name))

    def __add__(self, y): return self._merge(y, "Add", lambda a, b: a + b)
    def __radd__(self, x): return self._merge(x, "Add", lambda a, b: b + a, swap=True)
    def __sub__(self, y): return self._merge(y, "Subtract", lambda a, b: a - b)
    def __rsub__(self, x): return self._merge(x, "Subtract", lambda a, b: b - a, swap=True)
    def __mul__(self, y): return self._merge(y, "Multiply", lambda a, b: a * b)
    def __rmul__(self, x): return self._merge(x, "Multiply", lambda a, b: b * a, swap=True)
    def __truediv__(self, y): return self._op(lambda a, b: a / b, y, name="truediv")
    def __matmul__(self, y): return self._op(lambda a, b: a @ b, y, name="matmul")
    def __neg__(self): return self._op(lambda a: -a, name="negative")
    def __pow__(self, y): return self._op(lambda a, b: a ** b, y, name="pow")
    def __getitem__(self, key): return self._op(lambda a: a[key], name="getitem")

    def __bool__(self) -> bool:
        raise TypeError("A KerasTensor is symbolic: it has no value to use as a Python bool. "
                        "Put value-dependent logic in a layer's call().")

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise TypeError(f"A KerasTensor ({self!r}) has no value: it is a functional-model "
                        "placeholder. Wrap kf operations on it in keras.layers.Lambda.")


class Node:
    """One call of a layer on KerasTensors: its arguments (with KerasTensors inside) and
    the KerasTensors it produced."""

    def __init__(self, layer: Any, args: tuple, kwargs: dict, outputs: Any):
        self.layer = layer
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs
        self.parents = [t for t in nest.flatten((args, kwargs)) if isinstance(t, KerasTensor)]

    def __repr__(self) -> str:
        return f"<Node {self.layer.name}>"


def has_keras_tensors(structure: Any) -> bool:
    return any(isinstance(t, KerasTensor) for t in nest.flatten(structure))
