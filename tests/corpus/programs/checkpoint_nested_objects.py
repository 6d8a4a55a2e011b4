# Checkpoint keys follow attribute paths through lists, dicts and nested modules.
import os
import tempfile

import kilnflow as tf


class Block(tf.Module):
    def __init__(self, n):
        super().__init__()
        self.kernel = tf.Variable(tf.fill([n], float(n)))


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [Block(1), Block(2)]
        self.table = {"alpha": tf.Variable(0.5), "beta": Block(3)}
        self.head = Block(4)


tmp = tempfile.mkdtemp()
net = Net()
path = tf.train.Checkpoint(net=net).write(os.path.join(tmp, "nested"))
for key, shape in tf.train.list_variables(path):
    print(key, shape)

restored = Net()
for v in restored.trainable_variables:
    v.assign(tf.zeros_like(v))
tf.train.Checkpoint(net=restored).read(path).assert_consumed()
print([v.numpy().tolist() for v in restored.trainable_variables])

partial = tf.train.Checkpoint(net=tf.train.Checkpoint(head=Block(4)))
partial.read(path).expect_partial()
print(partial.net.head.kernel.numpy())
