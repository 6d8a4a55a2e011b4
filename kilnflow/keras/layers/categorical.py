"""Categorical preprocessing: CategoryEncoding (one-hot, multi-hot, counts), Discretization
(bucket indices from boundaries or adapted quantiles) and IntegerLookup (a vocabulary of
integers to indices, with mask and out-of-vocabulary slots, or back with invert=True)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array, checks
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.ops import slicing
from kilnflow.ops import sorting
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape


class CategoryEncoding(Layer):
    """Integer tokens in [0, num_tokens) to vectors: 'one_hot' (one per token),
    'multi_hot' (1 where a token occurs in the example) or 'count' (occurrences)."""

    def __init__(self, num_tokens: Optional[int] = None, output_mode: str = "multi_hot",
                 sparse: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if output_mode not in ("one_hot", "multi_hot", "count"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of "
                             "tokens is not known beforehand, use the IntegerLookup layer "
                             "instead.")
        if sparse:
            raise NotImplementedError("CategoryEncoding(sparse=True): kilnflow has dense "
                                      "tensors only")
        self.num_tokens, self.output_mode = int(num_tokens), output_mode

    def call(self, inputs: Any, count_weights: Any = None) -> Any:
        ids = kmath.cast(inputs, _dtypes.int32)
        # TF counts with DenseBincount, which refuses negative ids (one_hot gave zeros)
        checks.assert_non_negative(ids, message=f"Layer '{self.name}' (CategoryEncoding): "
                                   f"`inputs` must be non-negative")
        if self.output_mode == "one_hot":
            if ids.shape.rank and ids.shape.rank > 1 and ids.shape[-1] == 1:
                ids = reshaping.squeeze(ids, [-1])
            return array.one_hot(ids, self.num_tokens, dtype=self._dtype)
        if ids.shape.rank == 1:
            ids = reshaping.expand_dims(ids, -1)  # one token per example
        hot = array.one_hot(ids, self.num_tokens, dtype=self._dtype)
        if count_weights is not None:
            hot = hot * reshaping.expand_dims(kmath.cast(count_weights, self._dtype), -1)
        counts = reduction.reduce_sum(hot, -2)
        if self.output_mode == "multi_hot":
            return kmath.cast(counts > 0, self._dtype)
        return counts

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        if self.output_mode == "one_hot" and not (len(shape) > 1 and shape[-1] == 1):
            return TensorShape(shape + [self.num_tokens])
        return TensorShape(shape[:-1] + [self.num_tokens] if len(shape) > 1
                           else shape + [self.num_tokens])

    def get_config(self) -> dict:
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode, "sparse": False}


class Discretization(Layer):
    """The bucket index of each value: i where boundaries[i-1] <= x < boundaries[i] (0
    below the first boundary). `adapt(data)` picks num_bins - 1 quantile boundaries."""

    def __init__(self, bin_boundaries: Any = None, num_bins: Optional[int] = None,
                 epsilon: float = 0.01, output_mode: str = "int", sparse: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        if output_mode != "int":
            raise NotImplementedError("Discretization supports output_mode='int' only; "
                                      "follow it with CategoryEncoding for one-hot outputs")
        if bin_boundaries is not None and num_bins is not None and \
                len(bin_boundaries) != num_bins - 1:  # both given: they must agree
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. "
                             f"Received: num_bins={num_bins} and "
                             f"bin_boundaries={bin_boundaries}")
        self.bin_boundaries = None if bin_boundaries is None else \
            [float(b) for b in bin_boundaries]
        self.num_bins, self.epsilon, self.output_mode = num_bins, epsilon, output_mode

    def adapt(self, data: Any, batch_size: Any = None, steps: Any = None) -> None:
        if self.num_bins is None:
            raise ValueError("Discretization.adapt needs `num_bins`")
        values = np.asarray(data, np.float64).reshape(-1)
        qs = np.linspace(0, 1, self.num_bins + 1)[1:-1]
        self.bin_boundaries = [float(b) for b in np.quantile(values, qs)]

    def call(self, inputs: Any) -> Any:
        if self.bin_boundaries is None:
            raise ValueError(f"{self.name}: set `bin_boundaries` or call adapt() first")
        bounds = convert_to_tensor(np.asarray([self.bin_boundaries], np.float64))
        values = kmath.cast(inputs, _dtypes.float64)
        flat = reshaping.reshape(values, [1, -1])
        index = sorting.searchsorted(bounds, flat, side="right", out_type=_dtypes.int64)
        return reshaping.reshape(index, array.shape(inputs))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def compute_output_signature(self, input_signature: Any) -> Any:
        from kilnflow.shapes import TensorSpec
        return TensorSpec(input_signature.shape, _dtypes.int64)

    def get_config(self) -> dict:
        return {**super().get_config(), "bin_boundaries": self.bin_boundaries,
                "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode}


class IntegerLookup(Layer):
    """Integer tokens to indices: the mask token (if any) -> 0, unknown tokens -> the
    num_oov_indices slots next, then the vocabulary in order. `adapt(data)` builds the
    vocabulary by descending frequency; invert=True maps indices back to tokens."""
    supports_jit = False  # as in Keras 3: compile(jit_compile=True) warns and runs without

    def __init__(self, max_tokens: Optional[int] = None, num_oov_indices: int = 1,
                 mask_token: Optional[int] = None, oov_token: int = -1, vocabulary: Any = None,
                 vocabulary_dtype: str = "int64", idf_weights: Any = None,
                 invert: bool = False, output_mode: str = "int", sparse: bool = False,
                 pad_to_max_tokens: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if output_mode != "int":
            raise NotImplementedError("IntegerLookup supports output_mode='int' only")
        if num_oov_indices > 1:
            raise NotImplementedError("IntegerLookup(num_oov_indices > 1) hashes tokens into "
                                      "OOV slots, which is not supported yet")
        self.max_tokens, self.num_oov_indices = max_tokens, int(num_oov_indices)
        self.mask_token, self.oov_token, self.invert = mask_token, oov_token, invert
        self.vocabulary_dtype, self.output_mode = vocabulary_dtype, output_mode
        self._vocab = None if vocabulary is None else [int(v) for v in vocabulary]

    def adapt(self, data: Any, batch_size: Any = None, steps: Any = None) -> None:
        values = np.asarray(data).reshape(-1).astype(np.int64)
        if self.mask_token is not None:
            values = values[values != self.mask_token]
        tokens, counts = np.unique(values, return_counts=True)
        order = np.lexsort((-tokens, -counts))  # most frequent first, then larger token
        vocab = [int(t) for t in tokens[order]]
        reserved = self.num_oov_indices + (self.mask_token is not None)
        if self.max_tokens is not None:
            vocab = vocab[:max(self.max_tokens - reserved, 0)]
        self._vocab = vocab

    def get_vocabulary(self) -> list:
        """[mask token,] OOV token(s), then the vocabulary: entry i is index i's token."""
        head = [] if self.mask_token is None else [self.mask_token]
        return head + [self.oov_token] * self.num_oov_indices + list(self._vocab or [])

    def vocabulary_size(self) -> int:
        return len(self.get_vocabulary())

    def call(self, inputs: Any) -> Any:
        if self._vocab is None:
            raise ValueError(f"{self.name}: pass `vocabulary` or call adapt() first")
        table = convert_to_tensor(np.asarray(self.get_vocabulary(), np.int64))
        if self.invert:
            return slicing.gather(table, kmath.cast(inputs, _dtypes.int64))
        ids = kmath.cast(inputs, _dtypes.int64)
        first = (self.mask_token is not None) + self.num_oov_indices
        vocab = table[first:]
        hits = kmath.equal(reshaping.expand_dims(ids, -1), vocab)
        found = reduction.reduce_any(hits, -1)
        index = reduction.argmax(kmath.cast(hits, _dtypes.int32), -1) + first
        oov_index = 1 if self.mask_token is not None else 0  # the slot after the mask
        oov = array.fill(array.shape(ids), np.int64(oov_index))
        out = array.where(found, index, oov)
        if self.mask_token is not None:
            out = array.where(kmath.equal(ids, self.mask_token), array.zeros_like(out), out)
        return out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def compute_output_signature(self, input_signature: Any) -> Any:
        from kilnflow.shapes import TensorSpec
        return TensorSpec(input_signature.shape, _dtypes.int64)

    def get_config(self) -> dict:
        return {**super().get_config(), "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "mask_token": self.mask_token,
                "oov_token": self.oov_token, "vocabulary": self._vocab,
                "vocabulary_dtype": self.vocabulary_dtype, "invert": self.invert,
                "output_mode": self.output_mode}
