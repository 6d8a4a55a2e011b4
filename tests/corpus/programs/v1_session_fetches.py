# Session.run fetch structures, make_callable, and graph inspection.
import collections

import kilnflow as tf

v1 = tf.compat.v1
Pair = collections.namedtuple("Pair", ["total", "product"])

with tf.Graph().as_default() as g:
    a = v1.placeholder(tf.int32, [], name="a")
    b = v1.placeholder(tf.int32, [], name="b")
    total = tf.add(a, b, name="total")
    product = tf.multiply(a, b, name="product")
    with v1.Session() as sess:
        print(sess.run(Pair(total, product), {a: 3, b: 4}))
        print(sess.run({"x": [total, {"y": product}]}, {a: 1, b: 2}))
        print(sess.run(total, feed_dict={"a:0": 10, "b:0": 5}))
        print(sess.run([total], {a: 0, b: 0}), sess.run((product,), {a: 2, b: 2}))
        fn = sess.make_callable([total, product], [a, b])
        print(fn(6, 7))
        print(sess.graph is g)
    print(total.op.type, product.op.type, [i.name for i in total.op.inputs])
    print(total.shape, total.dtype, total.graph is g)
    print(sorted(op.name for op in g.get_operations()))
