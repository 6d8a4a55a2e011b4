"""keras.layers.Hashing: values to one of `num_bins` bins by FarmHash Fingerprint64, exactly
as TF's Keras 3 hashes them (tf.strings.to_hash_bucket_fast; integers and floats hashed as
their decimal strings, floats truncated to int64 first). With `mask_value`, that value goes
to bin 0 and the rest to bins 1..num_bins-1. The salted (SipHash) form is not supported.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import dtypes as _dtypes
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array, reduction, reshaping
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.farmhash import to_hash_bucket_fast
from kilnflow.ops.strings import as_string
from kilnflow.shapes import TensorShape, TensorSpec


class Hashing(Layer):
    """Hash strings or integers into `num_bins` bins (int64 indices, or one_hot /
    multi_hot / count vectors).

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> keras.layers.Hashing(num_bins=3)(kf.constant([["A"], ["B"], ["C"]])).numpy().tolist()
    [[1], [0], [1]]
    """
    supports_jit = False  # as in Keras 3: compile(jit_compile=True) warns and runs without

    def __init__(self, num_bins: int, mask_value: Any = None, salt: Any = None,
                 output_mode: str = "int", sparse: bool = False, **kwargs: Any):
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of "
                             f"['int', 'one_hot', 'multi_hot', 'count']. Received: "
                             f"output_mode={output_mode!r}")
        if salt is not None:
            raise NotImplementedError("Hashing(salt=...) uses SipHash "
                                      "(to_hash_bucket_strong), which is not supported yet")
        if sparse:
            raise NotImplementedError("Hashing(sparse=True): kilnflow has dense tensors here")
        if not isinstance(num_bins, int) or num_bins < 1:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or "
                             f"non-positive values. Received: num_bins={num_bins}.")
        kwargs.setdefault("dtype", "int64" if output_mode == "int" else "float32")
        super().__init__(**kwargs)
        self.num_bins, self.mask_value, self.output_mode = num_bins, mask_value, output_mode

    def _bins(self, values: Any) -> Any:
        bins, mask = self.num_bins, None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = kmath.equal(values, convert_to_tensor(self.mask_value, values.dtype))
        if values.dtype.is_floating:
            values = kmath.cast(values, _dtypes.int64)
        if values.dtype is not _dtypes.string:
            values = as_string(values)
        out = to_hash_bucket_fast(values, bins)
        if mask is not None:
            out = array.where(mask, array.zeros_like(out), out + 1)
        return out

    def call(self, inputs: Any) -> Any:
        x = convert_to_tensor(inputs)
        if self.output_mode == "one_hot" and x.shape.rank and x.shape[-1] == 1:
            x = reshaping.squeeze(x, [-1])
        ids = self._bins(x)
        if self.output_mode == "int":
            return kmath.cast(ids, self._dtype)
        if self.output_mode == "one_hot":
            return array.one_hot(ids, self.num_bins, dtype=self._dtype)
        if ids.shape.rank == 1:
            ids = reshaping.expand_dims(ids, -1)
        counts = reduction.reduce_sum(array.one_hot(ids, self.num_bins, dtype=self._dtype), -2)
        if self.output_mode == "multi_hot":
            return kmath.cast(counts > 0, self._dtype)
        return counts

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        if self.output_mode == "int":
            return TensorShape(shape)
        return TensorShape(shape[:-1] + [self.num_bins] if shape else [self.num_bins])

    def compute_output_signature(self, input_signature: Any) -> Any:
        return TensorSpec(self.compute_output_shape(input_signature.shape), self._dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_bins": self.num_bins, "salt": None,
                "mask_value": self.mask_value, "output_mode": self.output_mode,
                "sparse": False}
