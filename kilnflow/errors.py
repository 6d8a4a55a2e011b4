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
        if len(args) in (3, 4):
            self.node_def, self.op, self.message = args[:3]
            if len(args) == 4:  # TF's base class takes the canonical code as a fourth argument
                self.error_code = args[3]
        elif len(args) == 1:
            self.node_def, self.op, self.message = None, None, args[0]
        else:
            raise TypeError("OpError takes (message), (node_def, op, message) or "
                            "(node_def, op, message, error_code)")
        super().__init__(self.message)

    error_code = 2  # UNKNOWN: subclasses carry their canonical code

    def __str__(self) -> str:
        return str(self.message)


class CancelledError(OpError):
    error_code = 1


class UnknownError(OpError):
    error_code = 2


class InvalidArgumentError(OpError, ValueError):
    error_code = 3


class DeadlineExceededError(OpError):
    error_code = 4


class NotFoundError(OpError):
    error_code = 5


class AlreadyExistsError(OpError):
    error_code = 6


class PermissionDeniedError(OpError):
    error_code = 7


class ResourceExhaustedError(OpError):
    error_code = 8


class FailedPreconditionError(OpError):
    error_code = 9


class AbortedError(OpError):
    error_code = 10


class OutOfRangeError(OpError):
    error_code = 11


class UnimplementedError(OpError):
    error_code = 12


class InternalError(OpError):
    error_code = 13


class UnavailableError(OpError):
    error_code = 14


class DataLossError(OpError):
    error_code = 15


class UnauthenticatedError(OpError):
    error_code = 16


# TF's canonical error codes (tf.errors.OK ... tf.errors.UNAUTHENTICATED): the same numbers as
# the classes' error_code, which is what code comparing `e.error_code` to them expects.
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


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
