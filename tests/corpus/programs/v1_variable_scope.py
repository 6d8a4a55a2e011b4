# get_variable with variable_scope reuse, initializers and global_variables_initializer.
import kilnflow as tf

v1 = tf.compat.v1

with tf.Graph().as_default():
    with v1.variable_scope("layer"):
        w = v1.get_variable("w", shape=[2, 2], initializer=v1.ones_initializer())
        b = v1.get_variable("b", shape=[2], initializer=v1.constant_initializer(0.5))
    with v1.variable_scope("layer", reuse=True):
        w_again = v1.get_variable("w")
    print(w.name, b.name, w_again is w)
    with v1.variable_scope("layer", reuse=v1.AUTO_REUSE):
        c = v1.get_variable("c", shape=[], initializer=v1.zeros_initializer())
        c2 = v1.get_variable("c", shape=[])
    print(c.name, c2 is c)
    try:
        with v1.variable_scope("layer"):
            v1.get_variable("w", shape=[2, 2])
    except ValueError:
        print("duplicate: ValueError")
    try:
        with v1.variable_scope("other", reuse=True):
            v1.get_variable("missing", shape=[1])
    except ValueError:
        print("missing with reuse: ValueError")
    with v1.variable_scope("outer"):
        with v1.variable_scope("inner"):
            d = v1.get_variable("d", shape=[3], initializer=v1.constant_initializer([1, 2, 3]))
    print(d.name, d.shape)
    y = tf.matmul(tf.ones([1, 2]), w) + b
    init = v1.global_variables_initializer()
    print([v.name for v in v1.global_variables()])
    print([v.name for v in v1.trainable_variables()])
    with v1.Session() as sess:
        sess.run(init)
        print(sess.run(y))
        print(sess.run(d))
