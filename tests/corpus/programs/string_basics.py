import kilnflow as tf

scalar_string_tensor = tf.constant("Gray wolf")
print(scalar_string_tensor)
print(repr(scalar_string_tensor))
tensor_of_strings = tf.constant(["Gray wolf",
                                 "Quick brown fox",
                                 "Lazy dog"])
print(tensor_of_strings)
print(repr(tensor_of_strings))
print(tf.constant("🥳👍"))
print(tf.constant("café"))
print(tf.constant([["a", "b"], ["c", "d"]]))
print(tensor_of_strings.numpy())
print(scalar_string_tensor.numpy(), scalar_string_tensor.numpy().decode("utf-8"))
print(tensor_of_strings.dtype, tensor_of_strings.shape)
print(tf.constant(b"raw\x00bytes"))
print(tf.constant("a") == tf.constant("a"))
print(tf.constant(["a", "b"]) == tf.constant(["a", "c"]))
print(tf.strings.length(tensor_of_strings))
print(tf.strings.length(tf.constant("🥳👍")), tf.strings.length(tf.constant("🥳👍"), unit="UTF8_CHAR"))
print(tf.constant(["x", "y"]) + tf.constant(["1", "2"]))
