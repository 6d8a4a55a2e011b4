import kilnflow as tf
x = tf.Variable([1.0, 2.0])
c = tf.constant([3.0, 4.0])
tests = [
 lambda t: tf.reduce_prod(x),
 lambda t: tf.math.reduce_std(x),
 lambda t: tf.norm(x - c),
 lambda t: tf.nn.softmax(x)[0],
 lambda t: tf.concat([x, c], 0) * 2,
 lambda t: tf.stack([x, x]),
 lambda t: tf.cast(x, tf.int32),
 lambda t: tf.math.argmax(x),
 lambda t: tf.where(x > 1.5, x, 0.0),
 lambda t: tf.clip_by_value(x, 1.5, 3.0),
 lambda t: tf.math.maximum(x, 1.5),
 lambda t: tf.reduce_mean(tf.square(x)),
 lambda t: tf.math.divide_no_nan(x, tf.constant([0.0, 2.0])),
 lambda t: tf.tile(x, [2]),
 lambda t: tf.reverse(x, [0]) * c,
 lambda t: tf.linalg.matmul(tf.reshape(x, [1, 2]), tf.reshape(c, [2, 1])),
 lambda t: tf.math.pow(x, 3.0),
 lambda t: tf.math.sqrt(x),
 lambda t: tf.strings.as_string(x),
 lambda t: tf.math.round(x * 1.3),
 lambda t: tf.math.floor(x),
 lambda t: tf.math.sign(x),
 lambda t: tf.size(x),
 lambda t: tf.identity(x),
 lambda t: tf.math.segment_sum(x, [0, 0]),
 lambda t: tf.expand_dims(x, 0)[0, 1],
 lambda t: tf.einsum("i,i->", x, c),
 lambda t: tf.math.cumprod(x),
 lambda t: tf.math.reduce_logsumexp(x),
 lambda t: tf.nn.l2_loss(x),
 lambda t: tf.math.abs(x - 1.5),
 lambda t: tf.math.minimum(x, x),
]
for i, f in enumerate(tests):
    try:
        with tf.GradientTape() as tape:
            y = f(tape)
        g = tape.gradient(y, x)
        print(i, None if g is None else tf.round(tf.convert_to_tensor(g) * 1e4) / 1e4)
    except Exception as e:
        print(i, "ERR", type(e).__name__)
