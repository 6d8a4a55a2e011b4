"""How operators see the framework: tensor tests, the decision scope, and user locations.

is_tensor / is_symbolic ask kilnflow.tensor (with a fast answer for plain Python values);
decision_scope() names the ops built only to decide between Python and graph semantics;
user_location() names the user's line (converted code carries the user's file and lines).
The operators import the ops they build directly; only converters/ and pyct/ stay free of
the framework.
"""
import contextlib
import os
import sys

from kilnflow import context, tensor
from kilnflow.graph import name_scope

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PLAIN = (bool, int, float, complex, str, bytes, type(None), list, tuple, dict, range)


def is_tensor(x) -> bool:
    """True for eager and symbolic kilnflow tensors."""
    return type(x) not in _PLAIN and tensor.is_tensor(x)


def is_symbolic(x) -> bool:
    """True for a graph tensor, whose value is unknown until the graph runs."""
    return type(x) not in _PLAIN and tensor.is_symbolic(x)


def building_graph() -> bool:
    """True while a graph is being built (a kf.function trace or a compat.v1 Graph)."""
    return context.ctx.graph is not None


DECISION_SCOPE = "autograph_decision"


def decision_scope():
    """A name scope for ops built only to decide between Python and graph semantics
    (a loop's first test, a dry run): when a graph op is chosen they feed nothing.
    They are built quiet (see quiet()) and named `autograph_decision/...`."""
    stack = contextlib.ExitStack()
    stack.enter_context(quiet())  # a second probe's scope is named autograph_decision_1
    stack.enter_context(name_scope(DECISION_SCOPE))
    return stack


def quiet():
    """Ops built inside are AutoGraph's bookkeeping: if pruning drops them (a loop that
    computes kf.range items from its index never reads the range tensor), that is
    expected and kf.function does not warn about it."""
    return context.quiet_ops()


def user_location() -> tuple:
    """(filename, line) of the innermost frame outside the kilnflow package."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR):
            return filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def where(location: tuple) -> str:
    """' (at file.py, line 12)' for error messages."""
    return f' (at "{location[0]}", line {location[1]})'
