"""kf.Module: a named container that finds its variables and submodules by walking attributes.

Attributes are searched through lists, tuples and dicts; the walk is TF's: this module's
attributes in sorted order first, then each submodule in the order it was found.
Checkpoints walk the same attributes (see `_checkpoint_children`). Imports variables,
context and nest only; `@kf.function` methods are class attributes and are never walked.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Iterator, Optional

from kilnflow.context import ctx
from kilnflow.graph import name_scope
from kilnflow.variables import Variable

_CAMEL_BOUNDARY = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")
_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


def camel_to_snake(name: str) -> str:
    """'MyDenseLayer' -> 'my_dense_layer' (the default name of a module)."""
    return _CAMEL_BOUNDARY.sub(r"_\1", name).lower()


# Where an object keeps its attach hooks (values a checkpoint restore holds for attributes
# assigned later). Kept on the object, not in a global table: a hook refers back to the
# restored objects, and a cycle among them is collected with them.
ATTACH_HOOKS_ATTR = "_kf_attach_hooks"


def add_attach_hook(obj: Any, hook: Callable[[str, Any], bool]) -> None:
    """Call `hook(name, value)` after each attribute assignment on `obj` (a Module, or any
    object whose __setattr__ calls `notify_attached`) until the hook returns False."""
    try:
        hooks = vars(obj).setdefault(ATTACH_HOOKS_ATTR, [])
    except TypeError:  # no __dict__: nothing can be attached to it later
        return
    hooks.append(hook)


def notify_attached(obj: Any, name: str, value: Any) -> None:
    """Run the attach hooks of `obj` for `obj.name = value`; drop those that are done."""
    hooks = obj.__dict__.get(ATTACH_HOOKS_ATTR)
    if hooks and name != ATTACH_HOOKS_ATTR:
        hooks[:] = [hook for hook in list(hooks) if hook(name, value)]
        if not hooks:
            del obj.__dict__[ATTACH_HOOKS_ATTR]


def _is_module(x: Any) -> bool:
    return isinstance(x, Module)


def _is_variable(x: Any) -> bool:
    return isinstance(x, Variable)


def leaves_with_paths(value: Any, path: tuple) -> Iterator[tuple]:
    """(path, leaf) pairs of a value nested in lists, tuples and dicts (dict keys sorted)."""
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:
            keys = sorted(value, key=repr)
        for k in keys:
            yield from leaves_with_paths(value[k], path + (k,))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from leaves_with_paths(item, path + (i,))
    else:
        yield path, value


class _ModuleNameScope:
    """`with module.name_scope:` enters the module's name scope while a graph is built."""

    def __init__(self, name: str):
        self.name = name + "/"
        self._entered: list = []

    def __enter__(self) -> str:
        graph = ctx.graph
        scope = getattr(graph, "name_scope", None) if graph is not None else None
        # eagerly the scope is absolute, as TF's module scope (what variables created
        # inside and kf.get_current_name_scope() see)
        manager = scope(self.name[:-1]) if scope is not None else name_scope(self.name)
        self._entered.append(manager)
        manager.__enter__()
        return self.name

    def __exit__(self, *exc: Any) -> None:
        self._entered.pop().__exit__(*exc)

    def __repr__(self) -> str:
        return f"<name_scope {self.name!r}>"


class Module:
    """Base class for objects that own variables and other modules.

    >>> import kilnflow as kf
    >>> from kilnflow.module import Module  # kf.Module
    >>> class Scale(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = kf.Variable(2.0, name="w")
    ...         self.parts = [Module(name="inner")]
    ...     def __call__(self, x):
    ...         return self.w * x
    >>> m = Scale()
    >>> [v.name for v in m.trainable_variables], m.name, len(m.submodules)
    (['w:0'], 'scale', 1)
    """

    # Attributes never searched for variables or submodules (bookkeeping, back references).
    _MODULE_IGNORED_PROPERTIES: frozenset = frozenset()
    # Sorted attribute order (TF's Module); Keras layers use assignment order instead.
    _SORT_ATTRIBUTES = True

    def __init__(self, name: Optional[str] = None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not _VALID_NAME.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid "
                             "Python identifiers (letters, digits, '_', '.', '-').")
        self._name = name
        self._scope = _ModuleNameScope(name)

    @property
    def name(self) -> str:
        """The module's name, given or derived from the class name."""
        return self._name

    @property
    def name_scope(self) -> _ModuleNameScope:
        """A context manager naming the ops built inside `module_name/...` in graphs."""
        return self._scope

    # ---------------------------------------------------------------- the walk

    def _tracked_children(self) -> list:
        """(name, value) pairs searched for variables and submodules (and followed by
        checkpoints): the attributes, sorted, minus the ignored ones."""
        attributes = vars(self)
        names = [k for k in attributes
                 if k not in self._MODULE_IGNORED_PROPERTIES and k != ATTACH_HOOKS_ATTR]
        if self._SORT_ATTRIBUTES:
            names.sort()
        return [(k, attributes[k]) for k in names]

    def _flatten(self, recursive: bool = True, predicate: Optional[Callable] = None,
                 with_path: bool = False) -> list:
        """Leaves reachable from this module that satisfy `predicate`, TF's order.

        With `with_path`, yields (path, leaf) where path is a tuple of attribute names,
        list indices and dict keys.
        """
        predicate = predicate or (lambda x: True)
        out: list = []
        _walk(self, predicate, recursive, with_path, (), {id(self)}, out)
        return out

    @property
    def variables(self) -> tuple:
        """All variables of this module and its submodules (deduplicated)."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        """The variables created with trainable=True, here and in submodules."""
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and not v.trainable))

    @property
    def submodules(self) -> tuple:
        """All modules reachable from this one (not including itself)."""
        return tuple(self._flatten(predicate=_is_module))

    @classmethod
    def with_name_scope(cls, method: Callable) -> Callable:
        """Decorator: run `method` inside the module's name scope."""
        @functools.wraps(method)
        def wrapped(self: "Module", *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)
        return wrapped

    # ---------------------------------------------------------------- checkpoints

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if ATTACH_HOOKS_ATTR in self.__dict__:  # restored values waiting for this attribute
            notify_attached(self, name, value)

    def _checkpoint_children(self) -> list:
        """(name, value) pairs a checkpoint follows; values may be nested containers."""
        return self._tracked_children()

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__} name={self._name!r}>"


def _walk(module: Module, predicate: Callable, recursive: bool, with_path: bool,
          prefix: tuple, seen: set, out: list) -> None:
    found_modules = []
    for key, value in module._tracked_children():
        for path, leaf in leaves_with_paths(value, prefix + (key,)):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                out.append((path, leaf) if with_path else leaf)
            if recursive and isinstance(leaf, Module):
                found_modules.append((path, leaf))
    for path, sub in found_modules:
        _walk(sub, predicate, recursive, with_path, path, seen, out)
