# if/else on tensors becomes tf.cond; Python conditions stay Python.
import kilnflow as tf


@tf.function
def clip_sign(x):
    if tf.reduce_sum(x) > 0:
        y = x
    else:
        y = -x
    return y


print(clip_sign(tf.constant([1.0, 2.0])).numpy())
print(clip_sign(tf.constant([-1.0, -2.0])).numpy())


@tf.function
def relu_or_square(x, training):
    if training:
        print("Python branch: training")
        return x * x
    print("Python branch: inference")
    return tf.maximum(x, 0.0)


print(relu_or_square(tf.constant([-2.0, 3.0]), True).numpy())
print(relu_or_square(tf.constant([-2.0, 3.0]), False).numpy())


@tf.function
def positive_only(x):
    if x > 0:
        return x


try:
    positive_only(tf.constant(5))
except ValueError:
    print("return in one branch only: ValueError")


@tf.function
def classify_else(x):
    if x > 100:
        return tf.constant("big")
    elif x > 10:
        return tf.constant("medium")
    else:
        return tf.constant("small")


for v in [5, 50, 500]:
    print(classify_else(tf.constant(v)).numpy())


@tf.function
def logical(a, b):
    return a > 0 and b > 0, not a > 0 or b > 0


r = logical(tf.constant(1), tf.constant(-1))
print([t.numpy() for t in r])
print(tf.autograph.to_code(clip_sign.python_function) != "")
