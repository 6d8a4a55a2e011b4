import kilnflow as tf

x = tf.Variable(1.0)
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        y = x * x * x
    dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)
print("dy_dx:", dy_dx.numpy())
print("d2y_dx2:", d2y_dx2.numpy())
x = tf.constant(2.0)
with tf.GradientTape() as outer:
    outer.watch(x)
    with tf.GradientTape() as inner:
        inner.watch(x)
        y = tf.sin(x) * x
    g = inner.gradient(y, x)
print(tf.round(g * 1e5) / 1e5)
print(tf.round(outer.gradient(g, x) * 1e5) / 1e5)
x = tf.Variable([1.0, 2.0])
with tf.GradientTape(persistent=True) as tape:
    y = x * x
    j = None
print(tape.jacobian(y, x))
x = tf.linspace(-2.0, 2.0, 5)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.nn.sigmoid(x)
print(tf.round(tape.gradient(y, x) * 1e5) / 1e5)
w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
xb = tf.constant([[1.0, 1.0], [2.0, 0.5]])
with tf.GradientTape() as tape:
    yb = xb @ w
print(tape.batch_jacobian(yb, xb) if False else tape.jacobian(yb, w).shape)
