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


# ---------------------------------------------------------------- conversion names the op and argument

@pytest.mark.parametrize("call, op, argument", [
    (lambda a: kf.matmul(a, None), "matmul", "b"),
    (lambda a: kf.add(a, {"not": "a tensor"}), "add", "y"),
    (lambda a: kf.concat([a, [[1.0, 2.0], [3.0]]], 0), "concat", "values"),
    (lambda a: kf.nn.relu(object()), "Relu", "features"),
    (lambda a: kf.reduce_sum(None), "Sum", "input_tensor"),
])
def test_conversion_errors_name_the_op_and_argument(call, op, argument):
    a = kf.constant([[1.0, 2.0]])
    with pytest.raises((TypeError, ValueError)) as info:
        call(a)
    message = str(info.value)
    assert message.startswith(f"{op}: argument `{argument}`"), message
    assert __file__ in message  # the user's line


def test_none_gets_tfs_wording():
    with pytest.raises(TypeError, match=r"matmul: argument `b` cannot be None; expected a "
                                        r"tensor or array-like"):
        kf.matmul(kf.constant([[1.0]]), None)


def test_conversion_inside_a_function_names_the_op_too():
    @kf.function
    def f(x):
        return kf.add(x, {"not": "a tensor"})

    with pytest.raises(TypeError, match=r"add: argument `y`"):
        f(kf.constant(1.0))


# ---------------------------------------------------------------- allocation limit

@pytest.fixture
def small_allocation_limit():
    kf.config.experimental.set_allocation_limit(1_000_000)
    yield
    kf.config.experimental.set_allocation_limit(None)


@pytest.mark.parametrize("build", [
    lambda: kf.zeros([1000, 1000]),
    lambda: kf.fill([600, 600], 1.0),
    lambda: kf.tile(kf.ones([10, 10]), [100, 100]),
    lambda: kf.one_hot(kf.range(1000), 1000),
    lambda: kf.function(lambda x: kf.broadcast_to(x, [1000, 1000]))(kf.ones([1])),
])
def test_outputs_over_the_allocation_limit_raise_before_allocating(small_allocation_limit,
                                                                   build):
    with pytest.raises(kf.errors.ResourceExhaustedError, match=r"OOM when allocating tensor "
                                                               r"with shape \(1000, 1000\)|600"):
        build()


def test_allocation_limit_is_validated_and_restored():
    with pytest.raises(ValueError, match="positive int"):
        kf.config.experimental.set_allocation_limit(-1)
    default = kf.config.experimental.get_allocation_limit()
    kf.config.experimental.set_allocation_limit(123)
    assert kf.config.experimental.get_allocation_limit() == 123
    kf.config.experimental.set_allocation_limit(None)
    assert kf.config.experimental.get_allocation_limit() == default


def test_astronomical_sizes_are_resource_exhausted_not_memory_error():
    with pytest.raises(kf.errors.ResourceExhaustedError, match=r"\[Op:Fill\]"):
        kf.zeros([2 ** 40, 2 ** 20])


def test_a_kernel_running_out_of_memory_raises_resource_exhausted():
    assert kf.errors.class_for(MemoryError()) is kf.errors.ResourceExhaustedError
    assert kf.errors.class_for(ValueError()) is kf.errors.InvalidArgumentError


def test_canonical_error_codes_match_the_classes():
    # values as TF 2.21 has them (tf.errors.INVALID_ARGUMENT == 3, ...)
    assert (kf.errors.OK, kf.errors.INVALID_ARGUMENT, kf.errors.UNAUTHENTICATED) == (0, 3, 16)
    assert kf.errors.InvalidArgumentError(None, None, "m").error_code == kf.errors.INVALID_ARGUMENT
    assert kf.errors.UnavailableError("m").error_code == kf.errors.UNAVAILABLE
    assert kf.errors.OpError(None, None, "m", kf.errors.ABORTED).error_code == 10
