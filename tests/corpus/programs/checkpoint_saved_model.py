# tf.saved_model.save/load a Module with tf.function methods, then call them.
import os
import tempfile

import kilnflow as tf


class Adder(tf.Module):
    def __init__(self):
        super().__init__()
        self.offset = tf.Variable(10.0)

    @tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)])
    def add(self, x):
        return x + self.offset

    @tf.function(input_signature=[])
    def bump(self):
        self.offset.assign_add(1.0)
        return self.offset.read_value()


tmp = tempfile.mkdtemp()
export = os.path.join(tmp, "adder")
module = Adder()
tf.saved_model.save(module, export)
print(os.path.isdir(export))
loaded = tf.saved_model.load(export)
print(loaded.add(tf.constant([1.0, 2.0])).numpy())
print(loaded.bump().numpy())
print(loaded.add(tf.constant([0.0])).numpy())
print(module.offset.numpy())
print(loaded.offset.numpy())

tf.saved_model.save(module, export, signatures=module.add)
again = tf.saved_model.load(export)
print(list(again.signatures.keys()))
sig = again.signatures["serving_default"]
print(sig(x=tf.constant([5.0]))["output_0"].numpy())
