"""The kf.debugging namespace (tf.debugging): re-exports only."""
from kilnflow.ops.logging import Assert as Assert  # noqa: F401
