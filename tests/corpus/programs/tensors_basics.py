import kilnflow as tf

x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
print(x)
print(x.shape, x.dtype)
print(x + 1)
print(tf.reduce_sum(x, axis=0).numpy())
print(tf.constant("hello"))
print(tf.float32)
