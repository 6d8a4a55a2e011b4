"""TF1 names that TF 2 renamed or whose arguments changed: to_float, random_normal,
set_random_seed, reduce_*(keep_dims=, reduction_indices=), name_scope(name, default_name,
values), so `import kilnflow.compat.v1 as tf` runs TF1 code as written.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional

from kilnflow import dtypes as _dtypes
from kilnflow.context import ctx
from kilnflow.ops import random as _random
from kilnflow.ops import reduction as _reduction
from kilnflow.ops.math import cast, log as log  # noqa: F401 - tf.log in TF1

random_normal = _random.normal
random_uniform = _random.uniform
truncated_normal = _random.truncated_normal
set_random_seed = _random.set_seed


def to_float(x: Any, name: str = "ToFloat") -> Any:
    return cast(x, _dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Any:
    return cast(x, _dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Any:
    return cast(x, _dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Any:
    return cast(x, _dtypes.int64, name=name)


def _v1_reduction(reduce: Callable) -> Callable:
    def apply(input_tensor: Any, axis: Any = None, keepdims: Any = None,
              name: Optional[str] = None, reduction_indices: Any = None,
              keep_dims: Any = None) -> Any:
        if axis is not None and reduction_indices is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'.")
        if keepdims is not None and keep_dims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'.")
        axis = axis if axis is not None else reduction_indices
        keep = keepdims if keepdims is not None else keep_dims
        return reduce(input_tensor, axis=axis, keepdims=bool(keep), name=name)
    apply.__name__ = reduce.__name__
    apply.__doc__ = f"{reduce.__name__} with TF1's keep_dims and reduction_indices aliases."
    return apply


reduce_sum = _v1_reduction(_reduction.reduce_sum)
reduce_mean = _v1_reduction(_reduction.reduce_mean)
reduce_max = _v1_reduction(_reduction.reduce_max)
reduce_min = _v1_reduction(_reduction.reduce_min)
reduce_prod = _v1_reduction(_reduction.reduce_prod)
reduce_any = _v1_reduction(_reduction.reduce_any)
reduce_all = _v1_reduction(_reduction.reduce_all)


@contextlib.contextmanager
def name_scope(name: Optional[str], default_name: Optional[str] = None,
               values: Any = None) -> Iterator[str]:
    """TF1's name_scope(name, default_name, values): `default_name` when name is None."""
    chosen = name if name is not None else default_name
    if chosen is None:
        raise ValueError("name_scope needs a name or a default_name")
    if ctx.graph is None:
        yield ""
        return
    with ctx.graph.name_scope(chosen) as scope:
        yield scope
