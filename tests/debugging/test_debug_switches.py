"""kf.debugging's switches: traceback filtering and device placement logging."""
import os
import subprocess
import sys
import textwrap

import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.debug_tools import traceback_filter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import kilnflow as tf
    {switch}
    def user(a, b):
        return a + b
    user(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]))
""")


def _run(switch: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(switch=switch)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    return done.stderr


def test_uncaught_errors_show_user_frames_only_by_default():
    err = _run("")
    assert "InvalidArgumentError: Incompatible shapes: [2] vs. [3] [Op:AddV2]" in err
    assert "line 5, in user" in err
    assert "kilnflow" + os.sep not in err.replace("kilnflow.errors", "")


def test_disabled_filtering_shows_kilnflow_frames():
    err = _run("tf.debugging.disable_traceback_filtering()")
    assert os.path.join("kilnflow", "core", "opdef.py") in err


def test_switches_and_filter_exception():
    assert kf.debugging.is_traceback_filtering_enabled()

    def frames(exc):
        tb, names = exc.__traceback__, []
        while tb is not None:
            names.append(tb.tb_frame.f_code.co_filename)
            tb = tb.tb_next
        return names

    with pytest.raises(errors.InvalidArgumentError) as info:
        kf.reshape(kf.constant([1, 2, 3]), [2])
    assert any(traceback_filter.is_internal(f) for f in frames(info.value))
    filtered = traceback_filter.filter_exception(info.value)
    assert frames(filtered) and not any(traceback_filter.is_internal(f)
                                        for f in frames(filtered))
    kf.debugging.disable_traceback_filtering()
    try:
        assert not kf.debugging.is_traceback_filtering_enabled()
        with pytest.raises(errors.InvalidArgumentError) as info:
            kf.reshape(kf.constant([1, 2, 3]), [2])
        kept = traceback_filter.filter_exception(info.value)
        assert any(traceback_filter.is_internal(f) for f in frames(kept))
    finally:
        kf.debugging.enable_traceback_filtering()


def test_filtered_entry_point_reraises_without_internal_frames():
    @traceback_filter.filtered
    def entry():
        return kf.reshape(kf.constant([1, 2, 3]), [2])

    with pytest.raises(errors.InvalidArgumentError) as info:
        entry()
    tb = info.value.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        assert not traceback_filter.is_internal(name) or name.endswith("traceback_filter.py")
        tb = tb.tb_next


def test_log_device_placement_logs_eager_ops(capsys):
    assert not kf.debugging.get_log_device_placement()
    x = kf.constant([1.0, 2.0])
    kf.debugging.set_log_device_placement(True)
    try:
        assert kf.debugging.get_log_device_placement()
        kf.reduce_sum(kf.add(x, x))
    finally:
        kf.debugging.set_log_device_placement(False)
    kf.add(x, x)
    err = capsys.readouterr().err.splitlines()
    device = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert err == [f"Executing op AddV2 in device {device}",
                   f"Executing op Sum in device {device}"]
    assert not kf.debugging.get_log_device_placement()


def test_log_device_placement_leaves_results_and_functions_alone(capsys):
    @kf.function
    def f(a):
        return a * 2.0 + 1.0

    kf.debugging.set_log_device_placement(True)
    try:
        assert f(kf.constant(1.0)).numpy() == 3.0
        assert f(kf.constant(2.0)).numpy() == 5.0
    finally:
        kf.debugging.set_log_device_placement(False)
    assert "Executing op Mul" not in capsys.readouterr().err.split("\n")[-2:]
