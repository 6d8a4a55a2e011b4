import kilnflow as tf

@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)
    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad

x = tf.constant(100.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = log1pexp(x)
print(tape.gradient(y, x))

@tf.custom_gradient
def clip_gradient(x):
    def grad(upstream):
        return tf.clip_by_value(upstream, -0.5, 0.5)
    return tf.identity(x), grad

v = tf.Variable([1.0, 2.0])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(clip_gradient(v) * tf.constant([3.0, 0.25]))
print(tape.gradient(y, v))

@tf.custom_gradient
def scale_grad(x):
    return x * 1.0, lambda dy: dy * 10.0

x = tf.constant([1.0, 2.0])
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.reduce_sum(scale_grad(x) ** 2)
print(tape.gradient(y, x))
x = tf.constant(4.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.sqrt(x)
print(tape.gradient(y, x))
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.identity(x) * tf.stop_gradient(x)
print(tape.gradient(y, x))
