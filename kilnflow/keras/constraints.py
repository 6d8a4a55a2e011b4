"""keras.constraints: projections applied to a weight after every optimizer step
(`Dense(kernel_constraint=keras.constraints.MaxNorm(2.0))`)."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras import backend
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction


class Constraint:
    """Base class: `__call__(w)` returns the projected weight."""

    def __call__(self, w: Any) -> Any:
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Constraint":
        return cls(**config)


def _norms(w: Any, axis: Any) -> Any:
    return kmath.sqrt(reduction.reduce_sum(kmath.square(w), axis, keepdims=True))


class MaxNorm(Constraint):
    """Rescales each slice along `axis` whose L2 norm exceeds max_value down to it."""

    def __init__(self, max_value: float = 2.0, axis: Any = 0):
        self.max_value, self.axis = float(max_value), axis

    def __call__(self, w: Any) -> Any:
        norms = _norms(w, self.axis)
        desired = kmath.clip_by_value(norms, 0.0, self.max_value)
        return w * (desired / (backend.epsilon() + norms))

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves each slice's norm toward [min_value, max_value] by `rate` (1 = all the way)."""

    def __init__(self, min_value: float = 0.0, max_value: float = 1.0, rate: float = 1.0,
                 axis: Any = 0):
        self.min_value, self.max_value = float(min_value), float(max_value)
        self.rate, self.axis = float(rate), axis

    def __call__(self, w: Any) -> Any:
        norms = _norms(w, self.axis)
        desired = self.rate * kmath.clip_by_value(norms, self.min_value, self.max_value) + \
            (1.0 - self.rate) * norms
        return w * (desired / (backend.epsilon() + norms))

    def get_config(self) -> dict:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


class NonNeg(Constraint):
    """Negative entries become 0."""

    def __call__(self, w: Any) -> Any:
        return w * kmath.cast(w >= 0.0, w.dtype)


class UnitNorm(Constraint):
    """Each slice along `axis` rescaled to norm 1."""

    def __init__(self, axis: Any = 0):
        self.axis = axis

    def __call__(self, w: Any) -> Any:
        return w / (backend.epsilon() + _norms(w, self.axis))

    def get_config(self) -> dict:
        return {"axis": self.axis}


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm
_BY_NAME = {"max_norm": MaxNorm, "min_max_norm": MinMaxNorm, "non_neg": NonNeg,
            "unit_norm": UnitNorm, "MaxNorm": MaxNorm, "MinMaxNorm": MinMaxNorm,
            "NonNeg": NonNeg, "UnitNorm": UnitNorm}


def get(identifier: Any) -> Any:
    """A constraint from a name, a config dict, a Constraint or a callable (None: none)."""
    if identifier is None or isinstance(identifier, Constraint) or (
            callable(identifier) and not isinstance(identifier, (str, dict, type))):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if isinstance(identifier, dict) and identifier.get("class_name") in _BY_NAME:
        return _BY_NAME[identifier["class_name"]].from_config(identifier.get("config", {}))
    raise ValueError(f"Could not interpret constraint identifier: {identifier!r}")


def serialize(constraint: Any) -> Any:
    if isinstance(constraint, Constraint):
        return {"class_name": type(constraint).__name__, "config": constraint.get_config()}
    return constraint


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Any:
    """The constraint a serialize() result (a name or {'class_name', 'config'}) describes."""
    name = config.get("class_name") if isinstance(config, dict) else config
    if custom_objects and name in custom_objects:
        cls = custom_objects[name]
        return cls.from_config(config.get("config", {})) if isinstance(config, dict) else cls()
    return get(config)
