import kilnflow as tf

v = tf.Variable([1.0, 2.0])
for bad in [lambda: v.assign([1, 2, 3]),
            lambda: v.assign_add([1.0]),
            lambda: tf.Variable(1) + tf.Variable(1.0),
            lambda: v.assign("a"),
            lambda: tf.Variable(1.0)[0],
            lambda: v[5],
            lambda: tf.constant([1.0])[3],
            lambda: tf.matmul(tf.ones([2, 3]), tf.ones([2, 3])),
            lambda: tf.reshape(tf.ones([6]), [4, 2]),
            lambda: tf.constant([1, 2]) + tf.constant([1, 2, 3])]:
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__)
try:
    v[0] = 3.0
except TypeError as e:
    print("TypeError")
print(v)
w = tf.Variable(1.0)
try:
    w.assign(tf.constant(1, dtype=tf.int32))
except Exception as e:
    print(type(e).__name__)
