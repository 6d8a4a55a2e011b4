# Generator.split and make_seeds: independent child streams from one parent.
import numpy as np
import kilnflow as tf

np.set_printoptions(precision=8)
parent = tf.random.Generator.from_seed(2024)
children = parent.split(3)
for i, child in enumerate(children):
    print(i, child.state.numpy(), child.uniform([2]).numpy())
print("parent:", parent.state.numpy())
grandchildren = children[0].split(2)
print([gc.normal([1]).numpy()[0] for gc in grandchildren])

seeds = parent.make_seeds(2)
print(seeds.numpy())
for i in range(2):
    print(tf.random.stateless_uniform([3], seed=seeds[:, i]).numpy())

auto = tf.random.Generator.from_seed(5, alg="auto_select")
print(auto.algorithm, auto.uniform([2]).numpy())
print(auto.split(1)[0].state.numpy())
