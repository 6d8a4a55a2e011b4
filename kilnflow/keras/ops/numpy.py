"""keras.ops.numpy: the NumPy-like functions, gathered from their family files."""
from kilnflow.keras.ops.numpy_array import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy_index import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy_linear import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy_math import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy_reduce import *  # noqa: F401,F403
