# get_concrete_function: one graph per signature, with its printed signature.
import kilnflow as tf


@tf.function
def double(a):
    print("Tracing with", a)
    return a + a


double_int = double.get_concrete_function(tf.constant(1))
double_str = double.get_concrete_function(tf.TensorSpec(shape=[None], dtype=tf.float32))
print(double_int(tf.constant(4)).numpy())
print(double_str(tf.constant([1.0, 2.5])).numpy())
print(double_int.structured_outputs.shape, double_int.structured_outputs.dtype)
print(double_str.structured_outputs.shape, double_str.structured_outputs.dtype)
print(double_int.structured_input_signature)
print(double_str.structured_input_signature)
print(double.experimental_get_tracing_count())
print([t.name for t in double_str.inputs])
print([t.shape for t in double_str.outputs])
print(double_int.output_dtypes)
print(double_str.output_shapes)
