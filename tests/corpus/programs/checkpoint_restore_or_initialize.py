# CheckpointManager.restore_or_initialize and checkpoint_interval.
import os
import tempfile

import kilnflow as tf

tmp = tempfile.mkdtemp()
v = tf.Variable(0)
calls = []


def init_fn():
    calls.append("init")
    v.assign(42)


ckpt = tf.train.Checkpoint(v=v)
manager = tf.train.CheckpointManager(ckpt, tmp, max_to_keep=5, init_fn=init_fn)
print(manager.restore_or_initialize())
print(calls, v.numpy())
v.assign(7)
print(os.path.basename(manager.save()))
v.assign(0)
again = tf.train.CheckpointManager(ckpt, tmp, max_to_keep=5, init_fn=init_fn)
print(os.path.basename(again.restore_or_initialize()))
print(calls, v.numpy())
print(manager.directory == tmp, manager.checkpoint is ckpt)

step = tf.Variable(0, dtype=tf.int64)
spaced = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), os.path.join(tmp, "spaced"),
                                    max_to_keep=None, step_counter=step,
                                    checkpoint_interval=2)
for i in range(5):
    step.assign(i)
    result = spaced.save()
    print(i, None if result is None else os.path.basename(result))
print([os.path.basename(p) for p in spaced.checkpoints])
