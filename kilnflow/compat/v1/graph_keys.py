"""TF1 collections: GraphKeys and add_to_collection/get_collection on the default graph.

The variable collections are views of the graph's variables (every variable of a TF1 graph
is global; trainable ones are also in TRAINABLE_VARIABLES); other keys are plain lists kept
by the graph. `scope` filters by re.match on the items' names, as in TF.
"""
from __future__ import annotations

import re
import weakref
from typing import Any, Iterable, Optional

from kilnflow.graph import get_default_graph

# graph -> ids of its variables that get_variable(collections=[...]) kept out of
# GLOBAL_VARIABLES (TF: naming collections replaces the default global one)
_not_global: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def exclude_from_global(graph: Any, variable: Any) -> None:
    """Keep `variable` out of `graph`'s GLOBAL_VARIABLES view."""
    _not_global.setdefault(graph, set()).add(id(variable))


class GraphKeys:
    """Standard collection names (their values are TF's)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    TRAIN_OP = "train_op"
    VARIABLES = GLOBAL_VARIABLES


def _matches(item: Any, scope: Optional[str]) -> bool:
    if scope is None:
        return True
    name = getattr(item, "name", None)
    return isinstance(name, str) and re.match(scope, name) is not None


def get_collection(key: str, scope: Optional[str] = None) -> list:
    """The items of collection `key` in the default graph (a new list)."""
    graph = get_default_graph()
    if key == GraphKeys.GLOBAL_VARIABLES:
        hidden = _not_global.get(graph, ())
        items = [v for v in graph.global_variables() if id(v) not in hidden] + \
            graph.get_collection(key)
    elif key == GraphKeys.TRAINABLE_VARIABLES:
        items = [v for v in graph.global_variables() if v.trainable] + graph.get_collection(key)
    else:
        items = graph.get_collection(key)
    unique = list({id(x): x for x in items}.values())
    return [x for x in unique if _matches(x, scope)]


def get_collection_ref(key: str) -> list:
    """The graph's own list for `key`: appending to it adds to the collection."""
    return get_default_graph().collections.setdefault(key, [])


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Iterable[str], value: Any) -> None:
    for name in ([names] if isinstance(names, str) else names):
        add_to_collection(name, value)


def get_all_collection_keys() -> list:
    return list(get_default_graph().collections)


def global_variables(scope: Optional[str] = None) -> list:
    return get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope: Optional[str] = None) -> list:
    return get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope: Optional[str] = None) -> list:
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope: Optional[str] = None) -> list:
    return get_collection(GraphKeys.MODEL_VARIABLES, scope)
