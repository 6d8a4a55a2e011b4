import numpy as np
import kilnflow as tf

for d in [tf.float16, tf.float32, tf.float64, tf.int8, tf.int32, tf.int64, tf.uint8,
          tf.uint16, tf.bool, tf.string, tf.complex64, tf.complex128]:
    row = [d.name, d.size, d.is_numpy_compatible, d.is_quantized, d.is_unsigned, d.is_bool,
           d.real_dtype, d.base_dtype, d.as_datatype_enum]
    for attr in ["min", "max", "limits"]:
        try:
            row.append(getattr(d, attr))
        except Exception as e:
            row.append(type(e).__name__)
    print(*row)
print(tf.as_dtype("float"), tf.as_dtype("double"), tf.as_dtype(np.dtype("int16")))
print(tf.as_dtype(tf.float32) is tf.float32, tf.dtypes.float32 is tf.float32)
print(tf.float32.is_compatible_with(tf.float32), tf.float32 == "float32", tf.int32 != tf.int64)
print(tf.TensorShape([1, 2]) + tf.TensorShape([3]), [4] + tf.TensorShape([5]))
print(tf.TensorShape([1, None]) + [2])
print(sorted([tf.int8.name, tf.float64.name]), {tf.float32: "f32"}[tf.float32])
