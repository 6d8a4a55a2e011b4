# name_scope and with_name_scope give variables and ops module-prefixed names.
import kilnflow as tf


class MLP(tf.Module):
    def __init__(self, sizes, name=None):
        super().__init__(name=name)
        self.layers = []
        with self.name_scope:
            for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
                self.layers.append(tf.Variable(tf.ones([a, b]), name=f"w{i}"))

    @tf.Module.with_name_scope
    def __call__(self, x):
        for w in self.layers:
            x = tf.matmul(x, w)
        return x


mlp = MLP([2, 3, 1], name="mlp")
print([v.shape for v in mlp.trainable_variables])
print(mlp(tf.constant([[1.0, 1.0]])).numpy())
print(mlp.name_scope.name)


@tf.function
def traced(x):
    return mlp(x)


graph = traced.get_concrete_function(tf.TensorSpec([1, 2], tf.float32)).graph
names = [op.name for op in graph.get_operations() if op.type == "MatMul"]
print(names)

with tf.name_scope("outer"):
    with tf.name_scope("inner"):
        print(tf.get_current_name_scope())
outer = tf.Module(name="outer_module")
with outer.name_scope:
    print(tf.get_current_name_scope())
print(repr(tf.get_current_name_scope()))
