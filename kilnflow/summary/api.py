"""kf.summary.scalar / histogram / image / text / audio / write, experimental.write_raw_pb,
summary_scope and graph: each summary applies one WriteSummary op
(kilnflow/ops/summary_ops.py), so eagerly it writes at once and inside a kf.function it
writes on every call, at run time, to the writer that was the default while tracing.

As in TF: with no default writer nothing is recorded and the call returns False; the step
comes from the `step` argument or kf.summary.experimental.set_step (a ValueError when
neither is set); record_if conditions (bools, bool tensors or callables) gate the write;
tags are prefixed with the current name scope (`train/loss`), except write's.
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator, Optional, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.context import ctx
from kilnflow.graph import Graph, current_name_scope, name_scope
from kilnflow.ops.convert import constant, convert_to_tensor
from kilnflow.ops.math import logical_and
from kilnflow.ops.summary_ops import write_summary
from kilnflow.summary.encode import DEFAULT_BUCKETS
from kilnflow.summary.writer import default_writer, get_step, record_conditions
from kilnflow.tensor import Tensor


def _write(kind: str, name: str, data: Any, step: Any, params: dict,
           scoped: bool = True) -> Tensor:
    writer = default_writer()
    if writer is None:
        return constant(False)
    if scoped:
        name = current_name_scope() + name
    step = get_step() if step is None else step
    if step is None:
        raise ValueError(
            f"kf.summary.{kind} '{name}': no step set. Please specify one either through "
            f"the `step` argument or through kf.summary.experimental.set_step()")
    record: Any = True
    for condition in record_conditions():
        if isinstance(condition, (bool, np.bool_)):
            if not condition:
                return constant(False)
            continue
        condition = convert_to_tensor(condition, _dtypes.bool)
        record = condition if record is True else logical_and(record, condition)
    items = tuple(sorted((k, v) for k, v in params.items() if v is not None))
    return write_summary(writer, kind, name, data, step, record, items)


def scalar(name: str, data: Any, step: Any = None, description: Optional[str] = None) -> Tensor:
    """Write a scalar summary (a number per step, TensorBoard's Scalars dashboard).

    Returns True when written, False when no default writer is set or record_if says no.
    """
    return _write("scalar", name, data, step, {"description": description})


def histogram(name: str, data: Any, step: Any = None, buckets: Optional[int] = None,
              description: Optional[str] = None) -> Tensor:
    """Write a histogram of `data` (any shape) with `buckets` equal-width buckets
    (30 by default) over its range."""
    return _write("histogram", name, data, step,
                  {"buckets": DEFAULT_BUCKETS if buckets is None else int(buckets),
                   "description": description})


def image(name: str, data: Any, step: Any = None, max_outputs: int = 3,
          description: Optional[str] = None) -> Tensor:
    """Write up to `max_outputs` images from `data` ([k, height, width, channels],
    channels 1, 3 or 4; floats in [0, 1] or uint8), PNG-encoded."""
    t = convert_to_tensor(data)
    if t.shape.rank is not None and t.shape.rank != 4:
        raise ValueError(f"kf.summary.image '{name}': data must have rank 4 [k, height, "
                         f"width, channels], got shape {t.shape}")
    if t.shape.rank == 4 and t.shape[3] is not None and t.shape[3] not in (1, 2, 3, 4):
        raise ValueError(f"kf.summary.image '{name}': channels must be 1, 3 or 4, got "
                         f"{t.shape[3]}")
    return _write("image", name, t, step,
                  {"max_outputs": int(max_outputs), "description": description})


def text(name: str, data: Any, step: Any = None, description: Optional[str] = None) -> Tensor:
    """Write a text summary (Markdown): a string, a nested list of strings, or a string
    tensor (written at run time inside functions)."""
    if isinstance(data, Tensor) and data.dtype.name == "string":
        return _write("text", name, data, step, {"description": description})
    if isinstance(data, (str, bytes)) or (isinstance(data, (list, tuple)) and data):
        value = np.array(data, object)
        return _write("text", name, 0, step,
                      {"text": _hashable(value), "description": description})
    raise TypeError(f"kf.summary.text '{name}': data must be a string or a list of strings, "
                    f"got {type(data).__name__}")


def audio(name: str, data: Any, sample_rate: Any, step: Any = None, max_outputs: int = 3,
          encoding: Optional[str] = None, description: Optional[str] = None) -> Tensor:
    """Write up to `max_outputs` audio clips from `data` ([k, frames, channels] floats in
    [-1, 1]) as WAV at `sample_rate` Hz."""
    if encoding not in (None, "wav"):
        raise ValueError(f"kf.summary.audio '{name}': unknown encoding {encoding!r}")
    t = convert_to_tensor(data)
    if t.shape.rank is not None and t.shape.rank != 3:
        raise ValueError(f"kf.summary.audio '{name}': data must have rank 3 [k, frames, "
                         f"channels], got shape {t.shape}")
    return _write("audio", name, t, step,
                  {"sample_rate": int(sample_rate), "max_outputs": int(max_outputs),
                   "description": description})


def _hashable(value: np.ndarray) -> Any:
    """A nested tuple of strings (op attrs are hashable)."""
    value = np.asarray(value, object)
    if value.ndim == 0:
        item = value[()]
        return item.decode("utf-8") if isinstance(item, bytes) else str(item)
    return tuple(_hashable(v) for v in value)


_INVALID_SCOPE_CHARACTERS = re.compile(r"[^-_/.A-Za-z0-9]")


@contextlib.contextmanager
def summary_scope(name: Optional[str], default_name: Optional[str] = None,
                  values: Any = None) -> Iterator[Tuple[str, str]]:
    """kf.summary.experimental.summary_scope: yields (tag, scope): the tag is `name` under
    the current name scope, the scope a name scope opened for the summary's ops."""
    name = name or default_name
    if not name:
        raise ValueError("summary_scope: give a name or a default_name")
    tag = current_name_scope() + name
    with name_scope(_INVALID_SCOPE_CHARACTERS.sub("", name) or default_name or "summary"):
        yield tag, current_name_scope()


def write(tag: str, tensor: Any, step: Any = None, metadata: Any = None,
          name: Optional[str] = None) -> Tensor:
    """Write `tensor` (or what the callable `tensor` returns, called only when recording)
    under `tag` as given, with `metadata` (a SummaryMetadata proto or its bytes) as its
    plugin data: the generic summary the others are made of."""
    if default_writer() is None or not all(
            c for c in record_conditions() if isinstance(c, (bool, np.bool_))):
        return constant(False)
    if callable(tensor):
        tensor = tensor()
    if metadata is not None and not isinstance(metadata, bytes):
        metadata = metadata.SerializeToString()
    return _write("raw", tag, tensor, step, {"metadata": metadata}, scoped=False)


def write_raw_pb(tensor: Any, step: Any = None, name: Optional[str] = None) -> Tensor:
    """kf.summary.experimental.write_raw_pb: write serialized Summary protos (a string or
    a string tensor of them) as they are."""
    return _write("raw_pb", name or "raw_pb", tensor, step, {}, scoped=False)


def graph(graph_data: Any) -> Tensor:
    """Write a graph (a kf Graph, e.g. a concrete function's `.graph`, or a GraphDef
    proto) to the Graphs dashboard, at step 0 as TF does; eagerly only."""
    if ctx.graph is not None:
        raise ValueError("graph() cannot be invoked inside a graph context.")
    if isinstance(graph_data, Graph):
        from kilnflow.summary.graph_def import graph_def
        serialized = graph_def(graph_data).SerializeToString()
    elif hasattr(graph_data, "SerializeToString") and hasattr(graph_data, "node"):
        serialized = graph_data.SerializeToString()
    else:
        raise ValueError(f"graph_data must be a kf.Graph or a GraphDef proto, got "
                         f"{type(graph_data).__name__}")
    writer = default_writer()
    if writer is None or not all(c for c in record_conditions()
                                 if isinstance(c, (bool, np.bool_))):
        return constant(False)
    return constant(bool(writer.write_event(step=0, graph_def=serialized)))
