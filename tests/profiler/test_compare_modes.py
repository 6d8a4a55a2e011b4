"""kf.debugging.compare_modes finds a planted difference (a kernel that disagrees with its
own compiled form) and names it; enable_check_numerics names the op making NaN/Inf."""
import logging

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.core import rules
from kilnflow.core.opdef import REGISTRY, bind, defop


@pytest.fixture
def wrong_op():
    """An op whose kernel (eager) is sin but whose inlined form (compiled) is cos."""
    op = defop("TestPlantedSin", shape=rules.same_as(0), kernel=np.sin, fusable="cos({0})")
    try:
        yield op
    finally:
        REGISTRY.pop("TestPlantedSin")


def test_compare_modes_names_the_planted_difference(wrong_op):
    w = kf.Variable(np.ones((3, 2), "float32"))

    def model(x):
        h = kf.matmul(x, w)
        y = bind(wrong_op, (h,))  # <planted>
        w.assign_add(kf.ones_like(w))
        return kf.reduce_sum(y)

    x = kf.constant([[0.5, 1.0, 2.0]])
    report = kf.debugging.compare_modes(model, x)
    assert not report.equal
    assert report.op_type == "TestPlantedSin"
    assert report.location[0] == __file__
    text = open(__file__).read().splitlines()[report.location[1] - 1]
    assert "<planted>" in text
    assert report.max_abs_diff > 0.1 and report.max_rel_diff > 0.1
    np.testing.assert_allclose(report.inputs[0], [[3.5, 3.5]])
    assert "TestPlantedSin" in str(report) and "max abs diff" in str(report)
    np.testing.assert_array_equal(w.numpy(), np.full((3, 2), 2.0))  # updated once


def test_compare_modes_agrees_on_random_and_control_flow():
    @kf.function
    def f(x):
        noise = kf.random.normal([3])
        y = x + noise
        if kf.reduce_sum(y) > 100.0:
            y = y * 0.0
        return kf.nn.relu(y) * 2.0 + 1.0

    report = kf.debugging.compare_modes(f, kf.constant([1.0, -2.0, 3.0]))
    assert report.equal and bool(report)
    assert "agree" in str(report)


def test_check_numerics_names_the_first_op_making_nan():
    @kf.function
    def f(x):
        y = kf.math.log(x)          # <nan>
        return kf.sqrt(y) + 1.0

    assert np.isnan(f(kf.constant([-1.0])).numpy()).all()     # off: quietly NaN
    kf.debugging.enable_check_numerics()
    try:
        with pytest.raises(kf.errors.InvalidArgumentError, match=r"NaN.*Log.*:\d+") as info:
            f(kf.constant([-1.0]))
        assert __file__ in str(info.value)
        np.testing.assert_allclose(f(kf.constant([1.0])).numpy(), [1.0])
        with pytest.raises(kf.errors.InvalidArgumentError, match=r"Inf.*Log.*eager") as info:
            kf.math.log(kf.constant([0.0, 1.0]))   # <eager>
        assert f"{__file__}:" in str(info.value)
        assert kf.math.log(kf.constant(1.0)).numpy() == 0.0
    finally:
        kf.debugging.disable_check_numerics()
    assert np.isnan(f(kf.constant([-1.0])).numpy()).all()
    assert np.isinf(kf.math.log(kf.constant(0.0)).numpy())        # off again


def test_logger_and_verbosity():
    assert kf.get_logger() is logging.getLogger("kilnflow")
    kf.debugging.set_verbosity(3)
    try:
        assert kf.debugging.get_verbosity() == 3
        assert logging.getLogger("kilnflow.autograph").level == logging.DEBUG
        kf.autograph.set_verbosity(2)
        assert kf.autograph.get_verbosity() == 2
    finally:
        kf.debugging.set_verbosity(0)


def test_compare_modes_on_every_call_warns_at_the_planted_op(wrong_op):
    @kf.function
    def f(x):
        return kf.reduce_sum(bind(wrong_op, (x * 2.0,)))

    kf.config.experimental.enable_compare_modes()        # the kf.config switch
    try:
        with pytest.warns(kf.debugging.ModeMismatchWarning, match="TestPlantedSin"):
            value = f(kf.constant([0.25, 0.5]))
    finally:
        kf.config.experimental.disable_compare_modes()
    np.testing.assert_allclose(value.numpy(), np.cos([0.5, 1.0]).sum(), rtol=1e-6)
    assert f.get_concrete_function(kf.constant([0.25, 0.5]))._fn is \
        f.get_concrete_function(kf.constant([0.25, 0.5]))._plain_fn


def test_random_draws_inside_branches_loops_and_layers_are_shared():
    @kf.function
    def branch(x):
        y = x
        if kf.reduce_sum(x) > 0:
            y = x + kf.random.normal([3])
        return y * 2.0

    @kf.function
    def loop(x):
        i = kf.constant(0)
        while i < 3:
            x = x + kf.random.uniform([3])
            i += 1
        return x

    dropout = kf.keras.layers.Dropout(0.5)
    gen = kf.random.Generator.from_seed(1)

    @kf.function
    def layers(x):
        return dropout(x, training=True) + gen.normal([4]) + kf.random.shuffle(kf.range(4.0))

    for f, x in ((branch, kf.constant([1.0, 2.0, 3.0])), (loop, kf.constant([1.0, 2.0, 3.0])),
                 (layers, kf.ones([4, 4]))):
        report = kf.debugging.compare_modes(f, x)
        assert report.equal, str(report)


def test_a_planted_difference_inside_a_loop_body_is_named(wrong_op):
    @kf.function
    def f(x):
        i = kf.constant(0)
        while i < 2:
            x = bind(wrong_op, (x * 0.5,))  # <in the loop>
            i += 1
        return x

    report = kf.debugging.compare_modes(f, kf.constant([0.25, 0.5]))
    assert not report.equal
    assert report.op_type == "TestPlantedSin", str(report)
    text = open(__file__).read().splitlines()[report.location[1] - 1]
    assert "<in the loop>" in text
    np.testing.assert_allclose(report.inputs[0], [0.125, 0.25])


def test_outside_effects_happen_once_and_iterators_agree(capsys):
    import sys

    @kf.function
    def shout(x):
        kf.print("hello", x, output_stream=sys.stdout)
        return x * 2.0

    assert kf.debugging.compare_modes(shout, kf.constant(1.0)).equal
    assert capsys.readouterr().out.count("hello") == 1          # printed once

    it = iter(kf.data.Dataset.range(10))

    @kf.function
    def take():
        return next(it) * 2

    report = kf.debugging.compare_modes(take)
    assert report.equal, str(report)
    assert int(next(it)) == 1                                  # read once
