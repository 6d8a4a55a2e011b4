"""ReversibleEmbedding: an Embedding that can also run in reverse, projecting hidden
vectors back to vocabulary logits (`layer(h, reverse=True)`), with the embedding matrix's
transpose (tie_weights=True) or a separate [output_dim, input_dim] matrix; an optional
`logit_soft_cap` squashes the logits as c * tanh(logits / c)."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras import constraints as _constraints
from kilnflow.keras.layers.core import Embedding
from kilnflow.ops import linalg, math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape


class ReversibleEmbedding(Embedding):
    """Embedding whose `call(inputs, reverse=True)` maps [..., output_dim] to logits
    [..., input_dim]."""

    def _output_specs_for(self, args: tuple, kwargs: dict) -> Any:
        # The output depends on `reverse`: found by tracing call, not from the input alone.
        return self._trace_specs(args, kwargs)

    def __init__(self, input_dim: int, output_dim: int, tie_weights: bool = True,
                 embeddings_initializer: Any = "uniform", embeddings_regularizer: Any = None,
                 embeddings_constraint: Any = None, mask_zero: bool = False,
                 reverse_dtype: Any = None, logit_soft_cap: Optional[float] = None,
                 **kwargs: Any):
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer, mask_zero=mask_zero,
                         **kwargs)
        self.embeddings_constraint = _constraints.get(embeddings_constraint)
        self.tie_weights = bool(tie_weights)
        self.reverse_dtype, self.logit_soft_cap = reverse_dtype, logit_soft_cap

    def build(self, input_shape: Any = None) -> None:
        super().build(input_shape)
        if self.embeddings_constraint is not None:
            self.embeddings.constraint = self.embeddings_constraint
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                "reverse_embeddings", [self.output_dim, self.input_dim],
                initializer=self.embeddings_initializer)
        self.built = True

    def call(self, inputs: Any, reverse: bool = False) -> Any:
        if not reverse:
            return super().call(inputs)
        kernel = convert_to_tensor(self.embeddings if self.tie_weights
                                   else self.reverse_embeddings)
        if self.reverse_dtype is not None:
            inputs = kmath.cast(inputs, self.reverse_dtype)
            kernel = kmath.cast(kernel, self.reverse_dtype)
        rank = inputs.shape.rank
        if rank is not None and rank > 2:
            from kilnflow.ops import reshaping, array, joining
            flat = reshaping.reshape(inputs, [-1, inputs.shape[-1]])
            logits = linalg.matmul(flat, kernel, transpose_b=self.tie_weights)
            lead = array.shape(inputs)[:-1]
            logits = reshaping.reshape(logits, joining.concat(
                [lead, convert_to_tensor([self.input_dim], dtype=lead.dtype)], 0))
            logits.set_shape(inputs.shape[:-1].concatenate([self.input_dim]))
        else:
            logits = linalg.matmul(inputs, kernel, transpose_b=self.tie_weights)
        if self.logit_soft_cap is not None:
            cap = float(self.logit_soft_cap)
            logits = kmath.tanh(logits / cap) * cap
        return logits

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if inputs.dtype.is_floating:  # reverse mode: logits carry no mask
            return None
        return super().compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape: Any, reverse: bool = False) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        return TensorShape(shape[:-1] + [self.input_dim] if reverse
                           else shape + [self.output_dim])

    def get_config(self) -> dict:
        return {**super().get_config(), "tie_weights": self.tie_weights,
                "reverse_dtype": self.reverse_dtype, "logit_soft_cap": self.logit_soft_cap,
                "embeddings_constraint": _constraints.serialize(self.embeddings_constraint)}
