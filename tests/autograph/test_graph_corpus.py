"""Graph corpus: control-flow programs on TENSOR inputs under @kf.function.

Each program is plain Python over kilnflow tensors. Run eagerly (no conversion) it
keeps Python semantics; under @kf.function AutoGraph turns its tensor-dependent
`if` / `while` / `for` into If / While ops. Every case checks that the two agree on
the same input values, and that the traced graph (before optimization passes, which
may fuse ops) holds the control-flow ops the program should produce, searched
recursively through branch and loop subgraphs.
"""
import collections

import numpy as np
import pytest

import kilnflow as kf

F32 = kf.float32
I32 = kf.int32


def t(value, dtype=None):
    return kf.constant(value, dtype=dtype)


# ================================================================ data-dependent trip counts

def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def newton_sqrt(a):
    x = a
    while kf.abs(x * x - a) > 1e-4 * a:
        x = 0.5 * (x + a / x)
    return x


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def halvings(x, limit):
    count = 0
    while x > limit:
        x = x / 2.
        count += 1
    return x, count


def digit_sum(n):
    s = 0
    while n > 0:
        s += n % 10
        n //= 10
    return s


def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i * i > n:
            break
    return i


def power_by_squaring(base, exponent):
    result = 1
    while exponent > 0:
        if exponent % 2 == 1:
            result *= base
        base *= base
        exponent //= 2
    return result


def binary_search(sorted_xs, value):
    lo = 0
    hi = kf.shape(sorted_xs)[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_xs[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


# ================================================================ early exits

def first_index_above(xs, threshold):
    for i in kf.range(kf.shape(xs)[0]):
        if xs[i] > threshold:
            return i
    return -1


def break_on_running_sum(xs, limit):
    total = 0.
    for x in xs:
        if total > limit:
            break
        total += x
    return total


def return_inside_while(n):
    i = 0
    while i < n:
        if i * i >= n:
            return i * 10
        i += 1
    return -1


def return_pair_from_loop(xs):
    for i in kf.range(kf.shape(xs)[0]):
        if xs[i] < 0.:
            return i, xs[i]
    return -1, 0.


def break_from_inner_loop(n):
    total = 0
    for i in kf.range(n):
        for j in kf.range(n):
            if j > i:
                break
            total += j
    return total


def count_primes(n):
    count = 0
    candidate = 2
    while candidate < n:
        d = 2
        prime = True
        while d * d <= candidate:
            if candidate % d == 0:
                prime = False
                break
            d += 1
        if prime:
            count += 1
        candidate += 1
    return count


# ================================================================ continue

def skip_multiples_of_three(n):
    s = 0
    for i in kf.range(n):
        if i % 3 == 0:
            continue
        s += i
    return s


def continue_in_while(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 2 == 1:
            continue
        s += i
    return s


def sum_of_positive_rows(xs):
    s = 0.
    for x in xs:
        if x < 0.:
            continue
        s += x
    return s


def continue_and_break(xs):
    s = 0.
    for x in xs:
        if x < 0.:
            continue
        if x > 10.:
            break
        s += x
    return s


# ================================================================ nested loops and branches

def triangle_sum(n):
    s = 0
    for i in kf.range(n):
        for j in kf.range(i):
            s += j
    return s


def nested_while(n):
    s = 0
    i = 0
    while i < n:
        j = 0
        while j < i:
            s += i * j
            j += 1
        i += 1
    return s


def loop_in_branch(x, n):
    if x > 0.:
        for _ in kf.range(n):
            x = x * 1.5
    else:
        x = -x
    return x


def nested_branches(x, y):
    if x > 0.:
        if y > 0.:
            r = x + y
        else:
            r = x - y
    else:
        if y > 0.:
            r = y - x
        else:
            r = -x - y
    return r


def branches_in_loop(xs):
    big = 0.
    small = 0.
    middle = 0
    for v in xs:
        if v > 1.:
            big += v
        elif v < -1.:
            small += v
        else:
            middle += 1
    return big, small, middle


def matrix_search(m, target):
    found = False
    for row in m:
        for v in row:
            if v == target:
                found = True
    return found


# ================================================================ loops over tensor rows

def row_max_sum(m):
    s = 0.
    for row in m:
        s += kf.reduce_max(row)
    return s


def matvec_rows(m, v):
    out = []
    for row in m:
        out.append(kf.reduce_sum(row * v))
    return out


def sum_3d_by_planes(x):
    s = 0.
    for plane in x:
        for row in plane:
            s += kf.reduce_sum(row)
    return s


def running_max(xs):
    best = xs[0]
    for x in xs:
        best = kf.maximum(best, x)
    return best


# ================================================================ kf.range and range(n)

def decay_accumulate(n):
    s = 0.
    for i in range(n):
        s = s * 0.5 + kf.cast(i, F32)
    return s


def range_start_stop_step(a, b):
    s = 0
    for i in range(a, b, 2):
        s += i
    return s


def kf_range_countdown(n):
    s = 0
    for i in kf.range(n, 0, -1):
        s = s * 2 + i
    return s


def kf_range_float(limit):
    s = 0.
    for x in kf.range(0., limit, 0.5):
        s += x * x
    return s


def kf_range_int64(n):
    s = kf.constant(0, kf.int64)
    for i in kf.range(n, dtype=kf.int64):
        s = s * 3 + i
    return s


def kf_range_tensor_delta(n, step):
    s = 0
    for i in kf.range(1, n, step):
        s += i * i
    return s


def range_maybe_empty(a, b):
    count = 0
    for _ in range(a, b):
        count += 1
    return count


# ================================================================ enumerate and zip

def enumerate_rows(m):
    s = 0.
    for i, row in enumerate(m):
        s += kf.reduce_sum(row) * kf.cast(i, F32)
    return s


def enumerate_with_start(xs):
    best = 0
    for i, x in enumerate(xs, start=1):
        if x > 2.:
            best = i
    return best


def zip_rows(a, b):
    s = 0.
    for x, y in zip(a, b):
        s += x * y
    return s


def zip_range_and_rows(n, xs):
    s = 0.
    for i, x in zip(range(n), xs):
        s += kf.cast(i, F32) * x
    return s


def enumerate_break_else(xs, limit):
    where = -1
    for i, x in enumerate(xs):
        if x > limit:
            where = i
            break
    else:
        where = -2
    return where


def zip_early_return(a, b):
    for x, y in zip(a, b):
        if x * y < 0.:
            return x - y
    return 0.


def unpack_row_pairs(m):
    s = 0.
    for a, b in m:
        s += a * b
    return s


# ================================================================ TensorArray

def tensor_array_squares(n):
    ta = kf.TensorArray(F32, size=n, element_shape=[])
    for i in kf.range(n):
        ta = ta.write(i, kf.cast(i * i, F32))
    return ta.stack()


def tensor_array_dynamic(x):
    ta = kf.TensorArray(F32, size=0, dynamic_size=True)
    i = 0
    while x > 1.:
        ta = ta.write(i, x)
        x = x / 2.
        i += 1
    return ta.stack()


def tensor_array_unstack_read(xs):
    ta = kf.TensorArray(F32, size=0, dynamic_size=True).unstack(xs)
    s = 0.
    for i in kf.range(ta.size()):
        s = s * 2. + ta.read(i)
    return s


def tensor_array_rows(m):
    ta = kf.TensorArray(F32, size=kf.shape(m)[0], element_shape=[2])
    i = 0
    for row in m:
        ta = ta.write(i, row * 2.)
        i += 1
    return ta.stack()


def iterate_tensor_array(xs):
    ta = kf.TensorArray(F32, size=0, dynamic_size=True).unstack(xs)
    s = 0.
    for v in ta:  # not iterable in TF or unconverted: AutoGraph reads it by index
        s = s * 2. + v
    return s


def stateless_loop_of_asserts(xs):
    for x in xs:
        assert x >= 0., "negative value"
    return xs * 2.


# ================================================================ lists appended in tensor loops

def collect_evens(xs):
    out = []
    for x in xs:
        if x % 2 == 0:
            out.append(x)
    return out


def append_in_while(n):
    out = []
    i = 0
    while i < n:
        out.append(i * i)
        i += 1
    return out


def append_with_prefix(n):
    out = [t(100)]
    for i in kf.range(n):
        out.append(i)
    return out


# ================================================================ while-else / for-else

def while_else(n, target):
    i = 0
    while i < n:
        if i == target:
            break
        i += 1
    else:
        i = -1
    return i


def for_else(xs, value):
    found = 0
    for x in xs:
        if x == value:
            found = 1
            break
    else:
        found = -1
    return found


def for_else_without_break(n):
    s = 0
    for i in kf.range(n):
        s += i
    else:
        s = s * 10
    return s


# ================================================================ if / elif / else on tensors

def classify(x):
    if x < 0:
        r = -1
    elif x == 0:
        r = 0
    elif x < 10:
        r = 1
    else:
        r = 2
    return r


def piecewise(x):
    if x < -1.:
        return -x * 2.
    elif x < 1.:
        return x * x
    return x + 1.


def clip_update(x, lo, hi):
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


# ================================================================ ternaries, and / or / not

def ternary_abs(x):
    return x if x > 0. else -x


def ternary_in_loop(n):
    s = 0
    for i in kf.range(n):
        s += i if i % 2 == 0 else -i
    return s


def and_or_conditions(a, b):
    if a > 0. and b > 0.:
        r = 1
    elif a > 0. or b > 0.:
        r = 2
    else:
        r = 3
    return r


def not_condition(x):
    while not x > 10:
        x += 3
    return x


def logical_values(a, b):
    return (a > 0.) and (b > 0.), (a > 0.) or (b > 0.), not (a > 0.)


def lazy_and_guards_index(xs, i):
    if i < kf.shape(xs)[0] and xs[kf.minimum(i, kf.shape(xs)[0] - 1)] > 0.:
        return 1
    return 0


# ================================================================ len() of tensors

def len_loop(xs):
    s = 0.
    for i in range(len(xs)):
        s += xs[i] * kf.cast(i, F32)
    return s


def len_in_condition(xs):
    n = 0
    while n < len(xs):
        n += 2
    return n


# ================================================================ functions, lambdas, methods

def _step(v):
    if v % 2 == 0:
        return v // 2
    return 3 * v + 1


def helper_called_in_loop(n):
    count = 0
    while n > 1:
        n = _step(n)
        count += 1
    return count


def nested_def_in_loop(x, n):
    def grow(v):
        return v * 2. if v < 10. else v + 1.
    for _ in kf.range(n):
        x = grow(x)
    return x


def lambda_in_loop(n):
    square = lambda v: v * v  # noqa: E731
    s = 0
    for i in kf.range(n):
        s += square(i)
    return s


def closure_reads_outer(xs, scale):
    def scaled(v):
        return v * scale
    s = 0.
    for x in xs:
        s += scaled(x)
    return s


class Accumulator:
    def __init__(self, decay):
        self.decay = decay

    def step(self, s, x):
        if x > 0.:
            return s * self.decay + x
        return s

    def run(self, xs):
        s = 0.
        for x in xs:
            s = self.step(s, x)
        return s


def method_in_loop(xs):
    return Accumulator(0.5).run(xs)


class Counter:
    def __call__(self, n):
        c = 0
        while n > 0:
            n -= 3
            c += 1
        return c


def callable_object(n):
    return Counter()(n)


# ================================================================ augmented assignment

def augmented_ops(n):
    s = 0
    p = 1
    d = 100
    q = 1000000
    for i in kf.range(1, n):
        s += i
        p *= 2
        d -= i
        q //= 2
    return s, p, d, q


def fibonacci(n):
    a = 0
    b = 1
    for _ in kf.range(n):
        a, b = b, a + b
    return a


def augmented_on_tensor_slices(xs):
    acc = kf.zeros([2])
    for row in xs:
        acc += row[:2]
        acc *= 0.5
    return acc


# ================================================================ several dtypes in the state

def mixed_dtype_state(n):
    i = 0
    x = 0.
    d = kf.constant(1., kf.float64)
    flag = False
    while i < n:
        x += 0.5
        d = d * 1.5
        flag = kf.logical_not(flag)
        i += 1
    return i, x, d, flag


def count_and_mean(xs):
    count = 0
    total = 0.
    for x in xs:
        if x > 0.:
            count += 1
            total += x
    return count, total / kf.maximum(kf.cast(count, F32), 1.)


def structured_state(n):
    pair = (kf.constant(0), kf.constant(1.))
    for _ in kf.range(n):
        pair = (pair[0] + 1, pair[1] * 2.)
    return pair


# ================================================================ shape_invariants

def doubling_concat(n):
    x = kf.constant([1.])
    for _ in kf.range(n):
        kf.autograph.experimental.set_loop_options(shape_invariants=[(x, kf.TensorShape([None]))])
        x = kf.concat([x, x * 2.], 0)
    return x


def growing_matrix(n):
    m = kf.zeros([0, 2])
    i = 0
    while i < n:
        kf.autograph.experimental.set_loop_options(shape_invariants=[(m, [None, 2])])
        m = kf.concat([m, kf.fill([1, 2], kf.cast(i, F32))], 0)
        i += 1
    return m


def capped_loop(n):
    i = 0
    while i < n:
        kf.autograph.experimental.set_loop_options(maximum_iterations=5)
        i += 1
    return i


# ================================================================ mixes

def python_loop_with_tensor_if(x):
    s = 0.
    for w in [1., -2., 3.]:
        if x * w > 0.:
            s += w
    return s


def python_loop_tensor_break(x):
    s = 0.
    for v in [1., 2., 3., 4.]:
        if s + v > x:
            break
        s += v
    return s


def if_inside_while_inside_if(x, n):
    if n > 0:
        i = 0
        while i < n:
            if x > 100.:
                x = x - 100.
            else:
                x = x * 3.
            i += 1
    return x


def assert_in_loop(xs):
    s = 0.
    for x in xs:
        assert x >= 0., "values must be non-negative"
        s += kf.sqrt(x)
    return s


def state_in_dict(n):
    state = {"a": kf.constant(0), "b": kf.constant(1)}
    for _ in kf.range(n):
        state = {"a": state["b"], "b": state["a"] + state["b"]}
    return state["a"]


def temp_defined_inside_loop(xs):
    s = 0.
    for x in xs:
        sq = x * x
        s += sq
    return s


def print_free_trace_time_python(x):
    steps = [1., 2.]  # a Python list, read only: stays Python
    for v in steps:
        x = x + v
    if x > 4.:
        x = x - 4.
    return x


# ================================================================ the table

Case = collections.namedtuple("Case", "fn args ops absent signature expected")


def case(fn, *args, ops=(), absent=(), signature=None, expected=None, id=None, marks=()):
    """A program and its tensor arguments; ops: control-flow op kinds the traced graph
    must hold (a kind listed twice: at least two such ops); absent: kinds it must not
    hold; signature: an input_signature (None dims); expected: the result, where the
    program's eager run cannot be the reference."""
    return pytest.param(Case(fn, args, ops, absent, signature, expected),
                        id=id or fn.__name__, marks=marks)


VEC = t([3., -1., 4., 1., -5., 9., 2., 6.])
SORTED = t([1., 3., 5., 7., 9., 11.])
MAT = t([[1., -2., 3.], [4., 5., -6.], [-7., 8., 9.]])
UNKNOWN_VEC = [kf.TensorSpec([None], F32)]

CASES = [
    # data-dependent trip counts
    case(collatz_steps, t(27), ops=["While", "If"]),
    case(newton_sqrt, t(10.), ops=["While"]),
    case(gcd, t(1071), t(462), ops=["While"]),
    case(halvings, t(100.), t(3.), ops=["While"]),
    case(digit_sum, t(98765), ops=["While"]),
    case(while_true_break, t(50), ops=["While"]),
    case(power_by_squaring, t(3), t(13), ops=["While", "If"]),
    case(binary_search, SORTED, t(6.), ops=["While", "If"]),
    case(binary_search, SORTED, t(0.), ops=["While", "If"], id="binary_search_before_all"),
    # early exits
    case(first_index_above, VEC, t(5.), ops=["While", "If"]),
    case(first_index_above, VEC, t(50.), ops=["While", "If"], id="first_index_above_none"),
    case(break_on_running_sum, VEC, t(6.), ops=["While", "If"]),
    case(return_inside_while, t(17), ops=["While", "If"]),
    case(return_inside_while, t(0), ops=["While"], id="return_inside_while_no_iterations"),
    case(return_pair_from_loop, VEC, ops=["While", "If"]),
    case(return_pair_from_loop, t([1., 2.]), ops=["While"], id="return_pair_not_found"),
    case(break_from_inner_loop, t(5), ops=["While", "While", "If"]),
    case(count_primes, t(30), ops=["While", "While", "If"]),
    # continue
    case(skip_multiples_of_three, t(10), ops=["While", "If"]),
    case(continue_in_while, t(9), ops=["While", "If"]),
    case(sum_of_positive_rows, VEC, ops=["While", "If"]),
    case(continue_and_break, t([1., -2., 3., 20., 4.]), ops=["While", "If", "If"]),
    # nested loops and branches
    case(triangle_sum, t(6), ops=["While", "While"]),
    case(nested_while, t(5), ops=["While", "While"]),
    case(loop_in_branch, t(2.), t(3), ops=["If", "While"]),
    case(loop_in_branch, t(-2.), t(3), ops=["If", "While"], id="loop_in_branch_else"),
    case(nested_branches, t(1.), t(-2.), ops=["If", "If", "If"]),
    case(branches_in_loop, VEC, ops=["While", "If", "If"]),
    case(matrix_search, MAT, t(5.), ops=["While", "While", "If"]),
    # loops over tensor rows
    case(row_max_sum, MAT, ops=["While"]),
    case(matvec_rows, MAT, t([1., 0., 2.]), ops=["While"]),
    case(sum_3d_by_planes, t(np.arange(24.).reshape(2, 3, 4), F32), ops=["While", "While"]),
    case(running_max, VEC, ops=["While"]),
    case(row_max_sum, MAT, ops=["While"], signature=[kf.TensorSpec([None, 3], F32)],
         id="row_max_sum_unknown_rows"),
    # kf.range and range(n) with a tensor n
    case(decay_accumulate, t(20), ops=["While"]),
    case(range_start_stop_step, t(3), t(14), ops=["While"]),
    case(kf_range_countdown, t(6), ops=["While"]),
    case(kf_range_float, t(3.), ops=["While"]),
    case(kf_range_int64, t(5), ops=["While"]),
    case(kf_range_tensor_delta, t(12), t(3), ops=["While"]),
    case(range_maybe_empty, t(2), t(6), ops=["While"]),
    case(range_maybe_empty, t(6), t(2), ops=["While"], id="range_empty"),
    case(decay_accumulate, t(20), ops=["While"], signature=[kf.TensorSpec([], I32)],
         id="decay_accumulate_signature"),
    # enumerate and zip
    case(enumerate_rows, MAT, ops=["While"]),
    case(enumerate_rows, MAT, ops=["While"], signature=[kf.TensorSpec([None, 3], F32)],
         id="enumerate_rows_unknown_length"),
    case(enumerate_with_start, VEC, ops=["While", "If"]),
    case(zip_rows, VEC, VEC * 2., ops=["While"]),
    case(zip_range_and_rows, t(5), VEC, ops=["While"]),
    case(zip_range_and_rows, t(50), VEC, ops=["While"], id="zip_stops_at_shortest"),
    case(enumerate_break_else, VEC, t(3.5), ops=["While", "If"]),
    case(enumerate_break_else, VEC, t(50.), ops=["While", "If"], id="enumerate_else_runs"),
    case(zip_early_return, VEC, VEC - 2., ops=["While", "If"]),
    case(zip_early_return, VEC, VEC, ops=["While", "If"], id="zip_no_early_return"),
    case(unpack_row_pairs, t([[1., 2.], [3., 4.], [5., 6.]]), ops=["While"]),
    # TensorArray
    case(tensor_array_squares, t(5), ops=["While"]),
    case(tensor_array_dynamic, t(100.), ops=["While"]),
    case(tensor_array_unstack_read, t([1., 0., 1., 1.]), ops=["While"]),
    case(tensor_array_rows, t([[1., 2.], [3., 4.], [5., 6.]]), ops=["While"]),
    case(iterate_tensor_array, t([1., 0., 1., 1.]), ops=["While"], expected=11.),
    case(stateless_loop_of_asserts, t([1., 4.]), ops=["While", "Assert"]),
    # lists appended in tensor loops
    case(collect_evens, t([4, 7, 2, 9, 10]), ops=["While", "If"]),
    case(append_in_while, t(5), ops=["While"]),
    case(append_with_prefix, t(3), ops=["While"]),
    # while-else / for-else
    case(while_else, t(10), t(4), ops=["While", "If"]),
    case(while_else, t(10), t(40), ops=["While", "If"], id="while_else_runs_else"),
    case(for_else, VEC, t(4.), ops=["While", "If"]),
    case(for_else, VEC, t(7.), ops=["While", "If"], id="for_else_runs_else"),
    case(for_else_without_break, t(4), ops=["While"]),
    # if / elif / else
    case(classify, t(-4), ops=["If", "If", "If"]),
    case(classify, t(0), ops=["If", "If", "If"], id="classify_zero"),
    case(classify, t(7), ops=["If", "If", "If"], id="classify_small"),
    case(classify, t(70), ops=["If", "If", "If"], id="classify_large"),
    case(piecewise, t(-3.), ops=["If", "If"]),
    case(piecewise, t(0.5), ops=["If", "If"], id="piecewise_middle"),
    case(clip_update, t(12.), t(0.), t(10.), ops=["If", "If"]),
    # ternaries, and / or / not
    case(ternary_abs, t(-2.5), ops=["If"]),
    case(ternary_in_loop, t(7), ops=["While", "If"]),
    case(and_or_conditions, t(1.), t(-1.), ops=["If"]),
    case(and_or_conditions, t(-1.), t(-1.), ops=["If"], id="and_or_neither"),
    case(not_condition, t(1), ops=["While"]),
    case(logical_values, t(1.), t(-1.), ops=["If"]),
    case(lazy_and_guards_index, VEC, t(20), ops=["If"]),
    case(lazy_and_guards_index, VEC, t(2), ops=["If"], id="lazy_and_in_range"),
    # len() of tensors
    case(len_loop, VEC, ops=[], absent=["While"], id="len_loop_static_length_unrolls"),
    case(len_loop, VEC, ops=["While"], signature=UNKNOWN_VEC, id="len_loop_unknown_length"),
    case(len_in_condition, VEC, ops=["While"], signature=UNKNOWN_VEC),
    # functions, lambdas, methods
    case(helper_called_in_loop, t(27), ops=["While", "If"]),
    case(nested_def_in_loop, t(1.), t(6), ops=["While", "If"]),
    case(lambda_in_loop, t(5), ops=["While"]),
    case(closure_reads_outer, VEC, t(3.), ops=["While"]),
    case(method_in_loop, VEC, ops=["While", "If"]),
    case(callable_object, t(10), ops=["While"]),
    # augmented assignment
    case(augmented_ops, t(6), ops=["While"]),
    case(fibonacci, t(20), ops=["While"]),
    case(augmented_on_tensor_slices, MAT, ops=["While"]),
    # several dtypes in the loop state
    case(mixed_dtype_state, t(5), ops=["While"]),
    case(count_and_mean, VEC, ops=["While", "If"]),
    case(structured_state, t(4), ops=["While"]),
    # shape_invariants and maximum_iterations via set_loop_options
    case(doubling_concat, t(3), ops=["While"]),
    case(growing_matrix, t(3), ops=["While"]),
    # set_loop_options does nothing when the program runs unconverted: 5, not 10
    case(capped_loop, t(10), ops=["While"], expected=5),
    # mixes of Python and tensor control flow
    case(python_loop_with_tensor_if, t(2.), ops=["If", "If", "If"], absent=["While"]),
    case(python_loop_tensor_break, t(4.), ops=["If"], absent=["While"]),
    case(if_inside_while_inside_if, t(7.), t(4), ops=["If", "While", "If"]),
    case(assert_in_loop, t([1., 4., 9.]), ops=["While", "Assert"]),
    case(state_in_dict, t(10), ops=["While"]),
    case(temp_defined_inside_loop, VEC, ops=["While"]),
    case(print_free_trace_time_python, t(3.), ops=["If"], absent=["While"]),
]


# ================================================================ checks

def _kind(op_type):
    """StatelessWhile -> While, StatelessIf -> If: the construct, not the variant."""
    return op_type[len("Stateless"):] if op_type.startswith("Stateless") else op_type


def control_flow_ops(graph):
    """Op kinds in `graph` and, recursively, in the subgraphs its ops hold as attrs."""
    found = collections.Counter()
    for op in graph.operations:
        found[_kind(op.type)] += 1
        for value in op.attrs.values():
            inner = getattr(value, "graph", None)
            if inner is not None and hasattr(inner, "operations"):
                found.update(control_flow_ops(inner))
    return found


def as_numpy(value):
    """Results as NumPy values; a Python list of tensors is compared as their stack."""
    if isinstance(value, list):
        return np.array([as_numpy(v) for v in value])
    if isinstance(value, tuple):
        return tuple(as_numpy(v) for v in value)
    if isinstance(value, (bool, int, float)):  # what kf.constant would make of it
        return np.asarray(kf.constant(value))
    return np.asarray(value)


def assert_same(got, expected, label="result"):
    """Equal shapes, dtypes and values (Python numbers count as kf.constant of them)."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), label
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{label}[{i}]")
        return
    assert got.shape == expected.shape, f"{label}: shape {got.shape} != {expected.shape}"
    if expected.size:
        assert got.dtype == expected.dtype, f"{label}: dtype {got.dtype} != {expected.dtype}"
    if got.size:
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=1e-6, atol=0, err_msg=label)


def test_corpus_is_large_enough():
    passing = [c.values[0] for c in CASES if not c.marks]
    assert len({c.fn for c in passing}) >= 60 and len(passing) >= 60


@pytest.mark.parametrize("program", CASES)
def test_function_matches_eager_python(program):
    expected = as_numpy(program.fn(*program.args) if program.expected is None
                        else program.expected)
    compiled = kf.function(program.fn, input_signature=program.signature)
    got = as_numpy(compiled(*program.args))
    assert_same(got, expected, program.fn.__name__)


@pytest.mark.parametrize("program", CASES)
def test_traced_graph_holds_the_control_flow_ops(program):
    compiled = kf.function(program.fn, input_signature=program.signature)
    concrete = compiled.get_concrete_function(*([] if program.signature else program.args))
    found = control_flow_ops(concrete.traced_graph)
    wanted = collections.Counter(program.ops)
    for kind, count in wanted.items():
        assert found[kind] >= count, f"expected >= {count} {kind} ops, found {dict(found)}"
    for kind in program.absent:
        assert found[kind] == 0, f"expected no {kind} op, found {dict(found)}"


# ================================================================ how ranges are iterated

def _loop_body_ops(fn, *args):
    """Op types of the body subgraph of the (only) top-level While op."""
    graph = kf.function(fn).get_concrete_function(*args).traced_graph
    loop, = [op for op in graph.operations if _kind(op.type) == "While"]
    return [op.type for op in loop.attrs["body_graph"].graph.operations]


@pytest.mark.parametrize("fn, args", [
    (decay_accumulate, (t(5),)),
    (kf_range_countdown, (t(5),)),
    (range_start_stop_step, (t(1), t(9))),
    (kf_range_int64, (t(5),)),
    (zip_range_and_rows, (t(3), VEC)),
], ids=["range_n", "kf_range_countdown", "range_start_stop_step", "int64", "zip"])
def test_integer_ranges_are_computed_from_the_index_not_sliced(fn, args):
    """`for i in kf.range(...)` / `range(tensor)`: no StridedSlice of the range per step,
    and the range tensor itself is pruned (built quiet: no pruning warning)."""
    body = _loop_body_ops(fn, *args)
    if fn is not zip_range_and_rows:  # zip also slices the rows of xs
        assert "StridedSlice" not in body
    concrete = kf.function(fn).get_concrete_function(*args)
    assert not {"Range", "DynamicRange"} & {op.type for op in concrete.graph.operations}


def test_float_and_tensor_delta_ranges_still_index_the_range_tensor():
    assert "StridedSlice" in _loop_body_ops(kf_range_float, t(3.))
    assert "StridedSlice" in _loop_body_ops(kf_range_tensor_delta, t(9), t(2))


def test_range_loops_do_not_warn_about_pruned_ops():
    import warnings
    from kilnflow.function.diagnostics import PrunedComputationWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrunedComputationWarning)
        for fn, args in [(decay_accumulate, (t(5),)), (kf_range_countdown, (t(4),)),
                         (enumerate_rows, (MAT,))]:
            kf.function(fn)(*args)


def test_converted_code_names_the_builtins_it_extends():
    source = kf.autograph.to_code(zip_range_and_rows)
    assert "ag__.zip_(ag__.range_(n), xs)" in source
    assert "ag__.enumerate_(xs, start=1)" in kf.autograph.to_code(enumerate_with_start)


# ================================================================ kf.autograph.to_graph

def _scaled(x):
    return x * 2. if x > 0. else x


def calls_a_helper(x, n):
    for _ in kf.range(n):
        x = _scaled(x) - 1.
    return x


def test_to_graph_builds_control_flow_ops_in_a_graph():
    converted = kf.autograph.to_graph(calls_a_helper)
    assert converted(t(3.), t(2)).numpy() == calls_a_helper(t(3.), t(2)).numpy()  # eager
    concrete = kf.function(converted, autograph=False).get_concrete_function(t(3.), t(2))
    found = control_flow_ops(concrete.traced_graph)
    assert found["While"] == 1 and found["If"] == 1


def test_to_graph_without_recursion_leaves_called_functions_alone():
    converted = kf.autograph.to_graph(calls_a_helper, recursive=False)
    with pytest.raises(TypeError, match="Python `bool`"):  # _scaled's ternary is not converted
        kf.function(converted, autograph=False)(t(3.), t(2))
