"""kf.summary (tf.summary): TensorBoard event files. Needs the optional extra `tensorboard`
(create_file_writer raises an ImportError naming it otherwise). Re-exports only."""
from kilnflow.summary import experimental as experimental
from kilnflow.summary.api import audio as audio
from kilnflow.summary.api import graph as graph
from kilnflow.summary.api import write as write
from kilnflow.summary.api import histogram as histogram
from kilnflow.summary.api import image as image
from kilnflow.summary.api import scalar as scalar
from kilnflow.summary.api import text as text
from kilnflow.summary.trace import trace_export as trace_export
from kilnflow.summary.trace import trace_off as trace_off
from kilnflow.summary.trace import trace_on as trace_on
from kilnflow.summary.writer import SummaryWriter as SummaryWriter
from kilnflow.summary.writer import create_file_writer as create_file_writer
from kilnflow.summary.writer import create_noop_writer as create_noop_writer
from kilnflow.summary.writer import flush as flush
from kilnflow.summary.writer import record_if as record_if
from kilnflow.summary.writer import should_record_summaries as should_record_summaries
