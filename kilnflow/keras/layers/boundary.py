"""Bad inputs at the layer boundary: named errors in TF's classes, never an internal
exception from a layer's own code (the original kept as the cause)."""
from __future__ import annotations

import functools
from typing import Any, Callable

from kilnflow import errors
from kilnflow import nest


def _label(layer: Any) -> str:
    return f"Layer '{layer.name}' ({type(layer).__name__})"


# what a layer's own code raises when a value of the wrong shape or kind reaches it
INTERNAL = (AttributeError, KeyError, IndexError, ZeroDivisionError, OverflowError)


def check_inputs(layer: Any, inputs: Any, argument: str = "inputs") -> None:
    """TypeError naming the layer when an input leaf is not a tensor or array-like."""
    for leaf in nest.flatten(inputs):
        if not hasattr(leaf, "shape"):
            raise TypeError(errors.with_location(
                f"{_label(layer)}: argument `{argument}` must be a tensor or array-like, got "
                f"{leaf!r} of type {type(leaf).__name__}"))


def build_named(layer: Any, shapes: Any, *more_shapes: Any) -> None:
    """layer.build(shapes); weights too large are ResourceExhaustedError, other build
    failures name the layer and the shapes."""
    try:
        layer.build(shapes, *more_shapes)
    except MemoryError as exc:
        raise errors.ResourceExhaustedError(errors.with_location(
            f"{_label(layer)} could not allocate its weights for inputs of shape {shapes}: "
            f"{exc}")) from exc
    except (TypeError, ValueError) as exc:
        if isinstance(exc, errors.OpError) or layer.name in str(exc):
            raise
        raise type(exc)(f"{_label(layer)} cannot be built for inputs of shape {shapes}: "
                        f"{exc}") from exc
    except INTERNAL as exc:  # the layer's build could not read these shapes
        raise ValueError(errors.with_location(
            f"{_label(layer)} cannot be built for inputs of shape {shapes}: "
            f"{type(exc).__name__}: {exc}")) from exc


def call_error(layer: Any, first: Any, exc: Exception) -> Exception:
    """The error for an input of the wrong kind (TypeError) or shape (ValueError) that
    reached the layer's call()."""
    kind = ValueError if hasattr(first, "shape") and hasattr(first, "dtype") else TypeError
    shape = f" of shape {first.shape}" if kind is ValueError else ""
    return kind(errors.with_location(
        f"{_label(layer)} cannot be called on this `inputs` ({type(first).__name__}{shape}): "
        f"{type(exc).__name__}: {exc}"))


def check_compatible(layer: Any, spec: Any, inputs: Any) -> None:
    """assert_input_compatibility, with a non-tensor input named as such first."""
    from kilnflow.keras.layers.layer_utils import assert_input_compatibility
    try:
        assert_input_compatibility(spec, inputs, layer.name)
    except INTERNAL:
        check_inputs(layer, inputs)
        raise


def positive_int(value: Any, what: str) -> int:
    """A size argument (units, filters...): Keras 3 takes only a positive int, not 0, a
    negative or a float it would truncate."""
    if isinstance(value, bool) or not hasattr(value, "__index__") or value.__index__() < 1:
        raise ValueError(f"Received an invalid value for `{what}`, expected a positive "
                         f"integer. Received: {what}={value!r}")
    return value.__index__()


def _names(layer_class: str, message: str) -> bool:
    return layer_class in message or "`" in message or "Layer '" in message or \
        "[Op:" in message


def renamed(label: str, exc: Exception, what: str) -> Exception:
    """A plain TypeError/ValueError whose message names neither layer nor argument, again
    with the layer's label in front (as Keras 3 notes the layer a call failed in)."""
    kind = type(exc)
    if kind not in (TypeError, ValueError) or _names(label, str(exc)):
        return exc
    new = kind(f"{label} {what}: {exc}")
    new.__cause__ = exc
    return new


def named_init(init: Callable) -> Callable:
    """`init` of a built-in layer: a bad constructor argument raises TypeError/ValueError
    naming the layer class, never an internal exception."""
    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            init(self, *args, **kwargs)
        except errors.OpError:
            raise
        except (TypeError, ValueError) as exc:
            new = renamed(type(self).__name__, exc, "got an invalid constructor argument")
            if new is exc:
                raise
            raise new from exc
        except INTERNAL as exc:
            raise ValueError(f"{type(self).__name__} got an invalid constructor argument: "
                             f"{type(exc).__name__}: {exc}") from exc
    checked.named_init = True
    return checked
