"""The files behind `dataset.cache(filename)` and `dataset.save(path)`: a safetensors
file, written atomically.

Components whose elements all share a shape are stored stacked (`c0`, `c1`, ...); others
one tensor per element (`c0_17`). The metadata records the element_spec and the element
count; a file written for another element_spec is refused rather than misread.
"""
from __future__ import annotations

import json
import os
from typing import Any, List, Optional

import numpy as np

from kilnflow import errors
from kilnflow.data import structure
from kilnflow.shapes import TensorSpec
from kilnflow.saving import safetensors


def write(path: str, spec: Any, elements: List[list], extra: Optional[dict] = None) -> None:
    specs = structure.flat_specs(spec)
    tensors = {}
    for c in range(len(specs)):
        parts = [e[c] for e in elements]
        if parts and all(p.shape == parts[0].shape for p in parts):
            tensors[f"c{c}"] = np.stack(parts)
        else:
            tensors.update({f"c{c}_{i}": p for i, p in enumerate(parts)})
    metadata = {"element_spec": repr(spec), "elements": str(len(elements)), **(extra or {})}
    safetensors.save_file(tensors, path, metadata)


def read(path: str, spec: Any, check: bool = True) -> List[list]:
    tensors, metadata = safetensors.load_file(path, with_metadata=True)
    if check and (metadata or {}).get("element_spec") != repr(spec):
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


# ---------------------------------------------------------------- Dataset.save / load

DATA_FILE = "data.safetensors"


def _encode_spec(spec: Any) -> Any:
    """An element_spec as JSON: namedtuples are kept as plain tuples (no classes in
    files), which load() returns unless it is given the element_spec."""
    if isinstance(spec, TensorSpec):
        return {"shape": spec.shape.as_list() if spec.shape.rank is not None else None,
                "dtype": spec.dtype.name}
    if isinstance(spec, dict):
        if not all(isinstance(k, str) for k in spec):
            raise TypeError(f"save: dict keys must be strings to be saved, got {list(spec)}")
        return {"dict": {k: _encode_spec(v) for k, v in spec.items()}}
    if isinstance(spec, tuple):
        return {"tuple": [_encode_spec(v) for v in spec]}
    raise TypeError(f"save: cannot save elements with a component of spec {spec!r}")


def _decode_spec(data: Any) -> Any:
    if not isinstance(data, dict):
        raise errors.DataLossError(f"load: a malformed element_spec entry {data!r}")
    if "dtype" in data:
        return TensorSpec(data["shape"], data["dtype"])
    if "dict" in data:
        return {k: _decode_spec(v) for k, v in data["dict"].items()}
    if "tuple" in data:
        return tuple(_decode_spec(v) for v in data["tuple"])
    raise errors.DataLossError(f"load: a malformed element_spec entry {data!r}")


def save(path: str, spec: Any, elements: List[list]) -> None:
    os.makedirs(path, exist_ok=True)
    write(os.path.join(path, DATA_FILE), spec, elements,
          {"spec_json": json.dumps(_encode_spec(spec))})


def load(path: str, spec: Any) -> tuple:
    """(element_spec, flat elements) of a saved dataset."""
    file = os.path.join(path, DATA_FILE)
    if not os.path.isfile(file):
        raise errors.NotFoundError(f"load: no saved dataset at {path} (missing {DATA_FILE})")
    if spec is None:
        _, metadata = safetensors.load_file(file, with_metadata=True)
        try:
            spec = _decode_spec(json.loads((metadata or {})["spec_json"]))
        except (KeyError, ValueError) as exc:
            raise errors.DataLossError(f"load: {file} has no readable element_spec "
                                       f"({exc})") from None
    return spec, read(file, spec, check=False)
