"""Learning-rate schedules: `schedule(step) -> learning rate`, written with kf ops so a
compiled train step evaluates them on the optimizer's `iterations` at every call."""
from __future__ import annotations

import math
from typing import Any, Sequence

from kilnflow import dtypes as _dtypes
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor


def _step(step: Any) -> Any:
    return kmath.cast(convert_to_tensor(step), _dtypes.float32)


class LearningRateSchedule:
    """Base class: `__call__(step)` returns the learning rate for that step."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_config(cls, config: dict) -> "LearningRateSchedule":
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """initial_learning_rate * decay_rate ** (step / decay_steps), the exponent floored
    when `staircase`.

    >>> from kilnflow.keras.optimizers.schedules import ExponentialDecay
    >>> round(float(ExponentialDecay(0.1, 10, 0.5)(20)), 6)
    0.025
    """

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False, name: str = "ExponentialDecay"):
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be positive, got {decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step: Any) -> Any:
        p = _step(step) / float(self.decay_steps)
        if self.staircase:
            p = kmath.floor(p)
        return float(self.initial_learning_rate) * kmath.pow(
            convert_to_tensor(float(self.decay_rate)), p)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class InverseTimeDecay(LearningRateSchedule):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False, name: str = "InverseTimeDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step: Any) -> Any:
        p = _step(step) / float(self.decay_steps)
        if self.staircase:
            p = kmath.floor(p)
        return float(self.initial_learning_rate) / (1.0 + float(self.decay_rate) * p)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine from initial_learning_rate down to alpha * initial over decay_steps."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0,
                 name: str = "CosineDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name

    def __call__(self, step: Any) -> Any:
        p = kmath.minimum(_step(step), float(self.decay_steps)) / float(self.decay_steps)
        cosine = 0.5 * (1.0 + kmath.cos(math.pi * p))
        return float(self.initial_learning_rate) * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] while step <= boundaries[0], values[1] while step <= boundaries[1], ...,
    values[-1] after the last boundary.

    >>> from kilnflow.keras.optimizers.schedules import PiecewiseConstantDecay
    >>> s = PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    >>> [round(float(s(t)), 3) for t in (0, 10, 11, 21)]
    [1.0, 1.0, 0.5, 0.1]
    """

    def __init__(self, boundaries: Sequence, values: Sequence,
                 name: str = "PiecewiseConstant"):
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"The length of boundaries should be 1 less than the length of "
                             f"values; got {len(boundaries)} boundaries and {len(values)} "
                             f"values")
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step: Any) -> Any:
        step = _step(step)
        out = convert_to_tensor(float(self.values[-1]))
        for boundary, value in zip(reversed(self.boundaries), reversed(self.values[:-1])):
            out = array.where(step <= float(boundary), convert_to_tensor(float(value)), out)
        return out

    def get_config(self) -> dict:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """(initial - end) * (1 - step / decay_steps) ** power + end; past decay_steps it stays
    at end_learning_rate, or with cycle=True decay_steps grows to the next multiple of
    itself above step."""

    def __init__(self, initial_learning_rate: float, decay_steps: int,
                 end_learning_rate: float = 0.0001, power: float = 1.0, cycle: bool = False,
                 name: str = "PolynomialDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step: Any) -> Any:
        step = _step(step)
        decay = float(self.decay_steps)
        if self.cycle:
            multiplier = array.where(step == 0.0, convert_to_tensor(1.0),
                                     kmath.ceil(step / decay))
            decay = decay * multiplier
        else:
            step = kmath.minimum(step, decay)
        fraction = kmath.pow(1.0 - step / decay, float(self.power))
        return (float(self.initial_learning_rate) - float(self.end_learning_rate)) * fraction \
            + float(self.end_learning_rate)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): the i-th period lasts
    first_decay_steps * t_mul**i steps and starts from initial * m_mul**i."""

    def __init__(self, initial_learning_rate: float, first_decay_steps: int,
                 t_mul: float = 2.0, m_mul: float = 1.0, alpha: float = 0.0,
                 name: str = "SGDRDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step: Any) -> Any:
        done = _step(step) / float(self.first_decay_steps)
        t_mul, m_mul = float(self._t_mul), float(self._m_mul)
        if t_mul == 1.0:
            restarts = kmath.floor(done)
            done = done - restarts
        else:
            restarts = kmath.floor(kmath.log(1.0 - done * (1.0 - t_mul)) / math.log(t_mul))
            total = (1.0 - kmath.pow(t_mul, restarts)) / (1.0 - t_mul)
            done = (done - total) / kmath.pow(t_mul, restarts)
        fraction = kmath.pow(m_mul, restarts)
        cosine = 0.5 * fraction * (1.0 + kmath.cos(math.pi * done))
        return float(self.initial_learning_rate) * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


_BY_NAME = {cls.__name__: cls for cls in (ExponentialDecay, InverseTimeDecay, CosineDecay,
                                          PiecewiseConstantDecay, PolynomialDecay,
                                          CosineDecayRestarts)}


def deserialize(config: dict) -> LearningRateSchedule:
    cls = _BY_NAME.get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown learning-rate schedule config {config!r}")
    return cls.from_config(config.get("config", {}))


def serialize(schedule: LearningRateSchedule) -> dict:
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}
