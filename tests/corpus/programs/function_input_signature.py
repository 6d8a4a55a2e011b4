# input_signature fixes the trace; other shapes or dtypes are rejected.
import kilnflow as tf


@tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.int32)])
def next_collatz(x):
    print("Tracing with", x)
    return tf.where(x % 2 == 0, x // 2, 3 * x + 1)


print(next_collatz(tf.constant([1, 2])).numpy())
print(next_collatz(tf.constant([5, 6, 7])).numpy())
print("traces:", next_collatz.experimental_get_tracing_count())

try:
    next_collatz(tf.constant([[1, 2], [3, 4]]))
except (TypeError, ValueError) as e:
    print("shape mismatch:", type(e).__name__)

try:
    next_collatz(tf.constant([1.0, 2.0]))
except (TypeError, ValueError) as e:
    print("dtype mismatch:", type(e).__name__)

print("traces:", next_collatz.experimental_get_tracing_count())
print(next_collatz.input_signature)
