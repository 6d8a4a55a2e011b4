"""keras.random: seeded sampling as Keras 3 does it. A `seed` is an int (the same draw on every
call), a SeedGenerator (a fresh draw per call, reproducible from its initial seed, also inside
kf.function: its state is a variable), or None (the global generator). Draws go through
kilnflow's stateless samplers, so the values are kilnflow's, not TF's; the distributions match.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

import kilnflow as kf
from kilnflow.keras import backend
from kilnflow.keras.ops.convert import standardize_dtype, to_tensor
from kilnflow.module import Module


class SeedGenerator(Module):
    """A seed source for keras.random: each `next()` gives a new [2] int32 seed and advances a
    counter variable, so `SeedGenerator(42)` yields the same stream in every run. A Module, so
    a layer holding one tracks its state as a non-trainable weight, as Keras 3 does."""

    def __init__(self, seed: Optional[int] = None, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        if seed is None:
            seed = int(np.random.randint(0, 2 ** 30))
        if not isinstance(seed, (int, np.integer)):
            raise ValueError(f"SeedGenerator: seed must be an int or None, got {seed!r}")
        super().__init__(name=name or backend.unique_object_name("seed_generator"))
        self._initial_seed = int(seed)
        with kf.init_scope():
            self.state = kf.Variable([int(seed), 0], dtype="int32", trainable=False,
                                     name="seed_generator_state")

    def next(self, ordered: bool = True) -> Any:
        """The current seed pair; the state's counter moves on by one."""
        seed = kf.identity(self.state.read_value())
        self.state.assign_add(kf.constant([0, 1], "int32"))
        return seed

    def get_config(self) -> dict:
        return {"seed": self._initial_seed}

    @classmethod
    def from_config(cls, config: dict) -> "SeedGenerator":
        return cls(**config)


class _Global:
    generator: Optional[SeedGenerator] = None


def global_seed_generator() -> SeedGenerator:
    if _Global.generator is None:
        _Global.generator = SeedGenerator(int(backend.rng().integers(0, 2 ** 30)),
                                          name="global_seed_generator")
    return _Global.generator


def draw_seed(seed: Any) -> Any:
    """A [2] int32 seed tensor for the stateless samplers from Keras's seed argument."""
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if seed is None:
        return global_seed_generator().next()
    if isinstance(seed, (int, np.integer)):
        return kf.constant([int(seed), 0], "int32")
    t = to_tensor(seed, "int32")
    if t.shape.rank == 0:
        return kf.stack([t, kf.constant(0, "int32")])
    return t


def _dt(dtype: Any) -> str:
    return standardize_dtype(dtype) or backend.floatx()


def _shape(shape: Any) -> Any:
    return list(shape) if isinstance(shape, (tuple, list)) else shape


def normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
           seed: Any = None) -> Any:
    """Samples from N(mean, stddev**2)."""
    return kf.random.stateless_normal(_shape(shape), draw_seed(seed), mean, stddev,
                                      dtype=_dt(dtype))


def uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
            seed: Any = None) -> Any:
    """Samples from U[minval, maxval)."""
    dt = _dt(dtype)
    if not kf.as_dtype(dt).is_floating:
        raise ValueError(f"uniform: dtype must be a float dtype (use randint for integers), "
                         f"got {dt}")
    return kf.random.stateless_uniform(_shape(shape), draw_seed(seed), minval, maxval, dtype=dt)


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: Any = None) -> Any:
    """Normal samples redrawn until within two standard deviations of the mean."""
    z = kf.random.stateless_truncated_normal(_shape(shape), draw_seed(seed), dtype=_dt(dtype))
    return z * kf.cast(stddev, _dt(dtype)) + kf.cast(mean, _dt(dtype))


def randint(shape: Any, minval: int, maxval: int, dtype: Any = "int32",
            seed: Any = None) -> Any:
    """Integers uniform in [minval, maxval)."""
    dt = standardize_dtype(dtype)
    out = kf.random.stateless_uniform(_shape(shape), draw_seed(seed), minval, maxval,
                                      dtype="int64" if dt not in ("int32", "int64") else dt)
    return kf.cast(out, dt)


def categorical(logits: Any, num_samples: int, dtype: Any = "int32", seed: Any = None) -> Any:
    """Class indices drawn from each row's softmax(logits)."""
    out = kf.random.stateless_categorical(to_tensor(logits), num_samples, draw_seed(seed),
                                          dtype="int64")
    return kf.cast(out, standardize_dtype(dtype))


def dropout(inputs: Any, rate: float, noise_shape: Any = None, seed: Any = None) -> Any:
    """inputs with entries zeroed with probability `rate`, the rest scaled by 1 / (1 - rate)."""
    x = to_tensor(inputs)
    if not x.dtype.is_floating:
        x = kf.cast(x, backend.floatx())
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
    shape = kf.shape(x) if noise_shape is None else [
        d if d is not None else kf.shape(x)[i] for i, d in enumerate(noise_shape)]
    u = kf.random.stateless_uniform(shape, draw_seed(seed), dtype=x.dtype)
    keep = kf.cast(kf.greater_equal(u, rate), x.dtype)
    return x * keep / kf.cast(1.0 - rate, x.dtype)


def shuffle(x: Any, axis: int = 0, seed: Any = None) -> Any:
    """x with its slices along `axis` in a random order."""
    x = to_tensor(x)
    n = kf.shape(x)[axis]
    keys = kf.random.stateless_uniform(kf.reshape(n, [1]), draw_seed(seed))
    return kf.gather(x, kf.argsort(keys), axis=axis)


def gamma(shape: Any, alpha: float, dtype: Any = None, seed: Any = None) -> Any:
    """Samples from Gamma(alpha, 1)."""
    dt = _dt(dtype)
    return kf.random.stateless_gamma(_shape(shape), draw_seed(seed), kf.cast(alpha, dt),
                                     dtype=dt)


def beta(shape: Any, alpha: float, beta: float, dtype: Any = None, seed: Any = None) -> Any:
    """Samples from Beta(alpha, beta), as Ga / (Ga + Gb)."""
    dt = _dt(dtype)
    s = draw_seed(seed)
    ga = kf.random.stateless_gamma(_shape(shape), s, kf.cast(alpha, dt), dtype=dt)
    gb = kf.random.stateless_gamma(_shape(shape), s + kf.constant([1, 7919], "int32"),
                                   kf.cast(beta, dt), dtype=dt)
    return ga / (ga + gb)


def binomial(shape: Any, counts: Any, probabilities: Any, dtype: Any = None,
             seed: Any = None) -> Any:
    """Samples from Binomial(counts, probabilities), as floats (floatx) by default."""
    dt = _dt(dtype)
    out = kf.random.stateless_binomial(_shape(shape), draw_seed(seed),
                                       kf.cast(counts, "float32"),
                                       kf.cast(probabilities, "float32"), output_dtype="int32")
    return kf.cast(out, dt)
