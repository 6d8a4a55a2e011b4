"""Attention layers: MultiHeadAttention, Attention (dot-product, Luong) and
AdditiveAttention (Bahdanau). Masks are boolean/0-1 tensors: 1 keeps a position; masked
scores get -1e9 before the softmax, as in Keras."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from kilnflow.keras.layers.weight_options import (kernel_and_bias_config,
                                                    set_kernel_and_bias_options)
from kilnflow.keras.layers import boundary
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import linalg
from kilnflow.ops import math as kmath
from kilnflow.ops import nn as knn
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.shapes import TensorShape

_MASK_VALUE = 1e9


def _masked_softmax(scores: Any, mask: Any) -> Any:
    if mask is not None:
        scores = scores - _MASK_VALUE * (1.0 - kmath.cast(mask, scores.dtype))
    return knn.softmax(scores, axis=-1)


def _causal_mask(t: int, s: int) -> Any:
    """[1, t, s] lower-triangular ones: query i sees keys j <= i."""
    return np.tril(np.ones((t, s), np.float32))[None]


class _Projection(Layer):
    """A kernel and bias applied to the last axis, reshaped to or from heads (Keras's
    EinsumDense in MultiHeadAttention)."""

    def __init__(self, equation: str, kernel_shape: tuple, bias_shape: Optional[tuple],
                 kernel_initializer: Any, bias_initializer: Any, kernel_regularizer: Any,
                 bias_regularizer: Any, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.equation, self.kernel_shape, self.bias_shape = equation, kernel_shape, bias_shape
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, input_shape: Any) -> None:
        self.kernel = self.add_weight("kernel", self.kernel_shape,
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None if self.bias_shape is None else self.add_weight(
            "bias", self.bias_shape, initializer=self.bias_initializer,
            regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs: Any) -> Any:
        out = linalg.einsum(self.equation, inputs, self.kernel)
        return out if self.bias is None else out + self.bias


class QueryValueAttention(Layer):
    """A layer called as (query, value, key=None) and built from all three shapes: Layer
    builds from the first input only, so the other shapes are kept for build()."""

    def _maybe_build(self, inputs: Any) -> None:
        if not self.built:
            self._build_input_shape = TensorShape(inputs.shape)
            boundary.build_named(self, inputs.shape, self._pending_value_shape,
                                 self._pending_key_shape)

    def __call__(self, query: Any, value: Any = None, key: Any = None, **kwargs: Any) -> Any:
        if value is None:
            raise TypeError(f"{self.name}: {type(self).__name__} needs `query` and `value`")
        if not self.built:  # a bad value names the layer and the argument
            for what, given in (("query", query), ("value", value), ("key", key)):
                if given is not None or what == "query":
                    boundary.check_inputs(self, given, what)
        self._pending_value_shape = getattr(value, "shape", None)
        self._pending_key_shape = getattr(key, "shape", None)
        return super().__call__(query, value, key, **kwargs)


class MultiHeadAttention(QueryValueAttention):
    """Scaled dot-product attention with `num_heads` learned projections of query, key and
    value ([batch, steps, features] each), then an output projection.

    softmax(q k^T / sqrt(key_dim) + mask) v per head; `use_causal_mask` lets step i see
    steps <= i; `return_attention_scores` also returns [batch, heads, T, S] weights.
    """

    def __init__(self, num_heads: int, key_dim: int, value_dim: Optional[int] = None,
                 dropout: float = 0.0, use_bias: bool = True, output_shape: Any = None,
                 attention_axes: Any = None, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None,
                 seed: Optional[int] = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if attention_axes is not None and tuple(np.atleast_1d(attention_axes)) not in \
                ((1,), (-2,)):
            raise NotImplementedError("MultiHeadAttention(attention_axes=) over axes other "
                                      "than the steps axis is not supported yet")
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout, self.use_bias, self.seed = float(dropout), use_bias, seed
        self._output_shape = output_shape
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer,
                                    kernel_regularizer, bias_regularizer, kernel_constraint,
                                    bias_constraint)

    def _projection(self, name: str, equation: str, kernel: tuple, bias: tuple) -> _Projection:
        return _Projection(equation, kernel, bias if self.use_bias else None,
                           self.kernel_initializer, self.bias_initializer,
                           self.kernel_regularizer, self.bias_regularizer,
                           self.kernel_constraint, self.bias_constraint, name=name,
                           dtype=self._dtype)

    def build(self, query_shape: Any, value_shape: Any = None, key_shape: Any = None) -> None:
        if isinstance(query_shape, (list, tuple)) and query_shape and \
                isinstance(query_shape[0], (list, tuple, TensorShape)):
            shapes = list(query_shape) + [None, None]
            query_shape, value_shape, key_shape = shapes[0], shapes[1], shapes[2]
        q_dim = TensorShape(query_shape)[-1]
        v_dim = TensorShape(value_shape if value_shape is not None else query_shape)[-1]
        k_dim = TensorShape(key_shape)[-1] if key_shape is not None else v_dim
        h = self.num_heads
        out = self._output_shape
        out_dim = q_dim if out is None else (out if isinstance(out, int) else tuple(out)[-1])
        self.query_dense = self._projection("query", "abc,cde->abde", (q_dim, h, self.key_dim),
                                            (h, self.key_dim))
        self.key_dense = self._projection("key", "abc,cde->abde", (k_dim, h, self.key_dim),
                                          (h, self.key_dim))
        self.value_dense = self._projection("value", "abc,cde->abde",
                                            (v_dim, h, self.value_dim), (h, self.value_dim))
        self.output_dense = self._projection("attention_output", "abcd,cde->abe",
                                             (h, self.value_dim, out_dim), (out_dim,))
        for layer in (self.query_dense, self.key_dense, self.value_dense, self.output_dense):
            layer.build(None)
        self.built = True

    def call(self, query: Any, value: Any, key: Any = None, query_mask: Any = None,
             value_mask: Any = None, key_mask: Any = None, attention_mask: Any = None,
             return_attention_scores: bool = False, training: Any = None,
             use_causal_mask: bool = False) -> Any:
        key = value if key is None else key
        q = self.query_dense(query) * (1.0 / math.sqrt(float(self.key_dim)))
        k, v = self.key_dense(key), self.value_dense(value)
        scores = linalg.einsum("aecd,abcd->acbe", k, q)  # [batch, heads, T, S]
        mask = self._mask(query, value, query_mask, value_mask, key_mask, attention_mask,
                          use_causal_mask)
        if mask is not None:
            mask = reshaping.expand_dims(mask, 1)  # shared by every head
        weights = _masked_softmax(scores, mask)
        if training and self.dropout > 0:
            weights = knn.dropout(weights, self.dropout, seed=self.seed)
        out = self.output_dense(linalg.einsum("acbe,aecd->abcd", weights, v))
        return (out, weights) if return_attention_scores else out

    def _mask(self, query: Any, value: Any, query_mask: Any, value_mask: Any, key_mask: Any,
              attention_mask: Any, causal: bool) -> Any:
        mask = None if attention_mask is None else kmath.cast(attention_mask, query.dtype)

        def combine(m: Any) -> Any:
            return m if mask is None else mask * m
        if query_mask is not None:
            mask = combine(reshaping.expand_dims(kmath.cast(query_mask, query.dtype), -1))
        for m in (value_mask, key_mask):
            if m is not None:
                mask = combine(reshaping.expand_dims(kmath.cast(m, query.dtype), -2))
        if causal:
            t, s = query.shape[1], value.shape[1]
            if t is None or s is None:
                raise ValueError("use_causal_mask needs known sequence lengths")
            mask = combine(_causal_mask(t, s))
        return mask

    def compute_output_shape(self, query_shape: Any, value_shape: Any = None,
                             key_shape: Any = None) -> TensorShape:
        shape = TensorShape(query_shape).as_list()
        out = self._output_shape
        last = shape[-1] if out is None else (out if isinstance(out, int) else tuple(out)[-1])
        return TensorShape(shape[:-1] + [last])

    def get_config(self) -> dict:
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout,
                "use_bias": self.use_bias, "output_shape": self._output_shape,
                "attention_axes": None, "seed": self.seed,
                **kernel_and_bias_config(self)}


class _BaseAttention(Layer):
    """Called on [query, value] or [query, value, key] ([batch, T, dim], [batch, S, dim]);
    `mask=[query_mask, value_mask]` drops value steps and zeroes masked query rows."""

    def __init__(self, dropout: float = 0.0, seed: Optional[int] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.dropout, self.seed = float(dropout), seed
        self.supports_masking = True

    def _scores(self, query: Any, key: Any) -> Any:
        raise NotImplementedError

    def call(self, inputs: Any, mask: Any = None, training: Any = None,
             return_attention_scores: bool = False, use_causal_mask: bool = False) -> Any:
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(f"{type(self).__name__} layer must be called on a list of "
                             f"inputs, namely [query, value] or [query, value, key]. "
                             f"Received: inputs={inputs}.")
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) == 3 else value
        scores = self._scores(query, key)
        q_mask, v_mask = (list(mask) + [None, None])[:2] if mask is not None else (None, None)
        score_mask = None
        if v_mask is not None:
            score_mask = reshaping.expand_dims(kmath.cast(v_mask, scores.dtype), -2)
        if use_causal_mask:
            causal = _causal_mask(query.shape[1], key.shape[1])
            score_mask = causal if score_mask is None else score_mask * causal
        weights = _masked_softmax(scores, score_mask)
        if training and self.dropout > 0:
            weights = knn.dropout(weights, self.dropout, seed=self.seed)
        out = linalg.matmul(weights, value)
        if q_mask is not None:
            out = out * reshaping.expand_dims(kmath.cast(q_mask, out.dtype), -1)
        return (out, weights) if return_attention_scores else out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        q, v = TensorShape(input_shape[0]).as_list(), TensorShape(input_shape[1]).as_list()
        return TensorShape(q[:-1] + v[-1:])

    def get_config(self) -> dict:
        return {**super().get_config(), "dropout": self.dropout, "seed": self.seed}


class Attention(_BaseAttention):
    """Dot-product (Luong) attention: scores = query @ key^T (times a learned scalar with
    use_scale); score_mode='concat' uses sum(tanh(query + key))."""

    def __init__(self, use_scale: bool = False, score_mode: str = "dot", dropout: float = 0.0,
                 seed: Optional[int] = None, **kwargs: Any):
        super().__init__(dropout, seed, **kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Invalid value for argument score_mode. Expected one of "
                             f"{{'dot', 'concat'}}. Received: score_mode={score_mode}")
        self.use_scale, self.score_mode = use_scale, score_mode

    def build(self, input_shape: Any) -> None:
        self.scale = self.add_weight("scale", [], initializer="ones") if self.use_scale \
            else None
        self.concat_score_weight = self.add_weight("concat_score_weight", [],
                                                   initializer="ones") \
            if self.score_mode == "concat" else None
        self.built = True

    def _scores(self, query: Any, key: Any) -> Any:
        if self.score_mode == "dot":
            scores = linalg.matmul(query, key, transpose_b=True)
            return scores * self.scale if self.scale is not None else scores
        summed = reshaping.expand_dims(query, -2) + reshaping.expand_dims(key, -3)
        if self.scale is not None:
            summed = self.scale * summed
        return self.concat_score_weight * reduction.reduce_sum(kmath.tanh(summed), -1)

    def get_config(self) -> dict:
        return {**super().get_config(), "use_scale": self.use_scale,
                "score_mode": self.score_mode}


class AdditiveAttention(_BaseAttention):
    """Additive (Bahdanau) attention: scores = sum(scale * tanh(query + key)), `scale` a
    learned vector with use_scale."""

    def __init__(self, use_scale: bool = True, dropout: float = 0.0, **kwargs: Any):
        super().__init__(dropout, **kwargs)
        self.use_scale = use_scale

    def build(self, input_shape: Any) -> None:
        dim = TensorShape(input_shape[0])[-1]
        self.scale = self.add_weight("scale", [dim], initializer="glorot_uniform") \
            if self.use_scale else None
        self.built = True

    def _scores(self, query: Any, key: Any) -> Any:
        summed = kmath.tanh(reshaping.expand_dims(query, -2) + reshaping.expand_dims(key, -3))
        if self.scale is not None:
            summed = self.scale * summed
        return reduction.reduce_sum(summed, -1)

    def get_config(self) -> dict:
        return {**super().get_config(), "use_scale": self.use_scale}


