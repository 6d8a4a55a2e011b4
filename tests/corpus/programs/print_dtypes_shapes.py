import kilnflow as tf

for dt in [tf.float16, tf.float32, tf.float64, tf.bfloat16, tf.int8, tf.int16, tf.int32,
           tf.int64, tf.uint8, tf.uint16, tf.bool, tf.string, tf.complex64, tf.complex128]:
    print(dt, repr(dt), dt.name, dt.is_floating, dt.is_integer, dt.is_complex)
print([tf.float32, tf.int32])
print(tf.TensorShape([2, None, 3]))
print(repr(tf.TensorShape([2, None, 3])))
print(tf.TensorShape([2, None, 3]).as_list())
print([tf.TensorShape([1]), tf.TensorShape(None)])
print(tf.TensorSpec([None, 2], tf.float32))
print(repr(tf.TensorSpec([None, 2], tf.float32, name="x")))
print(tf.constant([[1, 2]]).get_shape())
print(tf.TensorShape([3, 4])[0], type(tf.TensorShape([3, 4])[0]).__name__)
