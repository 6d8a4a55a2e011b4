"""The kf.random namespace (tf.random): re-exports only."""
from kilnflow.ops.random import normal as normal
from kilnflow.ops.random import set_seed as set_seed
from kilnflow.ops.random import truncated_normal as truncated_normal
from kilnflow.ops.random import uniform as uniform
