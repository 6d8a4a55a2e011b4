# tf.train.Example records: build, serialize, parse back; a moving average of weights.
import os
import tempfile

import numpy as np
import kilnflow as tf


def make_example(name, score, ids):
    return tf.train.Example(features=tf.train.Features(feature={
        "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[name])),
        "score": tf.train.Feature(float_list=tf.train.FloatList(value=[score])),
        "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=ids)),
    }))


records = [make_example(b"cat", 0.5, [1, 2]), make_example(b"dog", -1.25, [300])]
for ex in records:
    data = ex.SerializeToString(deterministic=True)
    print(len(data), data.hex())
    back = tf.train.Example.FromString(data)
    feature = back.features.feature
    print(feature["name"].bytes_list.value, feature["score"].float_list.value,
          feature["ids"].int64_list.value, back == ex)

single = tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 0.1]))
print(single)
print(single.WhichOneof("kind"))

ema = tf.train.ExponentialMovingAverage(decay=0.5)
w = tf.Variable([1.0, 2.0], name="w")
ema.apply([w])
for step in range(3):
    w.assign(w * 2.0)
    ema.apply([w])
    print(step, ema.average(w).numpy(), ema.average_name(w))

directory = tempfile.mkdtemp()
manager = tf.train.CheckpointManager(tf.train.Checkpoint(w=w), directory, max_to_keep=2)
for _ in range(3):
    manager.save()
state = tf.train.get_checkpoint_state(directory)
print(os.path.basename(state.model_checkpoint_path),
      [os.path.basename(p) for p in state.all_model_checkpoint_paths])

coord = tf.train.Coordinator()
print(coord.should_stop())
with coord.stop_on_exception():
    raise ValueError("worker failed")
print(coord.should_stop())
try:
    coord.join([])
except ValueError as e:
    print("join raised:", e)
