"""Samples of the ops in kilnflow/ops/py_func.py (see tests/ops/samples/__init__.py).

The ops are stateful (they run Python) but pure here: the functions compute with kf ops or
NumPy only, so every mode must agree. Their output shapes are unknown until they run."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, i32, rand


add("EagerPyFunc", lambda x: kf.py_function(lambda t: kf.sin(t) * t, [x], kf.float64),
    (rand(2, 3),), lambda x: np.sin(x) * x, differentiable=True, static_shape=False)
add("EagerPyFunc", lambda x, y: kf.py_function(lambda a, b: [a * b, a - b], [x, y],
                                                [kf.float64, kf.float64]),
    (rand(3), rand(3)), lambda x, y: [x * y, x - y], differentiable=True,
    static_shape=False, name="two_outputs")
add("EagerPyFunc", lambda x, n: kf.py_function(
        lambda a, k: a * kf.cast(k, kf.float64), [x, n], kf.float64),
    (rand(3), i32(3)), lambda x, n: x * 3.0, differentiable=True, wrt=(0,),
    static_shape=False, name="int_input")
add("PyFunc", lambda x: kf.numpy_function(lambda a: np.cumsum(a), [x], kf.float64),
    (rand(4),), np.cumsum, static_shape=False)
add("PyFuncStateless", lambda x: kf.numpy_function(lambda a: a[::-1].copy(), [x], kf.int32,
                                                   stateful=False),
    (i32([1, 2, 3]),), lambda x: x[::-1], static_shape=False)


def _raises(exc):
    def func(*args):
        raise exc
    return func


ERRORS.extend([
    ErrorSample("EagerPyFunc", lambda x: kf.py_function(_raises(ValueError("boom")), [x],
                                                        kf.float64),
                (rand(2),), errors.InvalidArgumentError, ("ValueError", "boom", "EagerPyFunc"),
                name="value_error"),
    ErrorSample("EagerPyFunc", lambda x: kf.py_function(_raises(KeyError("k")), [x],
                                                        kf.float64),
                (rand(2),), errors.UnknownError, ("KeyError",), name="key_error"),
    ErrorSample("EagerPyFunc", lambda x: kf.py_function(lambda t: kf.cast(t, kf.int32), [x],
                                                        kf.float64),
                (rand(2),), errors.InvalidArgumentError, ("EagerPyFunc", "output 0"),
                name="wrong_dtype"),
    ErrorSample("EagerPyFunc", lambda x: kf.py_function(lambda t: [t, t], [x], [kf.float64]),
                (rand(2),), errors.InvalidArgumentError, ("2 values", "1 dtypes"),
                name="wrong_count"),
    ErrorSample("PyFunc", lambda x: kf.numpy_function(lambda a: a.astype(np.float32), [x],
                                                      kf.float64),
                (rand(2),), errors.InvalidArgumentError, ("float32", "expects float64"),
                name="wrong_dtype"),
    ErrorSample("PyFunc", lambda x: kf.numpy_function(_raises(StopIteration()), [x],
                                                      kf.float64),
                (rand(2),), errors.OutOfRangeError, ("StopIteration",), name="stop_iteration"),
])
