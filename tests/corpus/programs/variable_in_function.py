import kilnflow as tf

v = tf.Variable([1.0, 2.0], name="v")


@tf.function
def step(delta):
    r = v.assign_add(delta)
    print("traced:", r)
    print("variable:", v)
    return r


print(step(tf.constant([1.0, 1.0])))
print(step(tf.constant([0.5, 0.5])))
print(v)


@tf.function
def no_read():
    v.assign([0.0, 0.0], read_value=False)
    return v.read_value()


print(no_read())
print(v.numpy())
