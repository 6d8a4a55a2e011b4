# tf.cond, tf.while_loop and TensorArray written by hand, eagerly and in tf.function.
import kilnflow as tf


def fib(n):
    def body(i, a, b, ta):
        return i + 1, b, a + b, ta.write(i, a)
    ta = tf.TensorArray(tf.int32, size=n)
    _, _, _, ta = tf.while_loop(lambda i, a, b, ta: i < n, body,
                                (tf.constant(0), tf.constant(0), tf.constant(1), ta))
    return ta.stack()


print(fib(tf.constant(10)).numpy())
print(tf.function(fib)(tf.constant(7)).numpy())


def pick(x):
    return tf.cond(x > 0, lambda: x * 10, lambda: -x)


print(pick(tf.constant(3)).numpy(), pick(tf.constant(-4)).numpy())
print(tf.function(pick)(tf.constant(-5)).numpy())


@tf.function
def cumulative(xs):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    total = tf.constant(0.0)
    for i in tf.range(tf.size(xs)):
        total += xs[i]
        ta = ta.write(i, total)
    return ta.stack()


print(cumulative(tf.constant([1.0, 2.0, 3.0, 4.0])).numpy())
branches = {0: lambda: tf.constant("zero"), 1: lambda: tf.constant("one")}
print(tf.switch_case(tf.constant(1), branches).numpy())
print(tf.function(lambda i: tf.switch_case(i, branches))(tf.constant(0)).numpy())
i, s = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), [0, 0])
print(i.numpy() if hasattr(i, "numpy") else i, s.numpy() if hasattr(s, "numpy") else s)
