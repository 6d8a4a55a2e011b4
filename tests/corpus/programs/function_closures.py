# Closures: Python values are frozen at trace time, tensors and variables are read per call.
import kilnflow as tf

scale = 2.0
offset = tf.constant(1.0)
weight = tf.Variable(10.0)


@tf.function
def f(x):
    return x * scale + offset + weight


print(f(tf.constant(1.0)).numpy())
scale = 100.0
weight.assign(20.0)
print(f(tf.constant(1.0)).numpy())
print(f.experimental_get_tracing_count())

external = []


@tf.function
def g(x):
    external.append(x)
    return x + 1


g(tf.constant(1))
g(tf.constant(2))
print(len(external), type(external[0]).__name__ == "EagerTensor")


def make_multiplier(n):
    @tf.function
    def multiply(x):
        return x * n
    return multiply


double, triple = make_multiplier(2), make_multiplier(3)
print(double(tf.constant(5)).numpy(), triple(tf.constant(5)).numpy())


@tf.function
def outer(x):
    return inner(x) * 2


@tf.function
def inner(x):
    return x + 1


print(outer(tf.constant(3)).numpy())
print(inner.experimental_get_tracing_count(), outer.experimental_get_tracing_count())
