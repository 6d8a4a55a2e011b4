# TF1 style: build a graph with placeholders, run it with a Session and feed_dict.
import numpy as np

import kilnflow as tf

g = tf.Graph()
with g.as_default():
    x = tf.compat.v1.placeholder(tf.float32, shape=[None, 2], name="x")
    w = tf.constant([[1.0], [2.0]], name="w")
    y = tf.matmul(x, w, name="y")
    z = tf.reduce_sum(y, name="z")
    print(x)
    print(y)
    print(z.name, z.op.type)

with tf.compat.v1.Session(graph=g) as sess:
    print(sess.run(y, feed_dict={x: [[1.0, 1.0], [2.0, 3.0]]}))
    out = sess.run({"y": y, "z": z}, feed_dict={x: np.ones([1, 2], np.float32)})
    print(sorted(out), out["z"])
    print(sess.run([z, (y, z)], feed_dict={"x:0": [[0.5, 0.5]]}))
    try:
        sess.run(z)
    except tf.errors.InvalidArgumentError:
        print("missing feed: InvalidArgumentError")

print(tf.executing_eagerly())
with g.as_default():
    print(tf.executing_eagerly())
print([op.name for op in g.get_operations()][:3])
