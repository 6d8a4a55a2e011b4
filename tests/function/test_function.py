"""@kf.function: trace keys, the cache, retracing explanations, input_signature,
reduce_retracing, ConcreteFunctions, structured outputs, methods, variables, program order,
gradients inside functions, runtime errors mapped to the user's line, generated code."""
import collections
import functools
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.function.diagnostics import PrunedComputationWarning, RetracingWarning

Point = collections.namedtuple("Point", "x y")


def _line_of(marker):
    """Line number (1-based) in this file of the line ending with `# <marker>`."""
    with open(__file__) as f:
        for number, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# <{marker}>"):
                return number
    raise AssertionError(marker)


def _counting(fn=None, **options):
    """A kf.function plus a list that grows by one on every trace."""
    traces = []
    options.setdefault("autograph", False)  # the wrapper's lambdas need no conversion

    def wrap(f):
        @functools.wraps(f)  # keeps f's signature, so keyword calls canonicalize
        def python(*args, **kwargs):
            traces.append(1)
            return f(*args, **kwargs)
        python.__name__ = python.__qualname__ = "counted"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return kf.function(python, **options), traces
    return wrap(fn) if fn is not None else wrap


# ---------------------------------------------------------------- trace keys and the cache

def test_tensor_arguments_key_by_shape_and_dtype():
    f, traces = _counting(lambda x: x * 2)
    np.testing.assert_array_equal(f(kf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(kf.constant([3.0, 4.0])).numpy(), [6.0, 8.0])
    assert len(traces) == 1                    # same shape and dtype: a cache hit
    f(kf.constant([1.0, 2.0, 3.0]))            # new shape
    f(kf.constant([1, 2, 3]))                  # new dtype
    f(kf.constant([5, 6, 7]))                  # hit
    assert len(traces) == 3
    assert f.experimental_get_tracing_count() == 3


def test_ndarray_arguments_key_like_tensors_and_feed_their_values():
    f, traces = _counting(lambda x: x + 1)
    np.testing.assert_array_equal(f(np.ones(2)).numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(f(np.zeros(2)).numpy(), [1.0, 1.0])
    assert f(np.zeros(2)).dtype == kf.float64
    assert len(traces) == 1


def test_python_scalars_and_strings_key_by_value():
    f, traces = _counting(lambda x, n, mode: x * n if mode == "mul" else x + n)
    x = kf.constant(2.0)
    assert float(f(x, 3.0, "mul")) == 6.0
    assert float(f(x, 3.0, "mul")) == 6.0
    assert len(traces) == 1
    assert float(f(x, 4.0, "mul")) == 8.0      # the value is baked in: retrace
    assert float(f(x, 4.0, "add")) == 6.0      # new string: retrace
    assert len(traces) == 3
    f(x, 3.0, "mul")
    assert len(traces) == 3


def test_variables_are_traced_by_spec():
    # TF: another variable of the same dtype and shape shares the trace (rebound to it)
    f, traces = _counting(lambda v: v * 2)
    a, b = kf.Variable(1.0), kf.Variable(2.0)
    assert float(f(a)) == 2.0
    assert float(f(b)) == 4.0
    assert float(f(a)) == 2.0
    assert len(traces) == 1
    a.assign(5.0)                             # a new value is read, no retrace
    assert float(f(a)) == 10.0 and float(f(b)) == 4.0
    assert len(traces) == 1
    f(kf.Variable([1.0, 2.0]))                # another shape: another trace
    f(kf.Variable(1, dtype=kf.int32))         # another dtype: another trace
    assert len(traces) == 3


def test_a_rebound_trace_updates_the_variable_it_was_called_with():
    calls = []

    @kf.function
    def step(v, x):
        calls.append(1)
        if x > 0:  # a cond reading and writing the variable: its branches are rebound too
            v.assign_add(x)
        else:
            v.assign_sub(1.0)
        i = kf.constant(0)
        while i < 2:
            v.assign(v * 2.0)
            i += 1
        return v.read_value()

    a, b = kf.Variable(1.0), kf.Variable(10.0)
    assert float(step(a, kf.constant(1.0))) == 8.0
    assert float(step(b, kf.constant(-1.0))) == 36.0
    assert float(a.numpy()) == 8.0 and float(b.numpy()) == 36.0
    assert len(calls) == 1
    assert step.get_concrete_function(b, kf.constant(1.0)) is \
        step.get_concrete_function(b, kf.constant(2.0))


def test_aliasing_variables_is_part_of_the_key():
    f, traces = _counting(lambda v, w: v.assign_add(1.0) + w)
    a, b = kf.Variable(1.0), kf.Variable(1.0)
    assert float(f(a, b)) == 3.0          # a is 2, plus b's 1
    assert float(f(a, a)) == 6.0          # the same variable twice: a is 3, read after
    assert len(traces) == 2


def test_nested_structures_key_by_structure_and_leaves():
    f, traces = _counting(lambda d: d["a"] + d["b"][0] * d["b"][1].y)
    arg = {"a": kf.constant(1.0), "b": [kf.constant(2.0), Point(0, kf.constant(3.0))]}
    assert float(f(arg)) == 7.0
    arg2 = {"a": kf.constant(2.0), "b": [kf.constant(2.0), Point(0, kf.constant(1.0))]}
    assert float(f(arg2)) == 4.0
    assert len(traces) == 1
    f({"a": kf.constant(1.0), "b": (kf.constant(2.0), Point(0, kf.constant(3.0)))})  # tuple
    f({"a": kf.constant([1.0]), "b": [kf.constant(2.0), Point(0, kf.constant(3.0))]})
    assert len(traces) == 3


def test_keyword_and_default_arguments_share_the_positional_trace():
    f, traces = _counting(lambda x, n=2: x * n)
    x = kf.constant(1.0)
    results = [f(x), f(x=x), f(x, 2), f(x, n=2)]
    assert [float(r) for r in results] == [2.0] * 4
    assert len(traces) == 1


def test_functions_without_arguments():
    f, traces = _counting(lambda: kf.constant(1.0) + 1.0)
    assert float(f()) == 2.0 and float(f()) == 2.0
    assert len(traces) == 1


# ---------------------------------------------------------------- retracing explanations

def test_explain_retracing_names_the_argument_and_the_change():
    @kf.function
    def f(x, n):
        return x * n

    f(kf.constant([1.0, 2.0]), 1)
    f(kf.constant([1.0, 2.0]), 1)
    f(kf.constant([1.0, 2.0, 3.0]), 1)
    f(kf.constant([1.0, 2.0, 3.0]), 2)
    f(kf.constant([1, 2, 3]), 2)
    text = f.explain_retracing()
    lines = text.splitlines()
    assert len(lines) == 4
    assert "first call" in lines[0]
    assert "x: shape (2,) -> (3,)" in lines[1]
    assert "n: Python value 1 -> 2" in lines[2]
    assert "x: dtype float32 -> int32" in lines[3]


def test_explain_retracing_for_nested_arguments_and_variables():
    @kf.function
    def f(d, v):
        return d["a"] + v

    a, b = kf.Variable(1.0), kf.Variable(2.0)
    f({"a": kf.constant(1.0)}, a)
    f({"a": kf.constant([1.0])}, a)
    f({"a": kf.constant([1.0])}, b)   # same spec: no retrace
    f({"a": kf.constant([1.0])}, kf.Variable([2.0]))
    lines = f.explain_retracing().splitlines()
    assert len(lines) == 3
    assert "d['a']: shape () -> (1,)" in lines[1]
    assert "v: a kf.Variable of dtype float32, shape () -> dtype float32, shape (1,)" \
        in lines[2]


def test_frequent_retracing_warns_with_the_reasons():
    @kf.function
    def f(x):
        return x + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 9):
            f(kf.zeros([n]))
    found = [w for w in caught if issubclass(w.category, RetracingWarning)]
    assert len(found) == 1                     # once per function, not per trace
    message = str(found[0].message)
    assert "'f' has been traced 6 times" in message
    assert "x: shape (4,) -> (5,)" in message   # each trace against the most recent one
    assert "reduce_retracing" in message and "input_signature" in message
    assert f.experimental_get_tracing_count() == 8


def test_no_retracing_warning_for_five_traces():
    @kf.function
    def f(x):
        return x + 1

    with warnings.catch_warnings():
        warnings.simplefilter("error", RetracingWarning)
        for n in range(1, 6):
            f(kf.zeros([n]))


def test_retracing_warning_is_attributed_to_the_callers_line():
    @kf.function
    def f(x):
        return x + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 8):
            f(kf.zeros([n]))  # <retrace-call>
    found = [w for w in caught if issubclass(w.category, RetracingWarning)]
    assert (found[0].filename, found[0].lineno) == (__file__, _line_of("retrace-call"))


# ---------------------------------------------------------------- input_signature

def test_input_signature_with_unknown_dims_traces_once():
    f, traces = _counting(lambda x: kf.reduce_sum(x, axis=1),
                          input_signature=[kf.TensorSpec([None, 2], kf.float32)])
    np.testing.assert_array_equal(f(kf.ones([3, 2])).numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(f(kf.ones([5, 2])).numpy(), [2.0] * 5)
    assert len(traces) == 1
    concrete = f.get_concrete_function()
    assert ("x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 2), dtype=tf.float32, "
            "name=None)") in str(concrete)
    assert "Output Type:\n  TensorSpec(shape=(None,), dtype=tf.float32" in str(concrete)


def test_input_signature_converts_nested_python_lists():
    @kf.function(input_signature=[kf.TensorSpec([None, 2], kf.float32)])
    def f(x):
        return kf.reduce_sum(x, axis=1)

    np.testing.assert_array_equal(f([[1.0, 2.0], [3.0, 4.0]]).numpy(), [3.0, 7.0])


def test_input_signature_rejects_incompatible_calls():
    @kf.function(input_signature=[kf.TensorSpec([None, 2], kf.float32)])
    def f(x):
        return x

    with pytest.raises(TypeError, match=r"shape \(3, 3\) is incompatible with "
                                         r"input_signature") as info:
        f(kf.ones([3, 3]))
    assert "test_function.py" in str(info.value)
    with pytest.raises(TypeError, match="incompatible with input_signature"):
        f(kf.ones([3, 2], dtype=kf.int32))
    with pytest.raises(TypeError, match="incompatible with input_signature"):
        f("not a tensor")
    with pytest.raises(TypeError, match="called with 2 arguments.*input_signature has 1"):
        f(kf.ones([3, 2]), kf.ones([3, 2]))
    assert f.experimental_get_tracing_count() <= 1


def test_input_signature_with_several_arguments_and_names():
    @kf.function(input_signature=[kf.TensorSpec([None], kf.float32, name="values"),
                                  kf.TensorSpec([], kf.int32)])
    def f(x, k):
        return x * kf.cast(k, kf.float32)

    np.testing.assert_array_equal(f(kf.constant([1.0, 2.0]), 3).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(f(kf.constant([1.0]), 4).numpy(), [4.0])
    assert f.experimental_get_tracing_count() == 1


# ---------------------------------------------------------------- reduce_retracing

def test_reduce_retracing_generalizes_shapes():
    f, traces = _counting(lambda x: x * 2, reduce_retracing=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetracingWarning)
        for n in range(1, 25):
            np.testing.assert_array_equal(f(kf.ones([n])).numpy(), np.full(n, 2.0))
    assert len(traces) <= 2
    for n in (3, 7):                           # a new rank: at most one more generic trace
        assert f(kf.ones([n, 2])).shape == (n, 2)
    assert len(traces) <= 4


def test_experimental_relax_shapes_is_the_old_name():
    f, traces = _counting(lambda x: x + 1, experimental_relax_shapes=True)
    for n in range(1, 10):
        f(kf.ones([n]))
    assert len(traces) <= 2


# ---------------------------------------------------------------- ConcreteFunction

def test_get_concrete_function_from_specs_and_from_values():
    @kf.function
    def f(x):
        return x * 2 + 1

    by_spec = f.get_concrete_function(kf.TensorSpec([None], kf.float32))
    np.testing.assert_array_equal(by_spec(kf.constant([1.0, 2.0, 3.0])).numpy(),
                                  [3.0, 5.0, 7.0])
    by_value = f.get_concrete_function(kf.constant([[1.0]]))
    np.testing.assert_array_equal(by_value(kf.constant([[2.0]])).numpy(), [[5.0]])
    # asking again returns the cached trace
    assert f.get_concrete_function(kf.constant([[9.0]])) is by_value
    assert f.python_function(3) == 7


def test_concrete_functions_from_specs_trace_once_and_serve_any_size():
    # TF 2.21: the same TensorSpec twice is one trace; a trace with an unknown dim serves
    # calls and later get_concrete_function requests of any size without retracing
    f, traces = _counting(lambda x: x * 2)
    spec = kf.TensorSpec([None], kf.float32)
    first = f.get_concrete_function(spec)
    assert f.get_concrete_function(kf.TensorSpec([None], kf.float32)) is first
    assert len(traces) == 1
    for size in (1, 5, 7):
        np.testing.assert_array_equal(first(kf.ones([size])).numpy(), [2.0] * size)
        np.testing.assert_array_equal(f(kf.ones([size])).numpy(), [2.0] * size)
    assert f.get_concrete_function(kf.constant([1.0, 2.0, 3.0])) is first
    assert len(traces) == 1 and f.experimental_get_tracing_count() == 1
    f.get_concrete_function(kf.TensorSpec([None, None], kf.float32))  # another rank
    assert len(traces) == 2


def test_trainable_is_part_of_a_variables_spec():
    # TF 2.21: a non-trainable variable of the same dtype and shape traces again
    f, traces = _counting(lambda v: v * 2 if v.trainable else v * 0)
    assert float(f(kf.Variable(1.0))) == 2.0
    assert float(f(kf.Variable(2.0))) == 4.0
    assert float(f(kf.Variable(3.0, trainable=False))) == 0.0
    assert len(traces) == 2
    assert "trainable True -> False" in f.explain_retracing()


def test_variables_of_one_spec_share_a_concrete_function():
    f, traces = _counting(lambda v: v * 2)
    a, b = kf.Variable([1.0, 2.0]), kf.Variable([3.0, 4.0])
    concrete = f.get_concrete_function(a)
    np.testing.assert_array_equal(f(b).numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(f(a).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(concrete(a).numpy(), [2.0, 4.0])
    assert len(traces) == 1


def test_concrete_function_rejects_wrong_shape_dtype_and_arity():
    @kf.function
    def f(x):
        return x + 1

    concrete = f.get_concrete_function(kf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"argument 'x' must have shape \(2,\), got \(3,\)"):
        concrete(kf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(kf.errors.InvalidArgumentError,
                       match="argument 'x' must be a float32 tensor, got int32"):
        concrete(kf.constant([1, 2]))
    with pytest.raises(TypeError, match=r"expected 1 tensor arguments \(x\), got 0"):
        concrete()


def test_concrete_function_keyword_arguments_follow_parameter_order():
    @kf.function
    def f(y, x):
        return y - x

    concrete = f.get_concrete_function(kf.TensorSpec([], kf.float32),
                                       kf.TensorSpec([], kf.float32))
    five, one = kf.constant(5.0), kf.constant(1.0)
    assert float(concrete(five, one)) == 4.0
    assert float(concrete(five, x=one)) == 4.0
    assert float(concrete(y=five, x=one)) == 4.0


def test_printed_concrete_function_lists_args_and_returns():
    @kf.function
    def f(images, scale):
        return {"out": images * scale, "n": kf.reduce_sum(images)}

    concrete = f.get_concrete_function(kf.TensorSpec([None, 28, 28], kf.float32),
                                       kf.TensorSpec([], kf.float32))
    text = str(concrete)  # TF 2.21's form
    assert text == (
        "ConcreteFunction Input Parameters:\n"
        "  images (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 28, 28), dtype=tf.float32, "
        "name=None)\n"
        "  scale (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.float32, name=None)\n"
        "Output Type:\n"
        "  Dict[['out', TensorSpec(shape=(None, 28, 28), dtype=tf.float32, name=None)], "
        "['n', TensorSpec(shape=(), dtype=tf.float32, name=None)]]\n"
        "Captures:\n  None")
    assert repr(concrete).startswith(
        "<ConcreteFunction (images: TensorSpec(shape=(None, 28, 28), dtype=tf.float32, "
        "name=None), scale: TensorSpec(shape=(), dtype=tf.float32, name=None)) -> Dict[")


def test_structured_outputs():
    @kf.function
    def f(p):
        return {"sum": p.x + p.y, "parts": (p.x, None, 3, 2.5), "point": Point(p.y, p.x)}

    out = f(Point(kf.constant(1.0), kf.constant(2.0)))
    assert set(out) == {"sum", "parts", "point"}
    assert float(out["sum"]) == 3.0
    x, nothing, three, half = out["parts"]
    assert float(x) == 1.0 and nothing is None
    assert int(three) == 3 and three.dtype == kf.int32      # Python numbers become tensors
    assert float(half) == 2.5 and half.dtype == kf.float32
    assert isinstance(out["point"], Point)
    assert (float(out["point"].x), float(out["point"].y)) == (2.0, 1.0)


def test_returning_none_and_returning_inputs():
    @kf.function
    def nothing(x):
        return None

    @kf.function
    def same(x, y):
        return x, [y, x]

    assert nothing(kf.constant(1.0)) is None
    a, (b, c) = same(kf.constant(1.0), kf.constant(2.0))
    assert (float(a), float(b), float(c)) == (1.0, 2.0, 1.0)


# ---------------------------------------------------------------- methods, eager debugging

def test_methods_trace_per_instance():
    class Scale:
        def __init__(self, k):
            self.k = k
            self.traced = 0

        @kf.function
        def __call__(self, x):
            self.traced += 1
            return x * self.k

    two, three = Scale(2.0), Scale(3.0)
    assert float(two(kf.constant(1.0))) == 2.0
    assert float(three(kf.constant(1.0))) == 3.0
    assert float(two(kf.constant(5.0))) == 10.0
    assert (two.traced, three.traced) == (1, 1)
    assert two.__call__ is two.__call__           # the bound Function is cached
    assert two.__call__.experimental_get_tracing_count() == 1


def test_run_functions_eagerly_runs_plain_python():
    seen = []

    @kf.function
    def f(x):
        seen.append((kf.executing_eagerly(), float(x.numpy())))
        return x + 1

    kf.config.run_functions_eagerly(True)
    try:
        assert kf.config.functions_run_eagerly()
        assert float(f(kf.constant(1.0))) == 2.0
        assert float(f(kf.constant(2.0))) == 3.0
    finally:
        kf.config.run_functions_eagerly(False)
    assert seen == [(True, 1.0), (True, 2.0)]
    assert f.experimental_get_tracing_count() == 0
    assert not kf.config.functions_run_eagerly()


# ---------------------------------------------------------------- side effects, variables

def test_python_side_effects_happen_at_trace_time_only(capsys):
    calls = []

    @kf.function
    def f(x):
        print("tracing f")
        calls.append("call")
        return x + 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for value in (1.0, 2.0, 3.0):
            f(kf.constant(value))
    assert capsys.readouterr().out.count("tracing f") == 1
    assert calls == ["call"]


def test_captured_and_passed_variables_are_updated_in_place():
    counter = kf.Variable(0)
    weights = kf.Variable([1.0, 2.0])

    @kf.function
    def step(w, delta):
        counter.assign_add(1)
        w.assign_sub(delta)
        return w.read_value()

    for _ in range(3):
        result = step(weights, kf.constant([0.5, 0.5]))
    np.testing.assert_array_equal(result.numpy(), [-0.5, 0.5])
    np.testing.assert_array_equal(weights.numpy(), [-0.5, 0.5])
    assert int(counter.numpy()) == 3
    assert step.experimental_get_tracing_count() == 1


def test_stateful_updates_run_in_program_order():
    v = kf.Variable(1.0)

    @kf.function
    def f():
        v.assign(5.0)
        first = v.read_value()
        v.assign_add(1.0)
        second = v.read_value()
        v.assign(second * 2.0)
        return first, second, v.read_value()

    first, second, third = f()
    assert (float(first), float(second), float(third)) == (5.0, 6.0, 12.0)
    assert float(v.numpy()) == 12.0


def test_updates_run_even_when_no_output_depends_on_them():
    v = kf.Variable(0.0)

    @kf.function
    def f():
        v.assign_add(1.0)
        return kf.constant(0.0)

    f()
    f()
    assert float(v.numpy()) == 2.0


def test_lazily_created_variable_initial_value_is_lifted_once():
    class Accumulator:
        def __init__(self):
            self.total = None

        @kf.function
        def __call__(self, x):
            if self.total is None:
                self.total = kf.Variable(kf.ones([2]) * 3.0)
            self.total.assign_add(x)
            return self.total.read_value()

    acc = Accumulator()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrunedComputationWarning)
        np.testing.assert_array_equal(acc(kf.constant([1.0, 1.0])).numpy(), [4.0, 4.0])
    np.testing.assert_array_equal(acc(kf.constant([1.0, 2.0])).numpy(), [5.0, 6.0])


def test_lazy_variable_pattern_does_not_warn_about_pruning():
    class Accumulator:
        def __init__(self):
            self.total = None

        @kf.function
        def __call__(self, x):
            if self.total is None:
                self.total = kf.Variable(kf.ones([2]) * 3.0)
            self.total.assign_add(x)
            return self.total.read_value()

    with warnings.catch_warnings():
        warnings.simplefilter("error", PrunedComputationWarning)
        Accumulator()(kf.constant([1.0, 1.0]))


def test_creating_a_variable_on_a_later_trace_raises_naming_the_line():
    @kf.function
    def f(x):
        v = kf.Variable(1.0)  # <make-variable>
        return v + x

    with pytest.raises(ValueError, match="tried to create variables on non-first call") as info:
        f(kf.constant(1.0))
    assert f"test_function.py:{_line_of('make-variable')}" in str(info.value)


def test_assigning_a_fed_ndarray_copies_it():
    v = kf.Variable([0.0, 0.0])

    @kf.function
    def f(x):
        v.assign(x)

    value = np.array([1.0, 2.0], np.float32)
    f(value)
    value[0] = 100.0
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_returned_tensor_does_not_alias_a_fed_ndarray():
    @kf.function
    def f(x):
        return x

    value = np.array([1.0, 2.0], np.float32)
    result = f(value)
    value[0] = 100.0
    np.testing.assert_array_equal(result.numpy(), [1.0, 2.0])


# ---------------------------------------------------------------- gradients inside functions

def _mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return [kf.Variable(rng.normal(size=(4, 8))), kf.Variable(np.zeros(8)),
            kf.Variable(rng.normal(size=(8, 3))), kf.Variable(rng.normal(size=3))]


def _mlp_step(params, x, y):
    w1, b1, w2, b2 = params
    with kf.GradientTape() as tape:
        hidden = kf.tanh(kf.matmul(x, w1) + b1)
        out = kf.matmul(hidden, w2) + b2
        loss = kf.reduce_mean(kf.square(out - y))
    return loss, tape.gradient(loss, params)


def test_gradient_tape_inside_a_function_matches_eager():
    rng = np.random.default_rng(1)
    x = kf.constant(rng.normal(size=(5, 4)))
    y = kf.constant(rng.normal(size=(5, 3)))
    params = _mlp_params()
    eager_loss, eager_grads = _mlp_step(params, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrunedComputationWarning)
        compiled = kf.function(lambda x, y: _mlp_step(params, x, y))
        loss, grads = compiled(x, y)
    np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-12)
    assert len(grads) == 4
    for g, e, p in zip(grads, eager_grads, params):
        assert g.shape == p.shape
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)
    # and the gradients are right: central finite differences on one weight
    w1 = params[0]
    base = w1.numpy().copy()
    eps = 1e-6
    bumped = base.copy()
    bumped[1, 2] += eps
    w1.assign(bumped)
    up = float(_mlp_step(params, x, y)[0])
    bumped[1, 2] -= 2 * eps
    w1.assign(bumped)
    down = float(_mlp_step(params, x, y)[0])
    w1.assign(base)
    np.testing.assert_allclose(grads[0].numpy()[1, 2], (up - down) / (2 * eps), rtol=1e-5)


def test_training_step_in_a_function_matches_eager_training():
    rng = np.random.default_rng(2)
    x = kf.constant(rng.normal(size=(6, 4)))
    y = kf.constant(rng.normal(size=(6, 3)))
    eager_params, graph_params = _mlp_params(3), _mlp_params(3)

    def train(params, x, y):
        loss, grads = _mlp_step(params, x, y)
        for p, g in zip(params, grads):
            p.assign_sub(0.1 * g)
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrunedComputationWarning)
        compiled = kf.function(lambda x, y: train(graph_params, x, y))
        for _ in range(3):
            eager_loss = train(eager_params, x, y)
            graph_loss = compiled(x, y)
            np.testing.assert_allclose(graph_loss.numpy(), eager_loss.numpy(), rtol=1e-10)
    for a, b in zip(eager_params, graph_params):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)
    assert compiled.experimental_get_tracing_count() == 1


def test_gradient_tape_in_a_function_does_not_warn_about_pruning():
    params = _mlp_params()
    x = kf.constant(np.ones((2, 4)))
    y = kf.constant(np.ones((2, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrunedComputationWarning)
        kf.function(lambda x, y: _mlp_step(params, x, y))(x, y)


def test_higher_order_and_persistent_tapes_inside_a_function():
    def second(x):
        with kf.GradientTape() as outer:
            outer.watch(x)
            with kf.GradientTape() as inner:
                inner.watch(x)
                y = x * x * x
            dy = inner.gradient(y, x)
        return dy, outer.gradient(dy, x)

    def persistent(x):
        with kf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = kf.sin(x)
            z = kf.exp(x)
        return tape.gradient(y, x), tape.gradient(z, x)

    x = kf.constant(2.0, dtype=kf.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrunedComputationWarning)
        for fn, expected in ((second, (12.0, 12.0)), (persistent, (np.cos(2.0), np.exp(2.0)))):
            eager = [float(t) for t in fn(x)]
            compiled = [float(t) for t in kf.function(fn)(x)]
            np.testing.assert_allclose(eager, expected, rtol=1e-12)
            np.testing.assert_allclose(compiled, expected, rtol=1e-12)


def test_gradients_flow_through_a_function_called_under_a_tape():
    @kf.function
    def cube(x):
        return x * x * x

    x = kf.constant(2.0)
    v = kf.Variable(3.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = cube(x) + cube(v)
    dx, dv = tape.gradient(y, [x, v])
    assert (float(dx), float(dv)) == (12.0, 27.0)


# ---------------------------------------------------------------- runtime errors

def test_runtime_error_names_the_node_and_the_users_line():
    @kf.function
    def pick(params, index):
        doubled = params * 2.0
        return kf.gather(doubled, index)  # <gather-line>

    assert float(pick(kf.constant([1.0, 2.0]), kf.constant(1))) == 4.0
    with pytest.raises(kf.errors.InvalidArgumentError) as info:
        pick(kf.constant([1.0, 2.0]), kf.constant(5))
    message = str(info.value)
    assert "GatherV2" in message
    assert "indices = 5 is not in [0, 2)" in message
    assert f"test_function.py:{_line_of('gather-line')}" in message
    assert "pick" in message


def test_integer_division_by_zero_at_run_time():
    @kf.function
    def ratio(a, b):
        return a // b  # <floordiv-line>

    np.testing.assert_array_equal(ratio(kf.constant([4, 9]), kf.constant([2, 3])).numpy(),
                                  [2, 3])
    with pytest.raises(kf.errors.InvalidArgumentError, match="FloorDiv") as info:
        ratio(kf.constant([4, 9]), kf.constant([2, 0]))
    assert f"test_function.py:{_line_of('floordiv-line')}" in str(info.value)


def test_trace_time_shape_errors_name_the_users_line():
    @kf.function
    def square_it(x):
        return kf.matmul(x, x)  # <bad-matmul>

    with pytest.raises(kf.errors.InvalidArgumentError, match="MatMul") as info:
        square_it(kf.ones([2, 3]))
    assert f"test_function.py:{_line_of('bad-matmul')}" in str(info.value)
    assert kf.executing_eagerly()                     # the failed trace cleaned up
    assert square_it(kf.ones([2, 2])).shape == (2, 2)


def test_failed_traces_are_not_counted_as_retracing():
    @kf.function
    def square_it(x):
        return kf.matmul(x, x)

    with warnings.catch_warnings():
        warnings.simplefilter("error", RetracingWarning)
        for _ in range(7):
            with pytest.raises(kf.errors.InvalidArgumentError):
                square_it(kf.ones([2, 3]))
        square_it(kf.ones([2, 2]))
    assert square_it.experimental_get_tracing_count() == 1
    assert "new trace key" not in square_it.explain_retracing()


def test_wrong_arity_names_the_function():
    @kf.function
    def f(x):
        return x

    with pytest.raises(TypeError) as info:
        f()
    assert "tf__" not in str(info.value) and "f()" in str(info.value)
    assert f.experimental_get_tracing_count() == 0


def test_star_args_and_keyword_only_arguments():
    @kf.function
    def total(*xs, scale=1.0, **extra):
        return kf.add_n(list(xs)) * scale + extra.get("bias", 0.0)

    one, two = kf.constant(1.0), kf.constant(2.0)
    assert float(total(one, two)) == 3.0
    assert float(total(one, two, scale=2.0, bias=kf.constant(1.0))) == 7.0
    assert float(total(two, two, scale=2.0, bias=kf.constant(0.5))) == 8.5
    assert total.experimental_get_tracing_count() == 2


def test_variables_in_nested_arguments_are_updated():
    a, b = kf.Variable(1.0), kf.Variable(2.0)

    @kf.function
    def bump(variables):
        for v in variables:
            v.assign_add(1.0)
        return [v.read_value() for v in variables]

    assert [float(t) for t in bump([a, b])] == [2.0, 3.0]
    assert [float(t) for t in bump([a, b])] == [3.0, 4.0]
    assert (float(a.numpy()), float(b.numpy())) == (3.0, 4.0)
    assert bump.experimental_get_tracing_count() == 1


def test_pruned_ops_never_run():
    @kf.function
    def f(x):
        kf.gather(x, kf.constant(10))  # would fail at run time if it ran
        return x + 1

    with pytest.warns(PrunedComputationWarning, match="'f'.*GatherV2"):
        np.testing.assert_array_equal(f(kf.constant([1.0, 2.0])).numpy(), [2.0, 3.0])


# ---------------------------------------------------------------- composition, code

def test_functions_calling_functions_are_inlined():
    @kf.function
    def inner(x):
        return x * 3.0

    @kf.function
    def outer(x):
        return inner(x) + 1.0

    assert float(outer(kf.constant(1.0))) == 4.0
    assert inner.experimental_get_tracing_count() == 1  # TF traced it (kilnflow inlined)
    types = [op.type for op in outer.get_concrete_function(kf.constant(1.0)).traced_graph
             .get_operations()]
    assert "Mul" in types and "AddV2" in types
    assert float(inner(kf.constant(2.0))) == 6.0       # still callable on its own
    assert inner.experimental_get_tracing_count() == 1


def test_generated_code_is_readable():
    @kf.function
    def layer(x, w, b):
        return kf.tanh(kf.matmul(x, w) + b)

    concrete = layer.get_concrete_function(kf.TensorSpec([None, 3], kf.float32),
                                           kf.TensorSpec([3, 2], kf.float32),
                                           kf.TensorSpec([2], kf.float32))
    code = concrete.code
    assert code.startswith("def layer(x, w, b):")
    assert "MatMul = x @ w" in code                    # one statement per op, named for it
    assert "tanh(" in code.lower()
    assert "\n    del " in code
    assert code.rstrip().splitlines()[-1].startswith("    return (")
    compile(code, "<check>", "exec")
    x = np.ones((4, 3), np.float32)
    w = np.full((3, 2), 0.1, np.float32)
    b = np.zeros(2, np.float32)
    np.testing.assert_allclose(concrete(x, w, b).numpy(), np.tanh(x @ w + b), rtol=1e-6)


def test_concrete_function_refuses_other_python_values_than_it_was_traced_with():
    @kf.function
    def scale(x, b):
        return x * b

    concrete = scale.get_concrete_function(kf.constant(1.0), b=2)
    assert float(concrete(kf.constant(3.0), b=2)) == 6.0
    with pytest.raises(TypeError, match="argument 'b' was traced with the Python value"):
        concrete(kf.constant(1.0), b=3)


def test_concrete_function_with_unknown_dims_serves_calls_of_any_size():
    double = kf.function(lambda x: x * 2.0)
    first = double.get_concrete_function(kf.TensorSpec([None], kf.float32))
    assert double.get_concrete_function(kf.TensorSpec([None], kf.float32)) is first
    assert double(kf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    assert double(kf.constant([1.0, 2.0, 3.0])).numpy().tolist() == [2.0, 4.0, 6.0]
    assert double.experimental_get_tracing_count() == 1
    double(kf.constant([[1.0]]))  # another rank: a new trace
    assert double.experimental_get_tracing_count() == 2
