# tf.print formats tensors, nested structures and Python values.
import sys

import kilnflow as tf

out = sys.stdout
tf.print("scalar:", tf.constant(3), output_stream=out)
tf.print("vector:", tf.constant([1.5, 2.0, 3.25]), output_stream=out)
tf.print("matrix:", tf.constant([[1, 2], [3, 4]]), output_stream=out)
tf.print(tf.range(20), output_stream=out)
tf.print(tf.range(20), summarize=3, output_stream=out)
tf.print(tf.range(20), summarize=-1, output_stream=out)
tf.print("a", "b", sep="|", end="!\n", output_stream=out)
tf.print({"x": tf.constant(1), "y": [tf.constant(2.0), 3]}, output_stream=out)
tf.print(tf.constant(True), tf.constant([True, False]), output_stream=out)
tf.print(tf.constant(["hello", "world"]), output_stream=out)
tf.print(tf.zeros([2, 0]), output_stream=out)


@tf.function
def show(x):
    tf.print("in function:", x, x * 2, output_stream=out)
    return x


show(tf.constant([1, 2, 3]))
show(tf.constant([4, 5, 6]))
