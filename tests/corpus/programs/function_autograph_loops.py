# AutoGraph turns loops over tensors into graph loops.
import kilnflow as tf


@tf.function
def sum_even(items):
    s = 0
    for c in items:
        if c % 2 > 0:
            continue
        s += c
    return s


print(sum_even(tf.constant([10, 12, 15, 20])).numpy())


@tf.function
def fizzbuzz_count(n):
    count = 0
    for i in tf.range(1, n + 1):
        if i % 15 == 0:
            count += 1
    return count


print(fizzbuzz_count(tf.constant(100)).numpy())


@tf.function
def collatz_steps(n):
    steps = tf.constant(0)
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


print(collatz_steps(tf.constant(27)).numpy())


@tf.function
def first_above(x, limit):
    result = tf.constant(-1)
    for i in tf.range(tf.shape(x)[0]):
        if x[i] > limit:
            result = i
            break
    return result


print(first_above(tf.constant([1.0, 3.0, 7.0, 9.0]), tf.constant(5.0)).numpy())
print(first_above(tf.constant([1.0, 2.0]), tf.constant(5.0)).numpy())


@tf.function
def python_loop(x):
    for _ in range(3):
        x = x * 2
    return x


print(python_loop(tf.constant(1)).numpy())
