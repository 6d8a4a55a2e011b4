"""kf.compat.v1: TF1-style graphs, placeholders, Sessions and variable initializers."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from kilnflow import context as _context
from kilnflow.compat.v1.session import ConfigProto as ConfigProto
from kilnflow.compat.v1.session import GPUOptions as GPUOptions
from kilnflow.compat.v1.session import InteractiveSession as InteractiveSession
from kilnflow.compat.v1.session import Session as Session
from kilnflow.context import ctx as _ctx
from kilnflow.graph import Graph as Graph
from kilnflow.graph import control_dependencies as control_dependencies
from kilnflow.graph import device as device
from kilnflow.graph import get_default_graph as get_default_graph
from kilnflow.graph import name_scope as name_scope
from kilnflow.graph import reset_default_graph as reset_default_graph
from kilnflow.graph import NO_OP as _NO_OP
from kilnflow.core.opdef import bind as _bind


def placeholder(dtype: Any, shape: Any = None, name: Optional[str] = None) -> Any:
    """A graph input that must be fed in Session.run (graph mode only)."""
    if _ctx.graph is None:
        raise RuntimeError("tf.placeholder() is not compatible with eager execution.")
    return _ctx.graph.placeholder(dtype, shape, name)


def _group(ops: Sequence, name: str) -> Any:
    graph = get_default_graph()
    with graph.as_default(), control_dependencies(list(ops)):
        _bind(_NO_OP, (), name=name)
    return graph.operations[-1]


def variables_initializer(var_list: Sequence, name: str = "init") -> Any:
    """An op that runs the initializers of `var_list`."""
    return _group([v.initializer for v in var_list if v.initializer is not None], name)


def global_variables(scope: Optional[str] = None) -> list:
    variables = get_default_graph().global_variables()
    return [v for v in variables if scope is None or v.name.startswith(scope)]


def trainable_variables(scope: Optional[str] = None) -> list:
    return [v for v in global_variables(scope) if v.trainable]


def global_variables_initializer() -> Any:
    """An op that initializes every variable of the default graph."""
    return variables_initializer(global_variables(), name="init")


initialize_all_variables = global_variables_initializer


def disable_eager_execution() -> None:
    """Switch to TF1 graph mode: ops build into the default graph until re-enabled."""
    if _ctx.graph is None:
        _ctx.eager_default = False
        _ctx.graph = get_default_graph()


def enable_eager_execution(config: Any = None, device_policy: Any = None,
                           execution_mode: Any = None) -> None:
    if not _ctx.eager_default:
        _ctx.eager_default = True
        _ctx.graph = None


def executing_eagerly() -> bool:
    return _context.executing_eagerly()


def get_default_session() -> Any:
    return _ctx.default_session


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients",
              stop_gradients: Any = None, unconnected_gradients: Any = "none") -> list:
    """Symbolic gradients of sum(ys) w.r.t. xs in the default graph."""
    from kilnflow.autodiff.symbolic import gradients as _gradients
    return _gradients(ys, xs, grad_ys, unconnected_gradients)
