# write/read skip the save counter and the checkpoint index file.
import os
import tempfile

import kilnflow as tf

tmp = tempfile.mkdtemp()
v = tf.Variable([1, 2, 3])
ckpt = tf.train.Checkpoint(v=v)
path = ckpt.write(os.path.join(tmp, "snapshot"))
print(os.path.basename(path))
print("checkpoint" in os.listdir(tmp))
print(tf.train.latest_checkpoint(tmp))
print(ckpt.save_counter.numpy() if ckpt.save_counter is not None else None)
v.assign([0, 0, 0])
status = ckpt.read(path)
try:
    status.assert_consumed()
except AssertionError:
    print("save_counter unmatched: AssertionError")
print(v.numpy())
names = [n for n, _ in tf.train.list_variables(path)]
print(names)

saved = ckpt.save(os.path.join(tmp, "numbered"))
print(os.path.basename(saved))
print(sorted(n for n, _ in tf.train.list_variables(saved)))
print(os.path.basename(tf.train.latest_checkpoint(tmp)))
