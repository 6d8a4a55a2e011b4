import numpy as np
import kilnflow as tf

t = tf.constant([[1.0 / 3.0, 2.0 / 3.0], [1e-6, 12345.678]])
print(t)
with np.printoptions(precision=2, suppress=True):
    print(t)
    print(repr(t))
with np.printoptions(threshold=5, edgeitems=1):
    print(tf.range(10))
    print(tf.Variable(tf.range(10)))
with np.printoptions(linewidth=30):
    print(tf.range(20))
print(tf.range(20))
