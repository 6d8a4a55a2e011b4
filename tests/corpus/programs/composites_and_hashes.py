# Sparse and ragged values where TF accepts them, string hashes, edit distance, DLPack.
import numpy as np
import kilnflow as tf

sp = tf.sparse.SparseTensor(indices=[[0, 1], [2, 3]], values=[1.0, 2.0], dense_shape=[4, 5])
print(tf.shape(sp))
print(tf.size(sp), tf.rank(sp))

rt = tf.ragged.constant([[1.0, -4.0], [], [9.0]])
print(tf.size(rt), tf.rank(rt))
print(tf.math.abs(rt))
print(tf.math.negative(rt))
print(tf.math.square(rt))

words = tf.constant(["", "a", "hello world"])
print(tf.strings.to_hash_bucket_fast(words, 1000))
print(tf.strings.to_hash_bucket(words, 1000))
print(tf.strings.to_hash_bucket_strong(words, 1000, key=[7, 11]))
# (multi-line tensors are printed as lists: their printing is another change)
print(tf.fingerprint(words).numpy().tolist())
print(tf.fingerprint(tf.constant([[1, 2], [3, 4]])).numpy().tolist())

hypothesis = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], ["a", "b", "c"], [2, 2])
truth = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "c", "d"], [2, 2])
print(tf.edit_distance(hypothesis, truth))
print(tf.edit_distance(hypothesis, truth, normalize=False))

points, offsets = tf.strings.unicode_decode_with_offsets(["héllo", "€"], "UTF-8")
print(points)
print(offsets)

t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
a = np.from_dlpack(t)
print(a, a.flags.writeable)
back = tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(t))
print(back.numpy().tolist(), back.dtype)

opt = tf.experimental.Optional.from_value(tf.constant(3))
print(opt.has_value(), opt.get_value())
print(tf.OptionalSpec(tf.TensorSpec([], tf.int32)))
print(tf.DeviceSpec.from_string("/job:worker/task:1/device:CPU:0").to_string())
