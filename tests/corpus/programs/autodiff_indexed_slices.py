import kilnflow as tf

# TF's gradient of a gather is an IndexedSlices; converted to a tensor it is dense.
v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(tf.gather(v, [0, 2]))
g = tape.gradient(y, v)
print(tf.convert_to_tensor(g))
with tf.GradientTape() as tape:
    y = tf.reduce_sum(tf.gather(v, [1, 1]) * 2.0)
print(tf.convert_to_tensor(tape.gradient(y, v)))
emb = tf.Variable(tf.reshape(tf.range(8.0), [4, 2]))
with tf.GradientTape() as tape:
    looked = tf.nn.embedding_lookup(emb, [3, 0])
    loss = tf.reduce_sum(looked)
grad = tf.convert_to_tensor(tape.gradient(loss, emb))
print(grad)
emb.assign_sub(grad)
print(emb)
with tf.GradientTape() as tape:
    y = tf.reduce_sum(tf.gather_nd(v, [[0, 1], [2, 0]]))
print(tf.convert_to_tensor(tape.gradient(y, v)))
