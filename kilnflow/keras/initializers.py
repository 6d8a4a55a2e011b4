"""Weight initializers: `init(shape, dtype) -> tensor`, drawn with NumPy.

Initial values are constants, so NumPy draws them directly (from the generator in
keras.backend, or a per-initializer one when `seed` is given); the variable then owns
the value in eager, @kf.function and compat.v1 graph mode alike.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.keras import backend
from kilnflow.ops.convert import constant


def _dtype(dtype: Any) -> _dtypes.DType:
    return _dtypes.as_dtype(dtype or backend.floatx())


def compute_fans(shape: Any) -> tuple:
    """(fan_in, fan_out) of a weight shape: Dense [in, out], Conv2D [h, w, in, out]."""
    shape = tuple(int(d) for d in shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: subclasses implement `__call__(shape, dtype=None)` and get_config()."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Initializer":
        return cls(**config)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.get_config()})"


class _Seeded(Initializer):
    def __init__(self, seed: Optional[int] = None):
        self.seed = seed
        self._rng = np.random.default_rng(seed) if seed is not None else None

    def _generator(self) -> np.random.Generator:
        return self._rng if self._rng is not None else backend.rng()

    def _finish(self, values: np.ndarray, dtype: Any) -> Any:
        dtype = _dtype(dtype)
        if not dtype.is_floating:
            raise ValueError(f"{type(self).__name__} only makes floating values, got dtype "
                             f"{dtype.name}")
        return constant(values.astype(dtype.as_numpy_dtype))


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return constant(np.zeros(tuple(shape), _dtype(dtype).as_numpy_dtype))


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return constant(np.ones(tuple(shape), _dtype(dtype).as_numpy_dtype))


class Constant(Initializer):
    """Every element equal to `value` (a scalar, or an array of the weight's shape)."""

    def __init__(self, value: Any = 0):
        self.value = value

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        value = np.asarray(self.value, _dtype(dtype).as_numpy_dtype)
        return constant(np.broadcast_to(value, tuple(shape)).copy())

    def get_config(self) -> dict:
        value = self.value
        return {"value": value.tolist() if isinstance(value, np.ndarray) else value}


class RandomNormal(_Seeded):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Optional[int] = None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return self._finish(self._generator().normal(self.mean, self.stddev, tuple(shape)),
                            dtype)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(_Seeded):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Optional[int] = None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return self._finish(self._generator().uniform(self.minval, self.maxval, tuple(shape)),
                            dtype)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


def _truncated_normal(gen: np.random.Generator, stddev: float, shape: tuple) -> np.ndarray:
    """Normal values redrawn until they fall within two standard deviations."""
    values = gen.normal(0.0, 1.0, shape)
    bad = np.abs(values) > 2
    while bad.any():
        values[bad] = gen.normal(0.0, 1.0, int(bad.sum()))
        bad = np.abs(values) > 2
    return values * stddev


class TruncatedNormal(_Seeded):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Optional[int] = None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        values = _truncated_normal(self._generator(), self.stddev, tuple(shape)) + self.mean
        return self._finish(values, dtype)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class VarianceScaling(_Seeded):
    """Values scaled to the weight's fan: the family behind Glorot, He and LeCun."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in",
                 distribution: str = "truncated_normal", seed: Optional[int] = None):
        super().__init__(seed)
        if scale <= 0:
            raise ValueError(f"`scale` must be positive, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` {mode!r}: use fan_in, fan_out or fan_avg")
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"Invalid `distribution` {distribution!r}")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        shape = tuple(int(d) for d in shape)
        fan_in, fan_out = compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}
        scale = self.scale / max(1.0, fan[self.mode])
        gen = self._generator()
        if self.distribution == "truncated_normal":
            # 0.8796... is the stddev of a unit normal truncated to [-2, 2].
            values = _truncated_normal(gen, math.sqrt(scale) / 0.87962566103423978, shape)
        elif self.distribution == "untruncated_normal":
            values = gen.normal(0.0, math.sqrt(scale), shape)
        else:
            limit = math.sqrt(3.0 * scale)
            values = gen.uniform(-limit, limit, shape)
        return self._finish(values, dtype)

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed}


def _preset(name: str, scale: float, mode: str, distribution: str, doc: str) -> type:
    def __init__(self: Any, seed: Optional[int] = None) -> None:
        VarianceScaling.__init__(self, scale, mode, distribution, seed)

    def get_config(self: Any) -> dict:
        return {"seed": self.seed}
    return type(name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config,
                                           "__doc__": doc})


GlorotUniform = _preset("GlorotUniform", 1.0, "fan_avg", "uniform",
                        "Uniform in +-sqrt(6 / (fan_in + fan_out)); Dense's default.")
GlorotNormal = _preset("GlorotNormal", 1.0, "fan_avg", "truncated_normal",
                       "Truncated normal with stddev sqrt(2 / (fan_in + fan_out)).")
HeNormal = _preset("HeNormal", 2.0, "fan_in", "truncated_normal",
                   "Truncated normal with stddev sqrt(2 / fan_in), for ReLU networks.")
HeUniform = _preset("HeUniform", 2.0, "fan_in", "uniform",
                    "Uniform in +-sqrt(6 / fan_in).")
LecunNormal = _preset("LecunNormal", 1.0, "fan_in", "truncated_normal",
                      "Truncated normal with stddev sqrt(1 / fan_in).")
LecunUniform = _preset("LecunUniform", 1.0, "fan_in", "uniform",
                       "Uniform in +-sqrt(3 / fan_in).")


class Orthogonal(_Seeded):
    """An orthogonal matrix (times `gain`), from the QR decomposition of a normal one;
    LSTM and GRU use it for their recurrent kernels."""

    def __init__(self, gain: float = 1.0, seed: Optional[int] = None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError(f"Orthogonal needs a shape of rank >= 2, got {shape}")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        flat = self._generator().normal(0.0, 1.0, (max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))  # makes the result uniformly distributed
        if rows < cols:
            q = q.T
        return self._finish(self.gain * q.reshape(shape), dtype)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    """The identity matrix (times `gain`) for 2-D weights."""

    def __init__(self, gain: float = 1.0):
        self.gain = gain

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        if len(shape) != 2:
            raise ValueError(f"Identity needs a 2-D shape, got {tuple(shape)}")
        return constant(self.gain * np.eye(*shape, dtype=_dtype(dtype).as_numpy_dtype))

    def get_config(self) -> dict:
        return {"gain": self.gain}


_ALIASES = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling, "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal, "he_normal": HeNormal, "he_uniform": HeUniform,
    "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform, "orthogonal": Orthogonal,
    "identity": Identity,
}
_CLASSES = {cls.__name__: cls for cls in set(_ALIASES.values())}

zeros, ones, constant_initializer = Zeros, Ones, Constant
glorot_uniform, glorot_normal, he_normal, he_uniform = GlorotUniform, GlorotNormal, HeNormal, \
    HeUniform
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
orthogonal = OrthogonalInitializer = Orthogonal
identity = IdentityInitializer = Identity
lecun_normal, lecun_uniform, variance_scaling = LecunNormal, LecunUniform, VarianceScaling


def get(identifier: Any) -> Any:
    """An initializer from a name ('glorot_uniform'), a config dict, an instance or None.

    >>> from kilnflow.keras import initializers
    >>> initializers.get("zeros")([2]).numpy().tolist()
    [0.0, 0.0]
    """
    if identifier is None or isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        cls = _ALIASES.get(identifier) or _CLASSES.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown initializer {identifier!r}; known: "
                             f"{', '.join(sorted(_ALIASES))}")
        return cls()
    if isinstance(identifier, dict):
        cls = _CLASSES.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"Unknown initializer config {identifier!r}")
        return cls.from_config(identifier.get("config", {}))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")


def serialize(initializer: Any) -> Any:
    if isinstance(initializer, Initializer):
        return {"class_name": type(initializer).__name__, "config": initializer.get_config()}
    return initializer


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Any:
    """The initializer a serialize() result (a name or {'class_name', 'config'}) describes."""
    name = config.get("class_name") if isinstance(config, dict) else config
    if custom_objects and name in custom_objects:
        cls = custom_objects[name]
        return cls.from_config(config.get("config", {})) if isinstance(config, dict) else cls()
    return get(config)
