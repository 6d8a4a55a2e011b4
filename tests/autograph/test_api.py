"""convert, to_code, converted_call, do_not_convert, explain, and the layering rule."""
import ast
import functools
import os
import sys
import traceback
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import autograph
from kilnflow.autograph import api


@autograph.do_not_convert
def code_name():
    """The name of the calling user function's code: tf__<name> once converted."""
    frame = sys._getframe(1)
    while frame.f_code.co_filename == api.__file__:  # skip converted_call
        frame = frame.f_back
    return frame.f_code.co_name


def callee(x):
    name = code_name()
    if x:
        return name
    return name + "!"


def caller(x):
    return code_name(), callee(x)


def test_converted_call_converts_user_code_recursively():
    assert api.converted_call(caller, (1,), None) == ("tf__caller", "tf__callee")
    assert caller(1) == ("caller", "callee")


def test_non_recursive_option_converts_only_the_top():
    options = api.ConversionOptions(recursive=False)
    assert api.converted_call(caller, (1,), {}, options) == ("tf__caller", "callee")


def test_conversion_disabled():
    with api.conversion_disabled():
        assert api.converted_call(caller, (1,), None) == ("caller", "callee")


@autograph.do_not_convert
def marked(x):
    if x:
        return code_name()
    return None


def test_do_not_convert():
    assert api.converted_call(marked, (1,), None) == "marked"
    assert autograph.experimental.do_not_convert is autograph.do_not_convert
    assert autograph.convert(marked) is marked


def test_library_and_builtin_code_is_never_converted():
    assert not api._is_library(callee)
    assert api._is_library(np.linalg.norm)
    assert api._is_library(os.path.join)
    assert api._is_library(api.convert)
    assert api.converted_call(np.add, (1, 2), None) == 3
    assert api.converted_call(len, ([1],), None) == 1
    assert api.converted_call(dict, (), {"a": 1}) == {"a": 1}


class Scaler:
    def __init__(self, k):
        self.k = k

    def scale(self, x):
        name = code_name()
        if x > 0:
            return x * self.k, name
        return 0, name

    def __call__(self, x):
        return self.scale(x)[0], code_name()


def test_methods_callables_and_partials():
    s = Scaler(3)
    assert api.converted_call(s.scale, (2,), None) == (6, "tf__scale")
    assert api.converted_call(s, (2,), None) == (6, "tf____call__")
    part = functools.partial(callee)
    assert api.converted_call(part, (0,), None) == "tf__callee!"


def test_conversion_is_cached_per_code_and_keeps_each_closure():
    def make(k):
        def add(x):
            if x:
                return x + k
            return k
        return add

    add1, add2 = make(1), make(2)
    assert api.convert(add1) is api.convert(add1)
    assert api.convert(add1).__code__ is api.convert(add2).__code__
    assert api.convert(add1)(10) == 11 and api.convert(add2)(10) == 12


def test_closure_cells_are_shared_with_the_original():
    count = 0

    def bump(n):
        nonlocal count
        for _ in range(n):
            count += 1
        return count

    assert api.convert(bump)(3) == 3
    assert count == 3


def test_to_code_is_valid_readable_python():
    source = autograph.to_code(callee)
    assert source.startswith("def tf__callee(x):")
    assert "retval_ = ag__.if_stmt(x, if_true, if_false, (retval_,), ('retval_',))" in source
    ast.parse(source)


def boom(x):
    y = x + 1
    if y > 0:
        z = [1][y]
        return z
    return y


def test_errors_point_at_the_users_line():
    with pytest.raises(IndexError) as info:
        api.convert(boom)(1)
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == __file__
    assert last.lineno == boom.__code__.co_firstlineno + 3
    assert last.line == "z = [1][y]"


def test_unconvertible_code_warns_and_runs_as_is():
    namespace = {}
    exec("def nosource(x):\n    return x * 2\n", namespace)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert api.converted_call(namespace["nosource"], (2,), None) == 4
    assert any("could not convert" in str(w.message) for w in caught)
    with pytest.raises(api.ConversionError):
        autograph.convert(namespace["nosource"])


def explained(xs):
    total = 0
    for x in xs:
        if x > 0 and x < 10:
            total += x
    squares = [x * x for x in xs]
    print(total)
    return total, squares


def test_explain_lists_conversions_by_user_line():
    api.convert(explained)([1, 20])
    report = autograph.explain(explained)
    text = str(report)
    first = explained.__code__.co_firstlineno
    assert f"line {first + 2}: for x in xs:" in text
    assert f"line {first + 3}: if x > 0 and x < 10:" in text
    assert "ag__.if_stmt" in text and "ag__.and_" in text
    assert "ran as: python" in text
    assert "comprehension stays Python" in text
    assert "print() stays Python" in text
    lines = [entry[0] for entry in report.entries]
    assert lines == sorted(lines)


DOUBLE_POSITIVE = lambda v: v * 2 if v > 0 else 0  # noqa: E731


def test_lambdas_convert_on_their_own():
    assert autograph.to_code(DOUBLE_POSITIVE).strip() == \
        "lambda v: ag__.if_exp(v > 0, lambda: v * 2, lambda: 0)"
    converted = autograph.convert(DOUBLE_POSITIVE)
    assert converted(3) == 6 and converted(-3) == 0


def test_wrapper_functions_convert_as_themselves():
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            if args:
                return ("wrapped", fn(*args))
            return None
        return wrapper

    @decorate
    def inner(x):
        return x + 1

    assert autograph.convert(inner)(1) == ("wrapped", 2)
    assert "def tf__wrapper(*args):" in autograph.to_code(inner)


def test_source_map_names_the_user_line_of_each_generated_line():
    lines = autograph.to_code(boom).splitlines()
    mapping = autograph.source_map(boom)
    first = boom.__code__.co_firstlineno
    if_line = next(i for i, text in enumerate(lines, 1) if "def if_true" in text)
    assert mapping[if_line] == (__file__, first + 2)  # the user's `if y > 0:`
    call_line = next(i for i, text in enumerate(lines, 1) if "ag__.if_stmt" in text)
    assert mapping[call_line] == (__file__, first + 2)


def test_user_modules_named_like_stdlib_modules_are_still_user_code(tmp_path, monkeypatch):
    (tmp_path / "random.py").write_text("def pick(x):\n    if x:\n        return 1\n    return 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib.util
    spec = importlib.util.spec_from_file_location("random", tmp_path / "random.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert not api._is_library(module.pick)
    assert api.converted_call(module.pick, (0,), None) == 2


def test_experimental_feature_do_not_convert_and_set_loop_options_exist_and_work():
    Feature = kf.autograph.experimental.Feature
    assert {f.name for f in Feature} >= {"ALL", "LISTS", "ASSERT_STATEMENTS",
                                         "EQUALITY_OPERATORS", "AUTO_CONTROL_DEPS"}

    def count_up(x):
        i = kf.constant(0)
        while i < x:
            kf.autograph.experimental.set_loop_options(maximum_iterations=3)
            i += 1
        return i

    converted = kf.autograph.to_graph(count_up,
                                      experimental_optional_features=[Feature.LISTS])
    assert int(kf.function(converted)(kf.constant(10))) == 3  # the loop option is applied
    with pytest.raises(TypeError, match="Feature"):
        kf.autograph.to_graph(count_up, experimental_optional_features=["LISTS"])

    @kf.autograph.experimental.do_not_convert
    def python_only(x):
        if x > 0:  # a tensor condition in unconverted code: Python's bool() refuses it
            return x
        return -x

    with pytest.raises(TypeError, match="bool"):
        kf.function(python_only)(kf.constant(1))


def test_set_verbosity_is_in_autograph_and_debugging():
    kf.autograph.set_verbosity(2)
    try:
        assert kf.autograph.get_verbosity() == 2 == kf.debugging.get_verbosity()
    finally:
        kf.autograph.set_verbosity(0)


def test_trace_prints_at_trace_time_only(capsys):
    @kf.function
    def f(x):
        kf.autograph.trace("tracing with", x.shape)
        return x + 1

    f(kf.constant([1.0, 2.0]))
    f(kf.constant([3.0, 4.0]))
    assert capsys.readouterr().out.count("tracing with (2,)") == 1
