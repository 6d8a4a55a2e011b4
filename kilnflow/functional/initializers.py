"""TF 2's initializers at top level (tf.constant_initializer, tf.zeros_initializer, ...):
objects called with a shape and a dtype that return a tensor of initial values, with
get_config / from_config. They are TF's init_ops_v2 classes, not Keras's (whose Constant
broadcasts instead of reshaping and whose defaults differ).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.ops import array, random, stateless_random
from kilnflow.ops.convert import constant


class Initializer:
    """Base class: `initializer(shape, dtype)` returns a tensor of initial values."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError("Initializer subclasses implement __call__")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Initializer":
        config = dict(config)
        config.pop("dtype", None)  # TF 1 configs carry one
        return cls(**config)


def _dtype(dtype: Any) -> _dtypes.DType:
    return _dtypes.float32 if dtype is None else _dtypes.as_dtype(dtype)


def _numeric_or_bool(dtype: Any) -> _dtypes.DType:
    dtype = _dtype(dtype)
    if dtype.kind not in "biufc":  # (a DType's is_numeric also counts strings)
        raise ValueError(f"Argument `dtype` expected to be numeric or boolean. "
                         f"Received {dtype}.")
    return dtype


class Zeros(Initializer):
    """Tensors of zeros.

    >>> import kilnflow as kf
    >>> kf.zeros_initializer()([2], kf.int32).numpy().tolist()
    [0, 0]
    """

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return array.zeros(shape, _numeric_or_bool(dtype))


class Ones(Initializer):
    """Tensors of ones."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return array.ones(shape, _numeric_or_bool(dtype))


class Constant(Initializer):
    """Tensors holding `value`: a scalar fills the shape, a list or array is reshaped to it
    (it must have as many elements).

    >>> import kilnflow as kf
    >>> kf.constant_initializer([1, 2, 3, 4])([2, 2], kf.float32).numpy().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """

    def __init__(self, value: Any = 0):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError(f"Invalid type for initial value={value} of type: "
                            f"{type(value).__name__}. Expected Python scalar, list or tuple "
                            f"of values, or numpy.ndarray.")
        self.value = value

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        # no dtype: the value's own (TF 2.21 gives int32 for a list of ints)
        dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        values = np.asarray(self.value)
        dims = [int(d) for d in shape]
        if values.ndim and values.size != int(np.prod(dims)):
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                            f"{values} (converted from {self.value}) has {values.size} "
                            f"elements, but got `shape` {tuple(dims)} with "
                            f"{int(np.prod(dims))} elements).")
        return constant(self.value, dtype=dtype, shape=dims)

    def get_config(self) -> dict:
        return {"value": self.value}


class RandomNormal(Initializer):
    """Tensors drawn from a normal distribution (floating dtypes only); with a seed, the
    same values on every call (stateless draws from seed [seed, 0], as TF)."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Optional[int] = None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        dtype = _dtype(dtype)
        if not dtype.is_floating:
            raise ValueError(f"Argument `dtype` is expected to be floating point. "
                             f"Received: {dtype}.")
        if self.seed is not None:  # TF: a seeded initializer gives the same values each call
            return stateless_random.stateless_normal(shape, [self.seed, 0], self.mean,
                                                     self.stddev, dtype)
        return random.normal(shape, self.mean, self.stddev, dtype)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    """Tensors drawn uniformly from [minval, maxval) (floating or integer dtypes)."""

    def __init__(self, minval: Any = -0.05, maxval: Any = 0.05, seed: Optional[int] = None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        dtype = _dtype(dtype)
        if not (dtype.is_floating or dtype.is_integer):
            raise ValueError(f"Argument `dtype` is expected to be floating point or integer. "
                             f"Received: {dtype}.")
        if self.seed is not None:
            return stateless_random.stateless_uniform(shape, [self.seed, 0], self.minval,
                                                      self.maxval, dtype)
        return random.uniform(shape, self.minval, self.maxval, dtype)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}
