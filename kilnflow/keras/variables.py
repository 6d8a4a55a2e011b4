"""keras.Variable: the weights Keras 3 layers own, as TF 2.21's tf.keras makes them.

A Keras 3 variable has a short `name` ('kernel') and a `path` ('sequential/dense/kernel'):
the names of the layers being built or called when it was made, then its name. kf's
`name_scope` plays no part (as in Keras 3). Underneath it is a kf.Variable whose handle is
named by the path, so graphs, checkpoints and saved models still see unique names.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.context import ctx
from kilnflow.variables import Variable as _TFVariable, creator_stack


class _PathStack(threading.local):
    def __init__(self) -> None:
        self.owners: list = []  # the layers (or optimizers, metrics) now building/calling


_STACK = _PathStack()


class path_scope:
    """Put `owner`'s name on the path of variables made inside (not twice in a row, so a
    layer's call that builds it does not repeat its name)."""

    __slots__ = ("_owner", "_pushed")

    def __init__(self, owner: Any):
        self._owner = owner
        self._pushed = False

    def __enter__(self) -> "path_scope":
        owners = _STACK.owners
        if not owners or owners[-1] is not self._owner:
            owners.append(self._owner)
            self._pushed = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pushed:
            _STACK.owners.pop()


def current_path(owner: Any = None) -> str:
    """The path prefix ('outer/inner/dense') for a variable `owner` makes now."""
    owners = list(_STACK.owners)
    if owner is not None and (not owners or owners[-1] is not owner):
        owners.append(owner)
    return "/".join(o.name for o in owners)


class Variable(_TFVariable):
    """A Keras 3 variable: `name` is the short name given to `add_weight`, `path` the
    full one.

    >>> import kilnflow as kf
    >>> layer = kf.keras.layers.Dense(2, name="d")
    >>> layer.build((None, 3))
    >>> layer.kernel.name, layer.kernel.path
    ('kernel', 'd/kernel')
    """

    def __init__(self, initializer: Any, shape: Any = None, dtype: Any = None,
                 trainable: bool = True, autocast: bool = True, aggregation: Any = "none",
                 synchronization: Any = "auto", name: Optional[str] = None,
                 path: Optional[str] = None):
        if name is None:
            from kilnflow.keras import backend
            name = backend.unique_object_name("variable")
        if "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain "
                             f"character `/`. Received: name={name}")
        if path is None:
            prefix = current_path()
            path = f"{prefix}/{name}" if prefix else name
        if callable(initializer):
            if shape is None:
                raise ValueError("When creating a Variable from an initializer, the `shape` "
                                 f"argument should be specified. Received: "
                                 f"initializer={initializer} and shape={shape}")
            init_dtype = _dtypes.as_dtype(dtype or "float32")
            value: Any = lambda: initializer(tuple(shape), dtype=init_dtype)  # noqa: E731
        else:
            value = initializer
            if dtype is None and not isinstance(initializer, _TFVariable) \
                    and not hasattr(initializer, "dtype"):
                arr = np.asarray(initializer)
                dtype = "float32" if arr.dtype.kind == "f" else \
                    ("int32" if arr.dtype.kind in "iu" else None)
        self._keras_name = name
        self._keras_path = path
        self.autocast = autocast
        super().__init__(value, trainable=trainable, dtype=dtype, name=path)

    @property
    def name(self) -> str:
        return self._keras_name

    @property
    def path(self) -> str:
        return self._keras_path

    def __repr__(self) -> str:
        head = f"<Variable path={self.path}, shape={tuple(self.shape.as_list())}, " \
               f"dtype={self.dtype.name}"
        value = self._handle.value
        if value is None or ctx.graph is not None:  # no value while a graph is built
            return head + ">"
        return head + f", value={np.asarray(self._handle.read())}>"

    __str__ = __repr__

    def __deepcopy__(self, memo: Any) -> "Variable":
        copy = Variable(np.array(self._handle.read()), trainable=self.trainable,
                        dtype=self.dtype, name=self.name, path=self.path)
        memo[id(self)] = copy
        return copy


def make_variable(initializer: Any, name: str, path: str, shape: Any = None,
                  dtype: Any = None, trainable: bool = True) -> Any:
    """A keras.Variable, except under a variable creator scope (a distribution strategy's):
    then the creators make it, as kf.Variable(name=path), given a `path` attribute."""
    if not creator_stack():
        return Variable(initializer, shape=shape, dtype=dtype, trainable=trainable,
                        name=name, path=path)
    value = (lambda: initializer(tuple(shape), dtype=_dtypes.as_dtype(dtype or "float32"))) \
        if callable(initializer) else initializer
    var = _TFVariable(value, trainable=trainable, dtype=dtype, name=path)
    try:
        var.path = path
    except AttributeError:  # a variable class that defines its own `path`
        pass
    return var


def is_keras_variable(value: Any) -> bool:
    """What a Keras 3 layer tracks as a weight when assigned to an attribute: a
    keras.Variable (or one a strategy made for Keras), never a plain kf.Variable."""
    return isinstance(value, Variable) or \
        (isinstance(value, _TFVariable) and "path" in getattr(value, "__dict__", {}))
