import kilnflow as tf

x = tf.constant([1, 3.0])
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = x * x
    z = y * y
print(tape.gradient(z, x).numpy())
print(tape.gradient(y, x).numpy())
del tape
x0 = tf.Variable(3.0, name="x0")
x1 = tf.Variable(3.0, name="x1", trainable=False)
x2 = tf.Variable(2.0, name="x2") + 1.0
x3 = tf.constant(3.0, name="x3")
with tf.GradientTape() as tape:
    y = (x0**2) + (x1**2) + (x2**2)
grad = tape.gradient(y, [x0, x1, x2, x3])
for g in grad:
    print(g)
print([var.name for var in tape.watched_variables()])
x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x**2
print(tape.gradient(y, x))
x0 = tf.Variable(0.0)
x1 = tf.Variable(10.0)
with tf.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(x1)
    y0 = tf.math.sin(x0)
    y1 = tf.nn.softplus(x1)
    y = y0 + y1
    ys = tf.reduce_sum(y)
grad = tape.gradient(ys, {"x0": x0, "x1": x1})
print("dy/dx0:", grad["x0"])
print("dy/dx1:", grad["x1"].numpy())
t = tf.GradientTape()
with t:
    pass
try:
    with tf.GradientTape() as tape2:
        y = x * x
    tape2.gradient(y, x)
    tape2.gradient(y, x)
except Exception as e:
    print(type(e).__name__)
