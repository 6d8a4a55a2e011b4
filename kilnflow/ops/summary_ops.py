"""WriteSummary: the stateful op behind kf.summary.scalar / histogram / image / text / audio.

Inputs are the data, the step (int64) and a `record` flag (kf.summary.record_if); attrs name
the writer, the summary kind, the tag and the kind's parameters. The kernel hands the
arrays to `writer.write_summary(kind, tag, step, data, params)` when recording and returns
TF's bool (whether something was written). Being `stateful`, the op runs on every call of a
compiled function, at run time, in program order. The writer is duck-typed: this layer
never imports kilnflow.summary.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import cast
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

KINDS = ("scalar", "histogram", "image", "text", "audio", "raw", "raw_pb")  # raw: summary.write


def _rule(data: Any, step: Any, record: Any, *, writer: Any, kind: str, tag: str,
          params: tuple) -> TensorSpec:
    if kind not in KINDS:
        raise ValueError(f"WriteSummary: unknown summary kind {kind!r}; one of {KINDS}")
    if step.shape.rank not in (None, 0):
        raise ValueError(f"WriteSummary '{tag}': step must be a scalar, got shape {step.shape}")
    if kind == "scalar" and data.shape.rank not in (None, 0):
        raise ValueError(f"kf.summary.scalar '{tag}': data must be a scalar, got shape "
                         f"{data.shape}")
    return TensorSpec([], _dtypes.bool)


def _kernel(data: Any, step: Any, record: Any, *, writer: Any, kind: str, tag: str,
            params: tuple) -> Any:
    if not bool(record):
        return np.bool_(False)
    return np.bool_(writer.write_summary(kind, tag, int(step), np.asarray(data),
                                         dict(params)))


WRITE_SUMMARY = defop("WriteSummary", shape=_rule, kernel=_kernel, stateful=True, check_eager=True,
                      same_dtype=False)


def write_summary(writer: Any, kind: str, tag: str, data: Any, step: Any, record: Any = True,
                  params: tuple = ()) -> Tensor:
    """Apply WriteSummary: `data` goes to `writer` as a `kind` summary at `step`."""
    step = convert_to_tensor(step)
    if not step.dtype.is_integer:
        raise errors.InvalidArgumentError(
            f"kf.summary '{tag}': step must be an integer, got {step.dtype.name}")
    if step.dtype != _dtypes.int64:
        step = cast(step, _dtypes.int64)
    return bind(WRITE_SUMMARY, (convert_to_tensor(data), step,
                                convert_to_tensor(record, _dtypes.bool)),
                {"writer": writer, "kind": kind, "tag": str(tag), "params": tuple(params)})
