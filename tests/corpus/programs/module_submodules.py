# Modules collect the variables and modules of their attributes.
import kilnflow as tf


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = tf.Variable(tf.fill([in_features, out_features], 0.5), name="w")
            self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


class SequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    def __call__(self, x):
        return self.dense_2(self.dense_1(x))


model = SequentialModule(name="the_model")
print(model(tf.constant([[2.0, 2.0, 2.0]])).numpy())
print("Submodules:", [m.name for m in model.submodules])
for var in model.variables:
    print(var.shape, var.numpy().sum())
print([v.shape for v in model.dense_1.trainable_variables])


class WithList(tf.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(2, 2, name="a"), Dense(2, 1, name="b")]
        self.extra = {"scale": tf.Variable(2.0, name="scale"),
                      "frozen": tf.Variable(1.0, trainable=False, name="frozen")}


w = WithList()
print([v.shape for v in w.variables])
print([v.shape for v in w.trainable_variables])
print([v.name for v in w.non_trainable_variables])
print([v.numpy().tolist() for v in w.variables])
print([m.name for m in w.submodules])
