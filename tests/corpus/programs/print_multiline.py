import kilnflow as tf

print(tf.constant([1.0, 2.0, 3.0]))
print(tf.constant([[1, 2, 3], [4, 5, 6]]))
print(tf.reshape(tf.range(24), [2, 3, 4]))
print(tf.constant([[0.5, 1.25], [100.0, -3.0]]))
print(tf.constant([[True, False], [False, True]]))
print(tf.zeros([2, 0]))
print(tf.zeros([0]))
print(tf.constant([[1e-8, 1.0]]))
print(tf.constant([1e10, 1.0]))
print(tf.constant([[1.0 / 3.0, 2.0 / 3.0]], dtype=tf.float64))
print(tf.reshape(tf.range(8.0), [2, 2, 2]))
print(tf.constant([[[1]]]))
