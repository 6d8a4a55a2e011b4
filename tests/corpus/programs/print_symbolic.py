import kilnflow as tf

@tf.function
def f(x):
    y = x * 2.0
    print("traced x:", x)
    print("traced y:", y)
    print(repr(y))
    print(y.shape, y.dtype)
    z = tf.reduce_sum(y, name="total")
    print(z)
    s = tf.shape(x)
    print(s)
    return z

print(f(tf.constant([1.0, 2.0])))
print(f(tf.constant([3.0, 4.0])))

@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.int32)])
def g(x):
    print(x)
    print(x.shape, x.shape[0], x.shape.as_list())
    return x + 1

print(g(tf.constant([[1, 2, 3]])))
