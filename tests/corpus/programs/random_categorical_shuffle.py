# Sampling classes from logits and shuffling, seeded and stateless.
import numpy as np
import kilnflow as tf

logits = tf.math.log([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]])
print(tf.random.stateless_categorical(logits, 10, seed=[1, 2]).numpy())
print(tf.random.stateless_categorical(logits, 4, seed=[1, 2], dtype=tf.int32).numpy())
print(tf.random.stateless_categorical([[0.0, -np.inf, 0.0]], 6, seed=[7, 7]).numpy())

tf.random.set_seed(11)
print(tf.random.categorical(logits, 6).numpy())
print(tf.random.categorical(logits, 6, seed=3).numpy())
print(tf.random.categorical(logits, 6, seed=3).numpy())

x = tf.reshape(tf.range(12), [6, 2])
print(tf.random.experimental.stateless_shuffle(x, seed=[4, 4]).numpy())
print(tf.random.shuffle(tf.range(8), seed=1).numpy())
print(tf.random.shuffle(tf.range(8), seed=1).numpy())
letters = tf.constant([1.5, 2.5, 3.5, 4.5])
print(tf.random.shuffle(letters).numpy())
