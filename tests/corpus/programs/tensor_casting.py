import kilnflow as tf

the_f64_tensor = tf.constant([2.2, 3.3, 4.4], dtype=tf.float64)
the_f16_tensor = tf.cast(the_f64_tensor, dtype=tf.float16)
the_u8_tensor = tf.cast(the_f16_tensor, dtype=tf.uint8)
print(the_u8_tensor)
print(tf.cast(tf.constant([1.7, -1.7]), tf.int32))
print(tf.cast(tf.constant([0, 1, 2]), tf.bool))
print(tf.cast(tf.constant([True, False]), tf.float32))
print(tf.cast(tf.constant(1.5), tf.complex64))
print(tf.saturate_cast(tf.constant([300, -5]), tf.uint8))
print(tf.constant([1, 2]) / 2)
try:
    tf.constant([1, 2]) + tf.constant([1.0, 2.0])
except Exception as e:
    print(type(e).__name__)
print(tf.convert_to_tensor([1, 2], dtype=tf.float32))
print(tf.convert_to_tensor(1.5))
print(tf.bitcast(tf.constant(1.0), tf.int32))
