# Stateless uniform draws: the same seed gives the same numbers, in any dtype.
import numpy as np
import kilnflow as tf

np.set_printoptions(precision=8)
seed = [42, 7]
a = tf.random.stateless_uniform([2, 3], seed=seed)
b = tf.random.stateless_uniform([2, 3], seed=seed)
print(a.numpy())
print("same seed, same numbers:", bool(tf.reduce_all(a == b)))
print(tf.random.stateless_uniform([4], seed=[1, 2], minval=-5.0, maxval=5.0).numpy())
print(tf.random.stateless_uniform([3], seed=[1, 2], dtype=tf.float64).numpy())
print(tf.random.stateless_uniform([5], seed=[1, 2], dtype=tf.float16).numpy())
print(tf.random.stateless_uniform([6], seed=[3, 4], minval=0, maxval=10, dtype=tf.int32).numpy())
print(tf.random.stateless_uniform([3], seed=[3, 4], minval=-100, maxval=100,
                                  dtype=tf.int64).numpy())
print(tf.random.stateless_uniform([2], seed=[3, 4], minval=None, maxval=None,
                                  dtype=tf.int32).numpy())
print(tf.random.stateless_uniform([2], seed=[3, 4], minval=None, maxval=None,
                                  dtype=tf.uint64).numpy())
seed64 = tf.constant([2**40, -9], dtype=tf.int64)
print(tf.random.stateless_uniform([4], seed=seed64).numpy())
for alg in ["philox", "auto_select"]:
    print(alg, tf.random.stateless_uniform([2], seed=[9, 9], alg=alg).numpy())
x = tf.random.stateless_uniform([1000], seed=[5, 6])
print("mean in [0.45, 0.55]:", 0.45 < float(tf.reduce_mean(x)) < 0.55)
