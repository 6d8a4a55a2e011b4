"""Weight regularizers: `reg(weight) -> scalar loss` added to the layer's `losses`."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.linalg import matmul


class Regularizer:
    """Base class: `__call__(x)` returns a scalar penalty."""

    def __call__(self, x: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Regularizer":
        return cls(**config)


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x ** 2).

    >>> from kilnflow.keras import regularizers
    >>> float(regularizers.L2(0.5)([1.0, 2.0]))
    2.5
    """

    def __init__(self, l1: float = 0.0, l2: float = 0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x: Any) -> Any:
        from kilnflow.ops.convert import convert_to_tensor
        x = convert_to_tensor(x)
        total = None
        if self.l1:
            total = self.l1 * reduction.reduce_sum(kmath.abs(x))
        if self.l2:
            term = self.l2 * reduction.reduce_sum(kmath.square(x))
            total = term if total is None else total + term
        return total if total is not None else reduction.reduce_sum(x * 0.0)

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1: float = 0.01):
        super().__init__(l1=l1)

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2: float = 0.01):
        super().__init__(l2=l2)

    def get_config(self) -> dict:
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (mode='rows') or columns of a 2-D weight towards orthonormality:
    factor * mean |cosine| over the pairs of distinct (L2-normalized) rows or columns."""

    def __init__(self, factor: float = 0.01, mode: str = "rows"):
        if mode not in ("rows", "columns"):
            raise ValueError("Invalid value for argument `mode`. Expected one of "
                             f"{{'rows', 'columns'}}. Received: mode={mode}")
        self.factor = float(factor)
        self.mode = mode

    def __call__(self, x: Any) -> Any:
        x = convert_to_tensor(x)
        if x.shape.rank != 2:
            raise ValueError("Inputs to OrthogonalRegularizer must have rank 2. Received: "
                             f"inputs.shape={x.shape}")
        axis = 1 if self.mode == "rows" else 0
        norm = kmath.sqrt(reduction.reduce_sum(kmath.square(x), axis=axis, keepdims=True))
        unit = x / kmath.maximum(norm, 1e-12)
        product = matmul(unit, unit, transpose_b=True) if self.mode == "rows" else \
            matmul(unit, unit, transpose_a=True)
        size = int(product.shape[0])
        off_diagonal = product * (1.0 - np.eye(size, dtype=x.dtype.as_numpy_dtype))
        pairs = size * (size - 1.0) / 2.0
        return self.factor * 0.5 * reduction.reduce_sum(kmath.abs(off_diagonal)) / pairs

    def get_config(self) -> dict:
        return {"factor": self.factor, "mode": self.mode}


l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer
_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2,
            "orthogonal_regularizer": OrthogonalRegularizer,
            "OrthogonalRegularizer": OrthogonalRegularizer}


def get(identifier: Any) -> Any:
    if identifier is None or isinstance(identifier, Regularizer) or (
            callable(identifier) and not isinstance(identifier, (str, dict, type))):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if isinstance(identifier, dict) and identifier.get("class_name") in _BY_NAME:
        return _BY_NAME[identifier["class_name"]].from_config(identifier.get("config", {}))
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")


def serialize(regularizer: Any) -> Any:
    if isinstance(regularizer, Regularizer):
        return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}
    return regularizer


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Any:
    """The regularizer a serialize() result (a name or {'class_name', 'config'}) describes."""
    name = config.get("class_name") if isinstance(config, dict) else config
    if custom_objects and name in custom_objects:
        cls = custom_objects[name]
        return cls.from_config(config.get("config", {})) if isinstance(config, dict) else cls()
    return get(config)
