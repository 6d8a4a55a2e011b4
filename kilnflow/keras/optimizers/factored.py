"""Keras 3's Lamb and Adafactor, and LossScaleOptimizer (dynamic loss scaling around an
inner optimizer)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.keras.optimizers import Optimizer
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.variables import Variable


class Lamb(Optimizer):
    """Adam's direction scaled per variable by the trust ratio ||w|| / ||update|| (1 when
    either norm is 0): w -= ratio * lr * m_hat / (sqrt(v_hat) + epsilon)."""

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "m")
            self.add_slot(v, "v")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        step = self._step_count(variable.dtype)
        m, v = self.get_slot(variable, "m"), self.get_slot(variable, "v")
        m_new = m.read_value() + (gradient - m.read_value()) * (1.0 - self.beta_1)
        v_new = v.read_value() + (kmath.square(gradient) - v.read_value()) * (1.0 - self.beta_2)
        m.assign(m_new)
        v.assign(v_new)
        m_hat = m_new / (1.0 - kmath.pow(self.beta_1, step))
        update = m_hat / (kmath.sqrt(v_new / (1.0 - kmath.pow(self.beta_2, step))) +
                          self.epsilon)
        w_norm = kmath.sqrt(reduction.reduce_sum(kmath.square(variable.read_value())))
        u_norm = kmath.sqrt(reduction.reduce_sum(kmath.square(update)))
        one = array.ones_like(w_norm)
        ratio = array.where(w_norm > 0.0, array.where(u_norm > 0.0, w_norm / u_norm, one),
                            one)
        variable.assign_sub(ratio * learning_rate * update)

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon}


def _rms(x: Any) -> Any:
    return kmath.sqrt(reduction.reduce_mean(kmath.square(x)))


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern 2018) as Keras 3 writes it: for matrices the second
    moment is factored into row and column averages; steps are relative to the weight's
    RMS (at least epsilon_2) and clipped at clip_threshold; the learning rate is capped at
    1/sqrt(step) when relative_step."""

    def __init__(self, learning_rate: Any = 0.001, beta_2_decay: float = -0.8,
                 epsilon_1: float = 1e-30, epsilon_2: float = 1e-3,
                 clip_threshold: float = 1.0, relative_step: bool = True,
                 name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        self.beta_2_decay, self.epsilon_1 = float(beta_2_decay), float(epsilon_1)
        self.epsilon_2, self.clip_threshold = float(epsilon_2), float(clip_threshold)
        self.relative_step = relative_step

    def build(self, var_list: list) -> None:
        for v in var_list:
            shape = v.shape.as_list()
            if len(shape) >= 2:
                self.add_slot(v, "r", shape=shape[:-1])
                self.add_slot(v, "c", shape=shape[:-2] + shape[-1:])
            self.add_slot(v, "velocity")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        step = self._step_count(variable.dtype)
        lr = learning_rate
        if self.relative_step and not callable(self._learning_rate):
            lr = kmath.minimum(lr, 1.0 / kmath.sqrt(step))
        rho = kmath.minimum(lr, 1.0 / kmath.sqrt(step))
        alpha = kmath.maximum(self.epsilon_2, _rms(variable.read_value())) * rho
        squared = kmath.square(gradient) + self.epsilon_1
        beta = 1.0 - kmath.pow(step, self.beta_2_decay)
        v = self.get_slot(variable, "velocity")
        if variable.shape.rank >= 2:
            r, c = self.get_slot(variable, "r"), self.get_slot(variable, "c")
            r_new = beta * r.read_value() + (1.0 - beta) * reduction.reduce_mean(squared, -1)
            c_new = beta * c.read_value() + (1.0 - beta) * reduction.reduce_mean(squared, -2)
            r.assign(r_new)
            c.assign(c_new)
            v_new = reshaping.expand_dims(
                r_new / reduction.reduce_mean(r_new, -1, keepdims=True), -1) * \
                reshaping.expand_dims(c_new, -2)
        else:
            v_new = beta * v.read_value() + (1.0 - beta) * squared
        v.assign(v_new)
        u = gradient / kmath.sqrt(v_new)
        u = u / kmath.maximum(1.0, _rms(u) / self.clip_threshold)
        variable.assign_sub(alpha * u)

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_2_decay": self.beta_2_decay,
                "epsilon_1": self.epsilon_1, "epsilon_2": self.epsilon_2,
                "clip_threshold": self.clip_threshold, "relative_step": self.relative_step}


class LossScaleOptimizer(Optimizer):
    """Keras 3's dynamic loss scaling around `inner_optimizer`: scale_loss multiplies the
    loss by the current scale (fit does this), apply divides the gradients by it. When all
    unscaled gradients are finite the inner optimizer applies them and, every
    `dynamic_growth_steps` such steps, the scale doubles; otherwise the scale halves and
    (unlike Keras, which skips the inner step) zero gradients are applied, so the
    variables do not move but a stateful inner optimizer counts the step."""

    def __init__(self, inner_optimizer: Any, initial_scale: float = 2.0 ** 15,
                 dynamic_growth_steps: int = 2000, name: Optional[str] = None,
                 **kwargs: Any):
        from kilnflow.context import eager_mode
        from kilnflow.keras.optimizers import get
        inner = get(inner_optimizer)
        super().__init__(float(np.asarray(inner.learning_rate.numpy()))
                         if isinstance(inner.learning_rate, Variable) else 0.001,
                         name=name or "loss_scale_optimizer", **kwargs)
        self.inner_optimizer = inner
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        with eager_mode():
            self.dynamic_scale = self._own_variable(np.float32(initial_scale), "dynamic_scale")
            self.step_counter = self._own_variable(np.int64(0), "step_counter")

    @property
    def learning_rate(self) -> Any:
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        inner = self.__dict__.get("inner_optimizer")
        if inner is not None:
            inner.learning_rate = value
        else:  # the base class's __init__ sets the (unused) outer rate
            Optimizer.learning_rate.fset(self, value)

    def scale_loss(self, loss: Any) -> Any:
        return loss * kmath.cast(self.dynamic_scale.read_value(), loss.dtype)

    def apply_gradients(self, grads_and_vars: Any, *args: Any, **kwargs: Any) -> Any:
        pairs = [(g, v) for g, v in grads_and_vars]
        scale = self.dynamic_scale.read_value()
        unscaled = [None if g is None else convert_to_tensor(g) / kmath.cast(scale, v.dtype)
                    for g, v in pairs]
        checks = [reduction.reduce_all(kmath.is_finite(g)) for g in unscaled if g is not None]
        finite = checks[0]
        for check in checks[1:]:
            finite = kmath.logical_and(finite, check)
        safe = [None if g is None else array.where(finite, g, array.zeros_like(g))
                for g in unscaled]
        result = self.inner_optimizer.apply_gradients(
            [(g, v) for g, (_, v) in zip(safe, pairs)], *args, **kwargs)
        count = array.where(finite, self.step_counter.read_value() + np.int64(1),
                            np.int64(0) + array.zeros_like(self.step_counter.read_value()))
        grow = kmath.greater_equal(count, self.dynamic_growth_steps)
        new_scale = array.where(finite, array.where(grow, scale * 2.0, scale), scale / 2.0)
        self.dynamic_scale.assign(new_scale)
        self.step_counter.assign(array.where(grow, array.zeros_like(count), count))
        return result

    def apply(self, grads: list, trainable_variables: Any = None) -> Any:
        return self.apply_gradients(zip(grads, trainable_variables))

    @property
    def variables(self) -> list:
        return [self.dynamic_scale, self.step_counter] + list(self.inner_optimizer.variables)

    def finalize_variable_values(self, var_list: list) -> None:
        finalize = getattr(self.inner_optimizer, "finalize_variable_values", None)
        if finalize is not None:
            finalize(var_list)

    def get_config(self) -> dict:
        from kilnflow.keras.optimizers import serialize
        return {"name": self.name, "inner_optimizer": serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config: dict) -> "LossScaleOptimizer":
        from kilnflow.keras.optimizers import deserialize
        config = dict(config)
        config["inner_optimizer"] = deserialize(config["inner_optimizer"])
        return cls(**config)
