import kilnflow as tf

x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x**2
dy_dx = tape.gradient(y, x)
print(dy_dx.numpy())
print(dy_dx)
w = tf.Variable(tf.reshape(tf.range(6.0), (3, 2)), name="w")
b = tf.Variable(tf.zeros(2, dtype=tf.float32), name="b")
x = [[1., 2., 3.]]
with tf.GradientTape(persistent=True) as tape:
    y = x @ w + b
    loss = tf.reduce_mean(y**2)
[dl_dw, dl_db] = tape.gradient(loss, [w, b])
print(w.shape)
print(dl_dw.shape)
print(dl_dw)
print(dl_db)
my_vars = {"w": w, "b": b}
grad = tape.gradient(loss, my_vars)
print(grad["b"])
del tape
x = tf.constant(3.0)
with tf.GradientTape() as g:
    g.watch(x)
    y = x * x
print(g.gradient(y, x))
x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y0 = x**2
    y1 = 1 / x
print(tape.gradient({"y0": y0, "y1": y1}, x).numpy())
