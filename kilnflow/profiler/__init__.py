"""kf.profiler (tf.profiler): Chrome traces and top-op tables of compiled functions.
Re-exports only."""
from kilnflow.profiler import experimental as experimental
