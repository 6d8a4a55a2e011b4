import sys
import kilnflow as tf

out = sys.stdout
tf.print(tf.range(10), output_stream=out)
tf.print(tf.range(10), summarize=-1, output_stream=out)
tf.print(tf.range(10), summarize=2, output_stream=out)
tf.print("x:", tf.constant([[1.5, 2.0], [3.0, 4.0]]), output_stream=out)
tf.print(tf.constant(["a", "b"]), output_stream=out)
tf.print(tf.constant(3), tf.constant(2.5), "text", 7, output_stream=out)
tf.print(tf.reshape(tf.range(24), [2, 3, 4]), output_stream=out)
tf.print(tf.reshape(tf.range(100), [10, 10]), output_stream=out)
tf.print(tf.constant([True, False]), output_stream=out)
tf.print({"a": tf.constant(1), "b": [tf.constant(2.0)]}, output_stream=out)
tf.print("a", "b", sep="|", end="!\n", output_stream=out)
tf.print(tf.constant(1e-7), tf.constant(123456789.0), output_stream=out)
tf.print(tf.Variable([1.0, 2.0]), output_stream=out)
