# Nested arguments and results: dicts, lists, tuples and namedtuples flow through tf.function.
import collections

import kilnflow as tf

Point = collections.namedtuple("Point", ["x", "y"])


@tf.function
def combine(inputs):
    print("tracing with keys", sorted(inputs))
    total = inputs["a"] + inputs["b"][0] * inputs["b"][1]
    return {"total": total, "parts": (inputs["a"], [inputs["b"][1]])}


out = combine({"a": tf.constant(1.0), "b": [tf.constant(2.0), tf.constant(3.0)]})
print(sorted(out))
print(out["total"].numpy(), out["parts"][0].numpy(), out["parts"][1][0].numpy())
combine({"a": tf.constant(5.0), "b": [tf.constant(1.0), tf.constant(1.0)]})
combine({"a": tf.constant(5.0), "b": [tf.constant(1.0), tf.constant(1.0), tf.constant(0.0)]})
print("traces:", combine.experimental_get_tracing_count())


@tf.function
def norm(p):
    return tf.sqrt(p.x * p.x + p.y * p.y), Point(p.y, p.x)


length, swapped = norm(Point(tf.constant(3.0), tf.constant(4.0)))
print(length.numpy(), type(swapped).__name__, swapped.x.numpy(), swapped.y.numpy())
cf = norm.get_concrete_function(Point(tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)))
print(cf.structured_input_signature)
print(len(cf.inputs), len(cf.outputs))


@tf.function
def mixed(x, scale=1.0, use_bias=False):
    y = x * scale
    if use_bias:
        y += 1.0
    return y


print(mixed(tf.constant(2.0)).numpy(), mixed(tf.constant(2.0), 3.0, True).numpy())
print(mixed.pretty_printed_concrete_signatures())
