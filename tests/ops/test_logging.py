"""kf.print: TF's tensor formatting (summarize, float digits, bools), mixing Python values,
streams, and printing on every call of a compiled function."""
from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.ops.logging import print_, summarize_array
from kilnflow.core.opdef import REGISTRY
from tests.ops.modes import op_types

F32 = kf.float32


def out_of(capsys, *inputs, **kwargs):
    print_(*inputs, output_stream=sys.stdout, **kwargs)
    return capsys.readouterr().out


# ---------------------------------------------------------------- formatting

@pytest.mark.parametrize("value,text", [
    (np.float32(22.0), "22"),
    (np.array([[22, 22], [23, 13]], np.float32), "[[22 22]\n [23 13]]"),
    (np.array([0.1, 1 / 3, 2.5, -0.0], np.float32), "[0.1 0.333333343 2.5 -0]"),
    (np.array([1 / 3, 0.1]), "[0.33333333333333331 0.1]"),
    (np.array([1e10, 1e-7], np.float32), "[1e+10 1e-07]"),
    (np.array([np.nan, -np.nan, np.inf, -np.inf], np.float32), "[nan -nan inf -inf]"),
    (np.array([True, False]), "[1 0]"),
    (np.array([0.5], np.float16), "[0.5]"),
    (np.int64(-7), "-7"),
    (np.zeros((0,), np.int32), "[]"),
    (np.arange(6, dtype=np.int32), "[0 1 2 3 4 5]"),
    (np.arange(10, dtype=np.int32), "[0 1 2 ... 7 8 9]"),
])
def test_summarize_array(value, text):
    assert summarize_array(value) == text


def test_long_dimensions_are_elided_at_every_level():
    x = np.arange(2 * 8 * 8).reshape(2, 8, 8)
    text = summarize_array(x, summarize=2)
    assert text.startswith("[[[0 1 ... 6 7]\n  [8 9 ... 14 15]\n  ...\n  [48 49 ... 54 55]")
    assert "]]\n\n [[64 65 ... 70 71]" in text  # a blank line between 2-D blocks
    assert text.endswith("[120 121 ... 126 127]]]")


def test_summarize_minus_one_shows_everything_and_one_shows_ends():
    x = np.arange(12)
    assert summarize_array(x, -1) == "[" + " ".join(str(i) for i in range(12)) + "]"
    assert summarize_array(x, 1) == "[0 ... 11]"
    assert summarize_array(np.arange(4).reshape(4, 1), 1) == "[[0]\n ...\n [3]]"


# ---------------------------------------------------------------- print_

def test_print_mixes_strings_python_values_and_structures(capsys):
    t = kf.range(10)
    assert out_of(capsys, "tensors:", t, {2: t * 2}) == \
        "tensors: [0 1 2 ... 7 8 9] {2: [0 2 4 ... 14 16 18]}\n"
    assert out_of(capsys, "x", 3, 0.5, [1, "a"], (kf.constant(1.5),)) == \
        "x 3 0.5 [1, 'a'] (1.5,)\n"


def test_print_sep_end_and_summarize(capsys):
    a = kf.range(2)
    assert out_of(capsys, a, a * 2, sep=",") == "[0 1],[0 2]\n"
    assert out_of(capsys, "no newline", end="") == "no newline"
    assert out_of(capsys, kf.range(10), summarize=-1) == "[0 1 2 3 4 5 6 7 8 9]\n"
    assert out_of(capsys, kf.range(10), summarize=None) == "[0 1 2 ... 7 8 9]\n"


def test_print_defaults_to_stderr_and_returns_none(capsys):
    assert print_("to stderr", kf.constant([1.0, 2.0])) is None
    captured = capsys.readouterr()
    assert captured.err == "to stderr [1 2]\n" and captured.out == ""
    print_("explicit", output_stream=sys.stderr)
    assert capsys.readouterr().err == "explicit\n"


def test_print_reads_variables(capsys):
    v = kf.Variable([[1.0, 2.0]])
    assert out_of(capsys, v) == "[[1 2]]\n"


def test_print_appends_to_a_file(tmp_path):
    path = tmp_path / "log.txt"
    print_("first", kf.constant(1), output_stream=f"file://{path}")
    print_("second", output_stream=f"file://{path}")
    assert path.read_text() == "first 1\nsecond\n"


def test_print_to_a_logging_level(caplog):
    with caplog.at_level(logging.INFO, logger="kilnflow"):
        print_("logged", kf.constant([3, 4]), output_stream=logging.info)
    assert "logged [3 4]" in caplog.text


def test_print_rejects_unknown_streams():
    with pytest.raises(ValueError, match="Unsupported output stream"):
        print_("x", output_stream=object())
    with pytest.raises(ValueError, match="file://"):
        print_("x", output_stream="/tmp/not-a-url")


def test_print_op_is_stateful_with_no_outputs():
    op = REGISTRY["PrintV2"]
    assert op.stateful and op.multi_output and op.grad is None


# ---------------------------------------------------------------- in functions

def test_print_runs_on_every_call_in_program_order(capsys):
    @kf.function
    def f(x):
        print_("first", x, output_stream=sys.stdout)
        y = x * 2
        print_("second", y, output_stream=sys.stdout)
        return y

    f(kf.constant([1, 2]))
    assert capsys.readouterr().out == "first [1 2]\nsecond [2 4]\n"
    f(kf.constant([3, 4]))
    assert capsys.readouterr().out == "first [3 4]\nsecond [6 8]\n"


def test_print_whose_result_is_unused_is_not_pruned(capsys):
    @kf.function
    def f():
        print_("side effect only", output_stream=sys.stdout)
        return kf.constant(1)

    f()
    f()
    assert capsys.readouterr().out == "side effect only\n" * 2


def test_print_returns_its_operation_while_building_a_graph():
    g = kf.Graph()
    with g.as_default():
        op = print_("hello", output_stream=sys.stdout)
    assert op.type == "PrintV2"


# ---------------------------------------------------------------- Assert

def test_assert_eagerly_raises_with_its_data():
    kf.Assert(kf.constant(True), ["never shown"])
    with pytest.raises(kf.errors.InvalidArgumentError, match=r"x is\] \[\[1 2\]\]"):
        kf.Assert(kf.constant(False), ["x is", kf.constant([1, 2])])
    assert kf.debugging.Assert is kf.Assert


def checked_sqrt(x):
    kf.Assert(kf.reduce_all(x >= 0.), ["negative input:", x])
    return kf.sqrt(x)


def test_assert_in_a_function_runs_on_every_call():
    f = kf.function(checked_sqrt)
    assert f(kf.constant([4., 9.])).numpy().tolist() == [2., 3.]
    with pytest.raises(kf.errors.InvalidArgumentError, match="negative input"):
        f(kf.constant([4., -9.]))
    assert f(kf.constant([1., 16.])).numpy().tolist() == [1., 4.]  # the same trace
    assert "Assert" in op_types(checked_sqrt, kf.constant([4., 9.]))


def test_assert_inside_a_loop_body_checks_every_iteration():
    def loop(xs):
        def body(i, s):
            kf.Assert(xs[i] > 0., ["element", i, "is not positive"])
            return i + 1, s + xs[i]
        return kf.while_loop(lambda i, s: i < kf.shape(xs)[0], body,
                             (kf.constant(0), kf.constant(0.)))[1]

    f = kf.function(loop)
    assert float(f(kf.constant([1., 2., 3.]))) == 6.
    with pytest.raises(kf.errors.InvalidArgumentError, match="is not positive"):
        f(kf.constant([1., 2., -3.]))


def test_tensor_array_writes_at_tensor_indices_leave_nothing_to_prune(recwarn):
    def write_at(i, v):
        return kf.TensorArray(F32, size=3, element_shape=[]).write(i, v).stack()
    kf.function(write_at)(kf.constant(2), kf.constant(5.))
    assert not [w for w in recwarn if "never used" in str(w.message)]
