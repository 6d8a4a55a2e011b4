# Graph mode inside tf.Graph().as_default() leaves eager execution on outside.
import kilnflow as tf

print(tf.executing_eagerly())
g = tf.Graph()
with g.as_default():
    a = tf.constant(2)
    print(tf.executing_eagerly(), type(a).__name__ == "EagerTensor")
    try:
        a.numpy()
    except (AttributeError, NotImplementedError) as e:
        print("numpy() in graph mode:", type(e).__name__)
    try:
        tf.compat.v1.placeholder(tf.float32)
    except RuntimeError:
        print("unexpected")
print(tf.executing_eagerly())
try:
    tf.compat.v1.placeholder(tf.float32, [1])
except RuntimeError as e:
    print("placeholder eagerly:", type(e).__name__)
print(tf.compat.v1.executing_eagerly_outside_functions())


@tf.function
def f(x):
    print("inside function eager:", tf.executing_eagerly())
    return x


f(tf.constant(1))
print(g.finalized)
g.finalize()
try:
    with g.as_default():
        tf.constant(1)
except RuntimeError:
    print("finalized graph: RuntimeError")
