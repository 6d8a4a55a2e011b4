# Python scalars are part of the trace key; tensors of one shape and dtype share a trace.
import kilnflow as tf


@tf.function
def power(x, n):
    print("tracing n =", n)
    return x ** n


x = tf.constant(2.0)
print(power(x, 2).numpy())
print(power(x, 2).numpy())
print(power(x, 3).numpy())
print(power(tf.constant(3.0), 3).numpy())
print("traces:", power.experimental_get_tracing_count())
print(power(tf.constant([1.0, 2.0]), 2).numpy())
print("traces:", power.experimental_get_tracing_count())
print(power(tf.constant([[1.0], [2.0]]), 2).numpy())
print("traces:", power.experimental_get_tracing_count())


@tf.function
def add(a, b=1):
    print("tracing add with b =", b)
    return a + b


print(add(tf.constant(1)).numpy())
print(add(tf.constant(1), b=1).numpy())
print(add(tf.constant(1), 2).numpy())
print("traces:", add.experimental_get_tracing_count())
