import kilnflow as tf

x = tf.constant(1.0)
v0 = tf.Variable(2.0)
v1 = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    if x > 0.0:
        result = v0
    else:
        result = v1**2
dv0, dv1 = tape.gradient(result, [v0, v1])
print(dv0)
print(dv1)
dx = tape.gradient(result, x)
print(dx)
x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = x
    for _ in range(3):
        y = y * x
print(tape.gradient(y, x))
x = tf.Variable(5.0)
with tf.GradientTape() as tape:
    y = tf.where(x > 3.0, x * x, -x)
print(tape.gradient(y, x))
x = tf.Variable([1.0, -2.0, 3.0])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(tf.nn.relu(x))
print(tape.gradient(y, x))
with tf.GradientTape() as tape:
    y = tf.reduce_max(x)
print(tape.gradient(y, x))
with tf.GradientTape() as tape:
    y = tf.reduce_sum(tf.abs(x) * tf.constant([1.0, 2.0, 3.0]))
print(tape.gradient(y, x))
x = tf.constant([3.0, 4.0])
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.norm(x)
print(tape.gradient(y, x))
a = tf.Variable(2.0)
b = tf.Variable(3.0)
with tf.GradientTape() as tape:
    c = a * b
grads = tape.gradient(c, [a, b], output_gradients=tf.constant(2.0))
print([g.numpy() for g in grads])
