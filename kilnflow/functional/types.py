"""kf.types.experimental: the abstract types TF 2 names for type hints and isinstance
checks. kf.function's Function is a PolymorphicFunction (and GenericFunction), its
ConcreteFunction a ConcreteFunction; both are Callables. TensorLike is the Union of what
converts to a tensor.
"""
from __future__ import annotations

import abc
import inspect
import sys
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from kilnflow.function.api import Function as _Function
from kilnflow.function.concrete import ConcreteFunction as _ConcreteFunction
from kilnflow.tensor import Tensor


class Callable(abc.ABC):  # noqa: A001 - TF's name
    """Something called like a function, with a FunctionType describing its arguments."""

    @property
    def function_type(self) -> Any:
        return None


class GenericFunction(Callable):
    """A function that traces into concrete functions (kf.function's result)."""

    @abc.abstractmethod
    def get_concrete_function(self, *args: Any, **kwargs: Any) -> Any:
        """The ConcreteFunction for these arguments (or TensorSpecs)."""

    def experimental_get_compiler_ir(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("kilnflow functions have no XLA compiler IR")


class PolymorphicFunction(GenericFunction):
    """kf.function's result: one Python function, many traced ConcreteFunctions."""


class ConcreteFunction(Callable):
    """One traced graph with fixed input signature."""


class AtomicFunction(Callable):
    """A single graph function called with its captures (no kilnflow class is one)."""

    def call_with_captures(self, args: Any, kwargs: Any, captures: Any) -> Any:
        raise NotImplementedError


GenericFunction.register(_Function)
PolymorphicFunction.register(_Function)
ConcreteFunction.register(_ConcreteFunction)


class FunctionType(inspect.Signature):
    """The signature of a function's inputs (an inspect.Signature)."""

    @classmethod
    def from_callable(cls, obj: Any, *, follow_wrapped: bool = True) -> "FunctionType":
        return super().from_callable(obj, follow_wrapped=follow_wrapped)


class TraceType(abc.ABC):
    """The type of an argument as tracing sees it: what decides a retrace."""

    @abc.abstractmethod
    def is_subtype_of(self, other: "TraceType") -> bool:
        """True if a function traced for `other` serves this type too."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others: Any) -> Any:
        """The narrowest type that both this and every one of `others` are subtypes of."""

    def placeholder_value(self, placeholder_context: Any) -> Any:
        raise NotImplementedError

    def to_tensors(self, value: Any) -> list:
        return []

    def from_tensors(self, tensors: Any) -> Any:
        return None

    def flatten(self) -> list:
        return []

    def cast(self, value: Any, cast_context: Any) -> Any:
        return value


@runtime_checkable
class SupportsTracingProtocol(Protocol):
    """Objects that give their own TraceType when passed to a kf.function."""

    def __tf_tracing_type__(self, context: Any) -> TraceType:
        ...


TensorLike = Union[Tensor, int, float, bool, str, bytes, complex, tuple, list, np.ndarray,
                   np.generic]


class _Distributed:
    """kf.types.experimental.distributed: the per-replica value types of kf.distribute."""

    def __getattr__(self, name: str) -> Any:
        if name in ("Mirrored", "PerReplica"):
            from kilnflow.distribute import values
            return getattr(values, name)
        raise AttributeError(f"module 'kilnflow.types.experimental.distributed' has no "
                             f"attribute {name!r}")

    def __dir__(self) -> list:
        return ["Mirrored", "PerReplica"]


distributed = _Distributed()
experimental = sys.modules[__name__]  # kf.types.experimental is this module
