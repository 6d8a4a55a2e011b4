# Session.run details: fetching ops, variables, partial_run-free feeds and InteractiveSession.
import kilnflow as tf

v1 = tf.compat.v1

with tf.Graph().as_default():
    counter = v1.Variable(0, name="counter")
    increment = v1.assign_add(counter, 1)
    with v1.control_dependencies([increment]):
        read = tf.identity(counter)
    noop = tf.no_op(name="step")
    with v1.Session() as sess:
        sess.run(counter.initializer)
        print(sess.run(noop))
        print(sess.run(read), sess.run(read))
        print(sess.run(counter))
        print(counter.eval(session=sess))
        print(read.eval(session=sess))
        a = tf.constant([1, 2])
        print(sess.run(a + 1, feed_dict={a: [5, 6]}))
        print(sess.run({"both": [a, a * 2]}))
    try:
        sess.run(counter)
    except RuntimeError:
        print("closed session: RuntimeError")
    p = v1.placeholder(tf.int32, shape=[2])
    with v1.Session() as sess:
        try:
            sess.run(p, feed_dict={p: [1, 2, 3]})
        except ValueError:
            print("bad feed shape: ValueError")
