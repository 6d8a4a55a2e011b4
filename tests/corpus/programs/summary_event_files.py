# tf.summary writes TensorBoard event files: scalars, histograms, text and images, eagerly
# and from a tf.function (at run time), with name scopes, default steps and record_if;
# read back with TensorBoard's own loader.
import glob
import os
import tempfile

import numpy as np
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.util import tensor_util

import kilnflow as tf

logdir = tempfile.mkdtemp()
writer = tf.summary.create_file_writer(logdir)
step = tf.Variable(0, dtype=tf.int64)

with writer.as_default(step=0):
    print("written:", bool(tf.summary.scalar("loss", 0.75)))
    with tf.name_scope("train"):
        tf.summary.histogram("weights", np.arange(12, dtype=np.float32) / 4.0, buckets=4)
        tf.summary.text("note", "loss is **down**")
    tf.summary.image("pixels", np.linspace(0, 1, 12, dtype=np.float32).reshape(1, 2, 2, 3))
print("without a writer:", bool(tf.summary.scalar("lost", 1.0, step=0)))


@tf.function
def train_step(x):
    step.assign_add(1)
    with writer.as_default(step=step):
        with tf.summary.record_if(step % 2 == 0):
            tf.summary.scalar("metric", tf.reduce_mean(x))
        with tf.name_scope("fn"):
            tf.summary.scalar("total", tf.reduce_sum(x))
    return x * 2.0


for i in range(4):
    train_step(tf.constant([1.0, 2.0, float(i)]))
print("traces:", train_step.experimental_get_tracing_count())
writer.close()

for path in sorted(glob.glob(os.path.join(logdir, "events*"))):
    for event in EventFileLoader(path).Load():
        for value in event.summary.value:
            array = tensor_util.make_ndarray(value.tensor)
            if value.tag == "pixels":
                shown = [array[0], array[1], len(array) - 2]
            else:
                shown = np.round(array.astype(np.float64), 4).tolist() \
                    if array.dtype != object else array.tolist()
            print(event.step, value.tag, value.metadata.plugin_data.plugin_name, shown)
