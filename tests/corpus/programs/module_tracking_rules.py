# What a module tracks: attributes set later, lists appended to, nested containers.
import kilnflow as tf


class Bag(tf.Module):
    def __init__(self):
        super().__init__(name="bag")
        self.items = []
        self.mapping = {"inner": [tf.Variable(1.0, name="deep")]}


bag = Bag()
print(len(bag.variables))
bag.items.append(tf.Variable(2.0, name="appended"))
print([v.name for v in bag.variables])
bag.late = tf.Variable(3.0, name="late")
print([v.name for v in bag.variables])
bag.child = tf.Module(name="kid")
bag.child.v = tf.Variable(4.0, name="kidvar")
print([m.name for m in bag.submodules])
print([v.name for v in bag.variables])
del bag.late
print([v.name for v in bag.variables])
bag.pair = (tf.Variable(5.0, name="first"), tf.Variable(6.0, name="second", trainable=False))
print([v.name for v in bag.trainable_variables])
print([v.name for v in bag.non_trainable_variables])
bag.number = 3
bag.tensor = tf.constant(1.0)
print(len(bag.variables))
