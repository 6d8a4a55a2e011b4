"""kf.print and kf.Assert: the PrintV2 and Assert ops, stateful ops that format tensors the
way tf.print and tf.debugging.Assert do (Assert raises InvalidArgumentError when false).

Python values (strings, numbers, structures around tensors) are baked into the op's
`template` attr; only tensors are inputs. The kernel formats, writes, and returns no
outputs, so the op is kept alive by its `stateful` flag alone and runs on every call of a
compiled function. Imports ops.convert, ops.opdef, nest and context.
"""
from __future__ import annotations

import logging as _pylogging
import pprint
import sys
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import errors, nest
from kilnflow.context import ctx
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.core.opdef import bind, defop
from kilnflow.tensor import Tensor

_LOG_LEVELS = {
    _pylogging.INFO: "log(info)", _pylogging.WARNING: "log(warning)",
    _pylogging.ERROR: "log(error)",
}
_LOG_FUNCTIONS = {
    "info": "log(info)", "warning": "log(warning)", "warn": "log(warning)",
    "error": "log(error)",
}


# ---------------------------------------------------------------- formatting (TF's rules)

def format_element(value: Any) -> str:
    """One element as TF prints it: floats in the shortest of %g at 6/9 (float32) or
    15/17 (float64) significant digits that reads back exactly, bools as 1/0."""
    if isinstance(value, (np.bool_, bool)):
        return "1" if value else "0"
    if isinstance(value, np.floating):
        if np.isnan(value):
            return "-nan" if np.signbit(value) else "nan"
        if value.dtype == np.float64:
            short, full = 15, 17
        else:  # float16 prints as float32, as in TF
            value = np.float32(value)
            short, full = 6, 9
        text = "%.*g" % (short, value)
        if value.dtype.type(text) != value:
            text = "%.*g" % (full, value)
        return text
    if isinstance(value, np.complexfloating):
        return str(complex(value))
    if isinstance(value, bytes):
        return '"' + value.decode("utf-8", "backslashreplace") + '"'
    return str(value)


def summarize_array(array: Any, summarize: int = 3) -> str:
    """A tensor's value as tf.print shows it: `[[1 2]\\n [3 4]]`, with '...' in place of
    the middle of any dimension longer than 2 * summarize (summarize < 0 shows all)."""
    array = np.asarray(array)
    if array.ndim == 0:
        return format_element(array[()])
    ends = array.size if summarize is None or summarize < 0 else min(summarize, array.size)
    parts: list = []
    _append_dim(array, 0, ends, parts)
    return "".join(parts)


def _spacing(dim: int, ndim: int) -> str:
    """Between two items of dim `dim`: a space in the last dim, else newlines + indent."""
    if dim == ndim - 1:
        return " "
    return "\n" * (ndim - dim - 1) + " " * (dim + 1)


def _append_dim(array: Any, dim: int, ends: int, parts: list) -> None:
    if not isinstance(array, np.ndarray):  # an element of a string (object) array: bytes
        parts.append(format_element(array))
        return
    if array.ndim == 0:
        parts.append(format_element(array[()]))
        return
    ndim = dim + array.ndim
    count = array.shape[0]
    between = _spacing(dim, ndim)
    parts.append("[")
    head = range(min(ends, count))
    tail = range(max(ends, count - ends), count)
    for i in head:
        if i:
            parts.append(between)
        _append_dim(array[i], dim + 1, ends, parts)
    if count > 2 * ends:
        parts.append(between + "...")
    for i in tail:
        parts.append(between)
        _append_dim(array[i], dim + 1, ends, parts)
    parts.append("]")


# ---------------------------------------------------------------- the op

def _write(stream: str, text: str) -> None:
    if stream == "stdout" or stream == "stderr":
        out = sys.stdout if stream == "stdout" else sys.stderr  # looked up now: capture works
        out.write(text)
        out.flush()
    elif stream.startswith("file://"):
        with open(stream[len("file://"):], "a", encoding="utf-8") as f:
            f.write(text)
    else:  # "log(info)" and friends
        level = stream[len("log("):-1]
        getattr(_pylogging.getLogger("kilnflow"), level)(text.rstrip("\n"))


def _print_kernel(*values: Any, template: tuple, output_stream: str, summarize: int) -> tuple:
    parts = [template[0]]
    for value, piece in zip(values, template[1:]):
        parts.append(summarize_array(value, summarize))
        parts.append(piece)
    _write(output_stream, "".join(parts))
    return ()


PRINT = defop("PrintV2", shape=lambda *values, **attrs: [], kernel=_print_kernel,
              stateful=True, multi_output=True, same_dtype=False)


def _stream_name(output_stream: Any) -> str:
    if isinstance(output_stream, str):
        if output_stream in ("stdout", "stderr") or output_stream.startswith("file://"):
            return output_stream
        if output_stream.startswith("log(") and output_stream[4:-1] in _LOG_FUNCTIONS:
            return output_stream
    elif output_stream is sys.stdout or output_stream is sys.__stdout__:
        return "stdout"
    elif output_stream is sys.stderr or output_stream is sys.__stderr__:
        return "stderr"
    elif isinstance(output_stream, int) and output_stream in _LOG_LEVELS:
        return _LOG_LEVELS[output_stream]
    elif callable(output_stream) and getattr(output_stream, "__module__", None) == "logging":
        name = _LOG_FUNCTIONS.get(output_stream.__name__)
        if name is not None:
            return name
    raise ValueError(f"Unsupported output stream, logging level, or file: {output_stream!r}. "
                     "Supported streams are sys.stdout, sys.stderr, logging.info, "
                     "logging.warning, logging.error. A file needs to be given as "
                     "'file://<filepath>'.")


def _template(inputs: tuple, sep: str, end: str) -> tuple:
    """(pieces, tensors): the text around each tensor, and the tensors, in print order."""
    tensors: list = []
    texts: list = []
    marker = "\x00kf-tensor\x00"
    for item in inputs:
        if isinstance(item, str):
            texts.append(item)
            continue
        leaves = []
        for leaf in nest.flatten(item):
            if isinstance(leaf, Tensor) or hasattr(leaf, "_as_tensor"):
                tensors.append(convert_to_tensor(leaf))
                leaves.append(marker)
            else:
                leaves.append(leaf)
        if not nest.is_nested(item):
            texts.append(marker if leaves[0] is marker else pprint.pformat(leaves[0]))
        else:  # pprint sorts dict keys, matching the order nest.flatten gave the tensors
            texts.append(pprint.pformat(nest.pack_sequence_as(item, leaves)))
    text = sep.join(texts).replace(repr(marker), marker) + end
    return tuple(text.split(marker)), tensors


def print_(*inputs: Any, output_stream: Any = "stderr", sep: str = " ", end: str = "\n",
           summarize: Optional[int] = 3, name: Optional[str] = None) -> Any:
    """Prints tensors and Python values, like tf.print (default stream: sys.stderr).

    Inside @kf.function it prints on every call, in program order. Each dimension longer
    than 2 * `summarize` shows its first and last `summarize` items around '...'.
    `output_stream` is sys.stdout, sys.stderr, a logging level/function or 'file://path'.
    Returns None eagerly, the print operation while building a graph.

    >>> import sys
    >>> import kilnflow as kf
    >>> from kilnflow.ops.logging import print_  # kf.print
    >>> print_("x:", kf.constant([[22., 22.], [23., 13.]]), output_stream=sys.stdout)
    x: [[22 22]
     [23 13]]
    >>> print_(kf.range(10), output_stream=sys.stdout)
    [0 1 2 ... 7 8 9]
    """
    stream = _stream_name(output_stream)
    pieces, tensors = _template(inputs, sep, end)
    summarize = 3 if summarize is None else int(summarize)  # None means TF's default
    attrs = {"template": pieces, "output_stream": stream, "summarize": summarize}
    bind(PRINT, tensors, attrs, name=name)
    graph = ctx.graph
    if graph is None:
        return None
    return graph.get_operations()[-1]  # the PrintV2 node just added


# ---------------------------------------------------------------- Assert

def _assert_kernel(condition: Any, *values: Any, template: tuple, summarize: int) -> tuple:
    if not np.all(condition):
        tensors = iter(values)
        parts = [str(part) if part is not None else
                 np.array2string(np.asarray(next(tensors)), threshold=summarize)
                 for part in template]
        raise errors.InvalidArgumentError("assertion failed: [" + "] [".join(parts) + "]")
    return ()


ASSERT = defop("Assert", shape=lambda *inputs, template, summarize: [], kernel=_assert_kernel,
               multi_output=True, same_dtype=False, stateful=True)


def Assert(condition: Any, data: Sequence, summarize: Optional[int] = None,  # noqa: N802
           name: Optional[str] = None) -> Any:
    """Raises InvalidArgumentError with `data` when `condition` is false (on every call of a
    compiled function; eagerly, at once).

    Returns the Assert operation while a graph is built (so that
    `control_dependencies([Assert(...)])` makes later ops wait for it, as TF1 code does),
    None eagerly."""
    condition = convert_to_tensor(condition)
    tensors = [convert_to_tensor(d) for d in data if not isinstance(d, str)]
    template = tuple(d if isinstance(d, str) else None for d in data)
    attrs = {"template": template, "summarize": int(summarize or 3)}
    bind(ASSERT, [condition] + tensors, attrs, name=name or "Assert")
    return None if ctx.graph is None else ctx.graph.operations[-1]
