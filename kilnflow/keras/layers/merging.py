"""Dot: the batchwise dot product of two tensors along given axes (optionally of their
L2-normalized forms, i.e. cosine similarity)."""
from __future__ import annotations

from typing import Any, Sequence

from kilnflow.keras.layers.base import Layer
from kilnflow.ops import linalg
from kilnflow.ops import nn as knn
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.shapes import TensorShape


class Dot(Layer):
    """Dot([a, b]) contracts axis axes[0] of a with axes[1] of b, per example: [batch, n]
    pairs give [batch, 1]; [batch, T, d] and [batch, S, d] with axes=2 give [batch, T, S]."""

    def __init__(self, axes: Any, normalize: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.axes = axes if isinstance(axes, int) else tuple(int(a) for a in axes)
        self.normalize = normalize

    def _axes(self, a: Any, b: Any) -> tuple:
        axes = (self.axes, self.axes) if isinstance(self.axes, int) else self.axes
        for axis, x in zip(axes, (a, b)):
            if not -x.shape.rank < axis < x.shape.rank or axis % x.shape.rank == 0:
                raise ValueError(f"Dot: cannot perform batch_dot over `axes` {self.axes} for "
                                 f"an input of rank {x.shape.rank} (axis 0 is the batch)")
        return axes[0] % a.shape.rank, axes[1] % b.shape.rank

    def call(self, inputs: Sequence) -> Any:
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs")
        a, b = inputs
        ax_a, ax_b = self._axes(a, b)
        if self.normalize:
            a, b = knn.l2_normalize(a, ax_a), knn.l2_normalize(b, ax_b)
        ra, rb = a.shape.rank, b.shape.rank
        if ra == 2 and rb == 2:
            return reduction.reduce_sum(a * b, -1, keepdims=True)
        if ra == 3 and rb == 3:
            a = reshaping.transpose(a, [0, 1, 2] if ax_a == 2 else [0, 2, 1])  # contract last
            b = reshaping.transpose(b, [0, 1, 2] if ax_b == 1 else [0, 2, 1])  # contract middle
            return linalg.matmul(a, b)
        raise NotImplementedError(f"Dot on inputs of rank {ra} and {rb} is not supported yet "
                                  "(rank 2 with rank 2, or rank 3 with rank 3)")

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        a, b = TensorShape(input_shape[0]).as_list(), TensorShape(input_shape[1]).as_list()
        if len(a) == 2:
            return TensorShape([a[0], 1])
        axes = (self.axes, self.axes) if isinstance(self.axes, int) else self.axes
        ax_a, ax_b = axes[0] % 3, axes[1] % 3
        free_a = [d for i, d in enumerate(a) if i not in (0, ax_a)]
        free_b = [d for i, d in enumerate(b) if i not in (0, ax_b)]
        return TensorShape([a[0]] + free_a + free_b)

    def get_config(self) -> dict:
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}
