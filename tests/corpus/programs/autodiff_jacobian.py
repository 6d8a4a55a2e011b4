import kilnflow as tf

x = tf.linspace(-10.0, 10.0, 5)
delta = tf.Variable(0.0)
with tf.GradientTape() as tape:
    y = tf.nn.sigmoid(x + delta)
dy_dx = tape.jacobian(y, delta)
print(y.shape)
print(dy_dx.shape)
print(dy_dx)
x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
w = tf.Variable([[1.0], [0.5]])
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = tf.matmul(x, w)
j = tape.jacobian(y, w)
print(j.shape)
print(j)
print(tape.jacobian(y, x).shape)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x * x
print(tape.batch_jacobian(y, x))
v = tf.Variable([1.0, 2.0, 3.0])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(v * v)
g = tape.gradient(y, v)
print(g)
with tf.GradientTape() as tape:
    y = tf.gather(v, [0, 2])
print(tf.convert_to_tensor(tape.gradient(y, v)))
