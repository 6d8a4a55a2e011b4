# Python side effects run while tracing; tf.print runs on every call.
import sys

import kilnflow as tf


@tf.function
def f(x):
    print("Tracing with", x)
    tf.print("Executing with", x, output_stream=sys.stdout)
    return x * 2


print(f(tf.constant(1)).numpy())
print(f(tf.constant(2)).numpy())
print(f(tf.constant(3.0)).numpy())
print("traces:", f.experimental_get_tracing_count())

trace_log = []


@tf.function
def g(x):
    trace_log.append(1)
    return x + 1


for i in range(3):
    g(tf.constant(i))
print("trace_log length:", len(trace_log))
print("traces:", g.experimental_get_tracing_count())
