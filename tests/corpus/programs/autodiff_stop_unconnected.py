import kilnflow as tf

x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as t:
    x_sq = x * x
    with t.stop_recording():
        y_sq = y * y
    z = x_sq + y_sq
grad = t.gradient(z, {"x": x, "y": y})
print("dz/dx:", grad["x"])
print("dz/dy:", grad["y"])
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as t:
    y_sq = y**2
    z = x**2 + tf.stop_gradient(y_sq)
grad = t.gradient(z, {"x": x, "y": y})
print("dz/dx:", grad["x"])
print("dz/dy:", grad["y"])
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as tape:
    z = y * y
print(tape.gradient(z, x))
x = tf.Variable([2., 2.])
y = tf.Variable(3.)
with tf.GradientTape() as tape:
    z = y**2
print(tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))
x = tf.Variable(2.0)
for epoch in range(2):
    with tf.GradientTape() as tape:
        y = x + 1
    print(type(x).__name__, ":", tape.gradient(y, x))
    x = x + 1
x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
with tf.GradientTape() as tape:
    x2 = x**2
    y = x2.numpy()
    y = tf.constant(y)
print(tape.gradient(y, x))
x = tf.constant(10)
with tf.GradientTape() as g:
    g.watch(x)
    y = x * x
print(g.gradient(y, x))
x0 = tf.Variable(3.0)
x1 = tf.Variable(0.0)
with tf.GradientTape() as tape:
    x1.assign_add(x0)
    y = x1**2
print(tape.gradient(y, x0))
