# Partial restores: assert_consumed fails, expect_partial silences, delayed restore fills later.
import os
import tempfile

import kilnflow as tf

tmp = tempfile.mkdtemp()
ckpt = tf.train.Checkpoint(a=tf.Variable(1.0), b=tf.Variable(2.0),
                           nested=tf.train.Checkpoint(c=tf.Variable([3.0, 4.0])))
path = ckpt.write(os.path.join(tmp, "full"))

only_a = tf.train.Checkpoint(a=tf.Variable(0.0))
status = only_a.restore(path)
print(only_a.a.numpy())
try:
    status.assert_consumed()
except AssertionError:
    print("assert_consumed: AssertionError")
try:
    status.assert_existing_objects_matched()
except AssertionError:
    print("save_counter unmatched: AssertionError")
status.expect_partial()
print("expect_partial ok")

late = tf.train.Checkpoint()
late.restore(path).expect_partial()
late.nested = tf.train.Checkpoint()
late.nested.c = tf.Variable([0.0, 0.0])
print(late.nested.c.numpy())
late.b = tf.Variable(0.0)
print(late.b.numpy())

mismatch = tf.train.Checkpoint(a=tf.Variable(0.0), extra=tf.Variable(5.0))
status = mismatch.restore(path)
try:
    status.assert_existing_objects_matched()
except AssertionError:
    print("assert_existing_objects_matched: AssertionError")
print(mismatch.a.numpy(), mismatch.extra.numpy())

wrong_shape = tf.train.Checkpoint(a=tf.Variable([0.0, 0.0]))
try:
    wrong_shape.restore(path)
except ValueError:
    print("shape mismatch: ValueError")
