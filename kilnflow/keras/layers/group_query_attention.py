"""GroupQueryAttention (Keras 3's GroupedQueryAttention): multi-head attention whose
`num_query_heads` query heads share `num_key_value_heads` key/value heads (each key/value
head serves num_query_heads / num_key_value_heads query heads), as in Llama 2 / Mistral.

Projections are EinsumDense sublayers named as Keras names them (query, key, [gate],
value, attention_output), built in that order so the weights line up with Keras's.
Masks (query/value/key masks, attention_mask, use_causal_mask, sliding_window) combine by
logical AND; masked scores get -1e9 before the softmax.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from kilnflow.keras import constraints as _constraints
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.keras.layers.attention import QueryValueAttention
from kilnflow.keras.layers.transformer_parts import EinsumDense
from kilnflow.ops import array, linalg, math as kmath, nn as knn, reshaping
from kilnflow.ops.array_extra import repeat
from kilnflow.shapes import TensorShape

_MASK_VALUE = 1e9


class GroupQueryAttention(QueryValueAttention):
    """Grouped-query attention over [batch, steps, features] query / value (/ key)."""

    def __init__(self, head_dim: int, num_query_heads: int, num_key_value_heads: int,
                 dropout: float = 0.0, use_bias: bool = True,
                 sliding_window: Optional[int] = None, flash_attention: Any = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, use_gate: bool = False,
                 seed: Optional[int] = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        if sliding_window is not None and (not isinstance(sliding_window, int)
                                           or sliding_window <= 0):
            raise ValueError("`sliding_window` must be `None` or a positive integer. "
                             f"Received: sliding_window={sliding_window}")
        self.supports_masking = True
        self.head_dim, self.num_query_heads = int(head_dim), int(num_query_heads)
        self.num_key_value_heads = int(num_key_value_heads)
        self.num_repeats = self.num_query_heads // self.num_key_value_heads
        self.dropout, self.use_bias, self.use_gate = float(dropout), use_bias, use_gate
        self.sliding_window, self.flash_attention, self.seed = sliding_window, flash_attention, \
            seed
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.kernel_regularizer = _regularizers.get(kernel_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)

    def _dense(self, name: str, equation: str, output_shape: tuple, bias_axes: str,
               activation: Any = None) -> EinsumDense:
        return EinsumDense(equation, output_shape, activation=activation,
                           bias_axes=bias_axes if self.use_bias else None,
                           kernel_initializer=self.kernel_initializer,
                           bias_initializer=self.bias_initializer,
                           kernel_regularizer=self.kernel_regularizer,
                           bias_regularizer=self.bias_regularizer,
                           kernel_constraint=self.kernel_constraint,
                           bias_constraint=self.bias_constraint, name=name, dtype=self._dtype)

    def build(self, query_shape: Any, value_shape: Any = None, key_shape: Any = None) -> None:
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        self.feature_dim = TensorShape(query_shape)[-1]
        q_heads, kv_heads, d = self.num_query_heads, self.num_key_value_heads, self.head_dim
        self._query_dense = self._dense("query", "bqm,muh->bquh", (None, q_heads, d), "uh")
        self._query_dense.build(query_shape)
        self._key_dense = self._dense("key", "bkm,mvh->bkvh", (None, kv_heads, d), "vh")
        self._key_dense.build(key_shape)
        if self.use_gate:
            self._gate_dense = self._dense("gate", "bqm,muh->bquh", (None, q_heads, d), "uh",
                                           activation="sigmoid")
            self._gate_dense.build(query_shape)
        self._value_dense = self._dense("value", "bkm,mvh->bkvh", (None, kv_heads, d), "vh")
        self._value_dense.build(value_shape)
        self._output_dense = self._dense("attention_output", "bquh,uhm->bqm",
                                         (None, self.feature_dim), "m")
        self._output_dense.build((None, None, q_heads, d))
        self.built = True

    def _attention_mask(self, query: Any, value: Any, query_mask: Any, value_mask: Any,
                        key_mask: Any, attention_mask: Any, causal: bool) -> Any:
        """[batch or 1, T, S] bools (or None): every given mask ANDed."""
        masks = [] if attention_mask is None else [kmath.cast(attention_mask, "bool")]
        if query_mask is not None:
            masks.append(reshaping.expand_dims(kmath.cast(query_mask, "bool"), -1))
        for m in (value_mask, key_mask):
            if m is not None:
                masks.append(reshaping.expand_dims(kmath.cast(m, "bool"), -2))
        t, s = query.shape[1], value.shape[1]
        if (causal or self.sliding_window is not None) and (t is None or s is None):
            raise ValueError("GroupQueryAttention: causal and sliding-window masks need known "
                             "sequence lengths")
        rows, cols = np.arange(t or 0)[:, None], np.arange(s or 0)[None, :]
        if causal:
            masks.append(array.identity(np.asarray((rows >= cols)[None])))
        if self.sliding_window is not None:
            masks.append(array.identity(np.asarray((np.abs(rows - cols) <
                                                    self.sliding_window)[None])))
        if not masks:
            return None
        mask = masks[0]
        for m in masks[1:]:
            mask = kmath.logical_and(mask, m)
        return mask

    def call(self, query: Any, value: Any, key: Any = None, query_mask: Any = None,
             value_mask: Any = None, key_mask: Any = None, attention_mask: Any = None,
             return_attention_scores: bool = False, training: Any = None,
             use_causal_mask: bool = False) -> Any:
        key = value if key is None else key
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask,
                                    attention_mask, use_causal_mask)
        gate = self._gate_dense(query) if self.use_gate else None
        q = self._query_dense(query)
        k = repeat(self._key_dense(key), self.num_repeats, axis=2)
        v = repeat(self._value_dense(value), self.num_repeats, axis=2)
        q = q * (1.0 / math.sqrt(float(self.head_dim)))
        scores = linalg.einsum("bquh,bkuh->buqk", q, k)
        if mask is not None:
            mask = reshaping.expand_dims(kmath.cast(mask, scores.dtype), 1)  # every head
            scores = scores - _MASK_VALUE * (1.0 - mask)
        scores = knn.softmax(scores, axis=-1)
        dropped = scores
        if training and self.dropout > 0:
            dropped = knn.dropout(scores, self.dropout, seed=self.seed)
        out = linalg.einsum("buqk,bkuh->bquh", dropped, v)
        out = self._output_dense(out * gate if gate is not None else out)
        return (out, scores) if return_attention_scores else out

    def compute_output_shape(self, query_shape: Any, value_shape: Any = None,
                             key_shape: Any = None) -> TensorShape:
        return TensorShape(query_shape)

    def get_config(self) -> dict:
        ser_i, ser_r = _initializers.serialize, _regularizers.serialize
        return {**super().get_config(), "head_dim": self.head_dim,
                "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads, "use_bias": self.use_bias,
                "use_gate": self.use_gate, "dropout": self.dropout,
                "sliding_window": self.sliding_window, "flash_attention": self.flash_attention,
                "kernel_initializer": ser_i(self.kernel_initializer),
                "bias_initializer": ser_i(self.bias_initializer),
                "kernel_regularizer": ser_r(self.kernel_regularizer),
                "bias_regularizer": ser_r(self.bias_regularizer),
                "kernel_constraint": _constraints.serialize(self.kernel_constraint),
                "bias_constraint": _constraints.serialize(self.bias_constraint),
                "seed": self.seed}
