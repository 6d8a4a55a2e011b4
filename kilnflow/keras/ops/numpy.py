"""keras.ops.numpy: the NumPy-like functions, gathered from their family files."""
from kilnflow.keras.ops import numpy_array, numpy_index, numpy_linear, numpy_math, numpy_reduce
from kilnflow.keras.ops.numpy_array import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy_index import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy_linear import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy_math import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy_reduce import *  # noqa: F401,F403

__all__ = sorted(set(numpy_array.__all__ + numpy_index.__all__ + numpy_linear.__all__
                     + numpy_math.__all__ + numpy_reduce.__all__))
