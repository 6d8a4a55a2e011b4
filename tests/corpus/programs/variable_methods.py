import numpy as np
import kilnflow as tf
v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="m")
tests = [
 lambda: v.sparse_read([1]),
 lambda: v.gather_nd([[0, 1]]),
 lambda: v.synchronization,
 lambda: v.aggregation,
 lambda: v.constraint,
 lambda: v.get_shape(),
 lambda: v.ref() == v.ref(),
 lambda: v.experimental_ref() is not None,
 lambda: tf.Variable(1.0, shape=tf.TensorShape(None)).shape,
 lambda: tf.Variable([1.0], shape=[None]).assign([1.0, 2.0, 3.0]),
 lambda: tf.Variable(lambda: tf.ones([2])),
 lambda: tf.Variable(initial_value=3, dtype=tf.float32),
 lambda: v.scatter_nd_add([[1, 0]], [10.0]),
 lambda: v.scatter_nd_sub([[1, 0]], [10.0]),
 lambda: v.assign(v + 1.0, read_value=True).numpy(),
 lambda: v.assign_add(tf.ones([2, 2]), use_locking=True).numpy(),
 lambda: v.dtype.base_dtype,
 lambda: tf.Variable([1, 2]).assign_add([1.5, 1.0]),
 lambda: tf.Variable([1.0]).assign(np.array([2], np.int64)),
 lambda: v.device.endswith("CPU:0"),
 lambda: v.numpy().flags.writeable,
 lambda: abs(tf.Variable(-2.0)),
 lambda: -tf.Variable(2),
 lambda: tf.Variable(3) // 2,
 lambda: tf.Variable([True]) & tf.constant([False]),
 lambda: [r.numpy().tolist() for r in v],
 lambda: tf.Variable(2.0) == 2.0,
 lambda: tf.Variable(2.0) != tf.Variable(2.0),
 lambda: v[:, 0],
 lambda: v[tf.newaxis, 1],
 lambda: v[1, 1].assign(0.0).numpy().tolist(),
 lambda: v[:, 1].assign([8.0, 9.0]).numpy().tolist(),
]
for i, f in enumerate(tests):
    try:
        print(i, f())
    except Exception as e:
        print(i, "ERR", type(e).__name__)
