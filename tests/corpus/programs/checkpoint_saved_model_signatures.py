# Several serving signatures on one saved model; signature outputs are dicts.
import os
import tempfile

import kilnflow as tf


class Calc(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="values")])
    def total(self, values):
        return {"sum": tf.reduce_sum(values), "count": tf.size(values)}

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def square(self, x):
        return x * x


module = Calc()
export = os.path.join(tempfile.mkdtemp(), "calc")
tf.saved_model.save(module, export, signatures={
    "total": module.total.get_concrete_function(),
    "square": module.square.get_concrete_function()})
loaded = tf.saved_model.load(export)
print(sorted(loaded.signatures.keys()))
out = loaded.signatures["total"](values=tf.constant([1.0, 2.0, 3.0]))
print(sorted(out), out["sum"].numpy(), out["count"].numpy())
sq = loaded.signatures["square"](x=tf.constant(3.0))
print(sorted(sq), sq["output_0"].numpy())
print(loaded.total(tf.constant([5.0])).keys() if hasattr(loaded.total(tf.constant([5.0])), "keys") else None)
print(loaded.square(tf.constant(4.0)).numpy())
print(loaded.signatures["total"].structured_outputs)
