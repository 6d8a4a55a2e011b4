# pretty_printed_concrete_signatures lists every trace of a function.
import kilnflow as tf


@tf.function
def scale(x, factor=2):
    return {"scaled": x * factor, "orig": x}


scale(tf.constant([1.0, 2.0]))
scale(tf.constant(3))
print(scale.pretty_printed_concrete_signatures())
cf = scale.get_concrete_function(tf.constant([1.0, 2.0]))
print(cf.pretty_printed_signature())
