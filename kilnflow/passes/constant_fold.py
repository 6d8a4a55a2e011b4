"""constant_fold: evaluate ops whose inputs are all constants once, at compile time.

    before:  a = Const(2.0); b = Const(3.0); c = Mul(a, b); out = AddV2(x, c)
    after:   c = Const(6.0); out = AddV2(x, c)          (a and b are left to prune)

Ops declared `shape_only` (Shape, Size, Rank) fold whenever their input's static shape
is fully known, constant or not.

Respects: `stateful` and `random` ops are never evaluated, and neither is anything fed
by one (a variable read is not a constant); graph inputs (placeholders, captures) are
never constant; ops with a `codegen` hook (control flow) are left alone; an op with
control inputs keeps its place. A result larger than MAX_ELEMENTS is not materialized,
and an op whose kernel raises is left for the runtime to report.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from kilnflow.core.const import CONST
from kilnflow.passes import facts
from kilnflow.passes.rewrite import const, copy_graph, input_ids

MAX_ELEMENTS = 1 << 16  # a folded value is stored in the graph: keep that small


def _foldable(op: Any, graph_inputs: set) -> bool:
    if op.opdef.stateful or op.opdef.random or op.control_inputs or not op.outputs:
        return False
    if op.opdef.codegen is not None:
        return False
    if any(id(t) in graph_inputs for t in op.outputs):
        return False
    return all(not t.shape.is_fully_defined() or
               int(np.prod(t.shape.as_list())) <= MAX_ELEMENTS for t in op.outputs)


def _evaluate(op: Any, values: list) -> Optional[list]:
    """The op's output arrays, or None when it cannot (or should not) be folded."""
    try:
        with np.errstate(all="ignore"):
            result = op.opdef.kernel(*values, **op.attrs)
    except Exception:  # noqa: BLE001 - left in the graph: the runtime reports it in context
        return None
    results = list(result) if op.opdef.multi_output else [result]
    if len(results) != len(op.outputs):
        return None
    arrays = []
    for t, r in zip(op.outputs, results):
        if not isinstance(r, (np.ndarray, np.generic)):
            return None
        r = np.asarray(r)
        if r.dtype != t.dtype.as_numpy_dtype or r.size > MAX_ELEMENTS or \
                not t.shape.is_compatible_with(r.shape):
            return None
        arrays.append(r)
    return arrays


def constant_fold(graph: Any) -> Any:
    graph_inputs = input_ids(graph)
    values: Dict[int, Any] = {}   # id(old tensor) -> its constant value
    folded = []

    def replace(op: Any, inputs: tuple, new_graph: Any, mapped: Any) -> Any:
        if op.opdef is CONST:
            if id(op.outputs[0]) not in graph_inputs:
                values[id(op.outputs[0])] = op.attrs["value"].array
            return None
        if not _foldable(op, graph_inputs):
            return None
        if facts.shape_only(op.opdef) and all(t.shape.is_fully_defined()
                                                    for t in op.inputs):
            # Shape/Size/Rank of a statically known shape: evaluate on a stand-in array
            arrays = _evaluate(op, [np.empty(t.shape.as_list(), t.dtype.as_numpy_dtype)
                                    for t in op.inputs])
        elif any(id(t) not in values for t in op.inputs):
            return None
        else:
            arrays = _evaluate(op, [values[id(t)] for t in op.inputs])
        if arrays is None:
            return None
        tensors = []
        for i, (t, array) in enumerate(zip(op.outputs, arrays)):
            values[id(t)] = array
            name = op.name if len(arrays) == 1 else f"{op.name}/output_{i}"
            tensors.append(const(new_graph, array, name, like=op))
        folded.append(op)
        return tensors

    result = copy_graph(graph, replace=replace)
    return result if folded else graph
