# tf.random.set_seed with the stateful ops, eagerly: global seed and op seeds.
import numpy as np
import kilnflow as tf

np.set_printoptions(precision=8)
tf.random.set_seed(42)
print(tf.random.uniform([3]).numpy())
print(tf.random.uniform([3]).numpy())
print(tf.random.normal([2], mean=1.0, stddev=2.0).numpy())

tf.random.set_seed(42)
print("again:", tf.random.uniform([3]).numpy())

tf.random.set_seed(7)
print(tf.random.uniform([2], seed=1).numpy())
print(tf.random.uniform([2], seed=1).numpy())  # the same op keeps drawing
print(tf.random.uniform([4], minval=0, maxval=6, dtype=tf.int32, seed=1).numpy())
print(tf.random.truncated_normal([3], seed=2).numpy())
print(tf.random.uniform([2], minval=-3.0, maxval=3.0, seed=3).numpy())

tf.random.set_seed(7)
print("again:", tf.random.uniform([2], seed=1).numpy())
