"""More Keras 3 optimizers: Adagrad, Adadelta, Adamax, Nadam, Ftrl, Lion. Each update
follows Keras 3's formula (written from its documentation), one slot per accumulator."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.context import eager_mode
from kilnflow.keras.optimizers import Optimizer
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.variables import Variable


class Adagrad(Optimizer):
    """accumulator += g**2; w -= lr * g / sqrt(accumulator + epsilon)."""

    def __init__(self, learning_rate: Any = 0.001, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "accumulator", self.initial_accumulator_value)

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        acc = self.get_slot(variable, "accumulator")
        new = acc.read_value() + kmath.square(gradient)
        acc.assign(new)
        variable.assign_sub(learning_rate * gradient / kmath.sqrt(new + self.epsilon))

    def get_config(self) -> dict:
        return {**super().get_config(), "epsilon": self.epsilon,
                "initial_accumulator_value": self.initial_accumulator_value}


class Adadelta(Optimizer):
    """E[g^2] and E[dx^2] are moving averages (rho); dx = -sqrt(E[dx^2] + eps) /
    sqrt(E[g^2] + eps) * g; w += lr * dx."""

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.95, epsilon: float = 1e-7,
                 name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        self.rho, self.epsilon = float(rho), float(epsilon)

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "accumulated_grad")
            self.add_slot(v, "accumulated_delta_var")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        rho, eps = self.rho, self.epsilon
        acc_g = self.get_slot(variable, "accumulated_grad")
        acc_d = self.get_slot(variable, "accumulated_delta_var")
        new_g = rho * acc_g.read_value() + (1.0 - rho) * kmath.square(gradient)
        acc_g.assign(new_g)
        old_d = acc_d.read_value()
        delta = -kmath.sqrt(old_d + eps) * gradient / kmath.sqrt(new_g + eps)
        acc_d.assign(rho * old_d + (1.0 - rho) * kmath.square(delta))
        variable.assign_add(learning_rate * delta)

    def get_config(self) -> dict:
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}


class Adamax(Optimizer):
    """Adam with the infinity norm: m = EMA of g; u = max(beta_2 u, |g|);
    w -= lr * m / ((1 - beta_1**t) (u + epsilon))."""

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "m")
            self.add_slot(v, "u")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        step = self._step_count(variable.dtype)
        b1_power = kmath.pow(convert_to_tensor(self.beta_1, variable.dtype), step)
        m, u = self.get_slot(variable, "m"), self.get_slot(variable, "u")
        m_new = m.read_value() + (gradient - m.read_value()) * (1.0 - self.beta_1)
        u_new = kmath.maximum(self.beta_2 * u.read_value(), kmath.abs(gradient))
        m.assign(m_new)
        u.assign(u_new)
        variable.assign_sub(learning_rate * m_new / ((1.0 - b1_power) * (u_new + self.epsilon)))

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon}


class Nadam(Optimizer):
    """Adam with Nesterov momentum and Keras's momentum schedule
    u_t = beta_1 (1 - 0.5 * 0.96**t), whose running product is kept in a variable."""

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        with eager_mode():
            self.u_product = self._own_variable(np.float32(1.0), "u_product")

    @property
    def variables(self) -> list:
        base = super().variables
        return base[:2] + [self.u_product] + base[2:] if len(base) > 1 else base

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "m")
            self.add_slot(v, "v")

    def apply_gradients(self, grads_and_vars: Any, *args: Any, **kwargs: Any) -> Any:
        t = kmath.cast(self.iterations.read_value() + 1, self.u_product.dtype)
        self.u_product.assign(self.u_product.read_value() * self.beta_1 *
                              (1.0 - 0.5 * kmath.pow(0.96, t)))
        return super().apply_gradients(grads_and_vars, *args, **kwargs)

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        dtype = variable.dtype
        t = self._step_count(dtype)
        b1, b2 = self.beta_1, self.beta_2
        u_t = b1 * (1.0 - 0.5 * kmath.pow(convert_to_tensor(0.96, dtype), t))
        u_t_1 = b1 * (1.0 - 0.5 * kmath.pow(convert_to_tensor(0.96, dtype), t + 1.0))
        u_product_t = kmath.cast(self.u_product.read_value(), dtype)
        u_product_t_1 = u_product_t * u_t_1
        b2_power = kmath.pow(convert_to_tensor(b2, dtype), t)
        m, v = self.get_slot(variable, "m"), self.get_slot(variable, "v")
        m_new = m.read_value() + (gradient - m.read_value()) * (1.0 - b1)
        v_new = v.read_value() + (kmath.square(gradient) - v.read_value()) * (1.0 - b2)
        m.assign(m_new)
        v.assign(v_new)
        m_hat = u_t_1 * m_new / (1.0 - u_product_t_1) + (1.0 - u_t) * gradient / \
            (1.0 - u_product_t)
        v_hat = v_new / (1.0 - b2_power)
        variable.assign_sub(m_hat * learning_rate / (kmath.sqrt(v_hat) + self.epsilon))

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon}


class Ftrl(Optimizer):
    """Follow-the-regularized-leader (McMahan et al.), with Keras's L1, L2 and L2-shrinkage
    terms and `beta`."""

    def __init__(self, learning_rate: Any = 0.001, learning_rate_power: float = -0.5,
                 initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0,
                 l2_shrinkage_regularization_strength: float = 0.0, beta: float = 0.0,
                 name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        if learning_rate_power > 0:
            raise ValueError(f"`learning_rate_power` needs to be negative or zero, got "
                             f"{learning_rate_power}")
        self.learning_rate_power = float(learning_rate_power)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1_regularization_strength = float(l1_regularization_strength)
        self.l2_regularization_strength = float(l2_regularization_strength)
        self.l2_shrinkage_regularization_strength = float(l2_shrinkage_regularization_strength)
        self.beta = float(beta)

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "accumulator", self.initial_accumulator_value)
            self.add_slot(v, "linear")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        power = self.learning_rate_power
        l1 = self.l1_regularization_strength
        l2 = self.l2_regularization_strength + self.beta / (2.0 * learning_rate)
        accum, linear = self.get_slot(variable, "accumulator"), self.get_slot(variable, "linear")
        w, acc = variable.read_value(), accum.read_value()
        grad = gradient + 2.0 * self.l2_shrinkage_regularization_strength * w
        new_accum = acc + kmath.square(gradient)
        new_linear = linear.read_value() + grad - \
            (kmath.pow(new_accum, -power) - kmath.pow(acc, -power)) / learning_rate * w
        linear.assign(new_linear)
        quadratic = kmath.pow(new_accum, -power) / learning_rate + 2.0 * l2
        clipped = kmath.clip_by_value(new_linear, -l1, l1)
        variable.assign((clipped - new_linear) / quadratic)
        accum.assign(new_accum)

    def get_config(self) -> dict:
        return {**super().get_config(), "learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength":
                    self.l2_shrinkage_regularization_strength, "beta": self.beta}


class Lion(Optimizer):
    """EvoLved sign momentum: w -= lr * sign(beta_1 m + (1 - beta_1) g);
    m = beta_2 m + (1 - beta_2) g."""

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.99,
                 name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(f"Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "momentum")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        m = self.get_slot(variable, "momentum")
        old = m.read_value()
        variable.assign_sub(learning_rate * kmath.sign(old * self.beta_1 +
                                                       gradient * (1.0 - self.beta_1)))
        m.assign(old * self.beta_2 + gradient * (1.0 - self.beta_2))

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2}
