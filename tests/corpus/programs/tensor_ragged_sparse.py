import kilnflow as tf

ragged_list = [
    [0, 1, 2, 3],
    [4, 5],
    [6, 7, 8],
    [9]]
try:
    tensor = tf.constant(ragged_list)
except Exception as e:
    print(f"{type(e).__name__}")
ragged_tensor = tf.ragged.constant(ragged_list)
print(ragged_tensor)
print(ragged_tensor.shape)
print(ragged_tensor.to_list())
print(ragged_tensor.row_lengths())
print(ragged_tensor.flat_values)
print(ragged_tensor.to_tensor())
sparse_tensor = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]],
                                       values=[1, 2],
                                       dense_shape=[3, 4])
print(sparse_tensor, "\n")
print(tf.sparse.to_dense(sparse_tensor))
print(sparse_tensor.indices)
print(sparse_tensor.values, sparse_tensor.dense_shape)
