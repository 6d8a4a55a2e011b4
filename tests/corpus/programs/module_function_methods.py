# tf.function methods on modules: one trace cache per instance, signatures per method.
import kilnflow as tf


class Scaler(tf.Module):
    def __init__(self, factor, name=None):
        super().__init__(name=name)
        self.factor = tf.Variable(factor)

    @tf.function
    def __call__(self, x):
        print("tracing", self.name)
        return x * self.factor

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def scale_all(self, xs):
        return xs * self.factor


a = Scaler(2.0, name="a")
b = Scaler(3.0, name="b")
print(a(tf.constant(1.0)).numpy(), a(tf.constant(2.0)).numpy())
print(b(tf.constant(1.0)).numpy())
print(a.__call__.experimental_get_tracing_count(), b.__call__.experimental_get_tracing_count())
print(a.scale_all(tf.constant([1.0, 2.0, 3.0])).numpy())
cf = a.scale_all.get_concrete_function()
print(cf.structured_input_signature)
print(cf.output_shapes, cf.output_dtypes)
a.factor.assign(10.0)
print(cf(tf.constant([1.0])).numpy())
print([v.name for v in a.trainable_variables])
print(a.scale_all.input_signature)
