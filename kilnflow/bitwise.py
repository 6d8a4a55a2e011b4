"""The kf.bitwise namespace (tf.bitwise): re-exports only."""
from kilnflow.ops.bitwise import bitwise_and as bitwise_and
from kilnflow.ops.bitwise import bitwise_or as bitwise_or
from kilnflow.ops.bitwise import bitwise_xor as bitwise_xor
from kilnflow.ops.bitwise import invert as invert
from kilnflow.ops.bitwise import left_shift as left_shift
from kilnflow.ops.bitwise import right_shift as right_shift
