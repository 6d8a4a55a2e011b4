# A keras-free Dense module: variables, names and the forward pass.
import kilnflow as tf


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.ones([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


layer = Dense(3, 2, name="dense")
print(layer.name)
print(layer(tf.constant([[1.0, 2.0, 3.0]])).numpy())
print([v.name for v in layer.trainable_variables])
print([v.shape for v in layer.variables])
print(len(layer.submodules))
unnamed = Dense(2, 2)
print(unnamed.name)
print(tf.Module().name)
