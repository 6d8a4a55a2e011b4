"""How operators see the framework: lazily, so autograph imports without it.

is_tensor / is_symbolic ask kilnflow.tensor (False when it cannot be imported);
framework() returns the kilnflow package for graph ops; user_location() names the
user's line (converted code carries the user's file and line numbers).
"""
import contextlib
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PLAIN = (bool, int, float, complex, str, bytes, type(None), list, tuple, dict, range)


def _tensor_module():
    try:
        from kilnflow import tensor
    except ImportError:
        return None
    return tensor


def is_tensor(x) -> bool:
    """True for eager and symbolic kilnflow tensors; False without kilnflow."""
    if type(x) in _PLAIN:
        return False
    tensor = _tensor_module()
    return tensor is not None and tensor.is_tensor(x)


def is_symbolic(x) -> bool:
    """True for a graph tensor, whose value is unknown until the graph runs."""
    if type(x) in _PLAIN:
        return False
    tensor = _tensor_module()
    return tensor is not None and tensor.is_symbolic(x)


def framework():
    """The kilnflow package (for cond, while_loop, ...); imported on first tensor use."""
    import kilnflow
    return kilnflow


def op(name: str):
    """kilnflow.<name> (dots allowed), with a clear error while it does not exist yet."""
    value = framework()
    for part in name.split("."):
        value = getattr(value, part, None)
        if value is None:
            raise NotImplementedError(f"AutoGraph needs kilnflow.{name} for this tensor "
                                      "control flow, and it is not available")
    return value


DECISION_SCOPE = "autograph_decision"


def decision_scope():
    """A name scope for ops built only to decide between Python and graph semantics
    (a loop's first test, a dry run): when a graph op is chosen they feed nothing.
    They are built quiet (see quiet()) and named `autograph_decision/...`."""
    if _tensor_module() is None:
        return contextlib.nullcontext()
    scope = getattr(framework(), "name_scope", None)
    stack = contextlib.ExitStack()
    stack.enter_context(quiet())  # a second probe's scope is named autograph_decision_1
    if scope is not None:
        stack.enter_context(scope(DECISION_SCOPE))
    return stack


def quiet():
    """Ops built inside are AutoGraph's bookkeeping: if pruning drops them (a loop that
    computes kf.range items from its index never reads the range tensor), that is
    expected and kf.function does not warn about it."""
    if _tensor_module() is None:
        return contextlib.nullcontext()
    from kilnflow import context
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
