"""Variable: mutable state behind a VariableHandle, read and written through state ops.

Eagerly a Variable holds its value at once. In a compat.v1 graph it starts uninitialized
and gets an `initializer` op. Inside @kf.function, hooks registered on the context
decide whether creating one is allowed (only on the first trace).
"""
from __future__ import annotations

import contextlib
import enum
import inspect
import threading
from typing import Any, Callable, Iterator, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.context import ctx, eager_mode
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.core.opdef import bind
from kilnflow.graph import current_name_scope
from kilnflow.ops import scatter as _scatter
from kilnflow.ops.slicing import gather as _gather, getitem
from kilnflow.ops.state import ASSIGN, ASSIGN_ADD, ASSIGN_SUB, READ, VariableHandle
from kilnflow.shapes import TensorShape
from kilnflow.tensor import TensorOps, numpy_text, is_symbolic


class VariableSynchronization(enum.Enum):
    """When the copies of a distributed variable are brought in sync (TF's values)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3

    @staticmethod
    def of(value: Any) -> "VariableSynchronization":
        if value is None:
            return VariableSynchronization.AUTO
        if isinstance(value, VariableSynchronization):
            return value
        if isinstance(value, str) and value.upper() in VariableSynchronization.__members__:
            return VariableSynchronization[value.upper()]
        raise ValueError(f"Invalid variable synchronization mode: {value!r}")


class VariableAggregation(enum.Enum):
    """How the per-replica updates (or reads) of a distributed variable are combined."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3

    @staticmethod
    def of(value: Any) -> "VariableAggregation":
        if value is None:
            return VariableAggregation.NONE
        if isinstance(value, VariableAggregation):
            return value
        if isinstance(value, enum.Enum):  # a tf.distribute.ReduceOp (SUM, MEAN)
            value = value.name
        if isinstance(value, str) and value.upper() in VariableAggregation.__members__:
            return VariableAggregation[value.upper()]
        raise ValueError(f"Invalid variable aggregation mode: {value!r}")


class _Creators(threading.local):
    def __init__(self) -> None:
        self.stack: list = []


_CREATORS = _Creators()
# TF's creator keyword arguments that kf.Variable accepts and ignores (no devices, no protos)
_TF_CREATOR_DEFAULTS = {"caching_device": None, "variable_def": None, "import_scope": None,
                        "constraint": None, "synchronization": VariableSynchronization.AUTO,
                        "aggregation": VariableAggregation.NONE,
                        "experimental_enable_variable_lifting": True}


@contextlib.contextmanager
def variable_creator_scope(variable_creator: Callable[..., Any]) -> Iterator[None]:
    """Route `kf.Variable(...)` through `variable_creator(next_creator, **kwargs)` (TF's
    tf.variable_creator_scope). Creators nest: the innermost is called first and reaches
    the next one (finally the plain constructor) through `next_creator(**kwargs)`; kwargs
    are TF's (initial_value, trainable, name, dtype, shape, synchronization, aggregation,
    ...). A strategy's `scope()` installs one that makes its distributed variables.

    >>> import kilnflow as kf
    >>> def frozen(next_creator, **kwargs):
    ...     kwargs["trainable"] = False
    ...     return next_creator(**kwargs)
    >>> with kf.variable_creator_scope(frozen):
    ...     v = kf.Variable(1.0)
    >>> v.trainable
    False
    """
    _CREATORS.stack.append(variable_creator)
    try:
        yield
    finally:
        _CREATORS.stack.pop()


def creator_stack() -> list:
    """The creators in effect in this thread, outermost first."""
    return list(_CREATORS.stack)


@contextlib.contextmanager
def replaced_creator_stack(stack: list) -> Iterator[None]:
    """Run the body with a whole creator stack (a replica thread inheriting its caller's)."""
    saved = _CREATORS.stack
    _CREATORS.stack = list(stack)
    try:
        yield
    finally:
        _CREATORS.stack = saved


class _VariableMeta(type):
    """`kf.Variable(...)` itself goes through the creator scopes (as TF's metaclass does);
    subclasses (a strategy's MirroredVariable) are constructed directly."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is not Variable or not _CREATORS.stack:
            # `kf.Variable(...)` makes a ResourceVariable, as TF 2's does
            return super(_VariableMeta, ResourceVariable if cls is Variable else cls).__call__(
                *args, **kwargs)
        bound = inspect.signature(Variable.__init__).bind(None, *args, **kwargs)
        options = dict(bound.arguments)
        options.pop("self")
        options.update(options.pop("unused_tf_args", {}))
        for key, value in _TF_CREATOR_DEFAULTS.items():
            options.setdefault(key, value)
        for key in ("trainable", "validate_shape", "name", "dtype", "shape"):
            options.setdefault(key, True if key == "validate_shape" else None)

        def plain(**kw: Any) -> Any:
            return type.__call__(ResourceVariable, **kw)
        chain = plain
        for creator in _CREATORS.stack:  # outermost first: the innermost ends up on top
            chain = (lambda c, nxt: lambda **kw: c(nxt, **kw))(creator, chain)
        return chain(**options)


class Variable(TensorOps, metaclass=_VariableMeta):
    """A tensor-like value that persists across calls and can be updated in place.

    >>> import kilnflow as kf
    >>> v = kf.Variable(1.0)
    >>> _ = v.assign_add(2.0)
    >>> v.numpy()
    np.float32(3.0)
    """

    is_tensor_like = True  # kf.is_tensor(v) is True, as in TF

    def __init__(self, initial_value: Any = None, trainable: Optional[bool] = None,
                 validate_shape: bool = True, name: Optional[str] = None, dtype: Any = None,
                 shape: Any = None, **unused_tf_args: Any):
        if initial_value is None:
            raise ValueError("The `initial_value` arg to `tf.Variable` must be specified except "
                             "when you are not providing a `variable_def`. You provided neither.")
        try:
            self._synchronization = VariableSynchronization.of(
                unused_tf_args.get("synchronization"))
            self._aggregation = VariableAggregation.of(unused_tf_args.get("aggregation"))
        except ValueError as exc:
            raise ValueError(f"{exc} for variable: {name}") from None
        if trainable is None:  # TF: ON_READ variables (metric accumulators) are not trained
            trainable = self._synchronization is not VariableSynchronization.ON_READ
        for hook in ctx.variable_hooks:
            hook(self)  # may raise: creating variables on a non-first trace
        graph = ctx.graph
        v1_graph = graph if graph is not None and not graph.is_function \
            else None
        if callable(initial_value):
            if v1_graph is None:
                with eager_mode():
                    initial_value = initial_value()
            else:
                initial_value = initial_value()
        if v1_graph is None:
            if is_symbolic(initial_value):  # built inside a kf.function: lift it out
                initial_value = graph.evaluate_constant(initial_value)
            with eager_mode():
                value = convert_to_tensor(initial_value, dtype)
        else:
            with v1_graph.as_default():
                value = convert_to_tensor(initial_value, dtype)
        self._trainable = True if trainable is None else bool(trainable)
        try:
            var_shape = value.shape if shape is None else TensorShape(shape)
        except (TypeError, ValueError) as exc:  # not a shape: name the argument
            raise type(exc)(errors.with_location(
                f"Variable: `shape` {shape!r} is not a shape: {exc}")) from exc
        if shape is not None and not var_shape.is_compatible_with(value.shape):
            raise ValueError(errors.with_location(
                f"Variable: the initial value's shape {value.shape} is not compatible with "
                f"the explicitly supplied `shape` argument {var_shape}"))
        if validate_shape is False and shape is None:
            var_shape = TensorShape(None)
        base = (name or "Variable").rstrip("/")
        if graph is None:  # eagerly the name scope is part of the name ("layer/w:0")
            base = current_name_scope() + base
        unique = v1_graph.unique_name(base) if v1_graph is not None else base
        self._handle = VariableHandle(unique + ":0", value.dtype, var_shape, self._trainable)
        self._handle.owner = self
        self._graph = v1_graph
        self._initial_value = value
        if v1_graph is None:
            array = value._value
            self._handle.value = np.array(array) if isinstance(array, np.ndarray) \
                and isinstance(initial_value, np.ndarray) else array
            self._initializer_op = None
        else:
            v1_graph.add_variable(self)
            with v1_graph.as_default(), v1_graph.name_scope(unique + "/"):
                bind(ASSIGN, (value,), {"handle": self._handle}, name="Assign")
                self._initializer_op = v1_graph.operations[-1]
                # what fetching the variable itself reads (TF1's `Variable/Read`)
                with v1_graph.name_scope("Read/"):
                    self._graph_read = self.read_value()

    # ---------------------------------------------------------------- properties

    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def dtype(self) -> _dtypes.DType:
        return self._handle.dtype

    @property
    def shape(self) -> TensorShape:
        return self._handle.shape

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def synchronization(self) -> VariableSynchronization:
        return self._synchronization

    @property
    def aggregation(self) -> VariableAggregation:
        return self._aggregation

    @property
    def handle(self) -> VariableHandle:
        return self._handle

    @property
    def initializer(self) -> Any:
        return self._initializer_op

    @property
    def initial_value(self) -> Any:
        return self._initial_value

    @property
    def graph(self) -> Any:
        return self._graph

    @property
    def device(self) -> str:
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def op(self) -> Any:
        return self._initializer_op

    # ---------------------------------------------------------------- reading

    def read_value(self) -> Any:
        """The current value as a tensor (a ReadVariableOp in graphs)."""
        return bind(READ, (), {"handle": self._handle}, name="ReadVariableOp")

    def value(self) -> Any:
        return self.read_value()

    def _as_tensor(self) -> Any:
        return self.read_value()

    def numpy(self) -> Any:
        if ctx.graph is not None and not ctx.graph.is_function:
            raise NotImplementedError("numpy() is only available when eager execution is "
                                      "enabled.")
        value = self._handle.read()
        return value[()] if value.ndim == 0 else value.copy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = np.asarray(self._handle.read())
        if dtype is not None and value.dtype != dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        view = value.view()  # writes go through assign(), never through this array
        view.flags.writeable = False
        return view

    def eval(self, session: Any = None) -> Any:
        return self.read_value().eval(session=session)

    def __bool__(self) -> bool:
        return bool(self.read_value())

    def __int__(self) -> int:
        return int(self.read_value())

    def __float__(self) -> float:
        return float(self.read_value())

    def __index__(self) -> int:
        return self.read_value().__index__()

    def __len__(self) -> int:
        return len(self.read_value())

    def __iter__(self):
        return iter(self.read_value())

    # ---------------------------------------------------------------- writing

    def _converted(self, value: Any) -> Any:
        if isinstance(value, np.ndarray):
            value = value.copy()
        try:
            return convert_to_tensor(value, self.dtype)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{exc} (assigning to variable {self.name})") from None

    def assign(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
               read_value: bool = True) -> Any:
        """Stores `value`; returns the variable (or None when read_value=False)."""
        value = self._converted(value)
        if not self.shape.is_compatible_with(value.shape):
            raise ValueError(errors.with_location(
                f"Cannot assign value to variable ' {self.name}': Shape mismatch.The variable "
                f"shape {self.shape}, and the assigned value shape {value.shape} are "
                "incompatible."))
        bind(ASSIGN, (value,), {"handle": self._handle}, name=name)
        return self._after_update(read_value)

    def assign_add(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        """Adds `delta` to the value; returns the variable (or None when read_value=False)."""
        bind(ASSIGN_ADD, (self._converted(delta),), {"handle": self._handle}, name=name)
        return self._after_update(read_value)

    def assign_sub(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        """Subtracts `delta` from the value; returns the variable (or None when
        read_value=False)."""
        bind(ASSIGN_SUB, (self._converted(delta),), {"handle": self._handle}, name=name)
        return self._after_update(read_value)

    def _after_update(self, read_value: bool) -> Any:
        """TF2 returns the variable; a TF1 graph returns a read that runs after the update
        (so `sess.run(v.assign_add(1))` performs the update)."""
        graph = ctx.graph
        if graph is None or graph.is_function:
            # TF 2 returns a view of the variable printed as 'UnreadVariable'
            return _UnreadVariable.of(self) if read_value else None
        from kilnflow.graph import control_dependencies
        update = graph.operations[-1]
        if not read_value:
            return update
        with control_dependencies([update]):
            return self.read_value()

    def sparse_read(self, indices: Any, name: Optional[str] = None) -> Any:
        """The rows of the variable at `indices` (kf.gather on its value)."""
        return _gather(self.read_value(), indices, name=name)

    def gather_nd(self, indices: Any, name: Optional[str] = None) -> Any:
        """kf.gather_nd on the variable's value."""
        return _scatter.gather_nd(self.read_value(), indices, name=name)

    constraint = None  # kf.Variable accepts a `constraint` and ignores it (no projection)

    def experimental_ref(self) -> Any:
        return self.ref()

    def scatter_nd_update(self, indices: Any, updates: Any, name: Optional[str] = None) -> Any:
        """Writes `updates` at `indices` (as kf.tensor_scatter_nd_update) into the variable."""
        return self.assign(_scatter.tensor_scatter_nd_update(self.read_value(), indices,
                                                             updates), name=name)

    def scatter_nd_add(self, indices: Any, updates: Any, name: Optional[str] = None) -> Any:
        """Adds `updates` at `indices` to the variable."""
        return self.assign(_scatter.tensor_scatter_nd_add(self.read_value(), indices,
                                                          updates), name=name)

    def scatter_nd_sub(self, indices: Any, updates: Any, name: Optional[str] = None) -> Any:
        """Subtracts `updates` at `indices` from the variable."""
        return self.assign(_scatter.tensor_scatter_nd_sub(self.read_value(), indices,
                                                          updates), name=name)

    def __getitem__(self, key: Any) -> Any:
        # eagerly the slice also has assign(value), writing into the variable (as TF's)
        part = getitem(self, key)
        if ctx.graph is None:
            part._slice_assign = lambda value, name=None: self._assign_slice(key, value, name)
        return part

    def _assign_slice(self, key: Any, value: Any, name: Optional[str]) -> Any:
        current = self.numpy()
        updated = np.array(current)
        keys = key if isinstance(key, tuple) else (key,)
        keys = tuple(np.asarray(k).item() if hasattr(k, "dtype") else k for k in keys)
        try:
            updated[keys] = np.asarray(self._converted(value))
        except (IndexError, ValueError) as exc:
            raise ValueError(f"Cannot assign to slice {key!r} of variable {self.name}: "
                             f"{exc}") from None
        return self.assign(updated, name=name)

    def __hash__(self) -> int:
        raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key. "
                        f"(Variable: {self!r})")

    # ---------------------------------------------------------------- printing

    def __repr__(self) -> str:
        value = self._handle.value
        if value is None or ctx.graph is not None:  # in a graph the value is not known
            return (f"<tf.Variable '{self.name}' shape={self.shape} "
                    f"dtype={self.dtype.name}>")
        return (f"<tf.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}, numpy={numpy_text(value, True)}>")

    def __deepcopy__(self, memo: Any) -> "Variable":
        copy = Variable(np.array(self._handle.read()), trainable=self.trainable,
                        name=self.name.split(":")[0], dtype=self.dtype)
        memo[id(self)] = copy
        return copy


class ResourceVariable(Variable):
    """What `kf.Variable(...)` makes, as TF 2's (a value behind a handle)."""


class _UnreadVariable(ResourceVariable):
    """What `v.assign(...)` returns: the variable (same handle), named 'UnreadVariable'."""

    @classmethod
    def of(cls, variable: Variable) -> "_UnreadVariable":
        view = cls.__new__(cls)
        view.__dict__.update(variable.__dict__)
        return view

    @property
    def name(self) -> str:
        return "UnreadVariable"
