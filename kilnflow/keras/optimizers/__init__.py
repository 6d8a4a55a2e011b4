"""Optimizers: SGD (momentum, Nesterov), Adam, AdamW, RMSprop; `apply_gradients` and
`minimize`; learning-rate schedules in `optimizers.schedules`.

Slot variables (momenta) are created the first time a variable is updated, so a compiled
train step creates them in its first trace only. Updates are Keras 3's formulas, written
with public kf ops and assigns, so they run eagerly and inside @kf.function graphs. Each
new value is computed once and then both stored and reused, never read back after an
assign.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Optional

import numpy as np

from kilnflow.distribute import hooks as distribute_hooks
from kilnflow import dtypes as _dtypes
from kilnflow.autodiff.tape import GradientTape
from kilnflow.context import eager_mode
from kilnflow.keras.backend import unique_object_name
from kilnflow.keras.optimizers import schedules
from kilnflow.module import Module, camel_to_snake
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.variables import Variable
from kilnflow.keras.variables import make_variable
from kilnflow.ops import reduction

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "Nadam", "Ftrl", "Lion", "Lamb", "Adafactor", "LossScaleOptimizer", "get", "serialize",
           "deserialize", "schedules"]


# Keras 3's words for the slots kilnflow's update rules call m, v, vhat, u
_KERAS_SLOT_NAMES = {"m": "momentum", "v": "velocity", "vhat": "velocity_hat", "u": "norm"}


class Optimizer(Module):
    """Base class: subclasses declare their slots in `build` and implement `update_step`."""

    _MODULE_IGNORED_PROPERTIES = frozenset({"_slots", "_slot_owners", "_deferred_slots",
                                            "_warned"})

    def __init__(self, learning_rate: Any = 0.001, weight_decay: Optional[float] = None,
                 clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
                 global_clipnorm: Optional[float] = None, name: Optional[str] = None,
                 **kwargs: Any):
        if "lr" in kwargs:
            learning_rate = kwargs.pop("lr")
        unknown = set(kwargs) - {"use_ema", "ema_momentum", "ema_overwrite_frequency",
                                 "loss_scale_factor", "gradient_accumulation_steps"}
        if unknown:
            raise TypeError(f"Unexpected keyword argument(s) for {type(self).__name__}: "
                            f"{sorted(unknown)}")
        if sum(x is not None for x in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can "
                             "be set.")
        for key in ("loss_scale_factor", "gradient_accumulation_steps"):
            if kwargs.get(key) is not None:  # refused rather than silently ignored
                raise NotImplementedError(f"{type(self).__name__}({key}=...) is not "
                                          "supported yet")
        # Keras 3 numbers unnamed optimizers per process (adam, adam_1, ...), so the
        # slot paths of two optimizers never collide.
        super().__init__(name=name or unique_object_name(camel_to_snake(type(self).__name__)))
        self.use_ema = bool(kwargs.get("use_ema", False))
        self.ema_momentum = float(kwargs.get("ema_momentum", 0.99))
        self.ema_overwrite_frequency = kwargs.get("ema_overwrite_frequency")
        if not 0 <= self.ema_momentum <= 1:
            raise ValueError(f"`ema_momentum` must be in the range [0, 1]. Received: "
                             f"ema_momentum={self.ema_momentum}")
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, \
            global_clipnorm
        with eager_mode():
            self.iterations = self._own_variable(np.int64(0), "iteration")
            if isinstance(learning_rate, schedules.LearningRateSchedule):
                self._learning_rate: Any = learning_rate
            else:
                self._learning_rate = self._own_variable(np.float32(float(learning_rate)),
                                                         "learning_rate")
        self._slots: dict = {}         # id(handle) -> {slot name: variable}
        self._slot_owners: dict = {}   # id(handle) -> the variable the slots belong to
        self._deferred_slots: dict = {}  # (id(handle), slot name) -> checkpoint consumer
        self._warned = False

    # ---------------------------------------------------------------- learning rate

    @property
    def learning_rate(self) -> Any:
        """The learning-rate variable (assignable), or the schedule."""
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        if isinstance(value, schedules.LearningRateSchedule) or \
                isinstance(self._learning_rate, schedules.LearningRateSchedule):
            if not isinstance(value, schedules.LearningRateSchedule):
                with eager_mode():
                    value = self._own_variable(np.float32(float(value)), "learning_rate")
            self._learning_rate = value
        else:
            self._learning_rate.assign(float(np.asarray(value)))

    lr = learning_rate

    def _current_learning_rate(self) -> Any:
        if isinstance(self._learning_rate, schedules.LearningRateSchedule):
            return self._learning_rate(self.iterations)
        return self._learning_rate.read_value()

    # ---------------------------------------------------------------- slots

    def add_slot(self, var: Variable, slot_name: str, initializer: Any = "zeros",
                 shape: Any = None) -> Variable:
        """Create (once) the `slot_name` companion of `var`: zeros of its shape (or `shape`)
        and dtype, or filled with `initializer` when that is a number."""
        key = id(var.handle)
        slots = self._slots.setdefault(key, {})
        if slot_name in slots:
            return slots[slot_name]
        # a number fills the slot (Adagrad's initial accumulator); the value is the
        # variable's initial value, so a slot made while tracing is not reset every call
        fill = 0 if isinstance(initializer, str) else initializer
        value = np.full(var.shape.as_list() if shape is None else list(shape), fill,
                        var.dtype.as_numpy_dtype)
        # Keras 3 slot names: <optimizer>/<variable path, _ for />_<slot> (adam/d_kernel_momentum)
        base = (getattr(var, "path", None) or var.name.split(":")[0]).replace("/", "_")
        slot = self._own_variable(value, f"{base}_{_KERAS_SLOT_NAMES.get(slot_name, slot_name)}",
                                  var.dtype)
        slots[slot_name] = slot
        self._slot_owners[key] = var
        consume = self._deferred_slots.pop((key, slot_name), None)
        if consume is not None:  # a checkpoint value waited for this slot
            consume(slot)
        return slot

    def _own_variable(self, value: Any, name: str, dtype: Any = None) -> Variable:
        """A non-trainable keras.Variable of this optimizer, path `<optimizer>/<name>`."""
        return make_variable(value, name, f"{self.name}/{name}", dtype=dtype, trainable=False)

    def get_slot(self, var: Variable, slot_name: str) -> Variable:
        try:
            return self._slots[id(var.handle)][slot_name]
        except KeyError:
            raise KeyError(f"No slot {slot_name!r} for variable {var.name}") from None

    def get_slot_names(self) -> list:
        names: list = []
        for slots in self._slots.values():
            names.extend(n for n in slots if n not in names)
        return names

    def build(self, var_list: list) -> None:
        """Create the slots of each variable (subclasses call add_slot)."""

    def scale_loss(self, loss: Any) -> Any:
        """The loss the gradients are taken of (fit calls this): unchanged here; a
        LossScaleOptimizer multiplies it by its scale."""
        return loss

    def apply(self, grads: list, trainable_variables: Any = None) -> Any:
        """Keras 3's form of apply_gradients: gradients and variables as two lists."""
        if trainable_variables is None:
            raise ValueError("Optimizer.apply needs the variables the gradients are for")
        return self.apply_gradients(zip(grads, trainable_variables))

    def build_slots(self, var_list: list) -> None:
        """build() for the variables that have no slots yet (a restored model's optimizer
        makes its state this way before the saved values are assigned)."""
        new = [v for v in var_list if id(v.handle) not in self._slot_owners]
        if new:
            self.build(new)
            for v in new:
                self._slot_owners.setdefault(id(v.handle), v)

    @property
    def variables(self) -> list:
        """iterations, the learning rate (if a variable) and every slot variable."""
        out = [self.iterations]
        if isinstance(self._learning_rate, Variable):
            out.append(self._learning_rate)
        for slots in self._slots.values():
            out.extend(slots.values())
        return out

    def _checkpoint_children(self) -> list:
        children = [("iterations", self.iterations)]
        if isinstance(self._learning_rate, Variable):
            children.append(("learning_rate", self._learning_rate))
        return children

    def _checkpoint_slots(self) -> list:
        return [(self._slot_owners[key], name, slot)
                for key, slots in self._slots.items() for name, slot in slots.items()]

    def _restore_slot(self, owner: Variable, slot_name: str, value: Any,
                      consume: Callable) -> None:
        slot = self._slots.get(id(owner.handle), {}).get(slot_name)
        if slot is not None:
            consume(slot)
        else:
            self._deferred_slots[(id(owner.handle), slot_name)] = consume

    # ---------------------------------------------------------------- applying gradients

    def _clip(self, grads: list) -> list:
        if self.clipvalue is not None:
            return [kmath.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        if self.clipnorm is not None:
            out = []
            for g in grads:
                norm = kmath.sqrt(reduction.reduce_sum(kmath.square(g)))
                out.append(g * (self.clipnorm / kmath.maximum(norm, self.clipnorm)))
            return out
        if self.global_clipnorm is not None:
            total = kmath.sqrt(kmath.add_n([reduction.reduce_sum(kmath.square(
                kmath.cast(g, _dtypes.float32))) for g in grads]))
            scale = self.global_clipnorm / kmath.maximum(total, self.global_clipnorm)
            return [g * kmath.cast(scale, g.dtype) for g in grads]
        return grads

    def apply_gradients(self, grads_and_vars: Any, name: Optional[str] = None,
                        **kwargs: Any) -> Any:
        """Update each variable from its gradient; pairs with a None gradient are skipped
        (with a warning). Returns `iterations`. Inside a replica of a kf.distribute
        strategy, the gradients are all-reduced (summed) first and applied once."""
        return distribute_hooks.apply_gradients(self._apply_local, list(grads_and_vars))

    def _apply_local(self, grads_and_vars: Any) -> Any:
        pairs = list(grads_and_vars)
        kept = [(g, v) for g, v in pairs if g is not None]
        if not kept:
            names = [getattr(v, "name", v) for _, v in pairs]
            raise ValueError(f"No gradients provided for any variable: {names}")
        if len(kept) < len(pairs) and not self._warned:
            self._warned = True
            missing = [v.name for g, v in pairs if g is None]
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing "
                          "the loss.", stacklevel=2)
        grads = self._clip([convert_to_tensor(g) for g, _ in kept])
        variables = [v for _, v in kept]
        self.build_slots(variables)
        lr = self._current_learning_rate()
        for g, v in zip(grads, variables):
            var_lr = lr if lr.dtype is v.dtype else kmath.cast(lr, v.dtype)
            if self.weight_decay:
                v.assign_sub(v.read_value() * (var_lr * float(self.weight_decay)))
            if g.dtype is not v.dtype:
                g = kmath.cast(g, v.dtype)
            self.update_step(g, v, var_lr)
            constraint = getattr(v, "constraint", None)
            if constraint is not None:
                v.assign(constraint(v.read_value()))
        if self.use_ema:
            self._update_moving_averages(variables)
        self.iterations.assign_add(np.int64(1))
        return self.iterations

    def _update_moving_averages(self, variables: list) -> None:
        """Keras's use_ema: average = m * average + (1 - m) * w after each step (the first
        step copies w); with ema_overwrite_frequency the weights take the averages every
        that many steps."""
        first = kmath.equal(self.iterations.read_value(), np.int64(0))
        overwrite = None
        if self.ema_overwrite_frequency:
            step = self.iterations.read_value() + np.int64(1)
            overwrite = kmath.equal(step % np.int64(self.ema_overwrite_frequency),
                                    np.int64(0))
        for v in variables:
            average = self.add_slot(v, "average")
            momentum = kmath.cast(kmath.logical_not(first), v.dtype) * self.ema_momentum
            new = momentum * average.read_value() + (1.0 - momentum) * v.read_value()
            average.assign(new)
            if overwrite is not None:
                v.assign(array.where(overwrite, new, v.read_value()))

    def finalize_variable_values(self, var_list: list) -> None:
        """At the end of fit, with use_ema, the weights take their moving averages."""
        if not self.use_ema:
            return
        for v in var_list:
            try:
                v.assign(self.get_slot(v, "average").read_value())
            except KeyError:
                continue

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        raise NotImplementedError

    def minimize(self, loss: Any, var_list: Any, tape: Optional[GradientTape] = None) -> Any:
        """Compute gradients of `loss` (a tensor computed under `tape`, or a zero-argument
        callable) with respect to var_list and apply them."""
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        if callable(loss):
            with GradientTape() as tape:
                for v in var_list:
                    tape.watch(v)
                loss = loss()
        elif tape is None:
            raise ValueError("`tape` is required when a `Tensor` loss is passed.")
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def _step_count(self, dtype: Any) -> Any:
        return kmath.cast(self.iterations.read_value() + np.int64(1), dtype)

    def get_config(self) -> dict:
        lr = self._learning_rate
        return {"name": self.name, "use_ema": self.use_ema,
                "ema_momentum": self.ema_momentum,
                "ema_overwrite_frequency": self.ema_overwrite_frequency,
                "learning_rate": schedules.serialize(lr) if isinstance(
                    lr, schedules.LearningRateSchedule) else float(lr.numpy()),
                "weight_decay": self.weight_decay, "clipnorm": self.clipnorm,
                "clipvalue": self.clipvalue, "global_clipnorm": self.global_clipnorm}

    @classmethod
    def from_config(cls, config: dict) -> "Optimizer":
        config = dict(config)
        lr = config.get("learning_rate")
        if isinstance(lr, dict):
            config["learning_rate"] = schedules.deserialize(lr)
        return cls(**config)


class SGD(Optimizer):
    """Gradient descent, optionally with momentum (and Nesterov's variant):
    m = momentum * m - lr * g; w += m (Nesterov: w += momentum * m - lr * g).

    >>> import kilnflow as kf
    >>> from kilnflow.keras.optimizers import SGD
    >>> w = kf.Variable(1.0)
    >>> _ = SGD(learning_rate=0.1).apply_gradients([(kf.constant(2.0), w)])
    >>> round(float(w.numpy()), 6)
    0.8
    """

    def __init__(self, learning_rate: Any = 0.01, momentum: float = 0.0,
                 nesterov: bool = False, name: Optional[str] = None, **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        if not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be in [0, 1], got {momentum}")
        self.momentum = float(momentum)
        self.nesterov = nesterov

    def build(self, var_list: list) -> None:
        if self.momentum:
            for v in var_list:
                self.add_slot(v, "momentum")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        if not self.momentum:
            variable.assign_sub(gradient * learning_rate)
            return
        m = self.get_slot(variable, "momentum")
        m_new = m.read_value() * self.momentum - gradient * learning_rate
        m.assign(m_new)
        if self.nesterov:
            variable.assign_add(m_new * self.momentum - gradient * learning_rate)
        else:
            variable.assign_add(m_new)

    def get_config(self) -> dict:
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    """Adam: m and v are moving averages of g and g**2;
    w -= lr * sqrt(1 - beta_2**t) / (1 - beta_1**t) * m / (sqrt(v) + epsilon)."""

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, amsgrad: bool = False, name: Optional[str] = None,
                 **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)
        self.epsilon = float(epsilon)
        self.amsgrad = amsgrad

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "m")
            self.add_slot(v, "v")
            if self.amsgrad:
                self.add_slot(v, "vhat")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        step = self._step_count(variable.dtype)
        b1, b2 = self.beta_1, self.beta_2
        b1_power = kmath.pow(convert_to_tensor(b1, variable.dtype), step)
        b2_power = kmath.pow(convert_to_tensor(b2, variable.dtype), step)
        m, v = self.get_slot(variable, "m"), self.get_slot(variable, "v")
        m_new = m.read_value() + (gradient - m.read_value()) * (1.0 - b1)
        v_new = v.read_value() + (kmath.square(gradient) - v.read_value()) * (1.0 - b2)
        m.assign(m_new)
        v.assign(v_new)
        if self.amsgrad:
            vhat = self.get_slot(variable, "vhat")
            v_new = kmath.maximum(vhat.read_value(), v_new)
            vhat.assign(v_new)
        alpha = learning_rate * kmath.sqrt(1.0 - b2_power) / (1.0 - b1_power)
        variable.assign_sub(m_new * alpha / (kmath.sqrt(v_new) + self.epsilon))

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon, "amsgrad": self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay: w -= w * weight_decay * lr before each update."""

    def __init__(self, learning_rate: Any = 0.001, weight_decay: float = 0.004,
                 beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
                 amsgrad: bool = False, name: Optional[str] = None, **kwargs: Any):
        if weight_decay is None:
            raise ValueError("AdamW needs a weight_decay value")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name=name,
                         weight_decay=weight_decay, **kwargs)


class RMSprop(Optimizer):
    """RMSprop: v = rho * v + (1 - rho) * g**2; w -= lr * g / sqrt(v + epsilon)
    (centered: v - mean(g)**2; with momentum the increment goes through a momentum slot)."""

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, name: Optional[str] = None,
                 **kwargs: Any):
        super().__init__(learning_rate, name=name, **kwargs)
        self.rho, self.momentum = float(rho), float(momentum)
        self.epsilon = float(epsilon)
        self.centered = centered

    def build(self, var_list: list) -> None:
        for v in var_list:
            self.add_slot(v, "velocity")
            if self.momentum:
                self.add_slot(v, "momentum")
            if self.centered:
                self.add_slot(v, "average_gradient")

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        rho = self.rho
        velocity = self.get_slot(variable, "velocity")
        vel_new = velocity.read_value() * rho + kmath.square(gradient) * (1.0 - rho)
        velocity.assign(vel_new)
        if self.centered:
            avg = self.get_slot(variable, "average_gradient")
            avg_new = avg.read_value() * rho + gradient * (1.0 - rho)
            avg.assign(avg_new)
            denominator = vel_new - kmath.square(avg_new) + self.epsilon
        else:
            denominator = vel_new + self.epsilon
        increment = gradient * learning_rate / kmath.sqrt(denominator)
        if self.momentum:
            mom = self.get_slot(variable, "momentum")
            mom_new = mom.read_value() * self.momentum + increment
            mom.assign(mom_new)
            variable.assign_sub(mom_new)
        else:
            variable.assign_sub(increment)

    def get_config(self) -> dict:
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum,
                "epsilon": self.epsilon, "centered": self.centered}


# the other optimizers subclass Optimizer, so they are imported once it exists
from kilnflow.keras.optimizers.adaptive import Adadelta, Adagrad, Adamax, Ftrl, Lion, \
    Nadam  # noqa: E402
from kilnflow.keras.optimizers.factored import Adafactor, Lamb, \
    LossScaleOptimizer  # noqa: E402

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adadelta": Adadelta, "adamax": Adamax, "nadam": Nadam, "ftrl": Ftrl,
            "lion": Lion, "lamb": Lamb, "adafactor": Adafactor}


def get(identifier: Any) -> Optimizer:
    """An optimizer from a name ('adam'), a config dict, or an instance."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer {identifier!r}; known: "
                             f"{', '.join(sorted(_BY_NAME))}")
        return cls()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(str(identifier.get("class_name", "")).lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer config {identifier!r}")
        return cls.from_config(identifier.get("config", {}))
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


def serialize(optimizer: Optimizer) -> dict:
    """{'class_name', 'config'} of an optimizer (deserialize() rebuilds it)."""
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Optimizer:
    """The optimizer a serialize() result (or a name) describes."""
    name = config.get("class_name") if isinstance(config, dict) else config
    if custom_objects and name in custom_objects:
        cls = custom_objects[name]
        return cls.from_config(config.get("config", {})) if isinstance(config, dict) else cls()
    if name == "LossScaleOptimizer" and isinstance(config, dict):
        return LossScaleOptimizer.from_config(config.get("config", {}))
    return get(config)
