import numpy as np
import kilnflow as tf

a = tf.constant(3)
b = tf.constant(3.0)
c = tf.constant([1, 2, 3], dtype=tf.int64)
d = tf.constant([True, False])
e = tf.constant([1.5, 2.5], dtype=tf.float64)
f = tf.constant(2.0, dtype=tf.float16)
g = tf.constant([1, 2], dtype=tf.uint8)
h = tf.constant(1 + 2j)
for t in [a, b, c, d, e, f, g, h]:
    print(t)
    print(repr(t))
    print(t.dtype, repr(t.dtype), t.dtype.name)
print(tf.int32 == tf.int32, tf.float32.is_floating, tf.int8.is_integer)
print(tf.float32.min, tf.int8.max, tf.uint8.min)
print(tf.as_dtype(np.float32), tf.as_dtype("int16"))
print(tf.dtypes.as_dtype(np.int64).size)
print(tf.complex64.real_dtype, tf.float32.as_numpy_dtype)
