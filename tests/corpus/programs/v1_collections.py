# GraphKeys collections: variables, trainables, custom collections.
import kilnflow as tf

v1 = tf.compat.v1

with tf.Graph().as_default() as g:
    a = v1.get_variable("a", shape=[1], initializer=v1.zeros_initializer())
    b = v1.get_variable("b", shape=[1], trainable=False, initializer=v1.zeros_initializer())
    c = v1.Variable([1.0], name="c")
    d = v1.get_variable("d", shape=[], collections=[v1.GraphKeys.LOCAL_VARIABLES],
                        initializer=v1.zeros_initializer())
    print([v.name for v in v1.get_collection(v1.GraphKeys.GLOBAL_VARIABLES)])
    print([v.name for v in v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES)])
    print([v.name for v in v1.local_variables()])
    print(v1.GraphKeys.GLOBAL_VARIABLES, v1.GraphKeys.TRAINABLE_VARIABLES)
    print(v1.GraphKeys.LOCAL_VARIABLES, v1.GraphKeys.UPDATE_OPS)
    v1.add_to_collection("my_tensors", tf.constant(1.0, name="one"))
    v1.add_to_collection("my_tensors", tf.constant(2.0, name="two"))
    print([t.name for t in v1.get_collection("my_tensors")])
    print(len(v1.get_collection("nothing")))
    print([v.name for v in v1.get_collection(v1.GraphKeys.GLOBAL_VARIABLES, scope="a")])
    with v1.Session() as sess:
        sess.run([v1.global_variables_initializer(), v1.local_variables_initializer()])
        print(sess.run([a, b, c, d]))
