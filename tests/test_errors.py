"""kf.errors: TF's class names and hierarchy, OpError's signature, and messages that name the
op and the user's source line."""
from __future__ import annotations

import inspect

import pytest

import kilnflow as kf
from kilnflow import errors

TF_ERROR_NAMES = [
    "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "UnauthenticatedError",
    "ResourceExhaustedError", "FailedPreconditionError", "AbortedError", "OutOfRangeError",
    "UnimplementedError", "InternalError", "UnavailableError", "DataLossError"]


@pytest.mark.parametrize("name", TF_ERROR_NAMES)
def test_tf_error_classes_exist_and_derive_from_op_error(name):
    cls = getattr(kf.errors, name)
    assert inspect.isclass(cls) and cls.__name__ == name
    assert issubclass(cls, kf.errors.OpError) and issubclass(cls, Exception)


@pytest.mark.parametrize("name", TF_ERROR_NAMES)
def test_three_argument_constructor(name):
    cls = getattr(kf.errors, name)
    error = cls("node", "op", "something went wrong")
    assert error.node_def == "node" and error.op == "op"
    assert error.message == "something went wrong"
    assert str(error) == "something went wrong"
    with pytest.raises(kf.errors.OpError):
        raise error


def test_op_error_signature_and_message_only_form():
    error = kf.errors.OpError(None, None, "boom")
    assert (error.node_def, error.op, error.message) == (None, None, "boom")
    short = kf.errors.NotFoundError("missing file")
    assert short.message == "missing file" and short.op is None and short.node_def is None
    with pytest.raises(TypeError):
        kf.errors.OpError("a", "b")


def test_errors_are_catchable_by_their_base_classes():
    with pytest.raises(kf.errors.OpError):
        kf.add(kf.constant(1), kf.constant(1.0))
    with pytest.raises(kf.errors.InvalidArgumentError):
        kf.add(kf.constant(1), kf.constant(1.0))


def test_op_errors_name_the_op_and_the_users_line():
    with pytest.raises(kf.errors.InvalidArgumentError) as info:
        kf.matmul(kf.ones([2, 3]), kf.ones([2, 3]))
    message = str(info.value)
    assert "MatMul" in message
    assert f"{__file__}:" in message  # the line above, not a kilnflow file


def test_failing_kernel_is_reported_with_the_op_name():
    with pytest.raises(kf.errors.InvalidArgumentError) as info:
        kf.floordiv(kf.constant([1, 2]), kf.constant([0, 1]))
    assert "FloorDiv" in str(info.value)


def test_user_frame_skips_kilnflow_frames():
    filename, line, function = errors.user_frame()
    assert filename == __file__ and function == "test_user_frame_skips_kilnflow_frames"
    assert errors.user_location().startswith(__file__ + ":")
    assert errors.with_location("msg").startswith("msg (at " + __file__)
