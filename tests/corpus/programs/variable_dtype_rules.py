import numpy as np
import kilnflow as tf

print(tf.Variable(1).dtype, tf.Variable(1.0).dtype, tf.Variable(True).dtype)
print(tf.Variable(np.float64(1.0)).dtype)
print(tf.Variable(np.array([1, 2], dtype=np.int64)).dtype)
print(tf.Variable("abc"))
print(tf.Variable([1.0, 2.0], dtype=tf.float16))
v = tf.Variable(2.0)
print(v * 2, 2 * v, v + tf.constant(1.0))
print(v ** 2)
print(tf.Variable([[1, 2], [3, 4]]) @ tf.Variable([[1], [1]]))
print(tf.cast(v, tf.int32))
print(v.numpy(), float(v), type(v.numpy()).__name__)
print(np.array(tf.Variable([1, 2])))
print(isinstance(v, tf.Variable), tf.is_tensor(v))
print(tf.Variable(tf.constant([1, 2], tf.int8)))
print(v > 1.0)
