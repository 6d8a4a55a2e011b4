"""assert_stmt: Python's assert, or an Assert op for a graph tensor test."""
from . import _dispatch
from kilnflow.ops import logging as logging_ops
from . import records


def assert_stmt(test, message_fn):
    """Raise AssertionError(message_fn()) if test is false; an Assert op on tensors."""
    location = _dispatch.user_location()
    records.record(location, "assert", records.outcome_of(test))
    if _dispatch.is_symbolic(test):
        message = message_fn()
        if message is None:
            message = "Assertion failed" + _dispatch.where(location)
        data = [message]
        return logging_ops.Assert(test, data)
    if not test:
        message = message_fn()
        raise AssertionError(*(() if message is None else (message,)))
    return None
