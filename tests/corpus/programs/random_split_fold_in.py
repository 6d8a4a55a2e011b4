# tf.random.split and tf.random.fold_in: new stateless seeds from old ones.
import numpy as np
import kilnflow as tf

np.set_printoptions(precision=8)
seed = tf.constant([10, 20])
new_seeds = tf.random.split(seed, num=3)
print(new_seeds.numpy())
for s in new_seeds:
    print(tf.random.stateless_uniform([2], seed=s).numpy())
print(tf.random.fold_in(seed, 3).numpy())
print(tf.random.fold_in(tf.constant([10, 20], tf.int64), tf.constant(3, tf.int64)).numpy())
step_seeds = [tf.random.fold_in(seed, step) for step in range(3)]
print(np.stack([s.numpy() for s in step_seeds]))
print(tf.random.split(tf.constant([1, 1], tf.int64), 2).numpy())
