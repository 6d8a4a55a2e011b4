"""Values standing in for names that Python would leave unbound.

Undefined('x') is what a branch or loop passes for a variable not yet assigned;
using it (printing, arithmetic, calling, truth-testing...) raises the same
UnboundLocalError Python would. UndefinedReturnValue is `retval_` before any
return ran; retval() turns it into the None a function that falls off its end returns.
"""


def _unbound(self, *args, **kwargs):
    raise UnboundLocalError(f"cannot access local variable '{self.symbol_name}' where it is "
                            "not associated with a value")


class Undefined:
    """A variable with no value yet; any use raises UnboundLocalError."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name: str):
        self.symbol_name = symbol_name

    def __repr__(self) -> str:
        return f"Undefined({self.symbol_name!r})"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        _unbound(self)

    __hash__ = object.__hash__


for _method in ("__bool__", "__len__", "__iter__", "__call__", "__getitem__", "__setitem__",
                "__str__", "__format__", "__int__", "__float__", "__index__", "__neg__",
                "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__",
                "__gt__", "__ge__", "__contains__"):
    setattr(Undefined, _method, _unbound)
for _op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and", "or",
            "xor", "lshift", "rshift"):
    for _form in ("__{}__", "__r{}__", "__i{}__"):
        setattr(Undefined, _form.format(_op), _unbound)


class UndefinedReturnValue:
    """The value of `retval_` before any return statement ran."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UndefinedReturnValue()"


def retval(value, did_return=True):
    """What the function returns: None when no return statement ran.

    `did_return` is the function's do_return flag when its body can fall off the end.
    Python returns None on such a path, and a graph cannot return a tensor on some runs
    and None on others: if the flag is only known when the graph runs, that is TF's error.
    """
    if isinstance(value, UndefinedReturnValue):
        return None
    if did_return is True:
        return value
    from . import _dispatch
    if _dispatch.is_symbolic(did_return):
        raise ValueError("the function returns a value on some paths and falls off its end "
                         "(returning None) on others, decided by a tensor; every branch must "
                         "also have a return statement" + _dispatch.where(
                             _dispatch.user_location()))
    return value if did_return else None


def ld_attr(owner, attr: str):
    """`owner.attr`, or Undefined('attr') if the object has no such attribute yet."""
    try:
        return getattr(owner, attr)
    except AttributeError:
        return Undefined(attr)


def set_attr(owner, attr: str, value) -> None:
    """`owner.attr = value`; an Undefined value leaves the object without the attribute."""
    if isinstance(value, Undefined):
        if attr in getattr(owner, "__dict__", {}):
            delattr(owner, attr)
        return
    if getattr(owner, attr, _MISSING) is not value:
        setattr(owner, attr, value)


_MISSING = object()


def ld(value):
    """A variable's value; raises UnboundLocalError if it is Undefined (as Python would)."""
    if isinstance(value, Undefined):
        _unbound(value)
    return value


def ld_or_undefined(local_vars: dict, name: str):
    """The variable's value if bound (`local_vars` is locals()), else Undefined(name)."""
    return local_vars[name] if name in local_vars else Undefined(name)


def is_undefined(value) -> bool:
    return isinstance(value, (Undefined, UndefinedReturnValue))
