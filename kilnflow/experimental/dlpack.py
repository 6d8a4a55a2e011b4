"""kf.experimental.dlpack (tf.experimental.dlpack): zero-copy exchange with other array
libraries through the DLPack protocol, carried by NumPy's own DLPack support.

A tensor is immutable, so it is exported read-only: the capsule is a versioned DLPack
capsule ("dltensor_versioned") whose READ_ONLY flag is set, which consumers that speak
DLPack >= 1.0 (NumPy 2, recent PyTorch and JAX) accept. TF exports an unversioned capsule
that cannot say "read-only"; kilnflow does not hand out writable aliases of a tensor.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.tensor import EagerTensor, is_symbolic, wrap

__all__ = ["to_dlpack", "from_dlpack"]

_CPU = (1, 0)  # (kDLCPU, device id): the only device kilnflow computes on


def _eager_value(tf_tensor: Any, what: str) -> np.ndarray:
    if is_symbolic(tf_tensor):
        raise errors.InvalidArgumentError(
            f"{what}: the symbolic tensor {tf_tensor.name} has no value to export; DLPack "
            "works on eager tensors only")
    tensor = convert_to_tensor(tf_tensor)
    if tensor.dtype is _dtypes.string:
        raise errors.InvalidArgumentError(f"{what}: tf.string tensors cannot be exported "
                                          "through DLPack (it has no string type)")
    return np.asarray(tensor)  # a read-only view of the tensor's buffer


def to_dlpack(tf_tensor: Any) -> Any:
    """A DLPack capsule aliasing `tf_tensor`'s buffer (read-only, zero-copy).

    >>> import kilnflow as kf, numpy as np
    >>> capsule = kf.experimental.dlpack.to_dlpack(kf.constant([1.0, 2.0]))
    >>> kf.experimental.dlpack.from_dlpack(capsule).numpy()
    array([1., 2.], dtype=float32)
    """
    return _eager_value(tf_tensor, "to_dlpack").__dlpack__(max_version=(1, 0))


class _Capsule:
    """Presents a bare capsule as a DLPack producer, which is what np.from_dlpack reads."""

    def __init__(self, capsule: Any):
        self._capsule = capsule

    def __dlpack__(self, **_: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple:
        return _CPU


def from_dlpack(dlcapsule: Any) -> EagerTensor:
    """A tensor sharing the memory of a DLPack capsule or of any object with `__dlpack__`
    (a NumPy array, a torch or JAX CPU array). Zero-copy, as TF's: the producer must not
    write to the memory while the tensor is in use.

    >>> import kilnflow as kf, numpy as np
    >>> kf.experimental.dlpack.from_dlpack(np.arange(3)).dtype
    tf.int64
    """
    if type(dlcapsule).__name__ != "PyCapsule" and not hasattr(dlcapsule, "__dlpack__"):
        raise errors.InvalidArgumentError(
            f"from_dlpack: expected a DLPack capsule or an object with __dlpack__, got "
            f"{type(dlcapsule).__name__}")
    producer = dlcapsule if hasattr(dlcapsule, "__dlpack__") else _Capsule(dlcapsule)
    try:
        array = np.from_dlpack(producer)
    except (BufferError, TypeError, ValueError, RuntimeError) as exc:
        raise errors.InvalidArgumentError(f"from_dlpack: {exc}") from None
    try:
        _dtypes.from_numpy(array.dtype)
    except TypeError as exc:
        raise errors.InvalidArgumentError(f"from_dlpack: {exc}") from None
    return wrap(array)
