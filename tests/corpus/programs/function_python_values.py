# Python values in the trace key: bools, None, strings, tuples; concrete functions fix them.
import kilnflow as tf


@tf.function
def f(x, mode="sum", axis=None, keep=False):
    print("trace", mode, axis, keep)
    if mode == "sum":
        return tf.reduce_sum(x, axis=axis, keepdims=keep)
    return tf.reduce_max(x, axis=axis, keepdims=keep)


x = tf.constant([[1.0, 5.0], [3.0, 2.0]])
print(f(x).numpy())
print(f(x, "max").numpy())
print(f(x, "max", 0).numpy())
print(f(x, "max", 0, True).numpy())
print(f(x, mode="max", axis=0, keep=True).numpy())
print(f(x, "sum", (0, 1)).numpy())
print(f.experimental_get_tracing_count())
cf = f.get_concrete_function(tf.TensorSpec([2, 2], tf.float32), "max", 1)
print(cf(x).numpy())
print(cf.structured_input_signature)
try:
    cf(x, "sum", 1)
except TypeError as e:
    print("other Python value:", type(e).__name__)
