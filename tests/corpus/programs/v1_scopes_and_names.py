# Op and variable names under name_scope / variable_scope in a TF1 graph.
import kilnflow as tf

v1 = tf.compat.v1

with tf.Graph().as_default() as g:
    with tf.name_scope("block"):
        a = tf.constant(1.0, name="a")
        b = a + 2.0
        c = a + b
    print(a.name, b.name, c.name, b.op.name)
    with tf.name_scope("block"):
        d = tf.identity(a)
    print(d.name)
    with v1.variable_scope("vs") as scope:
        w = v1.get_variable("w", [1])
        m = w * 2.0
        print(scope.name, v1.get_variable_scope().name)
    print(w.name, m.name)
    with v1.variable_scope(None, default_name="layer"):
        x = v1.get_variable("x", [1])
    with v1.variable_scope(None, default_name="layer"):
        y = v1.get_variable("y", [1])
    print(x.name, y.name)
    with v1.variable_scope("shared") as shared:
        s1 = v1.get_variable("s", [1])
        shared.reuse_variables()
        s2 = v1.get_variable("s", [1])
    print(s1 is s2, shared.reuse)
    print(g.get_tensor_by_name(b.name).op.type)
    print([t.name for t in c.op.inputs])
    print(g.get_operation_by_name("block/a").outputs[0].shape)
