"""AutoGraph corpus run in three modes: plain Python (eager tensors), @kf.function, and a
compat.v1 Session over kf.autograph.to_graph. PROGRAMS lists (function, argument tuples);
arguments are Python numbers fed as int32 (int) or float32 (float) scalar tensors.

The groups: composite names (dict/list items, attributes) in loops and branches; nested
control flow with break/continue/return; loops over Python lists, ranges, dicts, tensors
and TensorArrays with tensor-dependent exits; closures in loops; variables created in
loops and branches.
"""
import kilnflow as kf


class Box:
    def __init__(self, value):
        self.value = value


# ---------------------------------------------------------------- composite names

def dict_item_while(n):
    d = {"count": 0, "total": 0}
    while n > 0:
        d["count"] += 1
        d["total"] += n
        n -= 1
    return d["count"] * 100 + d["total"]


def dict_item_if(n):
    d = {"v": n}
    if n > 2:
        d["v"] = d["v"] * 10
    return d["v"]


def list_item_for_range(n):
    acc = [0, 0]
    for i in kf.range(n):
        if i % 2 == 0:
            acc[0] += i
        else:
            acc[1] += i
    return acc[0] * 1000 + acc[1]


def list_item_branches(n):
    xs = [n, n]
    if n % 2 == 0:
        xs[0] = xs[0] + 1
    else:
        xs[1] = xs[1] - 1
    return xs[0] * 10 + xs[1]


def nested_dict_list(n):
    state = {"h": [0, 1]}
    i = 0
    while i < n:
        state["h"][0], state["h"][1] = state["h"][1], state["h"][0] + state["h"][1]
        i += 1
    return state["h"][0]


def attribute_while(n):
    box = Box(0)
    while n > 0:
        box.value += n
        n -= 1
    return box.value


def attribute_if_else(n):
    box = Box(n)
    if n > 0:
        box.value = box.value * 3
    else:
        box.value = box.value - 7
    return box.value


def attribute_nested(n):
    outer = Box(Box(1))
    for _ in kf.range(n):
        outer.value.value = outer.value.value * 2
    return outer.value.value


def attribute_and_item(n):
    box = Box({"a": 0})
    while n > 0:
        box.value["a"] += 2
        n -= 1
    return box.value["a"]


def attribute_in_loop_condition(n):
    box = Box(1)
    while box.value < n:
        box.value = box.value * 3
    return box.value


# ---------------------------------------------------------------- break / continue / return

def while_break(n):
    i = 0
    while i < 100:
        if i * i > n:
            break
        i += 1
    return i


def while_continue(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        s += i
    return s


def while_break_and_continue(n):
    i = 0
    s = 0
    while i < 50:
        i += 1
        if i % 2 == 0:
            continue
        if s > n:
            break
        s += i
    return s * 100 + i


def while_return(n):
    i = 0
    while i < 20:
        if i * 3 > n:
            return i
        i += 1
    return -1


def for_range_tensor_break(n):
    s = 0
    for i in range(10):
        if n < i:
            break
        s += i
    return s


def for_range_tensor_continue(n):
    s = 0
    for i in range(8):
        if i % n == 0:
            continue
        s += i
    return s


def for_range_tensor_return(n):
    for i in range(10):
        if n < i:
            return i * 10
    return -1


def for_tensor_range_break(n):
    s = 0
    for i in kf.range(20):
        s += i
        if s > n:
            break
    return s


def for_tensor_range_return(n):
    for i in kf.range(20):
        if i * i >= n:
            return i
    return 99


def nested_loops_inner_break(n):
    total = 0
    for i in kf.range(4):
        j = 0
        while j < 10:
            if j > i + n:
                break
            total += j
            j += 1
    return total


def nested_loops_inner_continue_outer_break(n):
    total = 0
    i = 0
    while i < 10:
        i += 1
        if total > n:
            break
        for j in kf.range(i):
            if j % 2 == 1:
                continue
            total += j
    return total * 100 + i


def nested_return_from_inner(n):
    for i in kf.range(5):
        for j in kf.range(5):
            if i * j > n:
                return i * 10 + j
    return -1


def return_in_both_branches(n):
    if n > 3:
        return n * 2
    else:
        return n - 1


def early_return_then_rest(n):
    if n < 0:
        return -n
    n = n * 3
    if n > 10:
        return n - 10
    return n


def return_inside_nested_if(n):
    if n > 0:
        if n > 5:
            return 2
        return 1
    return 0


def while_else_without_break(n):
    i = 0
    while i < n:
        i += 1
    else:
        i = i + 100
    return i


def for_else_with_break(n):
    found = -1
    for i in kf.range(6):
        if i == n:
            found = i
            break
    else:
        found = 100
    return found


# ---------------------------------------------------------------- loops over collections

def python_list_with_tensor_exit(n):
    s = 0
    for v in [3, 1, 4, 1, 5, 9]:
        if s + v > n:
            break
        s += v
    return s


def python_dict_items_tensor_branch(n):
    s = 0
    for key, weight in {"a": 1, "b": 10, "c": 100}.items():
        if n > weight:
            s += weight
    return s


def python_range_accumulate(n):
    s = n
    for i in range(5):
        s = s * 2 - i
    return s


def tensor_rows_loop(n):
    rows = kf.reshape(kf.range(12), (4, 3))
    s = 0
    for row in rows:
        s += kf.reduce_sum(row) * n
    return s


def tensor_rows_break(n):
    values = kf.constant([5, 3, 8, 1, 9])
    s = 0
    for v in values:
        if v > n:
            break
        s += v
    return s


def tensorarray_accumulate(n):
    ta = kf.TensorArray(kf.int32, size=0, dynamic_size=True)
    i = 0
    while i < n:
        ta = ta.write(i, i * i)
        i += 1
    return kf.reduce_sum(ta.stack()) + ta.size()


def tensorarray_early_exit(n):
    ta = kf.TensorArray(kf.int32, size=0, dynamic_size=True)
    for i in kf.range(10):
        if i > n:
            break
        ta = ta.write(i, 2 * i)
    return kf.reduce_sum(ta.stack())


def enumerate_python_list(n):
    s = 0
    for i, v in enumerate([10, 20, 30]):
        if i < n:
            s += v
    return s


def zip_python_lists(n):
    s = 0
    for a, b in zip([1, 2, 3], [4, 5, 6]):
        if a * b > n:
            s += a * b
    return s


def while_over_float(x):
    steps = 0
    while x > 1.0:
        x = x / 2.0
        steps += 1
    return steps


def for_range_of_tensor(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


# ---------------------------------------------------------------- closures

def closures_python_loop(n):
    fns = []
    for i in range(3):
        fns.append(lambda: n * i)
    return fns[0]() + fns[1]() * 10 + fns[2]() * 100


def closures_bound_by_default(n):
    fns = []
    for i in range(3):
        fns.append(lambda i=i: n * i)
    return fns[0]() + fns[1]() * 10 + fns[2]() * 100


def closure_called_in_tensor_loop(n):
    s = 0
    i = 0
    while i < n:
        step = lambda: i * 2  # noqa: E731
        s += step()
        i += 1
    return s


def closure_in_cond_branches(n):
    k = n * 2
    return kf.cond(n > 2, lambda: k + 1, lambda: k - 1)


def inner_def_in_loop(n):
    s = 0
    for i in kf.range(4):
        def bump(v):
            return v + i * n
        s = bump(s)
    return s


# ---------------------------------------------------------------- variables created in loops / branches

def defined_in_both_branches(n):
    if n > 0:
        y = n * 2
    else:
        y = -n
    return y


def defined_before_and_in_loop(n):
    last = -1
    i = 0
    while i < n:
        last = i * 3
        i += 1
    return last


def temporary_only_inside_loop(n):
    s = 0
    i = 0
    while i < n:
        t = i * i  # created in the loop, never used after it
        s += t
        i += 1
    return s


def temporary_only_inside_branch(n):
    s = n
    if n > 2:
        extra = n * 10
        s = s + extra
    return s


def elif_chain(n):
    if n < 0:
        r = -1
    elif n == 0:
        r = 0
    elif n < 5:
        r = 1
    else:
        r = 2
    return r


def loop_var_swaps(n):
    a, b = 0, 1
    for _ in kf.range(n):
        a, b = b, a + b
    return a


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def ternary_in_loop(n):
    s = 0
    for i in kf.range(n):
        s += i if i % 2 == 0 else -i
    return s


def boolean_ops_in_condition(n):
    s = 0
    i = 0
    while i < 10 and s <= n:
        if i % 2 == 0 or i == 5:
            s += i
        i += 1
    return s


def not_in_condition(n):
    r = 0
    if not n > 3:
        r = 1
    return r


def float_newton(x):
    guess = x
    i = 0
    while i < 20:
        guess = 0.5 * (guess + x / guess)
        i += 1
    return guess


def float_branch_accumulate(x):
    acc = 0.0
    for i in kf.range(5):
        if kf.cast(i, kf.float32) < x:
            acc += x
        else:
            acc -= 1.0
    return acc


def nested_while_counting(n):
    count = 0
    i = 0
    while i < n:
        j = i
        while j < n:
            count += 1
            j += 1
        i += 1
    return count


def loop_with_list_append_python(n):
    parts = []
    for k in range(3):
        parts.append(n + k)
    return kf.add_n(parts)


def dict_of_tensors_in_branch(n):
    d = {"x": n, "y": n * 2}
    if n > 1:
        d["x"], d["y"] = d["y"], d["x"]
    return d["x"] * 10 + d["y"]


def two_attributes(n):
    box = Box(0)
    box.other = 1
    i = 0
    while i < n:
        box.value += 1
        box.other *= 2
        i += 1
    return box.value * 1000 + box.other


def while_true_with_break(n):
    i = 0
    while True:
        i += 2
        if i >= n:
            break
    return i


def max_of_list_python(n):
    best = n
    for v in [4, 9, 2]:
        if v > best:
            best = v
    return best


PROGRAMS = [
    (dict_item_while, [(5,), (0,)]), (dict_item_if, [(3,), (1,)]),
    (list_item_for_range, [(6,), (0,)]), (list_item_branches, [(4,), (3,)]),
    (nested_dict_list, [(7,), (0,)]), (attribute_while, [(4,), (0,)]),
    (attribute_if_else, [(2,), (-2,)]), (attribute_nested, [(5,), (0,)]),
    (attribute_and_item, [(3,), (0,)]), (attribute_in_loop_condition, [(20,), (0,)]),
    (while_break, [(10,), (0,)]), (while_continue, [(10,), (2,)]),
    (while_break_and_continue, [(10,), (40,)]), (while_return, [(7,), (100,)]),
    (for_range_tensor_break, [(3,), (20,)]), (for_range_tensor_continue, [(2,), (3,)]),
    (for_range_tensor_return, [(3,), (20,)]), (for_tensor_range_break, [(10,), (500,)]),
    (for_tensor_range_return, [(10,), (1000,)]), (nested_loops_inner_break, [(1,), (0,)]),
    (nested_loops_inner_continue_outer_break, [(5,), (100,)]),
    (nested_return_from_inner, [(6,), (100,)]), (return_in_both_branches, [(5,), (1,)]),
    (early_return_then_rest, [(-3,), (2,), (5,)]), (return_inside_nested_if, [(7,), (3,), (-1,)]),
    (while_else_without_break, [(3,), (0,)]), (for_else_with_break, [(2,), (9,)]),
    (python_list_with_tensor_exit, [(9,), (100,)]),
    (python_dict_items_tensor_branch, [(50,), (0,)]), (python_range_accumulate, [(3,)]),
    (tensor_rows_loop, [(2,)]), (tensor_rows_break, [(6,), (100,)]),
    (tensorarray_accumulate, [(4,), (1,)]), (tensorarray_early_exit, [(3,), (20,)]),
    (enumerate_python_list, [(2,), (0,)]), (zip_python_lists, [(8,), (0,)]),
    (while_over_float, [(20.0,), (0.5,)]), (for_range_of_tensor, [(5,), (0,)]),
    (closures_python_loop, [(2,)]), (closures_bound_by_default, [(2,)]),
    (closure_called_in_tensor_loop, [(4,), (0,)]), (closure_in_cond_branches, [(3,), (1,)]),
    (inner_def_in_loop, [(2,)]), (defined_in_both_branches, [(3,), (-3,)]),
    (defined_before_and_in_loop, [(4,), (0,)]), (temporary_only_inside_loop, [(4,), (0,)]),
    (temporary_only_inside_branch, [(3,), (1,)]), (elif_chain, [(-5,), (0,), (3,), (9,)]),
    (loop_var_swaps, [(10,), (0,)]), (collatz, [(6,), (1,), (27,)]), (gcd, [(48, 18), (7, 0)]),
    (ternary_in_loop, [(6,), (0,)]), (boolean_ops_in_condition, [(5,), (100,)]),
    (not_in_condition, [(2,), (5,)]), (float_newton, [(2.0,), (9.0,)]),
    (float_branch_accumulate, [(2.5,), (-1.0,)]), (nested_while_counting, [(4,), (0,)]),
    (loop_with_list_append_python, [(2,)]), (dict_of_tensors_in_branch, [(3,), (0,)]),
    (two_attributes, [(5,), (0,)]), (while_true_with_break, [(7,), (1,)]),
    (max_of_list_python, [(5,), (10,)]),
]
