import os
import tempfile

import numpy as np
import kilnflow as tf

v1 = tf.compat.v1
export_dir = os.path.join(tempfile.mkdtemp(), "model")

with tf.Graph().as_default() as graph:
    x = v1.placeholder(tf.float32, [None, 2], name="x")
    w = v1.get_variable("w", initializer=tf.constant([[1.0], [2.0]]))
    b = v1.get_variable("b", initializer=tf.constant([0.5]))
    y = tf.identity(tf.matmul(x, w) + b, name="y")
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        sess.run(w.assign([[3.0], [4.0]]))
        builder = v1.saved_model.Builder(export_dir)
        signature = v1.saved_model.predict_signature_def(inputs={"x": x}, outputs={"y": y})
        print(signature.method_name)
        builder.add_meta_graph_and_variables(
            sess, [v1.saved_model.tag_constants.SERVING],
            signature_def_map={"serving_default": signature})
        print(os.path.basename(builder.save()) != b"")

print(v1.saved_model.loader.maybe_saved_model_directory(export_dir))
with v1.Session(graph=tf.Graph()) as sess:
    meta = v1.saved_model.loader.load(sess, ["serve"], export_dir)
    sig = meta.signature_def["serving_default"]
    print(sorted(sig.inputs), sorted(sig.outputs))
    print(sig.inputs["x"].name, sig.outputs["y"].name)
    out = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: np.array([[1.0, 1.0]])})
    print(out)
    print(sess.run("y:0", {"x:0": [[2.0, 0.0], [0.0, 1.0]]}))

try:
    v1.saved_model.Builder(export_dir)
except AssertionError as e:
    print("AssertionError", "already exists, and isn't empty" in str(e))
try:
    with v1.Session(graph=tf.Graph()) as sess:
        v1.saved_model.loader.load(sess, ["train"], export_dir)
except RuntimeError as e:
    print("RuntimeError", "could not be found in SavedModel" in str(e))
