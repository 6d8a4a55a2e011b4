"""tf.train.ExponentialMovingAverage: shadow variables that track moving averages.

    shadow <- shadow - (1 - decay) * (shadow - value)

With `num_updates`, the decay used is min(decay, (1 + num_updates) / (10 + num_updates)),
so early averages move faster. A variable's shadow starts at the variable's value; a
plain tensor's starts at zero and, with `zero_debias=True`, is divided by
(1 - decay ** steps) as in Adam (TF debiases only tensors, not variables, and so do we).
Shadow variables are made under init_scope, so apply() works inside kf.function.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from kilnflow import dtypes as _dtypes
from kilnflow.ops import math as math_ops
from kilnflow.ops.array import zeros
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.graph_utils import group, init_scope
from kilnflow.variables import Variable

__all__ = ["ExponentialMovingAverage"]


def _key(value: Any) -> Any:
    return value.ref() if hasattr(value, "ref") else id(value)


def _base_name(value: Any) -> str:
    name = getattr(value, "name", None)
    try:
        name = str(name) if name is not None else "tensor"
    except AttributeError:
        name = "tensor"
    return name.split(":")[0]


class ExponentialMovingAverage:
    """Maintains moving averages of variables (and tensors) with exponential decay.

    >>> import kilnflow as kf
    >>> w = kf.Variable(1.0, name="w")
    >>> ema = kf.train.ExponentialMovingAverage(decay=0.9)
    >>> ema.apply([w])
    >>> _ = w.assign(2.0); ema.apply([w])
    >>> round(float(ema.average(w)), 4), ema.average_name(w)
    (1.1, 'w/ExponentialMovingAverage')
    """

    def __init__(self, decay: Any, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: Dict[Any, Variable] = {}
        self._debias: Dict[Any, tuple] = {}   # key -> (biased value, step count) variables
        self._averaged: Dict[Any, Any] = {}

    @property
    def name(self) -> str:
        return self._name

    def _decay_for(self, dtype: Any) -> Any:
        decay = convert_to_tensor(self._decay, dtype=_dtypes.float32) \
            if not hasattr(self._decay, "dtype") else self._decay
        decay = math_ops.cast(decay, _dtypes.float32)
        if self._num_updates is not None:
            n = math_ops.cast(convert_to_tensor(self._num_updates), _dtypes.float32)
            decay = math_ops.minimum(decay, (1.0 + n) / (10.0 + n))
        return math_ops.cast(decay, dtype)

    def _shadow(self, value: Any) -> Variable:
        key = _key(value)
        if key in self._averages:
            return self._averages[key]
        with init_scope():  # created once, outside any function being traced
            name = f"{_base_name(value)}/{self._name}"
            tensor_like = not isinstance(value, Variable)
            start = zeros(value.shape, value.dtype) if tensor_like else value.read_value()
            shadow = Variable(start, trainable=False, name=name)
            if tensor_like and self._zero_debias:
                self._debias[key] = (
                    Variable(zeros(value.shape, value.dtype), trainable=False,
                             name=f"{name}/biased"),
                    Variable(0.0, trainable=False, name=f"{name}/local_step"))
        self._averages[key] = shadow
        self._averaged[key] = value
        return shadow

    def apply(self, var_list: Optional[List[Any]] = None) -> Any:
        """Create the shadow variables (on first use) and update each average once.
        Elements are float Variables or float tensors; returns the update (None eagerly,
        an op in a graph)."""
        values = list(var_list) if var_list is not None else []
        for value in values:
            if value.dtype not in _dtypes.INEXACT and value.dtype is not _dtypes.bfloat16:
                raise TypeError(f"The variables must be half, float, or double: "
                                f"{_base_name(value)}")
        updates = []
        for value in values:
            shadow = self._shadow(value)
            current = convert_to_tensor(value)
            decay = self._decay_for(current.dtype)
            key = _key(value)
            if key in self._debias:
                biased, step = self._debias[key]
                new_biased = biased.assign_sub((biased - current) * (1.0 - decay))
                steps = step.assign_add(1.0)
                scale = 1.0 - math_ops.pow(decay, math_ops.cast(steps, current.dtype))
                updates.append(shadow.assign(new_biased / scale))
            else:
                updates.append(shadow.assign_sub((shadow - current) * (1.0 - decay)))
        return group(*updates)

    def average(self, var: Any) -> Optional[Variable]:
        """The shadow variable holding `var`'s moving average, or None if not averaged."""
        return self._averages.get(_key(var))

    def average_name(self, var: Any) -> str:
        """The checkpoint name of `var`'s average: `<var name>/<this EMA's name>`."""
        return f"{_base_name(var)}/{self._name}"

    def variables_to_restore(self, moving_avg_variables: Optional[List[Any]] = None) -> \
            Dict[str, Any]:
        """{name: variable} to restore averaged values into the variables themselves:
        averaged variables map from their average's name, the others from their own."""
        averaged = [v for v in self._averaged.values() if isinstance(v, Variable)]
        chosen = averaged if moving_avg_variables is None else list(moving_avg_variables)
        names = {}
        for var in chosen:
            names[self.average_name(var)] = var
        chosen_ids = {id(v) for v in chosen}
        for var in averaged:
            if id(var) not in chosen_ids:
                names[_base_name(var)] = var
        return names
