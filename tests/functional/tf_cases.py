"""Calls recorded against TF 2.21 (tests/functional/data/tf_functional.json, by
scripts/record_functional_tf.py in a side venv) and replayed on kilnflow by
tests/functional/test_tf_recorded.py. Each case takes the module (`tf` when recorded,
kilnflow in the tests) and returns tensors (nested) or raises; ERROR_CASES record only the
error class."""
import numpy as np


def _grad(tf, fn, x):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(tf, x)
    return tape.gradient(y, x)


def _graph_grad(tf, fn, x):
    return tf.function(lambda t: tf.gradients(fn(tf, t), t)[0])(tf.constant(x))


def _hessian(tf, fn, x):
    return tf.function(lambda t: tf.hessians(fn(tf, t), t)[0])(tf.constant(x))


def _pass_through(tf):
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.grad_pass_through(lambda t: tf.round(t * 3.3))(v)
    return y, tape.gradient(y, v)


def _recompute(tf):
    f = tf.recompute_grad(lambda t: tf.sin(t) * t)
    x = tf.constant([0.5, 1.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return y, tape.gradient(y, x)


X = np.array([0.5, 1.0, 1.5], np.float32)
M = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)

CASES = {
    "py_function": lambda tf: tf.py_function(lambda a: a * 2, [tf.constant(X)], tf.float32),
    "py_function_list": lambda tf: tf.py_function(lambda a: [a * 2, a], [tf.constant(X)],
                                                  [tf.float32, tf.float32]),
    "py_function_python_value": lambda tf: tf.py_function(lambda a: 3, [X], tf.float32),
    "py_function_grad": lambda tf: _grad(tf, lambda tf, x: tf.py_function(
        lambda t: tf.sin(t) * t, [x], tf.float32), X),
    "py_function_string": lambda tf: tf.py_function(lambda: tf.constant("hi"), [], tf.string),
    "numpy_function": lambda tf: tf.numpy_function(lambda a: np.cumsum(a), [X], tf.float32),
    "numpy_function_python_float": lambda tf: tf.numpy_function(lambda a: 3.0, [X],
                                                                tf.float32),
    "map_fn": lambda tf: tf.map_fn(lambda t: t * 2, tf.constant(M)),
    "map_fn_signature": lambda tf: tf.map_fn(lambda t: tf.cast(t, tf.int32),
                                             tf.constant([1.5, 2.5]),
                                             fn_output_signature=tf.int32),
    "map_fn_nested_out": lambda tf: tf.map_fn(lambda t: (t, t * 2), tf.constant(X),
                                              fn_output_signature=(tf.float32, tf.float32)),
    "map_fn_dict": lambda tf: tf.map_fn(lambda t: {"a": t["x"] * 2}, {"x": tf.constant(X)},
                                        fn_output_signature={"a": tf.float32}),
    "map_fn_tuple_in": lambda tf: tf.map_fn(lambda t: t[0] * t[1], (tf.constant(X),
                                                                     tf.constant(X)),
                                            fn_output_signature=tf.float32),
    "map_fn_spec": lambda tf: tf.map_fn(lambda t: tf.stack([t, t]), tf.constant(X),
                                        fn_output_signature=tf.TensorSpec([2], tf.float32)),
    "map_fn_empty": lambda tf: tf.map_fn(lambda t: t * 2, tf.zeros([0, 3])),
    "map_fn_grad": lambda tf: _grad(tf, lambda tf, x: tf.map_fn(lambda t: tf.sin(t) * t, x), X),
    "scan": lambda tf: tf.scan(lambda a, t: a + t, tf.constant(X)),
    "scan_initializer": lambda tf: tf.scan(lambda a, t: a + t, tf.constant(X),
                                           initializer=tf.constant(10.0)),
    "scan_reverse": lambda tf: tf.scan(lambda a, t: a + t, tf.constant(X), reverse=True),
    "scan_fibonacci": lambda tf: tf.scan(lambda a, _: (a[1], a[0] + a[1]), tf.range(6),
                                         initializer=(tf.constant(0), tf.constant(1))),
    "scan_grad": lambda tf: _grad(tf, lambda tf, x: tf.scan(lambda a, t: a * t, x), X),
    "foldl": lambda tf: tf.foldl(lambda a, t: a * 10 + t, tf.constant([1, 2, 3])),
    "foldr": lambda tf: tf.foldr(lambda a, t: a * 10 + t, tf.constant([1, 2, 3])),
    "foldl_initializer": lambda tf: tf.foldl(lambda a, t: a + t[0] * t[1],
                                             (tf.constant(X), tf.constant(X)),
                                             initializer=tf.constant(0.0)),
    "foldr_grad": lambda tf: _grad(tf, lambda tf, x: tf.foldr(lambda a, t: a * t + 1.0, x), X),
    "vectorized_map_elementwise": lambda tf: tf.vectorized_map(lambda t: tf.sin(t) * t + 1.0,
                                                               tf.constant(M)),
    "vectorized_map_reduce": lambda tf: tf.vectorized_map(lambda t: tf.reduce_sum(t * t),
                                                          tf.constant(M)),
    "vectorized_map_matmul": lambda tf: tf.vectorized_map(
        lambda t: tf.matmul(tf.reshape(t, [1, 2]), tf.ones([2, 3])), tf.constant(M)),
    "vectorized_map_constant": lambda tf: tf.vectorized_map(lambda t: tf.constant(1.0),
                                                            tf.constant(M)),
    "vectorized_map_grad": lambda tf: _grad(tf, lambda tf, x: tf.vectorized_map(
        lambda t: tf.sin(t) * t, x), X),
    "gradients_in_function": lambda tf: _graph_grad(tf, lambda tf, t: tf.reduce_sum(t ** 3), X),
    "hessians": lambda tf: _hessian(tf, lambda tf, t: tf.reduce_sum(t ** 3 * t[0]), X),
    "grad_pass_through": _pass_through,
    "recompute_grad": _recompute,
    "ensure_shape": lambda tf: tf.ensure_shape(tf.constant(X), [None]),
    "identity_n": lambda tf: tf.identity_n([tf.constant(1.0), tf.constant(2)]),
    "get_static_value": lambda tf: tf.constant(tf.get_static_value(tf.constant([1, 2]))),
    "constant_initializer": lambda tf: tf.constant_initializer([1, 2, 3, 4])([2, 2]),
    "constant_initializer_int": lambda tf: tf.constant_initializer(2)([2], tf.int32),
    "zeros_initializer": lambda tf: tf.zeros_initializer()([2], tf.int32),
    "ones_initializer": lambda tf: tf.ones_initializer()([2, 1]),
    "zeros_initializer_bool": lambda tf: tf.zeros_initializer()([2], tf.bool),
}

ERROR_CASES = {
    "py_function_value_error": lambda tf: tf.py_function(
        lambda a: (_ for _ in ()).throw(ValueError("boom")), [X], tf.float32),
    "py_function_key_error": lambda tf: tf.py_function(
        lambda a: (_ for _ in ()).throw(KeyError("boom")), [X], tf.float32),
    "py_function_wrong_dtype": lambda tf: tf.py_function(lambda a: tf.constant([1, 2]), [X],
                                                         tf.float32),
    "map_fn_scalar": lambda tf: tf.map_fn(lambda t: t, tf.constant(1.0)),
    "map_fn_mismatched_lengths": lambda tf: tf.map_fn(
        lambda t: t[0] + t[1], (tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0])),
        fn_output_signature=tf.float32),
    "map_fn_wrong_dtype": lambda tf: tf.map_fn(lambda t: tf.cast(t, tf.int32),
                                               tf.constant([1.5])),
    "foldl_empty": lambda tf: tf.foldl(lambda a, t: a + t, tf.zeros([0])),
    "ensure_shape_wrong": lambda tf: tf.ensure_shape(tf.constant(X), [2]),
    "gradients_eager": lambda tf: tf.gradients(tf.constant(1.0), tf.constant(1.0)),
    "hessians_eager": lambda tf: tf.hessians(tf.constant(1.0), tf.constant(1.0)),
    "register_gradient_twice": lambda tf: tf.RegisterGradient("Square")(lambda op, g: g),
    "no_gradient_not_a_string": lambda tf: tf.no_gradient(3),
    "random_normal_initializer_int": lambda tf: tf.random_normal_initializer()([2], tf.int32),
    "zeros_initializer_string": lambda tf: tf.zeros_initializer()([2], tf.string),
    "constant_initializer_wrong_size": lambda tf: tf.constant_initializer([1, 2, 3])([2, 2]),
}
