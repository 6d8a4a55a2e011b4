# tf.random.Generator: a seeded stream whose state is a variable.
import numpy as np
import kilnflow as tf

np.set_printoptions(precision=8)
g = tf.random.Generator.from_seed(1234)
print("state:", g.state.numpy())
print(g.uniform([3]).numpy())
print(g.normal([2, 2]).numpy())
print(g.truncated_normal([4]).numpy())
print(g.uniform([5], minval=0, maxval=100, dtype=tf.int64).numpy())
print(g.uniform([2], minval=-1.0, maxval=1.0, dtype=tf.float64).numpy())
print(g.uniform_full_int([2], dtype=tf.int32).numpy())
print("state:", g.state.numpy())

g.reset_from_seed(1234)
print("after reset:", g.state.numpy(), g.uniform([3]).numpy())
g.skip(10)
print("after skip:", g.state.numpy())

h = tf.random.Generator.from_state([1, 2, 3], alg="philox")
print(h.normal([3]).numpy(), h.state.numpy())
print(tf.random.Generator.from_seed(-1).state.numpy())
print(tf.random.Generator.from_seed([4, 5]).state.numpy())
print(tf.random.create_rng_state(99, alg="philox").numpy())

@tf.function
def draw():
    return g.uniform([2])

print(draw().numpy())
print(draw().numpy())
print("state:", g.state.numpy())
