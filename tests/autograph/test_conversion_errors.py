"""Errors of tensor control flow name the user's file and line, not generated code.

Each program is wrong (or uses a construct AutoGraph cannot turn into graph ops) only
when its conditions are graph tensors; the tests call it under @kf.function and check
the error class, the message, and that the message names the line of the `if` / loop
statement (or expression) at fault. Where kilnflow's behaviour differs from an error
(a Python list that becomes a TensorArray) the test documents what happens instead.
"""
import inspect
import re
import traceback

import pytest

import kilnflow as kf
from kilnflow import autograph


def line_of(fn, text):
    """The file line number of the first line of fn's source containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    matches = [first + i for i, line in enumerate(lines) if text in line]
    assert matches, f"{text!r} not in {fn.__name__}"
    return matches[0]


def assert_names_line(message, fn, text):
    """The message names fn's file and the line holding `text` (either location format
    kilnflow uses: '"file", line N' or 'file:N')."""
    filename, line = re.escape(fn.__code__.co_filename), line_of(fn, text)
    assert re.search(rf'"{filename}", line {line}\b|{filename}:{line}\b', message), \
        f"expected {fn.__code__.co_filename}:{line} in: {message}"


def raises(error, fn, *args, match=None):
    """The error fn(*args) raises under @kf.function (conversion is user-requested)."""
    with pytest.raises(error, match=match) as info:
        kf.function(fn)(*args)
    return str(info.value)


# ---------------------------------------------------------------- only one branch

def set_in_if_only(x):
    y = x * 2.
    if x > 0.:
        z = y
    return z


def set_in_else_only(x):
    if x > 0.:
        pass
    else:
        z = x
    return z


def set_in_elif_chain_only(x):
    if x > 10.:
        z = 1.
    elif x > 0.:
        z = 2.
    return z


@pytest.mark.parametrize("fn, other", [(set_in_if_only, "else"), (set_in_else_only, "if"),
                                       (set_in_elif_chain_only, "else")],
                         ids=["if_only", "else_only", "elif_without_else"])
def test_variable_defined_in_one_branch_and_used_after(fn, other):
    message = raises(ValueError, fn, kf.constant(1.),
                     match=f"'z' must also be initialized in the {other} branch")
    text = "elif x > 0." if fn is set_in_elif_chain_only else "if x > 0"
    assert_names_line(message, fn, text)


def set_in_one_branch_not_used_after(x):
    if x > 0.:
        z = x * 2.
        x = z + 1.
    return x


def test_variable_defined_in_one_branch_but_not_used_after_is_fine():
    assert float(kf.function(set_in_one_branch_not_used_after)(kf.constant(1.))) == 3.


def different_dtypes_in_branches(x):
    if x > 0.:
        y = 1
    else:
        y = 2.
    return y


def test_variable_with_different_dtypes_in_the_branches():
    message = raises(TypeError, different_dtypes_in_branches, kf.constant(1.),
                     match="'y' is int32 after the if branch .* but float32 after the else")
    assert_names_line(message, different_dtypes_in_branches, "if x > 0")


# ---------------------------------------------------------------- loop variables

def dtype_changes_in_for(n):
    x = 0
    for i in kf.range(n):
        x = kf.cast(x, kf.float32) + 0.5
    return x


def dtype_changes_in_while(x):
    total = kf.constant(0, kf.int32)
    while x > 1.:
        x = x / 2.
        total = kf.cast(total, kf.float32) + x
    return total


@pytest.mark.parametrize("fn, arg, loop", [
    (dtype_changes_in_for, kf.constant(3), "for i in"),
    (dtype_changes_in_while, kf.constant(8.), "while x > 1."),
], ids=["for", "while"])
def test_loop_variable_that_changes_dtype(fn, arg, loop):
    message = raises(TypeError, fn, arg, match="dtype int32 before the loop, but dtype "
                                               "float32 after one iteration")
    assert_names_line(message, fn, loop)


def shape_changes_in_for(n):
    x = kf.constant([1.])
    for i in kf.range(n):
        x = kf.concat([x, x], 0)
    return x


def shape_changes_in_while(x, n):
    i = 0
    while i < n:
        x = kf.concat([x, kf.zeros([1, 2])], 0)
        i += 1
    return x


@pytest.mark.parametrize("fn, args, loop, shapes", [
    (shape_changes_in_for, (kf.constant(3),), "for i in", r"\(1,\) before .* \(2,\) after"),
    (shape_changes_in_while, (kf.zeros([1, 2]), kf.constant(3)), "while i < n",
     r"\(1, 2\) before .* \(2, 2\) after"),
], ids=["for", "while"])
def test_loop_variable_that_changes_shape_without_shape_invariants(fn, args, loop, shapes):
    message = raises(ValueError, fn, *args, match=shapes)
    assert "shape_invariants" in message  # says how to allow it
    assert_names_line(message, fn, loop)


def shape_changes_with_invariant(x, n):
    i = 0
    while i < n:
        autograph.experimental.set_loop_options(shape_invariants=[(x, [None, 2])])
        x = kf.concat([x, kf.zeros([1, 2])], 0)
        i += 1
    return x


def test_the_same_loop_with_a_shape_invariant_works():
    result = kf.function(shape_changes_with_invariant)(kf.zeros([1, 2]), kf.constant(3))
    assert result.shape == (4, 2)


def undefined_before_for(n):
    for i in kf.range(n):
        y = i * 2
    return y


def undefined_before_while(n):
    i = 0
    while i < n:
        last = i
        i += 1
    return last


def defined_on_some_paths_of_the_loop(n):
    i = 0
    while i < n:
        if i > 1:
            y = i
        i += 1
    return y


def read_before_written_in_the_loop(n):
    i = 0
    while i < n:
        z = y if i > 0 else i  # noqa: F841 - reads y before the loop body assigns it
        y = i * 2
        i += 1
    return y


def none_before_the_loop_set_on_some_paths(n):
    y = None
    while n > 0:
        if n > 1:
            y = n
        n -= 1
    return y


def none_before_the_loop(n):
    y = None
    while n > 0:
        y = n * 10
        n -= 1
    return y


def structure_first_defined_in_the_loop(n):
    i = 0
    while i < n:
        d = {"a": i, "b": [i * 2, 1.5]}
        i += 1
    return d


def shape_first_defined_in_the_loop(n):
    i = 0
    while i < n:
        y = kf.zeros([i + 1])
        i += 1
    return y


DEFINED_IN_THE_LOOP = [undefined_before_for, undefined_before_while, none_before_the_loop,
                       structure_first_defined_in_the_loop, shape_first_defined_in_the_loop]


@pytest.mark.parametrize("fn", DEFINED_IN_THE_LOOP, ids=lambda fn: fn.__name__)
def test_variable_first_defined_in_a_tensor_loop_is_defined_automatically(fn):
    # TF (2.21): a variable every iteration assigns before reading gets a placeholder
    # before the loop, replaced by the first iteration's value
    expected = fn(3)
    got = kf.nest.map_structure(lambda t: t.numpy().tolist(), kf.function(fn)(kf.constant(3)))
    assert got == kf.nest.map_structure(
        lambda v: v.numpy().tolist() if hasattr(v, "numpy") else v, expected)


@pytest.mark.parametrize("fn, name, loop", [(undefined_before_for, "y", "for i in"),
                                            (undefined_before_while, "last", "while i < n"),
                                            (none_before_the_loop, "y", "while n > 0")],
                         ids=["for", "while", "none"])
def test_a_loop_that_runs_zero_times_fails_tfs_assert_naming_the_variable(fn, name, loop):
    # TF: "loop must iterate at least once to initialize y", when the graph runs
    with pytest.raises(kf.errors.InvalidArgumentError,
                       match=f"loop must iterate at least once to initialize {name}") as info:
        kf.function(fn)(kf.constant(0))
    assert_names_line(str(info.value), fn, loop)


def test_the_one_iteration_assert_also_runs_in_a_session():
    graph = kf.compat.v1.Graph()
    with graph.as_default():
        n = kf.compat.v1.placeholder(kf.int32, [])
        y = autograph.to_graph(undefined_before_for)(n)
    with kf.compat.v1.Session(graph=graph) as sess:
        assert sess.run(y, {n: 4}) == 6
        with pytest.raises(kf.errors.InvalidArgumentError, match="initialize y"):
            sess.run(y, {n: 0})


@pytest.mark.parametrize("fn, text, loop", [
    (defined_on_some_paths_of_the_loop, "'y' must be defined before the loop.*"
     "must also be initialized in the else branch", "while i < n"),
    (read_before_written_in_the_loop, "'y' must be defined before the loop.*"
     "UnboundLocalError", "while i < n"),
    (none_before_the_loop_set_on_some_paths, "'y' is not allowed to be None before the loop",
     "while n > 0"),
], ids=["some_paths", "read_first", "none_some_paths"])
def test_variable_the_loop_cannot_define_is_tfs_value_error(fn, text, loop):
    message = raises(ValueError, fn, kf.constant(3), match=text)
    assert_names_line(message, fn, loop)


def test_a_function_defined_in_the_loop_and_used_after_cannot_be_loop_state():
    def make_in_loop(n):
        i = kf.constant(0)
        while i < n:
            f = lambda: i * 2  # noqa: E731
            i += 1
        return f()

    raises(ValueError, make_in_loop, kf.constant(3),
           match="'f' must be defined before the loop.*TypeError")


def temporary_inside_loop(n):
    s = 0
    for i in kf.range(n):
        t = i * 2  # first defined in the loop, but not used after it: fine
        s += t
    return s


def test_variable_first_defined_in_a_loop_but_only_used_inside_is_fine():
    assert int(kf.function(temporary_inside_loop)(kf.constant(4))) == 12


# ---------------------------------------------------------------- non-scalar conditions

def vector_while_condition(x):
    while x > 0.:
        x = x - 1.
    return x


def vector_if_condition(x):
    if x > 0.:
        x = x - 1.
    return x


@pytest.mark.parametrize("fn, error, text, match", [
    (vector_while_condition, TypeError, "while x > 0.", "scalar bool"),
    (vector_if_condition, kf.errors.InvalidArgumentError, "if x > 0.", "must be a scalar"),
], ids=["while", "if"])
def test_condition_that_is_not_a_scalar(fn, error, text, match):
    message = raises(error, fn, kf.constant([1., 2.]), match=match)
    assert_names_line(message, fn, text)


# ---------------------------------------------------------------- tensor as a Python bool

def bool_in_comprehension(xs):
    return kf.stack([x * 2. for x in xs if x > 0.])


def bool_in_walrus_loop(x):
    while (y := x * 2.) < 10.:  # a while with := stays a Python loop
        x = y
    return x


def explicit_bool(x):
    return bool(x > 0.)


CANNOT_CONVERT = [
    pytest.param(bool_in_comprehension, kf.constant([1., -2.]), "if x > 0.",
                 id="comprehension"),
    pytest.param(bool_in_walrus_loop, kf.constant(1.), "while (y :=", id="walrus_while"),
    pytest.param(explicit_bool, kf.constant(1.), "return bool(", id="explicit_bool"),
]


@pytest.mark.parametrize("fn, arg, text", CANNOT_CONVERT)
def test_tensor_as_python_bool_fails_at_the_users_line(fn, arg, text):
    with pytest.raises(TypeError, match="as a Python `bool` is not allowed") as info:
        kf.function(fn)(arg)
    frames = [f for f in traceback.extract_tb(info.value.__traceback__)
              if f.filename == fn.__code__.co_filename]
    assert frames and frames[-1].lineno == line_of(fn, text)


@pytest.mark.parametrize("fn, arg, text", CANNOT_CONVERT)
def test_tensor_as_python_bool_message_names_the_line(fn, arg, text):
    message = raises(TypeError, fn, arg)
    assert_names_line(message, fn, text)


def test_explain_lists_the_comprehension_as_python():
    report = autograph.explain(bool_in_comprehension)
    entries = [(line, construct) for line, construct, _, _ in report.entries]
    assert (line_of(bool_in_comprehension, "if x > 0."), "comprehension") in entries


def if_inside_try(x):
    try:
        if x > 0.:  # converted: a cond op, even inside `try`
            x = x + 1.
        kf.debugging.Assert(x < 100., ["too large"])
    except kf.errors.InvalidArgumentError:  # stays Python: catches trace-time errors only
        x = -x
    return x


def test_try_block_converts_its_statements_but_except_stays_python():
    f = kf.function(if_inside_try)
    assert float(f(kf.constant(1.))) == 2.
    assert float(f(kf.constant(-1.))) == -1.
    ops = {op.type for op in f.get_concrete_function(kf.constant(1.)).traced_graph.operations}
    assert ops & {"If", "StatelessIf"}
    # The Assert fails when the graph runs, after the Python `except` is gone.
    with pytest.raises(kf.errors.InvalidArgumentError, match="too large"):
        f(kf.constant(500.))


# ---------------------------------------------------------------- Python lists in tensor loops

def list_only_appended(n):
    out = []
    for i in kf.range(n):
        out.append(i * 10)
    return out


def test_list_only_appended_in_a_tensor_loop_becomes_a_stacked_tensor():
    """Beyond TF: no error; after the loop the list is one tensor (a TensorArray stacked)."""
    result = kf.function(list_only_appended)(kf.constant(3))
    assert result.numpy().tolist() == [0, 10, 20]


def list_appended_and_read_in_loop(n):
    out = []
    for i in kf.range(n):
        out.append(i)
        if len(out) > 2:
            pass
    return out


def list_appended_and_indexed_in_loop(n):
    out = [kf.constant(0)]
    i = 0
    while i < n:
        out.append(out[-1] + i)
        i += 1
    return out


@pytest.mark.parametrize("fn, loop", [(list_appended_and_read_in_loop, "for i in"),
                                      (list_appended_and_indexed_in_loop, "while i < n")],
                         ids=["len_in_for", "indexed_in_while"])
def test_list_appended_in_a_tensor_loop_and_also_used_otherwise(fn, loop):
    """The list stays a Python list (it is not loop state), so the tensors the body
    appends would escape the loop's graph: an error names the list and the loop."""
    message = raises(ValueError, fn, kf.constant(3),
                     match="list 'out' is a Python list from outside a tensor loop")
    assert_names_line(message, fn, loop)


def list_appended_in_tensor_if(x):
    out = []
    if x > 0.:
        out.append(x)
    return out


def test_list_appended_in_a_tensor_if():
    message = raises(ValueError, list_appended_in_tensor_if, kf.constant(1.),
                     match="list 'out' is a Python list from outside a tensor `if`")
    assert_names_line(message, list_appended_in_tensor_if, "if x > 0.")


def list_appended_then_appended_after(n):
    out = []
    for i in kf.range(n):
        out.append(i)
    out.append(n)  # after the loop `out` is a tensor: it has no append
    return out


def test_list_used_as_a_list_after_the_loop():
    """Documented limit: after a tensor loop the list is a tensor, not a list."""
    with pytest.raises(AttributeError, match="append") as info:
        kf.function(list_appended_then_appended_after)(kf.constant(3))
    frames = [f for f in traceback.extract_tb(info.value.__traceback__)
              if f.filename == __file__]
    assert frames[-1].lineno == line_of(list_appended_then_appended_after, "out.append(n)")


def python_loop_appends(x):
    out = []
    for k in range(3):  # a Python loop: appends are plain Python, as written
        out.append(x * k)
    return kf.stack(out)


def test_list_appended_in_a_python_loop_stays_a_list():
    assert kf.function(python_loop_appends)(kf.constant(2.)).numpy().tolist() == [0., 2., 4.]


def test_none_in_a_tensor_branch_is_a_value_error_naming_the_variable():
    def none_branch(x):
        if x > 0:
            y = None
        else:
            y = x
        return y

    with pytest.raises(ValueError, match="'y' is None in a tensor cond or loop"):
        kf.function(none_branch)(kf.constant(1))


# ---------------------------------------------------------------- returns and generators

def return_in_if_only(x):
    if x > 0:
        return x


def return_in_if_then_after(x):
    if x > 0:
        return x
    return -x


def return_in_both_branches(x):
    if x > 0:
        return x * 2
    else:
        return x - 1


def return_in_loop_only(xs):
    for v in xs:
        if v > 0:
            return v


def test_return_in_one_branch_of_a_tensor_if_is_tf_value_error():
    # Python returns None when x <= 0; a graph cannot, and the old code returned 0 silently
    message = raises(ValueError, return_in_if_only, kf.constant(-3),
                     match="must also have a return statement")
    assert_names_line(message, return_in_if_only, "if x > 0")


def test_return_in_one_branch_with_a_python_condition_keeps_python_semantics():
    f = kf.function(return_in_if_only)
    assert f(-3) is None and f(3) == 3


def test_early_return_then_final_return_follows_the_taken_path():
    f = kf.function(return_in_if_then_after)
    assert int(f(kf.constant(3))) == 3 and int(f(kf.constant(-4))) == 4
    g = kf.function(return_in_both_branches)
    assert int(g(kf.constant(3))) == 6 and int(g(kf.constant(-4))) == -5


def test_return_only_inside_a_tensor_loop_is_tf_value_error():
    raises(ValueError, return_in_loop_only, kf.constant([-1, 2, 3]),
           match="must also have a return statement")


def counting_generator(x):
    yield x
    yield x + 1


def test_generator_function_is_refused_with_not_implemented_error():
    message = raises(NotImplementedError, counting_generator, kf.constant(1),
                     match="generator")
    assert "counting_generator" in message and "Dataset.from_generator" in message


def test_generator_used_inside_a_function_runs_as_python():
    @kf.function
    def total(x):
        s = x * 0
        for v in counting_generator(x):
            s = s + v
        return s

    assert int(total(kf.constant(4))) == 9


# ---------------------------------------------------------------- TF's error classes, in one table

def _defined_in_if_only(x):
    if x > 0:
        y = x
    return y


def _undefined_before_loop(x):
    while x > 0:
        y = x
        x -= 1
    return y


def _none_in_branch(x):
    y = None
    if x > 0:
        y = x
    return y


def _dtype_differs(x):
    if x > 0:
        y = 1
    else:
        y = 1.5
    return y


def _shape_changes_in_loop(x):
    v = kf.constant([1.0])
    while x > 0:
        v = kf.concat([v, v], 0)
        x -= 1
    return v


def _bool_of_tensor_unconverted(x):
    return bool(x > 0)


def _returns_differ_in_dtype(x):
    if x > 0:
        return 1
    return 2.5


def _returns_differ_in_structure(x):
    if x > 0:
        return x, x
    return x


def _returns_none_on_both_paths(x):
    if x > 0:
        return None
    return None


def _dict_keys_differ(x):
    if x > 0:
        return {"a": x}
    return {"b": x}


def _int64_and_int32_branches(x):
    if x > 0:
        y = kf.constant(1, kf.int64)
    else:
        y = 2
    return y


def _dict_key_set_in_one_branch(x):
    d = {"x": x * 0}
    if x > 0:
        d["y"] = x
    return d["x"]


def test_a_dict_key_set_in_one_branch_is_tfs_value_error_naming_it():
    # TF 2.21: "'d['y']' must also be initialized in the else branch", even if unused
    message = raises(ValueError, _dict_key_set_in_one_branch, kf.constant(2),
                     match=r"'d\['y'\]' must also be initialized in the else branch")
    assert_names_line(message, _dict_key_set_in_one_branch, "if x > 0")


# (program, TF 2.21's error class, message fragment); each row's class was asked of TF
TF_ERROR_CLASSES = [
    (_dict_key_set_in_one_branch, ValueError, "must also be initialized"),
    (_returns_differ_in_dtype, TypeError, "retval_"),
    (_returns_differ_in_structure, TypeError, "structure"),
    (_returns_none_on_both_paths, ValueError, "None"),
    (_dict_keys_differ, TypeError, "structure"),
    (_int64_and_int32_branches, TypeError, "int64"),
    (defined_on_some_paths_of_the_loop, ValueError, "must be defined before the loop"),
    (none_before_the_loop_set_on_some_paths, ValueError, "not allowed to be None"),
    (_defined_in_if_only, ValueError, "must also be initialized in the else branch"),
    (_undefined_before_loop, kf.errors.InvalidArgumentError, "iterate at least once"),
    (_none_in_branch, ValueError, "None"),
    (_dtype_differs, TypeError, "dtype"),
    (_shape_changes_in_loop, ValueError, "shape"),
    (_bool_of_tensor_unconverted, kf.errors.OperatorNotAllowedInGraphError, "bool"),
    (return_in_if_only, ValueError, "must also have a return statement"),
    (counting_generator, NotImplementedError, "generator"),
]


@pytest.mark.parametrize("fn, error, match", TF_ERROR_CLASSES,
                         ids=[row[0].__name__.strip("_") for row in TF_ERROR_CLASSES])
def test_autograph_errors_use_tfs_classes(fn, error, match):
    raises(error, fn, kf.constant(0 if fn is _undefined_before_loop else 2), match=match)
    assert issubclass(kf.errors.OperatorNotAllowedInGraphError, TypeError)


def try_finally_return(x):
    log = []
    try:
        return x + 1
    finally:
        log.append("closed")  # runs while tracing, as in Python


def for_else_over_tensor(x):
    total = x * 0
    for v in kf.range(x):
        if v > 100:
            break
        total += v
    else:
        total += 1000
    return total


def test_try_finally_with_return_and_for_else_keep_python_semantics():
    assert int(kf.function(try_finally_return)(kf.constant(2))) == 3
    for n in (0, 4):
        assert int(kf.function(for_else_over_tensor)(kf.constant(n))) == \
            int(for_else_over_tensor(kf.constant(n)))


def test_a_tensorarray_first_made_in_a_tensor_loop_cannot_be_defined_automatically():
    # TF 2.21: "'ta' must be defined before the loop ... unsupported type 'TensorArray'"
    def made_in_loop(n):
        for i in kf.range(n):
            ta = kf.TensorArray(kf.int32, size=2).write(0, i).write(1, i * 2)
        return ta.stack()

    raises(ValueError, made_in_loop, kf.constant(3),
           match="'ta' must be defined before the loop.*TensorArray")
