# tf.compat.v1.train.Saver writes TF1-named checkpoints and restores them.
import os
import tempfile

import kilnflow as tf

v1 = tf.compat.v1
tmp = tempfile.mkdtemp()
prefix = os.path.join(tmp, "model.ckpt")

with tf.Graph().as_default():
    a = v1.get_variable("a", initializer=tf.constant([1.0, 2.0]))
    with v1.variable_scope("scope"):
        b = v1.get_variable("b", initializer=tf.constant(3))
    inc = v1.assign_add(a, [10.0, 10.0])
    saver = v1.train.Saver()
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        sess.run(inc)
        path = saver.save(sess, prefix, global_step=5)
        print(os.path.basename(path))
print(sorted(n for n, _ in tf.train.list_variables(path)))
print(tf.train.load_variable(path, "a"))
print(os.path.basename(tf.train.latest_checkpoint(tmp)))

with tf.Graph().as_default():
    a = v1.get_variable("a", shape=[2])
    with v1.variable_scope("scope"):
        b = v1.get_variable("b", shape=[], dtype=tf.int32)
    saver = v1.train.Saver()
    with v1.Session() as sess:
        saver.restore(sess, path)
        print(sess.run([a, b]))

with tf.Graph().as_default():
    renamed = v1.get_variable("renamed", shape=[2])
    saver = v1.train.Saver({"a": renamed})
    with v1.Session() as sess:
        saver.restore(sess, path)
        print(sess.run(renamed))
