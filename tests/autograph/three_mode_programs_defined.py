"""More AutoGraph corpus programs for test_three_modes.py (plain Python, @kf.function and
a compat.v1 Session must agree): variables first created inside tensor loops and used
after them, which TF defines automatically from the loop's first iteration (every input
here runs the loop at least once; zero iterations fail TF's runtime check, see
test_conversion_errors.py), closures created in loop bodies, and closures created before
a loop or branch that changes what they read."""
import kilnflow as kf


class Holder:
    pass


def created_in_while_used_after(n):
    i = 0
    while i < n:
        last = i * 3 + 1
        i += 1
    return last


def created_in_for_range_used_after(n):
    for i in kf.range(n):
        square = i * i
    return square


def none_before_the_loop(n):
    found = None
    while n > 0:
        found = n * 2
        n -= 1
    return found


def created_in_both_branches_inside_loop(n):
    i = 0
    while i < n:
        if i % 2 == 0:
            kind = i * 10
        else:
            kind = -i
        i += 1
    return kind


def dict_created_in_loop(n):
    i = 0
    while i < n:
        d = {"a": i, "b": i * 2}
        i += 1
    return d["a"] * 100 + d["b"]


def attribute_created_in_loop(n):
    h = Holder()
    while n > 0:
        h.seen = n
        n -= 1
    return h.seen


def created_in_loop_with_break(n):
    i = 0
    while i < 100:
        y = i * 5
        i += 1
        if i >= n:
            break
    return y


def created_in_nested_loops(n):
    i = 0
    while i < n:
        j = 0
        while j < i + 1:
            inner = i * 10 + j
            j += 1
        i += 1
    return inner


def lambda_created_and_called_in_loop(n):
    s = 0
    i = 0
    while i < n:
        scale = lambda: i * 2  # noqa: E731 - read in the same iteration
        s += scale()
        i += 1
    return s


def value_from_a_lambda_made_in_the_loop(n):
    i = 0
    while i < n:
        f = lambda v: v + i  # noqa: E731
        out = f(100)
        i += 1
    return out


# closures made before a statement that changes what they read (TF 2.21's answers in the
# comments; before, the converted body changed a private copy and f saw the old value)

def closure_before_loop_called_inside(n):
    a = n * 0
    s = n * 0

    def f():
        return a * 10
    for i in kf.range(n):
        a = i
        s += f()
    return s  # TF: 60 for n=4


def closure_before_loop_called_after(n):
    a = n * 0

    def f():
        return a * 10
    i = 0
    while i < n:
        a = a + i
        i += 1
    return f()  # TF: 30 for n=3


def closure_before_branch_called_after(n):
    a = n * 0 + 1
    f = lambda: a * 10  # noqa: E731
    if n > 2:
        a = n
    return f()  # TF: 50 for n=5, 10 for n=1


def closure_before_python_loop(n):
    a = n * 0
    s = n * 0
    f = lambda: a  # noqa: E731
    for k in range(3):
        a = a + k + n
        s += f()
    return s * 100 + f()  # 1006 for n=1 (TF: as Python, probed on a shorter variant)


def closure_reads_the_loop_target(n):
    def f():
        return i * 10
    s = n * 0
    for i in kf.range(n):
        s += f()
    return s  # TF: 30 for n=3, 0 for n=0


# dict keys first set inside a tensor loop: TF's new composite names, defined like
# variables first set in the loop (TF 2.21: 6 for the first with n=4, 0 for the second)

def dict_keys_set_in_the_loop(n):
    d = {"x": n * 0}
    for i in kf.range(n):
        d["x"], d["y"] = d["x"] + i, i
    return d["x"] * 10 + d["y"]


def dict_key_added_but_unused(n):
    d = {"x": n * 0}
    for i in kf.range(n):
        d["new"] = i
    return d["x"]


def results_dict_starting_empty(n):
    results = {}
    i = 0
    while i < n:
        results["loss"] = i * 2
        results["step"] = i
        i += 1
    return results["loss"] * 100 + results["step"]


def nested_dict_gains_a_key(n):
    state = {"stats": {"count": n * 0}}
    for i in kf.range(n):
        state["stats"]["count"] += 1
        state["stats"]["last"] = i * 3
    return state["stats"]["count"] * 100 + state["stats"]["last"]


PROGRAMS = [
    (created_in_while_used_after, [(4,), (1,)]), (created_in_for_range_used_after, [(5,), (1,)]),
    (none_before_the_loop, [(3,), (1,)]),
    (created_in_both_branches_inside_loop, [(4,), (3,)]),
    (dict_created_in_loop, [(3,), (1,)]), (attribute_created_in_loop, [(4,), (1,)]),
    (created_in_loop_with_break, [(3,), (1,)]), (created_in_nested_loops, [(3,), (1,)]),
    (lambda_created_and_called_in_loop, [(4,), (0,)]),
    (value_from_a_lambda_made_in_the_loop, [(3,), (1,)]),
    (closure_before_loop_called_inside, [(4,), (0,)]),
    (closure_before_loop_called_after, [(3,), (0,)]),
    (closure_before_branch_called_after, [(5,), (1,)]),
    (closure_before_python_loop, [(1,), (0,)]),
    (closure_reads_the_loop_target, [(3,), (0,)]),
    (dict_keys_set_in_the_loop, [(4,), (1,)]), (dict_key_added_but_unused, [(4,), (1,)]),
    (results_dict_starting_empty, [(3,), (1,)]), (nested_dict_gains_a_key, [(3,), (1,)]),
]
