"""TF 2's printed form of a ConcreteFunction's signature: "Input Parameters", "Output Type"
and "Captures", with each value written as a type (TensorSpec, Tuple[...], Literal[...]).

Reads a traced ConcreteFunction (its arguments, output template and graph); builds nothing.
The forms follow TF 2.21's `pretty_printed_signature` (recorded in tests/corpus).
"""
from __future__ import annotations

import inspect
from typing import Any, List, Optional

import numpy as np

from kilnflow import nest
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor


def value_type(value: Any, tensor_specs: Optional[list] = None) -> str:
    """A traced argument (or returned leaf) written as TF writes its type. Tensor leaves
    take their relaxed spec from `tensor_specs` (consumed in order) when given."""
    if isinstance(value, (Tensor, np.ndarray, TensorSpec)):
        name = value.name if isinstance(value, TensorSpec) else None
        spec = tensor_specs.pop(0) if tensor_specs else TensorSpec(value.shape, value.dtype)
        return repr(TensorSpec(spec.shape, spec.dtype, name))
    if hasattr(value, "_fields") and isinstance(value, tuple):
        items = ", ".join(value_type(v, tensor_specs) for v in value)
        return f"{type(value).__name__}[{items}]"
    if isinstance(value, (list, tuple)):
        kind = "List" if isinstance(value, list) else "Tuple"
        return f"{kind}[{', '.join(value_type(v, tensor_specs) for v in value)}]"
    if isinstance(value, dict):
        # tensors were placed in sorted-key order; the printed form keeps insertion order
        texts = {k: value_type(value[k], tensor_specs) for k in sorted(value, key=repr)}
        return "Dict[" + ", ".join(f"[{k!r}, {texts[k]}]" for k in value) + "]"
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return f"Literal[{value!r}]"
    spec = getattr(value, "_type_spec", None)
    return repr(spec) if spec is not None else repr(value)


def parameters(signature: Optional[inspect.Signature], arg_names: List[str], args: tuple,
               kwargs: dict, tensor_specs: list) -> List[tuple]:
    """(name, kind, value-type text) per parameter, in the Python signature's order."""
    specs = list(tensor_specs)
    # placeholders were made for positional values first, then keywords in sorted order
    positional = [value_type(a, specs) for a in args]
    keyword = {k: value_type(kwargs[k], specs) for k in sorted(kwargs)}
    if signature is None:
        return [(n, "POSITIONAL_OR_KEYWORD", t) for n, t in zip(arg_names, positional)]
    rows = []
    params = list(signature.parameters.values())
    for i, text in enumerate(positional):
        param = params[i] if i < len(params) else None
        if param is None or param.kind == param.VAR_POSITIONAL:
            rows.append((arg_names[i] if i < len(arg_names) else f"args_{i}",
                         "POSITIONAL_ONLY", text))
        else:
            rows.append((param.name, param.kind.name, text))
    for name, text in keyword.items():
        param = signature.parameters.get(name)
        rows.append((name, param.kind.name if param is not None else "KEYWORD_ONLY", text))
    return rows


def output_type(template: Any, outputs: list, slot_types: tuple) -> str:
    """The returned structure's type, OutputSlot leaves as the traced output's spec."""
    output_slot, composite_slot = slot_types

    def leaf(x: Any) -> Any:
        if isinstance(x, output_slot):
            t = outputs[x.index]
            return TensorSpec(t.shape, t.dtype)
        if isinstance(x, composite_slot):
            return _Text(repr(x.spec))
        return x
    if isinstance(template, (output_slot, composite_slot)) or not nest.is_nested(template):
        return value_type(leaf(template))
    return value_type(nest.map_structure(leaf, template))


def captures(graph: Any) -> List[str]:
    """The variables the graph reads or writes, as TF lists its captured resource handles
    (`id: spec`). Eager tensors a trace uses are embedded as constants, not captures."""
    rows = []
    seen: set = set()
    for op in graph.get_operations():
        attr = op.opdef.watch_attr
        handle = op.attrs.get(attr) if attr else None
        if handle is not None and id(handle) not in seen:
            seen.add(id(handle))
            rows.append(f"{id(handle)}: TensorSpec(shape=(), dtype=tf.resource, name=None)")
    return rows


def render(params: List[tuple], output: str, captured: List[str], verbose: bool) -> str:
    if not verbose:
        inner = []
        keyword_only = False
        for name, kind, text in params:
            if kind == "KEYWORD_ONLY" and not keyword_only:
                inner.append("*")
                keyword_only = True
            inner.append(f"{name}: {text}")
        return f"({', '.join(inner)}) -> {output}"
    lines = ["Input Parameters:"]
    lines += [f"  {name} ({kind}): {text}" for name, kind, text in params]
    lines += ["Output Type:", f"  {output}", "Captures:"]
    lines += [f"  {row}" for row in captured] or ["  None"]
    return "\n".join(lines)


class _Text:
    """A leaf already written as text (a composite's TypeSpec)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text
