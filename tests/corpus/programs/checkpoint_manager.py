# CheckpointManager keeps the newest max_to_keep checkpoints.
import os
import tempfile

import kilnflow as tf

tmp = tempfile.mkdtemp()
v = tf.Variable(0.0)
ckpt = tf.train.Checkpoint(v=v, step=tf.Variable(1))
manager = tf.train.CheckpointManager(ckpt, tmp, max_to_keep=3)
print(manager.latest_checkpoint)
print(manager.checkpoints)
for i in range(5):
    v.assign_add(1.0)
    ckpt.step.assign_add(1)
    saved = manager.save()
    print("saved", os.path.basename(saved))
print([os.path.basename(p) for p in manager.checkpoints])
print(os.path.basename(manager.latest_checkpoint))
print(os.path.exists(os.path.join(tmp, "checkpoint")))

path = manager.save(checkpoint_number=100)
print(os.path.basename(path))
print([os.path.basename(p) for p in manager.checkpoints])

v.assign(-1.0)
ckpt.restore(manager.latest_checkpoint)
print(v.numpy(), ckpt.step.numpy())

again = tf.train.CheckpointManager(ckpt, tmp, max_to_keep=2, checkpoint_name="model")
print([os.path.basename(p) for p in again.checkpoints])
print(os.path.basename(again.save()))
print([os.path.basename(p) for p in again.checkpoints])
