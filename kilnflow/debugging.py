"""The kf.debugging namespace (tf.debugging): re-exports only."""
from kilnflow.ops.control_flow import Assert as Assert  # noqa: F401
