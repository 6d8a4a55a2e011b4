"""autocluster: `kf.config.optimizer.set_jit("autoclustering")`, TF's automatic clustering.

    before:  a = MatMul(x, w); b = FusedElementwise(a, bias); c = PyFunc(b); d = Sum(c)
    after:   a, b = JitCluster(x, w, bias); c = PyFunc(b); d = Sum(c)   (d: too small alone)

An optimized function graph is cut into clusters of ops the numba backend can lower, each
replaced by one JitCluster op whose kernel runs the compiled cluster; every other op stays
with the Python runtime. A cluster is a run of consecutive compilable ops in the graph's
(topological) order, so replacing it by one op never makes a cycle: its inputs come from
earlier ops, its outputs go to later ones. Stateful ops (variables, random draws, prints)
and ops with control edges stay outside, so program order is kept by the ops that have
it. A run with fewer than `min_cluster_size` ops of work (constants and identities do not
count) is left alone, as TF's --tf_xla_min_cluster_size does. A cluster compiles on its
first run; if numba then refuses it, the cluster falls back to the interpreter for good.

Only a ConcreteFunction's top-level graph is clustered (a While or If whose bodies all
lower joins a cluster whole). Needs the `fast` extra; without numba the switch is a no-op.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import numpy as np

from kilnflow import errors
from kilnflow.core.opdef import OpDef
from kilnflow.passes.rewrite import add_op, control_targets, copy_op, output_ids
from kilnflow.shapes import TensorSpec

_state: Dict[str, Any] = {"on": os.environ.get("KF_JIT_AUTOCLUSTERING", "") not in ("", "0")}
TRIVIAL = {"Const", "Identity", "StopGradient", "NoOp"}


def set_jit(enabled: Any) -> None:
    """TF's `tf.config.optimizer.set_jit`: "autoclustering" (or True) clusters and
    compiles what it can in functions traced from now on; False (or "") turns it off."""
    if enabled not in (True, False, "autoclustering", "", None):
        raise ValueError(f"set_jit: expected True, False or 'autoclustering', got {enabled!r}")
    _state["on"] = enabled in (True, "autoclustering")


def get_jit() -> str:
    """'autoclustering' when on, '' when off (TF's values)."""
    return "autoclustering" if _state["on"] else ""


def min_cluster_size() -> int:
    return int(os.environ.get("KF_JIT_MIN_CLUSTER_SIZE", "4"))


class Cluster:
    """The ops of one cluster (from the optimized graph) with its inputs and outputs: the
    graph-like object the jit backend lowers, and the interpreter's fallback."""

    def __init__(self, name: str, operations: List[Any], inputs: List[Any],
                 outputs: List[Any]) -> None:
        self.name = name
        self.operations = operations
        self.inputs = inputs
        self.outputs = outputs
        self._run: Optional[Any] = None
        self.compiled: Optional[bool] = None  # None until the first run
        # a While's recorded history leaving the cluster for a Python WhileGrad: per
        # output position, the dtypes of its loop variables
        self.histories = {k: [np.dtype(v.dtype.as_numpy_dtype) for v in
                              t.op.outputs[:t.op.attrs["n_vars"]]]
                          for k, t in enumerate(outputs) if t.dtype.name == "variant" and
                          t.op.type in ("While", "StatelessWhile")}

    def __call__(self, *arrays: Any) -> tuple:
        if self._run is None:
            self._compile()
        if self.compiled is False:
            return tuple(self._interpret(*arrays))
        try:
            results = tuple(self._run(*arrays))
            return self._typed(results) if self.histories else results
        except Exception as exc:  # noqa: BLE001 - the interpreter decides what it was
            if os.environ.get("KF_JIT_DEBUG"):
                import traceback
                traceback.print_exc()
            # bad values raise here exactly as without clustering; if the interpreter
            # succeeds, numba could not compile or run this cluster: interpret from now on
            result = tuple(self._interpret(*arrays))
            self.compiled = False
            return result

    def _typed(self, results: tuple) -> tuple:
        """A compiled loop's history has numba's boxed values (Python ints and floats for
        scalars); the Python WhileGrad reads each state as the Python runtime records it:
        NumPy values of the loop variables' dtypes."""
        results = list(results)
        for k, dtypes in self.histories.items():
            results[k] = [tuple(np.asarray(v, d) for v, d in zip(entry, dtypes))
                          for entry in results[k]]
        return tuple(results)

    def _compile(self) -> None:
        from kilnflow.runtime import jit
        try:
            self._run = jit.compile_graph(self.name, self)
            self.compiled = True
        except (errors.InvalidArgumentError, ImportError):
            self._run, self.compiled = self._interpret, False

    def _interpret(self, *arrays: Any) -> list:
        from kilnflow.runtime import interpreter
        return interpreter.evaluate(self.operations, self.inputs, self.outputs, arrays)

    def __repr__(self) -> str:  # what a graph dump shows for the attr
        return f"<Cluster {self.name}: {len(self.operations)} ops>"


def _cluster_rule(*inputs: Any, cluster: Cluster) -> list:
    return [TensorSpec(t.shape, t.dtype) for t in cluster.outputs]


JIT_CLUSTER = OpDef(
    "JitCluster", shape=_cluster_rule, kernel=lambda *arrays, cluster: cluster(*arrays),
    grad=None, stateful=False, random=False, commutative=False, fusable=None,
    multi_output=True, same_dtype=False, dtypes=None, check_eager=False, watch_attr=None,
    codegen=None, inline=None, reduction=None, identity=False, shape_only=False,
    permutation_attr=None, reshape_attr=None, transpose_flags=None, fresh_output=False)


def _compilable(op: Any, controls: set) -> bool:
    from kilnflow.runtime import jit
    if op.type == "Placeholder" or op.opdef.stateful or op.control_inputs or \
            id(op) in controls:
        return False
    return op.type == "Const" or jit.lowerable(op)


def clusters(graph: Any) -> List[List[Any]]:
    """Runs of consecutive compilable ops, each with enough work to be worth a call."""
    controls = control_targets(graph)
    runs: List[List[Any]] = [[]]
    for op in graph.operations:
        if _compilable(op, controls):
            runs[-1].append(op)
        elif runs[-1]:
            runs.append([])
    least = min_cluster_size()
    return [run for run in runs if sum(op.type not in TRIVIAL for op in run) >= least]


def autocluster(graph: Any) -> Any:
    """The graph with each cluster replaced by a JitCluster op (or `graph` itself)."""
    if not _state["on"]:
        return graph
    from kilnflow.runtime import jit
    if not jit.available():
        return graph
    found = clusters(graph)
    if not found:
        return graph
    used_later: Dict[int, int] = {}
    for i, op in enumerate(graph.operations):
        for t in op.inputs:
            used_later[id(t)] = i
    returned = output_ids(graph)
    position = {id(op): i for i, op in enumerate(graph.operations)}
    first_of: Dict[int, Cluster] = {}
    member: set = set()
    for k, run in enumerate(found):
        inside = {id(t) for op in run for t in op.outputs}
        inputs, seen = [], set()
        for op in run:
            for t in op.inputs:
                if id(t) not in inside and id(t) not in seen:
                    seen.add(id(t))
                    inputs.append(t)
        last = position[id(run[-1])]
        outputs = [t for op in run if op.type != "Const" for t in op.outputs
                   if used_later.get(id(t), -1) > last or id(t) in returned]
        if not outputs:
            continue
        first_of[id(run[0])] = Cluster(f"{graph.name}_cluster_{k}", run, inputs, outputs)
        member.update(id(op) for op in run if op.type != "Const")
    return _rebuild(graph, first_of, member)


def _rebuild(graph: Any, first_of: Dict[int, Cluster], member: set) -> Any:
    new_graph = graph.empty_like()
    tensor_map: Dict[int, Any] = {}
    op_map: Dict[int, Any] = {}
    for op in graph.operations:
        cluster = first_of.get(id(op))
        if cluster is not None:
            node = add_op(new_graph, JIT_CLUSTER, [tensor_map[id(t)] for t in cluster.inputs],
                          {"cluster": cluster}, "JitCluster", like=op)
            tensor_map.update((id(old), new) for old, new in zip(cluster.outputs,
                                                                   node.outputs))
        if id(op) in member:
            continue
        inputs = tuple(tensor_map[id(t)] for t in op.inputs)
        controls = [op_map[id(c)] for c in op.control_inputs if id(c) in op_map]
        new = copy_op(new_graph, op, inputs, controls)
        op_map[id(op)] = new
        tensor_map.update((id(old), t) for old, t in zip(op.outputs, new.outputs))
    new_graph.finish_copy(graph, tensor_map)
    return new_graph
