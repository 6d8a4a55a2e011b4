# Gradients with respect to a module's trainable variables; watched_variables order.
import kilnflow as tf


class Quadratic(tf.Module):
    def __init__(self):
        super().__init__()
        self.a = tf.Variable(1.0, name="a")
        self.b = tf.Variable(-2.0, name="b")
        self.c = tf.Variable(0.5, name="c")
        self.frozen = tf.Variable(10.0, trainable=False, name="frozen")

    def __call__(self, x):
        return self.a * x * x + self.b * x + self.c + self.frozen


q = Quadratic()
x = tf.constant([1.0, 2.0, 3.0])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(q(x))
print(y.numpy())
print([v.name for v in tape.watched_variables()])
grads = tape.gradient(y, q.trainable_variables)
print([g.numpy() for g in grads])
print([v.name for v in q.trainable_variables])

with tf.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(q.b)
    y = tf.reduce_sum(q(x))
print([v.name for v in tape.watched_variables()])
print(tape.gradient(y, [q.a, q.b]))

with tf.GradientTape() as tape:
    y = tf.reduce_sum(q(x))
print(tape.gradient(y, q.frozen))

for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((q(x) - tf.constant([11.0, 13.0, 17.0])) ** 2)
    for v, g in zip(q.trainable_variables, tape.gradient(loss, q.trainable_variables)):
        v.assign_sub(0.01 * g)
    print(step, round(float(loss.numpy()), 4))
