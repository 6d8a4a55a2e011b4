"""The kf.math namespace (tf.math): re-exports only."""
from kilnflow.ops.math import *  # noqa: F401,F403
from kilnflow.ops.math import abs, pow, round  # noqa: F401,A004
from kilnflow.ops.bitwise import *  # noqa: F401,F403
from kilnflow.ops.sorting import top_k as top_k  # noqa: F401
