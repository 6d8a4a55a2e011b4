"""keras.ops on functional-model placeholders: as in Keras 3, `ops.softmax(keras_tensor)`
gives a KerasTensor, so `keras.Model(inputs, ops.add(dense(inputs), 1.0))` works. An op called
with KerasTensors among its arguments becomes a Lambda layer over them."""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable

from kilnflow import nest
from kilnflow.keras import backend
from kilnflow.keras.layers.base import KerasTensor, has_keras_tensors
from kilnflow.keras.layers.core import Lambda

# ops that take functions or give Python values: they never become layers
PLAIN = frozenset({"is_tensor", "dtype", "shape", "ndim", "convert_to_numpy", "custom_gradient",
                   "vectorize", "cond", "while_loop", "fori_loop", "scan", "map", "switch",
                   "associative_scan", "vectorized_map", "jvp", "SeedGenerator"})


def _has_keras_tensor(args: tuple, kwargs: Dict[str, Any]) -> bool:
    for value in args + tuple(kwargs.values()):
        if isinstance(value, KerasTensor):
            return True
        if isinstance(value, (list, tuple, dict)) and has_keras_tensors(value):
            return True
    return False


def keras_aware(fn: Callable) -> Callable:
    """fn, or a Lambda layer applying fn when some argument is a KerasTensor."""
    @functools.wraps(fn)
    def op(*args: Any, **kwargs: Any) -> Any:
        if not _has_keras_tensor(args, kwargs):
            return fn(*args, **kwargs)
        flat = nest.flatten((args, kwargs))
        placeholders = [t for t in flat if isinstance(t, KerasTensor)]

        def apply(inputs: Any) -> Any:
            values = iter(inputs)
            filled = [next(values) if isinstance(t, KerasTensor) else t for t in flat]
            call_args, call_kwargs = nest.pack_sequence_as((args, kwargs), filled)
            return fn(*call_args, **call_kwargs)
        return Lambda(apply, name=backend.unique_object_name(fn.__name__))(placeholders)
    op.keras_aware = True
    return op


def wrap_modules(modules: Iterable[Any]) -> None:
    """Replace every public op of `modules` (their __all__) by its keras_aware version, the
    same wrapper object wherever a function is re-exported."""
    wrapped: Dict[int, Callable] = {}
    for module in modules:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if name in PLAIN or not callable(obj) or isinstance(obj, type) or getattr(
                    obj, "keras_aware", False):
                continue
            if id(obj) not in wrapped:
                wrapped[id(obj)] = keras_aware(obj)
            setattr(module, name, wrapped[id(obj)])
