"""kf.summary.experimental (tf.summary.experimental): re-exports only."""
from kilnflow.summary.writer import get_step as get_step
from kilnflow.summary.writer import set_step as set_step
from kilnflow.summary.api import summary_scope as summary_scope
from kilnflow.summary.api import write_raw_pb as write_raw_pb
