# wrap_function turns TF1-style graph code into a callable; placeholder_with_default.
import kilnflow as tf

v1 = tf.compat.v1


def f(x):
    return x * 2 + 1


wrapped = v1.wrap_function(f, [tf.TensorSpec([2], tf.float32)])
print(wrapped(tf.constant([1.0, 2.0])).numpy())


def with_variable():
    v = v1.Variable(3.0, name="v")
    return v * 2


wrapped_var = v1.wrap_function(with_variable, [])
print(wrapped_var().numpy())
print([v.name for v in wrapped_var.variables])

with tf.Graph().as_default():
    p = v1.placeholder_with_default(tf.constant([1, 2, 3]), shape=[None], name="p")
    q = p * 10
    print(p.shape, p.op.type)
    with v1.Session() as sess:
        print(sess.run(q))
        print(sess.run(q, feed_dict={p: [7]}))


def pruned_source():
    a = v1.placeholder(tf.float32, [], name="a")
    b = tf.add(a, 1.0, name="b")
    return b


wf = v1.wrap_function(pruned_source, [])
pruned = wf.prune(feeds=wf.graph.get_tensor_by_name("a:0"),
                  fetches=wf.graph.get_tensor_by_name("b:0"))
print(pruned(tf.constant(4.0)).numpy())
