# Module attributes: _flatten-free helpers users reach for.
import kilnflow as tf


class Leaf(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.v = tf.Variable([1, 2], name="leafvar")


class Tree(tf.Module):
    def __init__(self):
        super().__init__(name="tree")
        self.left = Leaf(name="left")
        self.right = Leaf(name="right")
        self.right.child = Leaf(name="child")
        self.z = tf.Variable(0, name="z")
        self.not_tracked = 3


t = Tree()
print([m.name for m in t.submodules])
print([v.name for v in t.variables])
print([v.numpy().tolist() for v in t.trainable_variables])
print(isinstance(t, tf.Module), isinstance(t.left, tf.Module))
print(t.left.name_scope.name, t.right.child.name_scope.name)
t.left.v.assign([5, 6])
print(t.variables[0].numpy())
print(len(tf.Module().variables), len(tf.Module().submodules))
