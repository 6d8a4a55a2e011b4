"""A graph as a picture without TensorBoard: Graphviz DOT text (and SVG when the `graphviz`
Python package and its `dot` binary are present).

Nodes are grouped into nested clusters by name scope (`dense/MatMul` sits in `dense`) and,
inside a scope, by the user source line that created them when several ops share one; a
fused elementwise group is a cluster of its steps; cond / while bodies are clusters of
their own ops. A profile (runtime/profile.py Recorder) can annotate nodes with self time.
Reads graph ops only.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

_FILL = {"stateful": "#fde2c8", "fused": "#d9ead3", "input": "#dbe9f6", "plain": "#f5f5f5"}


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _where(op: Any) -> str:
    return f"{op.location[0].rsplit('/', 1)[-1]}:{op.location[1]}" if op.location else ""


class _Writer:
    def __init__(self, timings: Optional[Dict[str, int]]):
        self.lines: List[str] = []
        self.ids: Dict[int, str] = {}
        self.timings = timings or {}
        self.clusters = 0

    def node_id(self, op: Any) -> str:
        return self.ids.setdefault(id(op), f"n{len(self.ids)}")

    def cluster(self, label: str, indent: str, style: str = "rounded") -> str:
        self.clusters += 1
        self.lines.append(f"{indent}subgraph cluster_{self.clusters} {{")
        self.lines.append(f"{indent}  label={_quote(label)}; style={_quote(style)};")
        return indent + "  "

    def node(self, op: Any, indent: str) -> None:
        shapes = ", ".join(f"{t.shape} {t.dtype.name}" for t in op.outputs[:2])
        label = f"{op.name.rsplit('/', 1)[-1]}\n{op.type}" + (f"\n{shapes}" if shapes else "")
        own = self.timings.get(op.name)
        if own is not None:
            label += f"\n{own / 1e3:.1f} µs"
        kind = "input" if op.type == "Placeholder" else "fused" if \
            op.type == "FusedElementwise" else "stateful" if op.opdef.stateful else "plain"
        tooltip = f"{op.name} ({op.type}) {_where(op)}"
        self.lines.append(f"{indent}{self.node_id(op)} [label={_quote(label)}, "
                          f"tooltip={_quote(tooltip)}, fillcolor={_quote(_FILL[kind])}];")
        program = op.attrs.get("program") if op.type == "FusedElementwise" else None
        if program is not None:  # the fused group's steps, as a cluster beside the node
            inner = self.cluster(f"fused {op.name}", indent, "dashed")
            steps = str(program).strip("'").split("; ")
            self.lines.append(f"{inner}{self.node_id(op)}_steps [shape=note, "
                              f"label={_quote(chr(10).join(steps))}];")
            self.lines.append(f"{indent}}}")
            self.lines.append(f"{indent}{self.node_id(op)}_steps -> {self.node_id(op)} "
                              f"[style=dotted, arrowhead=none];")
        for key, value in op.attrs.items():
            body = getattr(value, "graph", None)
            if body is not None and hasattr(body, "operations"):
                inner = self.cluster(f"{op.name}: {key}", indent, "dotted")
                self.graph_body(body, inner)
                self.lines.append(f"{indent}}}")

    def graph_body(self, graph: Any, indent: str) -> None:
        """Nodes in nested name-scope clusters, then edges."""
        tree: Dict[str, Any] = {"ops": [], "children": {}}
        for op in graph.operations:
            level = tree
            for part in op.name.split("/")[:-1]:
                level = level["children"].setdefault(part, {"ops": [], "children": {}})
            level["ops"].append(op)
        self._scope(tree, indent)
        for op in graph.operations:
            for t in op.inputs:
                if id(t.op) in self.ids:
                    self.lines.append(f"{indent}{self.node_id(t.op)} -> {self.node_id(op)} "
                                      f"[label={_quote(str(t.shape))}];")
            for c in op.control_inputs:
                if id(c) in self.ids:
                    self.lines.append(f"{indent}{self.node_id(c)} -> {self.node_id(op)} "
                                      f"[style=dashed, color=gray];")

    def _scope(self, level: Dict[str, Any], indent: str) -> None:
        by_line: Dict[str, list] = {}
        for op in level["ops"]:
            by_line.setdefault(_where(op), []).append(op)
        for where, ops in by_line.items():
            if where and len(ops) > 1:   # several ops from one user line: one box
                inner = self.cluster(where, indent, "filled")
                self.lines.append(f"{inner}color={_quote('#eeeeee')};")
                for op in ops:
                    self.node(op, inner)
                self.lines.append(f"{indent}}}")
            else:
                for op in ops:
                    self.node(op, indent)
        for name, child in level["children"].items():
            inner = self.cluster(name, indent)
            self._scope(child, inner)
            self.lines.append(f"{indent}}}")


def to_dot(graph: Any, timings: Optional[Dict[str, int]] = None) -> str:
    """Graphviz DOT text of `graph`; `timings` maps op names to self time in ns."""
    writer = _Writer(timings)
    writer.lines += [f"digraph {_quote(getattr(graph, 'name', 'graph'))} {{",
                     "  rankdir=TB; compound=true;",
                     '  node [shape=box, style="rounded,filled", fontname="Helvetica", '
                     'fontsize=10];',
                     '  edge [fontname="Helvetica", fontsize=8];']
    writer.graph_body(graph, "  ")
    writer.lines.append("}")
    return "\n".join(writer.lines) + "\n"


def to_svg(graph: Any, timings: Optional[Dict[str, int]] = None) -> str:
    """SVG text rendered by Graphviz (needs the `graphviz` package and `dot` binary)."""
    try:
        import graphviz
    except ImportError:
        raise ImportError("to_svg() renders with Graphviz: `pip install graphviz` and "
                          "install the Graphviz `dot` binary (to_dot() needs neither)") from None
    try:
        return graphviz.Source(to_dot(graph, timings)).pipe(format="svg").decode("utf-8")
    except getattr(graphviz, "ExecutableNotFound", OSError) as exc:
        raise RuntimeError(f"to_svg() needs the Graphviz `dot` binary on PATH (the `graphviz` "
                           f"Python package is installed; to_dot() needs neither): {exc}") \
            from None
