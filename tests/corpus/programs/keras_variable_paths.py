"""Keras 3 variables: short names, paths under the models that build them, printing."""
import numpy as np

import kilnflow as tf

keras = tf.keras

dense = keras.layers.Dense(2, kernel_initializer="ones", name="first")
dense.build((None, 3))
print([(w.name, w.path) for w in dense.weights])
print(type(dense.kernel).__name__)
print(dense.kernel)
print(repr(dense.bias))

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="a"),
                          keras.layers.Dense(1, name="b")], name="seq")
print([w.path for w in model.weights])
print([w.name for w in model.trainable_weights])

inputs = keras.Input((3,))
hidden = keras.layers.Dense(2, name="h")(inputs)
functional = keras.Model(inputs, keras.layers.Dense(1, name="o")(hidden), name="fm")
print([w.path for w in functional.weights])

inner = keras.Sequential([keras.layers.Dense(2, name="x")], name="inner")
outer = keras.Sequential([keras.Input((3,)), inner, keras.layers.Dense(1, name="y")],
                         name="outer")
print([w.path for w in outer.weights])


class Scale(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inner = keras.layers.Dense(2, name="proj")
        self.plain = tf.Variable(1.0)

    def build(self, input_shape):
        self.w = self.add_weight(shape=(2,), initializer="ones", name="w")

    def call(self, x):
        return self.inner(x) * self.w


layer = Scale(name="scale")
print(layer(np.ones((1, 3), np.float32)).shape)
print([(w.name, w.path) for w in layer.weights])


class Net(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d = keras.layers.Dense(1, name="d")

    def call(self, x):
        return self.d(x)


net = Net(name="net")
net(np.ones((1, 2), np.float32))
print([w.path for w in net.weights])

opt = keras.optimizers.Adam(name="adam")
opt.build(model.trainable_variables)
print([v.path for v in opt.variables])
print([(v.name, v.path) for v in keras.metrics.Mean(name="m").variables])

v = keras.Variable(np.zeros((2, 2), np.float32), name="z")
print(v.name, v.path)
print(v)
