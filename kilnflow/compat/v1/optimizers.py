"""TF1 optimizers (tf.compat.v1.train.*Optimizer): minimize() in a graph returns the
training op a Session runs; eagerly, `loss` is a callable and the step runs at once.

compute_gradients uses symbolic gradients in a graph and a GradientTape eagerly;
apply_gradients updates each variable with its rule (`_apply`) and bumps `global_step`.
Slot variables (momentum, Adam's moments) are made beside their variable on first use.
"""
from __future__ import annotations

from typing import Any, List, Optional

from kilnflow.compat.v1.graph_keys import GraphKeys, get_collection
from kilnflow.context import ctx
from kilnflow.graph import control_dependencies, get_default_graph
from kilnflow.ops.array import zeros_like
from kilnflow.ops.graph_utils import group
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import cast, sqrt
from kilnflow.variables import Variable


class Optimizer:
    """Base class: subclasses give `_apply(grad, var)` (and `_prepare()` for constants)."""

    def __init__(self, use_locking: bool, name: str):
        self._name = name
        self._slots: dict = {}

    def get_name(self) -> str:
        return self._name

    def compute_gradients(self, loss: Any, var_list: Optional[list] = None,
                          gate_gradients: int = 1, aggregation_method: Any = None,
                          colocate_gradients_with_ops: bool = False,
                          grad_loss: Any = None) -> List[tuple]:
        """(gradient, variable) pairs; the gradient is None where loss does not depend on it."""
        if callable(loss):
            from kilnflow.autodiff.tape import GradientTape
            with GradientTape() as tape:
                value = loss()
            variables = list(var_list) if var_list is not None else \
                list(tape.watched_variables())
            grads = tape.gradient(value, variables, output_gradients=grad_loss)
            return list(zip(grads, variables))
        if ctx.graph is None:
            raise RuntimeError("`loss` passed to Optimizer.compute_gradients should be a "
                               "function when eager execution is enabled.")
        variables = list(var_list) if var_list is not None else \
            get_collection(GraphKeys.TRAINABLE_VARIABLES)
        if not variables:
            raise ValueError("No variables to optimize.")
        from kilnflow.autodiff.symbolic import gradients
        grads = gradients([loss], variables, None if grad_loss is None else [grad_loss])
        return list(zip(grads, variables))

    def apply_gradients(self, grads_and_vars: Any, global_step: Any = None,
                        name: Optional[str] = None) -> Any:
        """Update each variable from its gradient; then add 1 to `global_step` if given."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("No gradients provided for any variable: "
                             f"{[v.name for _, v in grads_and_vars]}.")
        graph = ctx.graph
        if graph is None:
            for g, v in pairs:
                self._apply(convert_to_tensor(g), v)
            if global_step is not None:
                global_step.assign_add(1)
            return None
        # As in TF, the update ops sit in scope 'Momentum/' and the train op is 'Momentum'
        scope = graph.unique_name(name or self._name, mark_as_used=False)
        with graph.name_scope(scope + "/"):
            updates = [self._apply(convert_to_tensor(g), v) for g, v in pairs]
        op_name = scope.rsplit("/", 1)[-1]
        if global_step is None:
            return group(*updates, name=op_name)
        with control_dependencies(updates):  # TF's train op: the global step's increment
            return global_step.assign_add(1, read_value=False, name=op_name)

    def minimize(self, loss: Any, global_step: Any = None, var_list: Optional[list] = None,
                 gate_gradients: int = 1, aggregation_method: Any = None,
                 colocate_gradients_with_ops: bool = False, name: Optional[str] = None,
                 grad_loss: Any = None) -> Any:
        """compute_gradients, then apply_gradients: the training op (None eagerly)."""
        pairs = self.compute_gradients(loss, var_list, grad_loss=grad_loss)
        return self.apply_gradients(pairs, global_step, name)

    def _slot(self, var: Variable, slot: str) -> Variable:
        """The optimizer's `slot` variable for `var`: zeros like it, named 'w/Momentum'."""
        key = (id(var.handle), slot)
        if key not in self._slots:
            base = var.name.split(":")[0]
            graph = ctx.graph

            def zeros() -> Any:
                return zeros_like(var.initial_value)
            if graph is not None and not graph.is_function:
                with graph.name_scope(base + "/"):
                    made = Variable(zeros, trainable=False, name=self._name, dtype=var.dtype)
            else:
                made = Variable(zeros, trainable=False, name=f"{base}/{self._name}",
                                dtype=var.dtype)
            self._slots[key] = (made, var)
        return self._slots[key][0]

    def get_slot(self, var: Variable, name: str) -> Optional[Variable]:
        found = self._slots.get((id(var.handle), name))
        return found[0] if found is not None else None

    def variables(self) -> list:
        return [slot for slot, _ in self._slots.values()]

    def _apply(self, grad: Any, var: Variable) -> Any:
        raise NotImplementedError


def _update(result: Any) -> Any:
    """The op of a graph update (assign_* with read_value=False), None eagerly."""
    return result if ctx.graph is not None else None


def _rate(value: Any, var: Variable) -> Any:
    value = value() if callable(value) else value
    return cast(convert_to_tensor(value), var.dtype)


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * grad.

    >>> import kilnflow as kf
    >>> v1 = kf.compat.v1
    >>> with kf.Graph().as_default():
    ...     w = kf.Variable(1.0)
    ...     step = v1.train.GradientDescentOptimizer(0.5).minimize(w * w)
    ...     with v1.Session() as sess:
    ...         sess.run(v1.global_variables_initializer())
    ...         sess.run(step)
    ...         print(sess.run(w))
    0.0
    """

    def __init__(self, learning_rate: Any, use_locking: bool = False,
                 name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply(self, grad: Any, var: Variable) -> Any:
        return _update(var.assign_sub(_rate(self._learning_rate, var) * grad,
                                      read_value=False))


class MomentumOptimizer(Optimizer):
    """accum = momentum * accum + grad; var -= lr * accum (or the Nesterov form)."""

    def __init__(self, learning_rate: Any, momentum: Any, use_locking: bool = False,
                 name: str = "Momentum", use_nesterov: bool = False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._nesterov = use_nesterov

    def _apply(self, grad: Any, var: Variable) -> Any:
        accum = self._slot(var, "momentum")
        lr, mu = _rate(self._learning_rate, var), _rate(self._momentum, var)
        new = accum.read_value() * mu + grad
        stored = accum.assign(new, read_value=False)
        with control_dependencies([stored] if ctx.graph is not None else []):
            step = (grad + new * mu) * lr if self._nesterov else new * lr
            return _update(var.assign_sub(step, read_value=False))


class AdamOptimizer(Optimizer):
    """TF1's Adam: m, v moments per variable and a bias-corrected step size."""

    def __init__(self, learning_rate: Any = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, use_locking: bool = False, name: str = "Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, \
            epsilon
        self._powers: dict = {}

    def _apply(self, grad: Any, var: Variable) -> Any:
        m, v = self._slot(var, "m"), self._slot(var, "v")
        power = self._powers.get(id(var.handle))
        if power is None:  # beta1^t and beta2^t, per variable (TF keeps one pair per graph)
            power = (Variable(self._beta1, trainable=False, name="beta1_power",
                              dtype=var.dtype),
                     Variable(self._beta2, trainable=False, name="beta2_power", dtype=var.dtype))
            self._powers[id(var.handle)] = power
        b1, b2 = _rate(self._beta1, var), _rate(self._beta2, var)
        p1, p2 = power[0].read_value(), power[1].read_value()
        lr = _rate(self._lr, var) * sqrt(1 - p2) / (1 - p1)
        new_m = m.read_value() * b1 + grad * (1 - b1)
        new_v = v.read_value() * b2 + grad * grad * (1 - b2)
        writes = [m.assign(new_m, read_value=False), v.assign(new_v, read_value=False)]
        with control_dependencies(writes if ctx.graph is not None else []):
            step = var.assign_sub(lr * new_m / (sqrt(new_v) + _rate(self._epsilon, var)),
                                  read_value=False)
        with control_dependencies([step] if ctx.graph is not None else []):
            bumps = [power[0].assign(p1 * b1, read_value=False),
                     power[1].assign(p2 * b2, read_value=False)]
        return group(*bumps) if ctx.graph is not None else None


def get_global_step(graph: Any = None) -> Optional[Variable]:
    """The graph's global step variable, or None."""
    found = (graph or get_default_graph()).get_collection(GraphKeys.GLOBAL_STEP)
    return found[0] if found else None


def get_or_create_global_step(graph: Any = None) -> Variable:
    """The graph's global step: an int64 scalar variable named 'global_step' (made once)."""
    step = get_global_step(graph)
    if step is None:
        step = Variable(0, trainable=False, name="global_step", dtype="int64")
        (graph or get_default_graph()).add_to_collection(GraphKeys.GLOBAL_STEP, step)
    return step


def create_global_step(graph: Any = None) -> Variable:
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    return get_or_create_global_step(graph)

