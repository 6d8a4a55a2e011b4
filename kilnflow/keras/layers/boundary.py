"""Bad inputs at the layer boundary: named errors in TF's classes, never an internal
exception from a layer's own code (the original kept as the cause)."""
from __future__ import annotations

from typing import Any

from kilnflow import errors
from kilnflow import nest


def _label(layer: Any) -> str:
    return f"Layer '{layer.name}' ({type(layer).__name__})"


def check_inputs(layer: Any, inputs: Any) -> None:
    """TypeError naming the layer when an input leaf is not a tensor or array-like."""
    for leaf in nest.flatten(inputs):
        if not hasattr(leaf, "shape"):
            raise TypeError(errors.with_location(
                f"{_label(layer)}: argument `inputs` must be a tensor or array-like, got "
                f"{leaf!r} of type {type(leaf).__name__}"))


def build_named(layer: Any, shapes: Any) -> None:
    """layer.build(shapes); weights too large are ResourceExhaustedError, other build
    failures name the layer and the shapes."""
    try:
        layer.build(shapes)
    except MemoryError as exc:
        raise errors.ResourceExhaustedError(errors.with_location(
            f"{_label(layer)} could not allocate its weights for inputs of shape {shapes}: "
            f"{exc}")) from exc
    except (TypeError, ValueError) as exc:
        if isinstance(exc, errors.OpError) or layer.name in str(exc):
            raise
        raise type(exc)(f"{_label(layer)} cannot be built for inputs of shape {shapes}: "
                        f"{exc}") from exc


def call_error(layer: Any, first: Any, exc: Exception) -> TypeError:
    """The error for an input of the wrong kind that reached the layer's call()."""
    return TypeError(errors.with_location(
        f"{_label(layer)} cannot be called on this `inputs` ({type(first).__name__}): "
        f"{type(exc).__name__}: {exc}"))
