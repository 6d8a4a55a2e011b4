# disable_eager_execution makes the default graph the program's graph.
import kilnflow as tf

print(tf.executing_eagerly())
tf.compat.v1.disable_eager_execution()
print(tf.executing_eagerly())
x = tf.constant(3.0, name="x")
y = x * x
print(x)
print(y)
print(type(y).__name__ == "EagerTensor")
with tf.compat.v1.Session() as sess:
    print(sess.run(y))
v = tf.Variable(2.0, name="var")
print(v.name)
with tf.compat.v1.Session() as sess:
    sess.run(tf.compat.v1.global_variables_initializer())
    print(sess.run(v * y))
print([op.name for op in tf.compat.v1.get_default_graph().get_operations()][:2])
