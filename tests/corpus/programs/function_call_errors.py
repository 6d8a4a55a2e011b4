# Wrong calls raise TF's error classes: concrete functions are strict about their inputs.
import kilnflow as tf


@tf.function
def add(a, b):
    return a + b


cf = add.get_concrete_function(tf.TensorSpec([2], tf.float32), tf.TensorSpec([2], tf.float32))
print(cf(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])).numpy())
try:
    cf(tf.constant([1, 2]), tf.constant([3, 4]))
except (TypeError, ValueError, tf.errors.InvalidArgumentError) as e:
    print("concrete:", type(e).__name__)
try:
    cf(tf.constant([1.0, 2.0]))
except TypeError as e:
    print("missing argument:", type(e).__name__)
try:
    add(tf.constant(1.0))
except TypeError as e:
    print("too few:", type(e).__name__)
try:
    add(tf.constant(1.0), tf.constant(2.0), tf.constant(3.0))
except TypeError as e:
    print("too many:", type(e).__name__)


@tf.function
def check_positive(x):
    tf.debugging.assert_positive(x, message="x must be positive")
    return tf.sqrt(x)


print(check_positive(tf.constant([4.0, 9.0])).numpy())
try:
    check_positive(tf.constant([4.0, -1.0]))
except tf.errors.InvalidArgumentError as e:
    print("assert:", type(e).__name__)


@tf.function
def bool_of_tensor(x):
    return bool(x > 0)


try:
    bool_of_tensor(tf.constant(1))
except TypeError as e:
    print("bool():", type(e).__name__)
