import kilnflow as tf

x = tf.constant([[1], [2], [3]])
print(x.shape)
print(x.shape.as_list())
reshaped = tf.reshape(x, [1, 3])
print(x.shape)
print(reshaped.shape)
rank_3_tensor = tf.reshape(tf.range(30), [3, 2, 5])
print(tf.reshape(rank_3_tensor, [-1]))
print(tf.reshape(rank_3_tensor, [3*2, 5]), "\n")
print(tf.reshape(rank_3_tensor, [3, -1]))
print(tf.transpose(tf.reshape(tf.range(6), [2, 3])))
print(tf.expand_dims(tf.constant([1, 2]), 0))
print(tf.squeeze(tf.zeros([1, 2, 1])).shape)
try:
    tf.reshape(rank_3_tensor, [7, -1])
except Exception as e:
    print(f"{type(e).__name__}")
