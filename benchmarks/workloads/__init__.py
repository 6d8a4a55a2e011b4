"""The workloads, in the order `python -m benchmarks.run` runs them.

Each module defines NAME, DESCRIPTION and cases(config), which yields harness.Case objects
one at a time (so big inputs are freed before the next case is built).
"""

WORKLOADS = (
    "call_overhead",
    "char_unpack",
    "mlp_train_step",
    "trace_time",
    "elementwise_chain",
    "while_loop",
    "rnn_train_step",
    "checkpoint_io",
    "retrace_scaling",
    "data_pipeline",
    "jit_compile",
)
