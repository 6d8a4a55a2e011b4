"""TF's error classes and user_frame(), which finds the user's file and line.

Every layer raises these so that messages name the op and the user's source line.
Imports nothing from kilnflow.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Optional

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class OpError(Exception):
    """Base of the errors raised while running ops: `OpError(node_def, op, message)`.

    A single argument is taken as the message.
    """

    def __init__(self, *args: Any):
        if len(args) == 3:
            self.node_def, self.op, self.message = args
        elif len(args) == 1:
            self.node_def, self.op, self.message = None, None, args[0]
        else:
            raise TypeError("OpError takes (message) or (node_def, op, message)")
        super().__init__(self.message)

    def __str__(self) -> str:
        return str(self.message)


class CancelledError(OpError):
    pass


class UnknownError(OpError):
    pass


class InvalidArgumentError(OpError, ValueError):
    pass


class DeadlineExceededError(OpError):
    pass


class NotFoundError(OpError):
    pass


class AlreadyExistsError(OpError):
    pass


class PermissionDeniedError(OpError):
    pass


class ResourceExhaustedError(OpError):
    pass


class FailedPreconditionError(OpError):
    pass


class AbortedError(OpError):
    pass


class OutOfRangeError(OpError):
    pass


class UnimplementedError(OpError):
    pass


class InternalError(OpError):
    pass


class UnavailableError(OpError):
    pass


class DataLossError(OpError):
    pass


class UnauthenticatedError(OpError):
    pass


def class_for(exc: BaseException) -> type:
    """TF's class for a kernel's failure: ResourceExhaustedError when memory ran out,
    InvalidArgumentError otherwise."""
    return ResourceExhaustedError if isinstance(exc, MemoryError) else InvalidArgumentError


class OperatorNotAllowedInGraphError(TypeError):
    """A symbolic tensor used where Python needs its value (`bool(t)`, `if t:` in
    unconverted code, iterating a tensor of unknown length): TF's class for it."""


_DEMO = os.path.join(_PACKAGE_DIR, "demo.py")  # the demo plays the user


def _is_internal(filename: str) -> bool:
    if filename == _DEMO:
        return False
    return filename.startswith(_PACKAGE_DIR) or filename.startswith("<kilnflow")


def user_frame(skip_internal: bool = True) -> Optional[tuple]:
    """(filename, lineno, function name) of the innermost frame outside kilnflow."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (skip_internal and _is_internal(filename)):
            return filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return None


def user_location() -> str:
    """'file.py:12' of the user's line, or '' when called from no user code."""
    frame = user_frame()
    if frame is None:
        return ""
    return f"{frame[0]}:{frame[1]}"


def with_location(message: str) -> str:
    where = user_location()
    return f"{message} (at {where})" if where else message
