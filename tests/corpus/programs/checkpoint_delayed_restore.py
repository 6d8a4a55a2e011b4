# Restore before variables exist: values arrive when the variables are created.
import os
import tempfile

import kilnflow as tf


class Lazy(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = None

    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.ones([x.shape[-1]]), name="w")
        return x * self.w


tmp = tempfile.mkdtemp()
trained = Lazy()
trained(tf.constant([1.0, 2.0]))
trained.w.assign([3.0, 4.0])
path = tf.train.Checkpoint(model=trained).save(os.path.join(tmp, "lazy"))

fresh = Lazy()
status = tf.train.Checkpoint(model=fresh).restore(path)
print(fresh.w)
print(fresh(tf.constant([1.0, 1.0])).numpy())
print(fresh.w.numpy())
status.assert_consumed()
print("consumed")
