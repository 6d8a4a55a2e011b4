"""The ordered list of graph passes, each switchable (like tf.config.optimizer options).

Order is list order. KF_DUMP_GRAPHS=1 prints the graph after each pass.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Tuple

from kilnflow.passes.prune import prune

# (name, pass). Later passes (folding, CSE, simplification, fusion, buffer planning) slot in
# here; prune comes first so the others never spend time on dead code, and again last.
PASSES: List[Tuple[str, Callable[[Any], Any]]] = [
    ("prune", prune),
]

_enabled: Dict[str, bool] = {}


def set_options(options: Dict[str, bool]) -> None:
    """Switch passes on or off by name, e.g. {'prune': False}."""
    known = {name for name, _ in PASSES}
    for name, on in options.items():
        if name not in known:
            raise ValueError(f"Unknown graph pass {name!r}; known: {sorted(known)}")
        _enabled[name] = bool(on)


def get_options() -> Dict[str, bool]:
    return {name: _enabled.get(name, True) for name, _ in PASSES}


def optimize(graph: Any) -> Tuple[Any, List[Tuple[str, int, int]]]:
    """Run the enabled passes; returns the new graph and (pass, ops before, ops after)."""
    report = []
    dump = os.environ.get("KF_DUMP_GRAPHS") == "1"
    for name, graph_pass in PASSES:
        if not _enabled.get(name, True):
            continue
        before = len(graph.operations)
        graph = graph_pass(graph)
        report.append((name, before, len(graph.operations)))
        if dump:
            print(f"--- after {name} ---\n{graph.pretty()}", file=sys.stderr)
    return graph, report
