# Variables inside tf.function: created once, updated on every call.
import sys

import kilnflow as tf


class Counter(tf.Module):
    def __init__(self):
        self.count = None

    @tf.function
    def __call__(self):
        if self.count is None:
            self.count = tf.Variable(0)
        self.count.assign_add(1)
        return self.count.read_value()


c = Counter()
print(c().numpy(), c().numpy(), c().numpy())
print(c.count.numpy())

v = tf.Variable(1.0)


@tf.function
def update(x):
    v.assign(v * x)
    tf.print("v is now", v, output_stream=sys.stdout)
    return v.read_value()


print(update(tf.constant(3.0)).numpy())
print(update(tf.constant(2.0)).numpy())
print(v.numpy())


@tf.function
def bad():
    return tf.Variable(1.0) + 1.0


try:
    bad()
    bad()
    print("calls ok")
except ValueError as e:
    print("ValueError")
