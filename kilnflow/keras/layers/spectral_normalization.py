"""SpectralNormalization: a Wrapper that divides the wrapped layer's kernel (or embeddings)
by its largest singular value, estimated by power iteration (Miyato et al., 2018).

As in Keras 3, the normalisation happens in training calls only: each one runs
`power_iterations` steps from the stored vector `vector_u` (a non-trainable weight), then
assigns the new vector and the normalised kernel; inference calls use the kernel as it is.
"""
from __future__ import annotations

from typing import Any

from kilnflow.keras import initializers as _initializers
from kilnflow.keras.layers.layer_utils import InputSpec, Wrapper
from kilnflow.ops import array, linalg, math as kmath, reduction, reshaping
from kilnflow.ops import cond as cond_ops
from kilnflow.ops.convert import convert_to_tensor

_EPSILON = 1e-7


def _normalize(x: Any) -> Any:
    """x / max(||x||, epsilon) over all elements (keras.ops.normalize with axis=None)."""
    norm = kmath.sqrt(reduction.reduce_sum(x * x))
    return x / kmath.maximum(norm, _EPSILON)


class SpectralNormalization(Wrapper):
    """Spectral normalisation of a layer with a `kernel` or `embeddings` weight.

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> sn = keras.layers.SpectralNormalization(keras.layers.Dense(3))
    >>> sn(kf.ones([2, 4]), training=True).shape
    TensorShape([2, 3])
    """

    def __init__(self, layer: Any, power_iterations: int = 1, **kwargs: Any):
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError("`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = int(power_iterations)

    def build(self, input_shape: Any) -> None:
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: list(input_shape)[-1]})
        if hasattr(self.layer, "kernel"):
            self.kernel = self.layer.kernel
        elif hasattr(self.layer, "embeddings"):
            self.kernel = self.layer.embeddings
        else:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' "
                             "nor 'embeddings'")
        self.kernel_shape = tuple(self.kernel.shape.as_list())
        self.vector_u = self.add_weight(
            "vector_u", (1, self.kernel_shape[-1]),
            initializer=_initializers.TruncatedNormal(stddev=0.02), trainable=False,
            dtype=self.kernel.dtype)
        self.built = True

    @property
    def weights(self) -> list:
        """Keras 3's order: the wrapper's own variables (the kernel it tracks, vector_u), then
        the wrapped layer's others."""
        if not self.built:
            return self.layer.weights
        seen, out = set(), []
        for v in [self.kernel, self.vector_u] + list(self.layer.weights):
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return out

    variables = weights

    def normalized_weights(self) -> tuple:
        """(new vector_u, the kernel divided by its estimated spectral norm)."""
        kernel = convert_to_tensor(self.kernel)
        weights = reshaping.reshape(kernel, [-1, self.kernel_shape[-1]])
        u = convert_to_tensor(self.vector_u)
        v = u
        for _ in range(self.power_iterations):
            v = _normalize(linalg.matmul(u, weights, transpose_b=True))
            u = _normalize(linalg.matmul(v, weights))
        u, v = array.stop_gradient(u), array.stop_gradient(v)
        sigma = linalg.matmul(linalg.matmul(v, weights), u, transpose_b=True)
        return u, reshaping.reshape(kernel / sigma, self.kernel_shape)

    def call(self, inputs: Any, training: Any = False) -> Any:
        if training:
            kernel = convert_to_tensor(self.kernel)
            all_zero = reduction.reduce_all(kmath.equal(kernel, 0.0))
            new_u, new_kernel = cond_ops.cond(
                all_zero, lambda: (convert_to_tensor(self.vector_u), kernel),
                self.normalized_weights)
            self.vector_u.assign(new_u)
            self.kernel.assign(new_kernel)
        out = self.layer(inputs)
        return out if out.dtype == inputs.dtype else kmath.cast(out, inputs.dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return self.layer.compute_output_shape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "power_iterations": self.power_iterations}
