import kilnflow as tf

t1 = tf.constant([[1, 2, 3], [4, 5, 6]])
t2 = tf.constant([[7, 8, 9], [10, 11, 12]])
print(tf.concat([t1, t2], 0))
print(tf.concat([t1, t2], 1))
print(tf.concat([t1, t2], -1))
print(tf.stack([t1, t2]))
print(tf.stack([t1, t2], axis=1))
print(tf.unstack(t1))
print(tf.split(tf.range(6), 3))
print(tf.split(tf.range(6), [1, 5]))
print(tf.tile(tf.constant([[1, 2]]), [2, 3]))
print(tf.pad(t1, [[1, 0], [0, 2]]))
