"""TF1 variable sharing: variable_scope, get_variable, AUTO_REUSE, and the v1 initializers.

Each graph keeps a store of the variables get_variable made, by full name ('outer/dense/w').
A scope's `reuse` decides what a second request for a name does: False (the default)
refuses it, True demands an existing variable, AUTO_REUSE makes it on first use and shares
it after. Variable names follow variable scopes only (name scopes do not touch them), as
in TF. Eagerly there is no store: every call makes a new variable, as in TF 2.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.compat.v1.graph_keys import exclude_from_global
from kilnflow.context import ctx
from kilnflow.graph import get_default_graph
from kilnflow.keras import initializers as _init
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape
from kilnflow.tensor import Tensor
from kilnflow.variables import Variable


class _ReuseMode:
    def __repr__(self) -> str:
        return "tf.compat.v1.AUTO_REUSE"


AUTO_REUSE = _ReuseMode()


class VariableScope:
    """A variable scope's settings: name, reuse, and defaults for get_variable."""

    def __init__(self, reuse: Any, name: str = "", initializer: Any = None,
                 regularizer: Any = None, dtype: Any = _dtypes.float32,
                 original_name_scope: str = ""):
        self._name = name
        self._reuse = reuse
        self.initializer = initializer
        self.regularizer = regularizer
        self.dtype = _dtypes.as_dtype(dtype)
        self.original_name_scope = original_name_scope

    @property
    def name(self) -> str:
        return self._name

    @property
    def reuse(self) -> Any:
        return self._reuse

    def reuse_variables(self) -> None:
        """Share variables from here on: get_variable must find the ones it asks for."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self.initializer = initializer

    def set_regularizer(self, regularizer: Any) -> None:
        self.regularizer = regularizer

    def set_dtype(self, dtype: Any) -> None:
        self.dtype = _dtypes.as_dtype(dtype)

    def get_variable(self, name: str, *args: Any, **kwargs: Any) -> Variable:
        with variable_scope(self):
            return get_variable(name, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<VariableScope name={self._name!r} reuse={self._reuse!r}>"


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: List[VariableScope] = []
        self.holder: Optional[VariableHolder] = None


class VariableHolder:
    """The variables of a wrapped function, kept across its traces: a retrace gets back
    the variables the first trace made instead of making new ones (wrap_function)."""

    def __init__(self) -> None:
        self.variables: Dict[str, Variable] = {}
        self._this_trace: set = set()

    @contextlib.contextmanager
    def trace(self) -> Iterator["VariableHolder"]:
        """One trace of the function: get_variable uses (and fills) this holder."""
        saved = _state.holder
        _state.holder = self
        self._this_trace = set()
        try:
            yield self
        finally:
            _state.holder = saved

    def replayed(self, full: str) -> Optional[Variable]:
        """The variable an earlier trace made for `full`, the first time this trace asks."""
        found = self.variables.get(full)
        if found is None or full in self._this_trace:
            return None
        self._this_trace.add(full)
        return found

    def made(self, full: str, var: Variable) -> None:
        self.variables[full] = var
        self._this_trace.add(full)


_state = _State()
# graph -> {full name: variable}, and graph -> {scope name: times opened with default_name}
_stores: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_scope_counts: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def get_variable_scope() -> VariableScope:
    """The innermost variable scope (the root scope, named '', outside any)."""
    if not _state.stack:
        _state.stack.append(VariableScope(False))
    return _state.stack[-1]


def _unique_scope(parent: str, base: str) -> str:
    counts = _scope_counts.setdefault(get_default_graph(), {})
    full = f"{parent}/{base}" if parent else base
    seen = counts.get(full, 0)
    counts[full] = seen + 1
    return base if seen == 0 else f"{base}_{seen}"


@contextlib.contextmanager
def variable_scope(name_or_scope: Any = None, default_name: Optional[str] = None,
                   values: Any = None, initializer: Any = None, regularizer: Any = None,
                   caching_device: Any = None, partitioner: Any = None,
                   custom_getter: Any = None, reuse: Any = None, dtype: Any = None,
                   use_resource: Any = None, constraint: Any = None,
                   auxiliary_name_scope: bool = True) -> Iterator[VariableScope]:
    """Open a variable scope: names of get_variable inside get `name/`; ops get a name
    scope too. `reuse=True` or AUTO_REUSE shares variables; nested scopes inherit reuse.
    Partitioners and caching devices are accepted and ignored (one CPU, no partitions)."""
    if custom_getter is not None:
        raise NotImplementedError("variable_scope(custom_getter=...) is not supported")
    parent = get_variable_scope()
    if isinstance(name_or_scope, VariableScope):
        full, source = name_or_scope.name, name_or_scope
    elif name_or_scope is not None:
        full, source = _joined(parent.name, str(name_or_scope)), parent
    elif default_name is not None:
        full, source = _joined(parent.name, _unique_scope(parent.name, default_name)), parent
    else:
        raise ValueError("variable_scope needs name_or_scope or default_name")
    inherited = source.reuse if isinstance(name_or_scope, VariableScope) else parent.reuse
    scope = VariableScope(
        True if reuse is True else AUTO_REUSE if reuse is AUTO_REUSE else inherited,
        full, initializer if initializer is not None else source.initializer,
        regularizer if regularizer is not None else source.regularizer,
        dtype if dtype is not None else source.dtype)
    names = contextlib.nullcontext(full + "/")
    if ctx.graph is not None and auxiliary_name_scope:
        leaf = full.rsplit("/", 1)[-1]
        names = ctx.graph.name_scope(
            name_or_scope.original_name_scope if isinstance(name_or_scope, VariableScope)
            and name_or_scope.original_name_scope else leaf)
    with names as name_scope:
        scope.original_name_scope = name_scope or ""
        _state.stack.append(scope)
        try:
            yield scope
        finally:
            _state.stack.pop()


def _joined(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _initial_value(initializer: Any, shape: Optional[TensorShape], dtype: _dtypes.DType,
                   name: str) -> Callable[[], Any]:
    if initializer is None:
        initializer = _init.GlorotUniform() if dtype.is_floating else _init.Zeros()
    if isinstance(initializer, (Tensor, np.ndarray, list, tuple, int, float)) or \
            hasattr(initializer, "_as_tensor"):
        return lambda: convert_to_tensor(initializer, dtype)
    if shape is None or not shape.is_fully_defined():
        raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but "
                         f"instead was {shape}.")
    dims = shape.as_list()
    return lambda: initializer(dims, dtype=dtype)


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                 regularizer: Any = None, trainable: Optional[bool] = None,
                 collections: Optional[list] = None, caching_device: Any = None,
                 partitioner: Any = None, validate_shape: bool = True,
                 use_resource: Any = None, custom_getter: Any = None, constraint: Any = None,
                 synchronization: Any = None, aggregation: Any = None) -> Variable:
    """Get an existing variable `scope/name` or create it, as the scope's `reuse` says.

    >>> import kilnflow as kf
    >>> v1 = kf.compat.v1
    >>> with kf.Graph().as_default():
    ...     with v1.variable_scope("layer"):
    ...         w = v1.get_variable("w", [2], initializer=v1.zeros_initializer())
    ...     with v1.variable_scope("layer", reuse=True):
    ...         same = v1.get_variable("w")
    >>> w is same, w.name
    (True, 'layer/w:0')
    """
    if custom_getter is not None or constraint is not None:
        raise NotImplementedError(f"get_variable({name!r}): custom_getter and constraint are "
                                  "not supported")
    scope = get_variable_scope()
    full = _joined(scope.name, name)
    given_dtype = dtype
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else scope.dtype
    shape = TensorShape(shape) if shape is not None else None
    graph = ctx.graph
    holder = _state.holder
    store: Optional[Dict[str, Variable]] = None
    if holder is not None:
        replayed = holder.replayed(full)
        if replayed is not None:
            return replayed
        store = holder.variables
    elif graph is not None:
        store = _stores.setdefault(graph, {})
    if store is not None:
        found = store.get(full)
        if found is not None:
            if scope.reuse is False or scope.reuse is None:
                raise ValueError(f"Variable {full} already exists, disallowed. Did you mean "
                                 "to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            _check_shared(found, full, shape, dtype)
            return found
        if scope.reuse is True:
            raise ValueError(f"Variable {full} does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?")
    if initializer is None:
        initializer = scope.initializer
    elif given_dtype is None and isinstance(initializer, (Tensor, np.ndarray)):
        dtype = _dtypes.as_dtype(initializer.dtype)  # TF: a tensor initializer sets the dtype
    if isinstance(initializer, (Tensor, np.ndarray)) and shape is not None and validate_shape:
        given = convert_to_tensor(initializer).shape
        if not shape.is_compatible_with(given):
            raise ValueError(f"The initializer passed has shape {given}, but get_variable "
                             f"was given shape {shape} for {full}")
    init = _initial_value(initializer, shape, dtype, full)
    if graph is not None and not graph.is_function and "/" in full:
        # a graph names a variable inside the current name scope: make that its own scope
        prefix, leaf = full.rsplit("/", 1)
        with graph.name_scope(prefix + "/"):
            var = Variable(init, trainable=trainable, name=leaf, dtype=dtype, shape=shape)
    else:
        var = Variable(init, trainable=trainable, name=full, dtype=dtype, shape=shape)
    if holder is not None:
        holder.made(full, var)
    elif store is not None:
        store[full] = var
    _add_to_collections(var, collections, regularizer or scope.regularizer, full)
    return var


def _check_shared(found: Variable, full: str, shape: Optional[TensorShape],
                  dtype: _dtypes.DType) -> None:
    if shape is not None and not shape.is_compatible_with(found.shape):
        raise ValueError(f"Trying to share variable {full}, but specified shape {shape} and "
                         f"found shape {found.shape}.")
    if dtype is not found.dtype:
        raise ValueError(f"Trying to share variable {full}, but specified dtype {dtype.name} "
                         f"and found dtype {found.dtype.name}.")


def _add_to_collections(var: Variable, collections: Optional[list], regularizer: Any,
                        full: str) -> None:
    """Extra collections named by get_variable, and the regularization loss if any.
    (Every graph variable is a global variable here; `collections` adds, never removes.)"""
    graph = get_default_graph()
    for key in collections or []:
        if key not in ("variables", "trainable_variables"):
            graph.add_to_collection(key, var)
    if collections is not None and "variables" not in collections:
        exclude_from_global(graph, var)
    if regularizer is not None:
        with contextlib.ExitStack() as names:
            if ctx.graph is not None:
                names.enter_context(ctx.graph.name_scope(full + "/Regularizer/"))
            loss = regularizer(var)
        if loss is not None:
            graph.add_to_collection("regularization_losses", loss)


# ---------------------------------------------------------------- TF1 initializers

def zeros_initializer(dtype: Any = _dtypes.float32) -> Any:
    return _init.Zeros()


def ones_initializer(dtype: Any = _dtypes.float32) -> Any:
    return _init.Ones()


def constant_initializer(value: Any = 0, dtype: Any = _dtypes.float32,
                         verify_shape: bool = False) -> Any:
    return _init.Constant(value)


def random_normal_initializer(mean: float = 0.0, stddev: float = 1.0, seed: Any = None,
                              dtype: Any = _dtypes.float32) -> Any:
    return _init.RandomNormal(mean, stddev, seed)


def truncated_normal_initializer(mean: float = 0.0, stddev: float = 1.0, seed: Any = None,
                                 dtype: Any = _dtypes.float32) -> Any:
    return _init.TruncatedNormal(mean, stddev, seed)


def random_uniform_initializer(minval: float = 0.0, maxval: Any = None, seed: Any = None,
                               dtype: Any = _dtypes.float32) -> Any:
    return _init.RandomUniform(minval, 1.0 if maxval is None else maxval, seed)


def glorot_uniform_initializer(seed: Any = None, dtype: Any = _dtypes.float32) -> Any:
    return _init.GlorotUniform(seed)


def glorot_normal_initializer(seed: Any = None, dtype: Any = _dtypes.float32) -> Any:
    return _init.GlorotNormal(seed)


def variance_scaling_initializer(scale: float = 1.0, mode: str = "fan_in",
                                 distribution: str = "truncated_normal", seed: Any = None,
                                 dtype: Any = _dtypes.float32) -> Any:
    return _init.VarianceScaling(scale, mode, distribution, seed)
