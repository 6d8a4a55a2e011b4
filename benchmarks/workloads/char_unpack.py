"""char_unpack: seed 001's CharUnpack layer, bytes -> bits as float32.

uint8 [B, 400] -> expand_dims -> right_shift by [7..0] -> bitwise_and 1 -> reshape
[B, 3200] -> cast float32, for B = 64 (dispatch-bound) and B = 8192 (memory-bound).
The floor is the same op sequence written in NumPy; np.unpackbits (one C loop) is shown
for reference. Issue 5's target: under @kf.function no slower than the NumPy sequence.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from benchmarks.workloads import _common

NAME = "char_unpack"
DESCRIPTION = "seed 001's bit-unpack layer: uint8 [B,400] -> float32 [B,3200], B=64 and 8192"
WIDTH = 400


class CharUnpack:
    """The seed's layer without Keras: constants made once, call() as in the seed."""

    def __init__(self) -> None:
        self._shifting_range = kf.reshape(
            kf.cast(kf.range(7, -1, -1), kf.uint8), (1, 1, 8))
        self._selection_bit = kf.constant(0x01, dtype=kf.uint8)

    def __call__(self, inputs):
        return kf.cast(
            kf.reshape(
                kf.bitwise.bitwise_and(
                    kf.bitwise.right_shift(kf.expand_dims(inputs, 2), self._shifting_range),
                    self._selection_bit),
                [-1, inputs.shape[1] * 8]),
            kf.float32)


_SHIFTS = np.arange(7, -1, -1).astype(np.uint8).reshape(1, 1, 8)
_ONE = np.uint8(1)


def numpy_unpack(x: np.ndarray) -> np.ndarray:
    """The same sequence in NumPy: what a NumPy user writes for this layer."""
    bits = np.bitwise_and(np.right_shift(np.expand_dims(x, 2), _SHIFTS), _ONE)
    return bits.reshape(-1, x.shape[1] * 8).astype(np.float32)


def cases(config: Config) -> Iterator[Case]:
    rng = np.random.default_rng(1)
    for batch in config.pick((64, 8192), (64, 8192), (4, 16)):
        yield _case(rng.integers(0, 256, (batch, WIDTH), dtype=np.uint8))


def _case(x_np: np.ndarray) -> Case:
    x = kf.constant(x_np)
    layer = CharUnpack()
    compiled = kf.function(layer.__call__)
    expected = numpy_unpack(x_np)
    np.testing.assert_array_equal(layer(x).numpy(), expected)
    np.testing.assert_array_equal(_common.quiet(compiled)(x).numpy(), expected)
    np.testing.assert_array_equal(np.unpackbits(x_np, axis=1).astype(np.float32), expected)
    return Case(
        f"CharUnpack B={x_np.shape[0]}",
        [Variant("NumPy same op sequence", lambda: numpy_unpack(x_np)),
         Variant("NumPy np.unpackbits (reference)",
                 lambda: np.unpackbits(x_np, axis=1).astype(np.float32)),
         Variant("kilnflow eager", lambda: layer(x)),
         Variant("kilnflow function", lambda: compiled(x))]
        + _common.peer_variants(_peers(x_np)),
        floor="NumPy same op sequence",
        targets=[Target(f"B={x_np.shape[0]}: @kf.function no slower than the NumPy sequence",
                        "kilnflow function", "ratio", 1.0)],
        notes=[_common.peers_note()])


def _peers(x_np: np.ndarray) -> list:
    def tf_function(tf):
        shifts = tf.reshape(tf.cast(tf.range(7, -1, -1), tf.uint8), (1, 1, 8))
        bit = tf.constant(1, dtype=tf.uint8)

        @tf.function
        def f(x):
            return tf.cast(tf.reshape(tf.bitwise.bitwise_and(
                tf.bitwise.right_shift(tf.expand_dims(x, 2), shifts), bit),
                [-1, x.shape[1] * 8]), tf.float32)
        x = tf.constant(x_np)
        f(x)
        return lambda: f(x)

    def jax_jit(jax):
        jnp = jax.numpy
        shifts = jnp.asarray(_SHIFTS)

        @jax.jit
        def f(x):
            bits = jnp.bitwise_and(jnp.right_shift(x[:, :, None], shifts), jnp.uint8(1))
            return bits.reshape(x.shape[0], -1).astype(jnp.float32)
        x = jnp.asarray(x_np)
        f(x).block_until_ready()
        return lambda: f(x).block_until_ready()

    def torch_eager(torch):
        shifts = torch.from_numpy(_SHIFTS.copy())
        x = torch.from_numpy(x_np.copy())
        return lambda: torch.bitwise_and(
            torch.bitwise_right_shift(x.unsqueeze(2), shifts), 1
        ).reshape(x.shape[0], -1).to(torch.float32)

    return [("TensorFlow tf.function", "tensorflow", tf_function),
            ("JAX jax.jit", "jax", jax_jit),
            ("PyTorch eager", "torch", torch_eager)]
