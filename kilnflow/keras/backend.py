"""Keras bookkeeping shared by layers and models: unique names, the default float type,
the NumPy generator behind weight initializers and shuffling, and the call context that
carries the `training` flag from an outer model to its layers.
"""
from __future__ import annotations

import collections
import contextlib
import re
import threading
import weakref
from typing import Any, Iterator, Optional

import numpy as np

from kilnflow import dtypes as _dtypes

_uids: collections.Counter = collections.Counter()
_floatx = "float32"
_state = threading.local()


class _Random:
    """Weight initializers and fit(shuffle=True) draw from one NumPy generator, so
    `keras.utils.set_random_seed(s)` makes model creation and training repeatable."""

    generator = np.random.default_rng()


def rng() -> np.random.Generator:
    return _Random.generator


def set_random_seed(seed: int) -> None:
    """Seed the initializers, shuffling, and kf.random's global seed."""
    _Random.generator = np.random.default_rng(seed)
    try:
        from kilnflow.ops import random as kf_random
    except ImportError:  # pragma: no cover - random ops ship with kilnflow
        return
    kf_random.set_seed(seed)


def to_snake_case(name: str) -> str:
    """Keras's layer-name rule: 'Conv2D' -> 'conv2d', 'SimpleRNN' -> 'simple_rnn'."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def get_uid(prefix: str = "") -> int:
    """1, 2, 3... per prefix: layer names dense, dense_1, dense_2 come from here."""
    _uids[prefix] += 1
    return _uids[prefix]


def unique_object_name(base: str) -> str:
    n = get_uid(base)
    return base if n == 1 else f"{base}_{n - 1}"


def clear_session() -> None:
    """Reset layer-name counters (new models get `dense`, `dense_1`, ... again)."""
    _uids.clear()


def floatx() -> str:
    return _floatx


def set_floatx(value: str) -> None:
    global _floatx
    dtype = _dtypes.as_dtype(value)
    if not dtype.is_floating:
        raise ValueError(f"floatx must be a floating dtype, got {value!r}")
    _floatx = dtype.name


def epsilon() -> float:
    return 1e-7


# ---------------------------------------------------------------- the call context

def call_training() -> Optional[bool]:
    """The `training` value of the innermost layer call that set one (None outside)."""
    stack = getattr(_state, "training", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def training_scope(training: Optional[bool]) -> Iterator[None]:
    stack = getattr(_state, "training", None)
    if stack is None:
        stack = _state.training = []
    stack.append(training)
    try:
        yield
    finally:
        stack.pop()


def nn() -> Any:
    """kilnflow.ops.nn, imported on first use (it imports nothing from keras)."""
    from kilnflow import nn as nn_ops  # kf.nn: kilnflow.ops.nn and kilnflow.ops.conv
    return nn_ops


# ---------------------------------------------------------------- Keras masks

_masks: dict = {}  # id(tensor) -> (weak reference to the tensor, its mask)


def set_keras_mask(tensor: Any, mask: Any) -> None:
    """Attach a mask (a boolean tensor over the leading dims) to `tensor`, as Keras does
    with `tensor._keras_mask`; kilnflow tensors have fixed slots, so the mask lives in a
    table that forgets it when the tensor is freed."""
    key = id(tensor)
    if mask is None:
        _masks.pop(key, None)
        return
    try:
        ref = weakref.ref(tensor, lambda _, key=key: _masks.pop(key, None))
    except TypeError:
        return  # not a tensor (a Python number): nothing to mask
    _masks[key] = (ref, mask)


class LazyMask:
    """A mask computed on first use: a mask nobody reads (an Embedding(mask_zero=True)
    feeding a Conv1D) adds no ops to the graph. `index` picks one of several outputs'."""

    def __init__(self, compute: Any, index: Optional[int] = None):
        self._compute, self._index = compute, index
        self._done, self._value = False, None

    def resolve(self) -> Any:
        if not self._done:
            value = self._compute()
            if self._index is not None and isinstance(value, (list, tuple)):
                value = value[self._index]
            self._value, self._done = resolve_mask(value), True
        return self._value


def resolve_mask(mask: Any) -> Any:
    """A mask's value: LazyMasks computed, lists resolved item by item."""
    if isinstance(mask, LazyMask):
        return mask.resolve()
    if isinstance(mask, list):
        return [resolve_mask(m) for m in mask]
    return mask


def peek_keras_mask(tensor: Any) -> Any:
    """The mask attached to `tensor` (possibly not computed yet), else None."""
    entry = _masks.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        return entry[1]
    return None


def get_keras_mask(tensor: Any) -> Any:
    """The mask attached to `tensor` by a masking layer upstream, else None."""
    return resolve_mask(peek_keras_mask(tensor))
