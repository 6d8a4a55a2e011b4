"""The ordered list of graph passes, each switchable (like tf.config.optimizer options).

Order is list order; the comments say where it matters. KF_DUMP_GRAPHS=1 prints the graph
after each pass. optimize() reports, per pass, the op counts before and after and the
fused groups present afterwards.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Tuple

from kilnflow.ops.fused import FUSED
from kilnflow.passes.constant_fold import constant_fold
from kilnflow.passes.cse import cse
from kilnflow.passes.fuse_elementwise import fuse_elementwise
from kilnflow.passes.plan_buffers import plan_buffers
from kilnflow.passes.prune import prune
from kilnflow.passes.simplify import simplify
from kilnflow.passes.subgraphs import make_subgraphs_pass

PASSES: List[Tuple[str, Callable[[Any], Any]]] = [
    ("prune", prune),                      # first, so no pass spends time on dead code
    ("constant_fold", constant_fold),      # before cse: equal folded values then merge
    ("cse", cse),
    ("simplify", simplify),                # after folding: x * (2 - 1) is x * 1 by now
    ("constant_fold", constant_fold),      # simplify can expose constant subgraphs
    ("prune", prune),                      # before fusion: a dead reader splits a group
    ("fuse_elementwise", fuse_elementwise),  # after every algebraic rewrite: it hides ops
    ("prune", prune),                      # drop what the rewrites left unused
    ("plan_buffers", plan_buffers),        # after the rewrites: it needs final consumers
    # cond branches and loop bodies, through this same list (the lambda: optimize is below)
    ("subgraphs", make_subgraphs_pass(lambda g: optimize(g)[0])),
]

# TF's tf.config.optimizer option names -> ours (TF's other options are accepted, no-ops)
TF_OPTIONS = {"constant_folding": ("constant_fold",),
              "arithmetic_optimization": ("simplify", "cse"),
              "remapping": ("fuse_elementwise",),
              "memory_optimization": ("plan_buffers",),
              "dependency_optimization": ("prune",)}
TF_IGNORED = {"layout_optimizer", "shape_optimization", "loop_optimization",
              "function_optimization", "debug_stripper", "scoped_allocator_optimization",
              "pin_to_host_optimization", "implementation_selector",
              "auto_mixed_precision", "min_graph_nodes", "auto_parallel"}

_enabled: Dict[str, bool] = {}


def names() -> List[str]:
    """Pass names, each once, in pipeline order."""
    return list(dict.fromkeys(name for name, _ in PASSES))


def set_options(options: Dict[str, Any]) -> None:
    """Switch passes on or off by name, e.g. {'constant_fold': False}; TF's option names
    ('constant_folding', 'arithmetic_optimization', 'remapping', 'disable_meta_optimizer'
    ...) work too."""
    known = set(names())
    for name, on in options.items():
        if name == "disable_meta_optimizer":
            if on:
                _enabled.update({n: False for n in known})
            continue
        if name in TF_OPTIONS:
            _enabled.update({n: bool(on) for n in TF_OPTIONS[name]})
        elif name in known:
            _enabled[name] = bool(on)
        elif name not in TF_IGNORED:
            raise ValueError(f"Unknown graph pass {name!r}; known: {sorted(known)}")


def get_options() -> Dict[str, bool]:
    return {name: _enabled.get(name, True) for name in names()}


class PassReport(tuple):
    """(pass, ops before, ops after); `.fused_groups` / `.fused_ops` count FusedElementwise
    ops in the graph after the pass and the ops they stand for."""

    def __new__(cls, name: str, before: int, after: int, graph: Any) -> "PassReport":
        report = super().__new__(cls, (name, before, after))
        fused = [op for op in graph.operations if op.opdef is FUSED]
        report.fused_groups = len(fused)
        report.fused_ops = sum(op.attrs["program"].n_ops for op in fused)
        return report

    def __str__(self) -> str:
        name, before, after = self
        text = f"{name}: {before} -> {after} ops"
        if self.fused_groups:
            plural = "s" if self.fused_groups != 1 else ""
            text += f" ({self.fused_groups} fused group{plural} of {self.fused_ops} ops)"
        return text


def optimize(graph: Any) -> Tuple[Any, List[PassReport]]:
    """Run the enabled passes; returns the new graph and one PassReport per pass run.

    >>> import kilnflow as kf
    >>> def f(x):
    ...     return kf.exp(x * 1.0) * 2.0 + kf.exp(x * 1.0)
    >>> concrete = kf.function(f).get_concrete_function(kf.TensorSpec([None], kf.float32))
    >>> for line in concrete.pass_report[2:7]:
    ...     print(line)
    cse: 9 -> 7 ops
    simplify: 7 -> 6 ops
    constant_fold: 6 -> 6 ops
    prune: 6 -> 5 ops
    fuse_elementwise: 5 -> 3 ops (1 fused group of 3 ops)
    """
    report = []
    dump = os.environ.get("KF_DUMP_GRAPHS") == "1"
    for name, graph_pass in PASSES:
        if not _enabled.get(name, True):
            continue
        before = len(graph.operations)
        graph = graph_pass(graph)
        report.append(PassReport(name, before, len(graph.operations), graph))
        if dump:
            print(f"--- after {name} ---\n{graph.pretty()}", file=sys.stderr)
    return graph, report
