import kilnflow as tf

print(tf.range(1000))
print(tf.range(1001))
print(tf.reshape(tf.range(2000), [40, 50]))
print(tf.zeros([3, 400]))
print(tf.reshape(tf.range(24000.0), [20, 30, 40]))
print(tf.range(20.0) / 7.0)
print(tf.ones([10, 10]))
