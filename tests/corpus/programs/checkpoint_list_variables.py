# list_variables and load_variable read checkpoint keys written by the object graph.
import os
import tempfile

import kilnflow as tf


class Dense(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, 2.0]], name="kernel")
        self.b = tf.Variable([3.0], name="bias")


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.dense = Dense()
        self.scale = tf.Variable(2.5)


tmp = tempfile.mkdtemp()
model = Model()
ckpt = tf.train.Checkpoint(model=model, epoch=tf.Variable(3))
path = ckpt.write(os.path.join(tmp, "weights"))
print(os.path.basename(path))
for name, shape in tf.train.list_variables(path):
    print(name, shape)
print(tf.train.load_variable(path, "model/dense/w/.ATTRIBUTES/VARIABLE_VALUE"))
print(tf.train.load_variable(path, "epoch/.ATTRIBUTES/VARIABLE_VALUE"))
print(tf.train.load_variable(path, "model/scale/.ATTRIBUTES/VARIABLE_VALUE"))
reader = tf.train.load_checkpoint(path)
shapes = reader.get_variable_to_shape_map()
print(sorted(shapes.items()))
dtypes = reader.get_variable_to_dtype_map()
print(sorted((k, v.name) for k, v in dtypes.items()))
print(reader.has_tensor("model/dense/b/.ATTRIBUTES/VARIABLE_VALUE"))
print(reader.get_tensor("model/dense/b/.ATTRIBUTES/VARIABLE_VALUE"))
