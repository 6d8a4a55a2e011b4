# TF1 training: tf.compat.v1.gradients and GradientDescentOptimizer.minimize in a Session.
import numpy as np

import kilnflow as tf

v1 = tf.compat.v1

with tf.Graph().as_default():
    x = v1.placeholder(tf.float32, [None])
    y = v1.placeholder(tf.float32, [None])
    w = v1.get_variable("w", initializer=tf.constant(0.0))
    b = v1.get_variable("b", initializer=tf.constant(0.0))
    pred = w * x + b
    loss = tf.reduce_mean(tf.square(pred - y))
    grads = v1.gradients(loss, [w, b])
    print([g.dtype.name for g in grads])
    train = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    print(train.type)
    xs = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    ys = 2.0 * xs + 1.0
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        print([round(float(g), 3) for g in sess.run(grads, {x: xs, y: ys})])
        for step in range(200):
            _, current = sess.run([train, loss], {x: xs, y: ys})
            if step % 50 == 0:
                print(step, round(float(current), 4))
        print(round(float(sess.run(w)), 2), round(float(sess.run(b)), 2))
