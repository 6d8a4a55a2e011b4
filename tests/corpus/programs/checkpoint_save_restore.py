# tf.train.Checkpoint save and restore, with numbered prefixes.
import os
import tempfile

import kilnflow as tf


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        self.b = tf.Variable([0.5, -0.5], name="b")


tmp = tempfile.mkdtemp()
net = Net()
step = tf.Variable(7, dtype=tf.int64)
ckpt = tf.train.Checkpoint(model=net, step=step)
path = ckpt.save(os.path.join(tmp, "ckpt"))
print(os.path.basename(path))
print(ckpt.save_counter.numpy())
path2 = ckpt.save(os.path.join(tmp, "ckpt"))
print(os.path.basename(path2))
print("checkpoint" in os.listdir(tmp))

net.w.assign(tf.zeros([2, 2]))
step.assign(0)
status = ckpt.restore(path)
status.assert_consumed()
print(net.w.numpy())
print(step.numpy())
print(ckpt.save_counter.numpy())
print(os.path.basename(tf.train.latest_checkpoint(tmp)))

fresh = tf.train.Checkpoint(model=Net(), step=tf.Variable(0, dtype=tf.int64))
fresh.model.b.assign([9.0, 9.0])
fresh.restore(tf.train.latest_checkpoint(tmp)).assert_existing_objects_matched()
print(fresh.model.b.numpy(), fresh.step.numpy())
