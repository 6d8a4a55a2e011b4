"""Model.summary(): Keras 3's box-drawn table of layers (name and type, output shape,
parameter count, and for branching functional models what each layer is connected to),
then the parameter totals with their sizes in bytes."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from kilnflow.shapes import TensorShape

# Keras 3's column widths (including one space of padding on each side) for its default
# line length: sequential-like models, and models that show "Connected to".
SEQUENTIAL_WIDTHS = (33, 24, 15)
CONNECTED_WIDTHS = (21, 19, 12, 19)
RIGHT_ALIGNED = "Param #"


def print_summary(model: Any, line_length: Optional[int] = None, positions: Any = None,
                  print_fn: Any = None, expand_nested: bool = False,
                  show_trainable: bool = False) -> None:
    """Print a model's table of layers as Keras 3 does. `print_fn` gets the whole text in
    one call, as Keras 3 calls it."""
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by "
                         "calling `build()` or by calling the model on a batch of data.")
    connected = not _sequential_like(model)
    headers = ["Layer (type)", "Output Shape", "Param #"] + (["Connected to"] if connected
                                                            else [])
    widths = _widths(CONNECTED_WIDTHS if connected else SEQUENTIAL_WIDTHS, line_length,
                     positions)
    rows = []
    for layer in model.layers:
        row = [f"{layer.name} ({type(layer).__name__})", shape_text(layer._last_output_shape),
               f"{layer.count_params() if layer.built else 0:,}"]
        if connected:
            row.append(_connections(model, layer))
        rows.append(row)
    lines = [f'Model: "{model.name}"'] + _table(headers, rows, widths)
    trainable = _count(model.trainable_weights)
    frozen = _count(model.non_trainable_weights)
    optimizer = getattr(model, "optimizer", None)
    slots = _count(getattr(optimizer, "variables", None) or [])
    total = tuple(a + b + c for a, b, c in zip(trainable, frozen, slots))
    lines.append(f" Total params: {_amount(total)}")
    lines.append(f" Trainable params: {_amount(trainable)}")
    lines.append(f" Non-trainable params: {_amount(frozen)}")
    if slots[0]:
        lines.append(f" Optimizer params: {_amount(slots)}")
    (print_fn or print)("\n".join(lines))


def _widths(default: Sequence[int], line_length: Optional[int], positions: Any) -> list:
    if not line_length and not positions:
        return list(default)
    total = (line_length or sum(default)) - len(default) - 1
    ends = positions or np.cumsum(default) / sum(default)
    if ends[-1] > 1:  # positions given as character offsets
        ends = [e / ends[-1] for e in ends]
    edges = [0] + [int(round(total * e)) for e in ends]
    return [max(4, b - a) for a, b in zip(edges, edges[1:])]


def _table(headers: List[str], rows: List[List[str]], widths: List[int]) -> List[str]:
    def rule(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * w for w in widths) + right

    def cells(fields: List[str], bar: str) -> List[str]:
        wrapped = [_wrap(text, w - 2) for text, w in zip(fields, widths)]
        height = max(len(w) for w in wrapped)
        out = []
        for i in range(height):
            parts = []
            for header, lines, w in zip(headers, wrapped, widths):
                text = lines[i] if i < len(lines) else ""
                text = text.rjust(w - 2) if header == RIGHT_ALIGNED else text.ljust(w - 2)
                parts.append(f" {text} ")
            out.append(bar + bar.join(parts) + bar)
        return out
    lines = [rule("┏", "━", "┳", "┓")] + cells(headers, "┃") + [rule("┡", "━", "╇", "┩")]
    for i, row in enumerate(rows):
        if i:
            lines.append(rule("├", "─", "┼", "┤"))
        lines += cells(row, "│")
    lines.append(rule("└", "─", "┴", "┘"))
    return lines


def _wrap(text: str, width: int) -> List[str]:
    """Word-wrap at spaces; a word longer than the cell is cut with an ellipsis."""
    lines: List[str] = []
    for word in text.split(" "):
        if len(word) > width:
            word = word[:width - 1] + "…"
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _count(weights: Sequence[Any]) -> tuple:
    """(parameter count, bytes) of some variables."""
    count = nbytes = 0
    for w in weights:
        n = int(np.prod(w.shape.as_list()))
        count += n
        nbytes += n * w.dtype.size
    return count, nbytes


def _amount(count_and_bytes: tuple) -> str:
    count, nbytes = count_and_bytes
    size, unit = float(nbytes), "B"
    for bigger in ("KB", "MB", "GB", "TB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{count:,} ({size:.2f} {unit})"


def _model_nodes(model: Any) -> list:
    return list(getattr(model, "_nodes", None) or [])


def _sequential_like(model: Any) -> bool:
    """Keras shows "Connected to" only for functional models that branch or merge: more
    than one input, a node with several inputs, or a tensor used twice."""
    nodes = _model_nodes(model)
    if not nodes:
        return True  # Sequential and subclassed models
    if len(getattr(model, "inputs", None) or []) > 1:
        return False
    used: set = set()
    for node in nodes:
        if len(node.parents) > 1:
            return False
        for parent in node.parents:
            if id(parent) in used:
                return False
            used.add(id(parent))
    return True


def _connections(model: Any, layer: Any) -> str:
    names = []
    for node in _model_nodes(model):
        if node.layer is not layer:
            continue
        for parent in node.parents:
            source, node_index, tensor_index = parent._keras_history
            names.append(f"{source.name}[{node_index}][{tensor_index}]")
    return ", ".join(names) or "-"


def shape_text(shape: Any) -> str:
    """A layer's last output shape as summary() shows it: the batch dim as None."""
    if shape is None:
        return "multiple"
    if isinstance(shape, TensorShape):
        if shape.rank is None:
            return "?"
        dims = shape.as_list()
        return str(tuple([None] + dims[1:] if dims else dims))
    if isinstance(shape, (list, tuple)):
        return ", ".join(shape_text(s) for s in shape)
    return str(shape)
