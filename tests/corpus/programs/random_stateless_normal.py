# Stateless normal and truncated normal draws, with mean/stddev and several dtypes.
import numpy as np
import kilnflow as tf

np.set_printoptions(precision=8)
print(tf.random.stateless_normal([2, 2], seed=[1, 2]).numpy())
print(tf.random.stateless_normal([3], seed=[1, 2], mean=10.0, stddev=0.5).numpy())
print(tf.random.stateless_normal([4], seed=[5, 5], dtype=tf.float16).numpy())
print(tf.random.stateless_normal([3], seed=[5, 5], dtype=tf.float64).numpy())
t = tf.random.stateless_truncated_normal([6], seed=[8, 1])
print(t.numpy())
print("all within 2 stddevs:", bool(tf.reduce_all(tf.abs(t) < 2.0)))
print(tf.random.stateless_truncated_normal([2, 3], seed=[8, 1], mean=1.0, stddev=0.1).numpy())
print(tf.random.stateless_truncated_normal([5], seed=[0, 0], dtype=tf.float16).numpy())

@tf.function
def noisy(x, seed):
    return x + tf.random.stateless_normal(tf.shape(x), seed=seed, stddev=0.01)

print(noisy(tf.ones([3]), tf.constant([4, 2])).numpy())
print(noisy(tf.ones([3]), tf.constant([4, 2])).numpy())
