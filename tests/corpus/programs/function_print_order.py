# tf.print inside graph loops and branches runs on every call, in loop order.
# (A print before the loop is left out: TF does not order it against the loop.)
import sys

import kilnflow as tf

out = sys.stdout
counter = tf.Variable(0)


@tf.function
def loop(n):
    for i in tf.range(n):
        counter.assign_add(1)
        if i % 2 == 0:
            tf.print("even", i, counter, output_stream=out)
        else:
            tf.print("odd", i, output_stream=out)
    tf.print("end", counter, output_stream=out)
    return counter.read_value()


print(loop(tf.constant(3)).numpy())
print(loop(tf.constant(2)).numpy())


@tf.function
def countdown(n):
    while n > 0:
        tf.print("n =", n, output_stream=out)
        n -= 1
    return n


print(countdown(tf.constant(3)).numpy())
