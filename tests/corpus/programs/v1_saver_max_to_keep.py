# Saver(max_to_keep) keeps the newest checkpoints; latest_checkpoint finds the last.
import os
import tempfile

import kilnflow as tf

v1 = tf.compat.v1
tmp = tempfile.mkdtemp()

with tf.Graph().as_default():
    step = v1.get_variable("step", initializer=tf.constant(0))
    bump = v1.assign_add(step, 1)
    saver = v1.train.Saver(max_to_keep=2)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        for i in range(4):
            sess.run(bump)
            saver.save(sess, os.path.join(tmp, "run"), global_step=sess.run(step))
        print([os.path.basename(p) for p in saver.last_checkpoints])
        print(os.path.basename(v1.train.latest_checkpoint(tmp)))
        print(os.path.basename(saver.save(sess, os.path.join(tmp, "run"))))
        print(v1.train.checkpoint_exists(os.path.join(tmp, "run-4")))
        print(v1.train.checkpoint_exists(os.path.join(tmp, "run-1")))
        sess.run(step.assign(0))
        saver.restore(sess, os.path.join(tmp, "run-4"))
        print(sess.run(step))
print(tf.train.load_variable(os.path.join(tmp, "run-4"), "step"))
