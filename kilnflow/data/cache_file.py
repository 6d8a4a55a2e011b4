"""The file behind `dataset.cache(filename)`: a safetensors file, written atomically.

Components whose elements all share a shape are stored stacked (`c0`, `c1`, ...); others
one tensor per element (`c0_17`). The metadata records the element_spec and the element
count; a file written for another element_spec is refused rather than misread.
"""
from __future__ import annotations

from typing import Any, List

import numpy as np

from kilnflow import errors
from kilnflow.data import structure
from kilnflow.saving import safetensors


def write(path: str, spec: Any, elements: List[list]) -> None:
    specs = structure.flat_specs(spec)
    tensors = {}
    for c in range(len(specs)):
        parts = [e[c] for e in elements]
        if parts and all(p.shape == parts[0].shape for p in parts):
            tensors[f"c{c}"] = np.stack(parts)
        else:
            tensors.update({f"c{c}_{i}": p for i, p in enumerate(parts)})
    metadata = {"element_spec": repr(spec), "elements": str(len(elements))}
    safetensors.save_file(tensors, path, metadata)


def read(path: str, spec: Any) -> List[list]:
    tensors, metadata = safetensors.load_file(path, with_metadata=True)
    if (metadata or {}).get("element_spec") != repr(spec):
        raise errors.InvalidArgumentError(
            f"cache: {path} holds elements of {(metadata or {}).get('element_spec')}, not of "
            f"this dataset's element_spec {spec}; remove the file or use another filename")
    count = int(metadata["elements"])
    columns = []
    for c in range(len(structure.flat_specs(spec))):
        stacked = tensors.get(f"c{c}")
        if stacked is not None:
            columns.append([stacked[i, ...] for i in range(count)])
        else:
            columns.append([tensors[f"c{c}_{i}"] for i in range(count)])
    return [list(parts) for parts in zip(*columns)] if columns else [[] for _ in range(count)]
