"""Record tests/saving/data/tf_2_21: a TF 2.21 checkpoint (a tf.Module with several dtypes, a
Keras 3 Sequential model and its Adam optimizer after two steps, written by
tf.train.CheckpointManager) and, in expected.json, every value as TF reads it back plus the
model's outputs before and after one more Adam step. Run with a Python that has
tensorflow-cpu==2.21.0 (a side venv; never kilnflow's own env):

    /work/tfvenv/bin/python scripts/record_tf_checkpoint.py tests/saving/data/tf_2_21
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
        self.i = tf.Variable(np.int64(7))
        self.d = tf.Variable(np.linspace(0, 1, 4))
        self.h = tf.Variable(np.array([1.5, -2.25], np.float16))
        self.b = tf.Variable(np.array([True, False]))
        self.layers = [tf.Variable(np.int32(3)), {"b.c/d": tf.Variable(np.ones(2, np.float32) * 4)}]
net = Net()
tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2), tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.Adam(0.1)
x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
y = np.ones((4, 1), np.float32)
for _ in range(2):
    with tf.GradientTape() as t:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    g = t.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(g, model.trainable_variables))
ckpt = tf.train.Checkpoint(net=net, model=model, optimizer=opt)
mgr = tf.train.CheckpointManager(ckpt, out, max_to_keep=1)
path = mgr.save()
expected = {}
for name, shape in tf.train.list_variables(path):
    if name == "_CHECKPOINTABLE_OBJECT_GRAPH": continue
    v = tf.train.load_variable(path, name)
    expected[name] = {"shape": list(shape), "dtype": str(v.dtype), "value": np.asarray(v).astype(np.float64).tolist()}
expected["__model_output__"] = model(x).numpy().tolist()
with tf.GradientTape() as t:
    loss = tf.reduce_mean((model(x) - y) ** 2)
g = t.gradient(loss, model.trainable_variables)
opt.apply_gradients(zip(g, model.trainable_variables))
expected["__model_output_after_one_more_step__"] = model(x).numpy().tolist()
expected["__x__"] = x.tolist()
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
print(path, tf.__version__)
