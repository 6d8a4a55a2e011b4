# Feeding placeholders: shapes are checked, values are converted to the placeholder's dtype.
import numpy as np

import kilnflow as tf

v1 = tf.compat.v1

with tf.Graph().as_default():
    x = v1.placeholder(tf.float32, [2], name="x")
    n = v1.placeholder(tf.int32, [None], name="n")
    y = x * 2.0
    m = n + 1
    with v1.Session() as sess:
        print(sess.run(y, {x: [1, 2]}))
        print(sess.run(y, {x: np.array([1.5, 2.5], np.float64)}))
        print(sess.run(m, {n: []}), sess.run(m, {n: [1, 2, 3]}))
        for bad in ([1.0, 2.0, 3.0], [[1.0, 2.0]]):
            try:
                sess.run(y, {x: bad})
            except ValueError as e:
                print("shape:", type(e).__name__)
        try:
            sess.run(m, {n: 5})
        except ValueError as e:
            print("rank:", type(e).__name__)
        try:
            sess.run(y, {"nothing:0": [1.0, 2.0]})
        except (KeyError, ValueError, TypeError) as e:
            print("unknown feed:", type(e).__name__)
        try:
            sess.run(m)
        except tf.errors.InvalidArgumentError as e:
            print("missing:", type(e).__name__)
        print(sess.run(y, {x: [0.0, 1.0], n: [9]}))
