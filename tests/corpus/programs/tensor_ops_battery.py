import numpy as np
import kilnflow as tf
x = tf.reshape(tf.range(12), [3, 4])
tests = [
 lambda: tf.zeros_like(x, dtype=tf.float32), lambda: tf.ones([2], tf.bool), lambda: tf.fill([2], "s"),
 lambda: tf.one_hot([0, 2], 3), lambda: tf.one_hot([1], 2, on_value=5, off_value=-1),
 lambda: tf.range(5, delta=2), lambda: tf.range(3, dtype=tf.float64), lambda: tf.range(10, 0, -3),
 lambda: tf.linspace(0, 1, 3), lambda: tf.eye(2, 3, dtype=tf.int32), lambda: tf.identity(x)[1:, ::2],
 lambda: tf.reverse(x, [1]), lambda: tf.roll(tf.range(5), 2, 0), lambda: tf.sort([3, 1, 2], direction="DESCENDING"),
 lambda: tf.argsort([3, 1, 2]), lambda: tf.math.top_k([1, 5, 3], 2), lambda: tf.unique_with_counts([1, 1, 2]),
 lambda: tf.where([True, False, True]), lambda: tf.boolean_mask(x, [True, False, True]),
 lambda: tf.clip_by_value(x, 2, 5), lambda: tf.math.bincount([1, 1, 3]), lambda: tf.cumsum(x, axis=0, reverse=True),
 lambda: tf.transpose(x, perm=[1, 0])[0], lambda: tf.shape(x, out_type=tf.int64), lambda: tf.size(x, out_type=tf.int64),
 lambda: tf.meshgrid([1, 2], [3, 4]), lambda: tf.math.add_n([x, x, x]), lambda: tf.math.is_nan([1.0, np.nan]),
 lambda: tf.math.reduce_euclidean_norm([3.0, 4.0]), lambda: tf.nn.relu([-1.0, 2.0]), lambda: tf.math.l2_normalize([3.0, 4.0]),
 lambda: tf.math.squared_difference(3, 5), lambda: tf.math.truediv(7, 2), lambda: tf.math.divide(7, 2), lambda: 7 / tf.constant(2),
 lambda: tf.constant(7) // tf.constant(2), lambda: tf.constant(-7) % 3, lambda: tf.math.mod(-7, 3), lambda: tf.math.truncatemod(-7, 3),
 lambda: tf.math.scalar_mul(2, x)[0], lambda: tf.tensordot([1, 2], [3, 4], 1), lambda: tf.math.reduce_all([[True, False]], axis=1),
 lambda: tf.dynamic_partition(tf.range(4), [0, 1, 0, 1], 2), lambda: tf.repeat([1, 2], 2), lambda: tf.repeat([[1], [2]], [1, 2], axis=0),
 lambda: tf.searchsorted([1, 3, 5], [2, 5]), lambda: tf.math.in_top_k([1], [[0.1, 0.9]], 1) if False else "skip",
 lambda: tf.gather(x, [0, 2], axis=1), lambda: tf.scatter_nd([[1]], [9], [3]),
 lambda: tf.tensor_scatter_nd_update(tf.zeros([3]), [[0]], [1.0]), lambda: tf.math.segment_mean([1.0, 3.0, 5.0], [0, 0, 1]),
 lambda: tf.nn.moments(tf.constant([1.0, 2.0, 3.0]), axes=[0]), lambda: tf.math.confusion_matrix([0, 1], [1, 1]),
 lambda: tf.rank(tf.zeros([2, 2, 2])), lambda: tf.zeros([0, 3]).shape, lambda: tf.ensure_shape(x, [3, None]).shape,
 lambda: tf.math.count_nonzero(x, axis=0), lambda: tf.nn.softmax([[1.0, 1.0]]), lambda: tf.math.sigmoid(0.0),
 lambda: tf.cast(tf.constant(2**31 - 1, tf.int64), tf.int32), lambda: tf.cast(-1, tf.uint8), lambda: tf.cast(300.7, tf.uint8),
 lambda: tf.constant([1, 2, 3])[tf.constant([True, False, True])] if False else "skip",
 lambda: tf.math.floordiv(7.5, 2.0),
]
for i, f in enumerate(tests):
    try:
        print(i, f())
    except Exception as e:
        print(i, "ERR", type(e).__name__)
