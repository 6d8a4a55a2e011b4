"""kf.compat.v1: TF1-style graphs, placeholders, Sessions, variable scopes, collections,
Savers and optimizers."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from kilnflow import context as _context
from kilnflow.compat.v1 import layers as layers
from kilnflow.compat.v1 import logging as logging
from kilnflow.compat.v1 import losses as losses
from kilnflow.compat.v1.renamed import log as log
from kilnflow.compat.v1.renamed import name_scope as name_scope
from kilnflow.compat.v1.renamed import random_normal as random_normal
from kilnflow.compat.v1.renamed import random_uniform as random_uniform
from kilnflow.compat.v1.renamed import reduce_all as reduce_all
from kilnflow.compat.v1.renamed import reduce_any as reduce_any
from kilnflow.compat.v1.renamed import reduce_max as reduce_max
from kilnflow.compat.v1.renamed import reduce_mean as reduce_mean
from kilnflow.compat.v1.renamed import reduce_min as reduce_min
from kilnflow.compat.v1.renamed import reduce_prod as reduce_prod
from kilnflow.compat.v1.renamed import reduce_sum as reduce_sum
from kilnflow.compat.v1.renamed import set_random_seed as set_random_seed
from kilnflow.compat.v1.renamed import to_double as to_double
from kilnflow.compat.v1.renamed import to_float as to_float
from kilnflow.compat.v1.renamed import to_int32 as to_int32
from kilnflow.compat.v1.renamed import to_int64 as to_int64
from kilnflow.compat.v1.renamed import truncated_normal as truncated_normal
from kilnflow.compat.v1 import saved_model as saved_model
from kilnflow.compat.v1 import train as train
from kilnflow.compat.v1.graph_keys import GraphKeys as GraphKeys
from kilnflow.compat.v1.graph_keys import add_to_collection as add_to_collection
from kilnflow.compat.v1.graph_keys import add_to_collections as add_to_collections
from kilnflow.compat.v1.graph_keys import get_all_collection_keys as get_all_collection_keys
from kilnflow.compat.v1.graph_keys import get_collection as get_collection
from kilnflow.compat.v1.graph_keys import get_collection_ref as get_collection_ref
from kilnflow.compat.v1.graph_keys import global_variables as global_variables
from kilnflow.compat.v1.graph_keys import local_variables as local_variables
from kilnflow.compat.v1.graph_keys import model_variables as model_variables
from kilnflow.compat.v1.graph_keys import trainable_variables as trainable_variables
from kilnflow.compat.v1.optimizers import group as group
from kilnflow.compat.v1.placeholders import placeholder_with_default as placeholder_with_default
from kilnflow.compat.v1.session import ConfigProto as ConfigProto
from kilnflow.compat.v1.session import GPUOptions as GPUOptions
from kilnflow.compat.v1.session import InteractiveSession as InteractiveSession
from kilnflow.compat.v1.session import Session as Session
from kilnflow.sparse.sparse_tensor import SparseTensorValue as SparseTensorValue
from kilnflow.compat.v1.variable_scope import AUTO_REUSE as AUTO_REUSE
from kilnflow.compat.v1.variable_scope import VariableHolder
from kilnflow.compat.v1.variable_scope import VariableScope as VariableScope
from kilnflow.compat.v1.variable_scope import constant_initializer as constant_initializer
from kilnflow.compat.v1.variable_scope import get_variable as get_variable
from kilnflow.compat.v1.variable_scope import get_variable_scope as get_variable_scope
from kilnflow.compat.v1.variable_scope import glorot_normal_initializer as glorot_normal_initializer
from kilnflow.compat.v1.variable_scope import \
    glorot_uniform_initializer as glorot_uniform_initializer
from kilnflow.compat.v1.variable_scope import ones_initializer as ones_initializer
from kilnflow.compat.v1.variable_scope import random_normal_initializer as random_normal_initializer
from kilnflow.compat.v1.variable_scope import \
    random_uniform_initializer as random_uniform_initializer
from kilnflow.compat.v1.variable_scope import \
    truncated_normal_initializer as truncated_normal_initializer
from kilnflow.compat.v1.variable_scope import \
    variance_scaling_initializer as variance_scaling_initializer
from kilnflow.compat.v1.variable_scope import variable_scope as variable_scope
from kilnflow.compat.v1.variable_scope import zeros_initializer as zeros_initializer
from kilnflow.context import ctx as _ctx
from kilnflow.graph import Graph as Graph
from kilnflow.graph import control_dependencies as control_dependencies
from kilnflow.graph import device as device
from kilnflow.graph import get_default_graph as get_default_graph
from kilnflow.graph import reset_default_graph as _reset_default_graph
from kilnflow.graph import NO_OP as _NO_OP
from kilnflow.core.opdef import bind as _bind
from kilnflow.ops.convert import constant as constant
from kilnflow.variables import Variable as Variable
from kilnflow.ops.strings import to_number as string_to_number



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


def global_variables_initializer() -> Any:
    """An op that initializes every variable of the default graph."""
    return variables_initializer(global_variables(), name="init")


def local_variables_initializer() -> Any:
    """An op that initializes the variables of the LOCAL_VARIABLES collection."""
    return variables_initializer(local_variables(), name="init_1")


initialize_all_variables = global_variables_initializer


def assign(ref: Any, value: Any, validate_shape: Any = None, use_locking: Any = None,
           name: Optional[str] = None) -> Any:
    """ref.assign(value): in a graph, a read of `ref` that runs after the update."""
    return ref.assign(value, name=name)


def assign_add(ref: Any, value: Any, use_locking: Any = None, name: Optional[str] = None) -> Any:
    return ref.assign_add(value, name=name)


def assign_sub(ref: Any, value: Any, use_locking: Any = None, name: Optional[str] = None) -> Any:
    return ref.assign_sub(value, name=name)


def reset_default_graph() -> None:
    """A new, empty default graph; with eager execution disabled, ops build into it."""
    old = get_default_graph()
    _reset_default_graph()
    if not _ctx.eager_default and _ctx.graph is old:
        _ctx.graph = None  # so get_default_graph() answers the new graph
        _ctx.graph = get_default_graph()


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


def disable_v2_behavior() -> None:
    """TF1 behaviour: graph mode (the other v2 switches have no v1 form here)."""
    disable_eager_execution()


def enable_v2_behavior() -> None:
    enable_eager_execution()


def enable_tensor_equality() -> None:
    """Tensors compare elementwise with == (always the case in kilnflow)."""


def disable_tensor_equality() -> None:
    from kilnflow import errors
    raise errors.UnimplementedError(
        "disable_tensor_equality: kilnflow tensors always compare elementwise with ==; "
        "use `x is y` or x.ref() for identity")


def executing_eagerly() -> bool:
    return _context.executing_eagerly()


def executing_eagerly_outside_functions() -> bool:
    """True unless eager execution is disabled (program-wide) or a TF1 graph is being
    built: kf.function tracing does not count."""
    graph = _ctx.graph
    while graph is not None and getattr(graph, "is_function", False):
        graph = graph.outer_graph
    return _ctx.eager_default and graph is None


def get_default_session() -> Any:
    return _ctx.default_session


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients",
              stop_gradients: Any = None, unconnected_gradients: Any = "none") -> list:
    """Symbolic gradients of sum(ys) w.r.t. xs in the default graph (kf.gradients)."""
    from kilnflow.functional.gradients import gradients as _gradients
    return _gradients(ys, xs, grad_ys, name, stop_gradients=stop_gradients,
                      unconnected_gradients=unconnected_gradients)


def wrap_function(fn: Callable, signature: Sequence, name: Optional[str] = None) -> Any:
    """Trace TF1-style `fn` once for `signature` (TensorSpecs) into a ConcreteFunction:
    no AutoGraph, variables it makes (get_variable too) live on with the function.

    >>> import kilnflow as kf
    >>> f = kf.compat.v1.wrap_function(lambda x: x * 2.0, [kf.TensorSpec([], kf.float32)])
    >>> float(f(kf.constant(3.0)))
    6.0
    """
    from kilnflow.compat.v1.wrapped import WrappedFunction
    from kilnflow.function import tracing
    holder = VariableHolder()
    signature = tuple(signature)
    names = [f"args_{i}" for i in range(len(signature))]
    if tracing.signature_of(fn) is not None:
        params = [p.name for p in tracing.signature_of(fn).parameters.values()]
        names = params[:len(signature)] + names[len(params):]
    with holder.trace():
        # one trace, as TF's wrap_function: variables it creates (kf.Variable or
        # get_variable) are made once and live on with the function
        concrete = tracing.trace(name or getattr(fn, "__name__", "wrapped_function"), fn,
                                 signature, {}, (), names, False, lambda variable: None,
                                 WrappedFunction)
    concrete.python_signature = tracing.signature_of(fn)
    return concrete


def __getattr__(name: str) -> Any:
    """TF's compat.v1 also holds TF 2's names (`import tensorflow.compat.v1 as tf` code
    reaches tf.matmul, tf.nn, tf.float32 through it): names not defined here come from kf."""
    if name.startswith("__"):
        raise AttributeError(name)
    import kilnflow
    try:
        return getattr(kilnflow, name)
    except AttributeError:
        raise AttributeError(f"module 'kilnflow.compat.v1' has no attribute {name!r}") \
            from None
