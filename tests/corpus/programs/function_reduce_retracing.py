# reduce_retracing generalises shapes after a second trace.
import kilnflow as tf


@tf.function(reduce_retracing=True)
def total(x):
    print("tracing", x.shape)
    return tf.reduce_sum(x)


print(total(tf.ones([2])).numpy())
print(total(tf.ones([3])).numpy())
print(total(tf.ones([4])).numpy())
print(total(tf.ones([5])).numpy())
print("traces:", total.experimental_get_tracing_count())


@tf.function
def plain(x):
    print("tracing", x.shape)
    return tf.reduce_sum(x)


for n in [2, 3, 4]:
    plain(tf.ones([n]))
print("traces:", plain.experimental_get_tracing_count())
