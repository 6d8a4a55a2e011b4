import kilnflow as tf

x = tf.constant([[0.0], [1.0], [2.0], [3.0]])
y = tf.constant([[1.0], [3.0], [5.0], [7.0]])
w = tf.Variable([[0.5]], name="w")
b = tf.Variable([0.0], name="b")
lr = 0.0625
for step in range(5):
    with tf.GradientTape() as tape:
        pred = x @ w + b
        loss = tf.reduce_mean(tf.square(pred - y))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(lr * dw)
    b.assign_sub(lr * db)
    print(step, round(float(loss), 4), round(float(w[0, 0]), 4), round(float(b[0]), 4))
print(w)
print(b.shape, [v.name for v in tape.watched_variables()])
opt_vars = [w, b]
with tf.GradientTape() as tape:
    loss = tf.reduce_sum([tf.reduce_sum(v) for v in opt_vars])
print([g.numpy().tolist() for g in tape.gradient(loss, opt_vars)])
