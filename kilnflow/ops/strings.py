"""String ops (tf.strings): elementwise maps over tf.string tensors, which hold bytes objects
in NumPy object arrays. Text attrs (separators, patterns) are stored as str so graphs
serialize; kernels work on UTF-8 bytes, as TF does. No string op is differentiable.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.logging import summarize_array
from kilnflow.ops.reshaping import reshape
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor, is_symbolic

STRING = frozenset((_dtypes.string,))
_INTS = frozenset((_dtypes.int32, _dtypes.int64))
_NUMBERS = frozenset((_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64))
_AS_STRING = _dtypes.REAL | frozenset((_dtypes.bool, _dtypes.complex64, _dtypes.complex128))


def _text(value: Any) -> str:
    """An attr given as str or bytes, kept as str (bytes that are not UTF-8 survive)."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def strings_tensor(x: Any, name: str = "input") -> Tensor:
    t = convert_to_tensor(x)
    if t.dtype is not _dtypes.string:
        raise TypeError(f"argument `{name}` must be a string tensor, got {t.dtype.name}")
    return t


def map_strings(fn: Callable[..., Any], dtype: Any) -> Callable[..., np.ndarray]:
    """A kernel applying `fn(element, **attrs)` to every element of a string array."""
    def kernel(x: np.ndarray, **attrs: Any) -> np.ndarray:
        out = np.empty(x.shape, dtype)
        flat = out.reshape(-1)
        for i, item in enumerate(x.reshape(-1)):
            flat[i] = fn(item, **attrs)
        return out
    return kernel


# ---------------------------------------------------------------- elementwise maps

def _length(s: bytes, *, unit: str) -> int:
    return len(s.decode("utf-8", "replace")) if unit == "UTF8_CHAR" else len(s)


def _case(s: bytes, *, encoding: str, upper: bool) -> bytes:
    if encoding:  # TF: with an encoding, every character; without, ASCII bytes only
        text = s.decode(encoding)
        return (text.upper() if upper else text.lower()).encode(encoding)
    return s.upper() if upper else s.lower()


def _length_rule(x: Any, *, unit: str) -> TensorSpec:
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return TensorSpec(x.shape, _dtypes.int32)


STRING_LENGTH = defop("StringLength", shape=_length_rule, dtypes=STRING,
                      kernel=map_strings(_length, np.int32))
STRING_LOWER = defop("StringLower", shape=lambda x, *, encoding: TensorSpec(x.shape, x.dtype),
                     dtypes=STRING,
                     kernel=map_strings(functools.partial(_case, upper=False), object))
STRING_UPPER = defop("StringUpper", shape=lambda x, *, encoding: TensorSpec(x.shape, x.dtype),
                     dtypes=STRING,
                     kernel=map_strings(functools.partial(_case, upper=True), object))
STRING_STRIP = defop("StringStrip", shape=lambda x: TensorSpec(x.shape, x.dtype), dtypes=STRING,
                     kernel=map_strings(bytes.strip, object))


def length(input: Any, unit: str = "BYTE", name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The length of each string, in bytes or (unit='UTF8_CHAR') in Unicode characters.

    >>> import kilnflow as kf
    >>> kf.strings.length(["hi", "héllo"]).numpy()
    array([2, 6], dtype=int32)
    """
    return bind(STRING_LENGTH, (strings_tensor(input),), {"unit": unit}, name)


def lower(input: Any, encoding: str = "", name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each string lowercased (ASCII only unless `encoding` is given, e.g. 'utf-8')."""
    return bind(STRING_LOWER, (strings_tensor(input),), {"encoding": encoding}, name)


def upper(input: Any, encoding: str = "", name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each string uppercased (ASCII only unless `encoding` is given, e.g. 'utf-8')."""
    return bind(STRING_UPPER, (strings_tensor(input),), {"encoding": encoding}, name)


def strip(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each string without leading and trailing whitespace."""
    return bind(STRING_STRIP, (strings_tensor(input),), name=name)


# ---------------------------------------------------------------- regular expressions

@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    try:
        return re.compile(_raw(pattern))
    except re.error as exc:
        raise ValueError(f"Invalid pattern: {pattern!r}, error: {exc}") from None


def _full_match_rule(x: Any, *, pattern: str) -> TensorSpec:
    _compiled(pattern)
    return TensorSpec(x.shape, _dtypes.bool)


_ESCAPE = re.compile(rb"\\(.)", re.S)


def _rewrite_parts(rewrite: str) -> tuple:
    """RE2's rewrite string: \\0..\\9 name groups, \\\\ is a backslash, the rest is literal."""
    raw = _raw(rewrite)
    parts: list = []
    last = 0
    for match in _ESCAPE.finditer(raw):
        parts.append(raw[last:match.start()])
        char = match.group(1)
        if char.isdigit():
            parts.append(int(char))
        elif char == b"\\":
            parts[-1] += b"\\"
        else:
            raise ValueError(f"Invalid rewrite pattern: {rewrite!r}")
        last = match.end()
    parts.append(raw[last:])
    return tuple(parts)


def _replace_rule(x: Any, *, pattern: str, rewrite: str, replace_global: bool) -> TensorSpec:
    groups = _compiled(pattern).groups
    for part in _rewrite_parts(rewrite):
        if isinstance(part, int) and part > groups:
            raise ValueError(f"Rewrite pattern {rewrite!r} names group {part}, but the pattern "
                             f"has {groups}")
    return TensorSpec(x.shape, x.dtype)


def _replace(s: bytes, *, pattern: str, rewrite: str, replace_global: bool) -> bytes:
    parts = _rewrite_parts(rewrite)

    def expand(match: Any) -> bytes:
        return b"".join(p if isinstance(p, bytes) else (match.group(p) or b"") for p in parts)
    return _compiled(pattern).sub(expand, s, count=0 if replace_global else 1)


STATIC_REGEX_FULL_MATCH = defop(
    "StaticRegexFullMatch", shape=_full_match_rule, dtypes=STRING, check_eager=True,
    kernel=map_strings(lambda s, *, pattern: _compiled(pattern).fullmatch(s) is not None, np.bool_))
STATIC_REGEX_REPLACE = defop("StaticRegexReplace", shape=_replace_rule, dtypes=STRING,
                             check_eager=True, kernel=map_strings(_replace, object))


def _scalar_text(array: np.ndarray) -> str:
    return _text(np.asarray(array).reshape(())[()])


def _scalar_rule(t: Any, what: str) -> None:
    if t.dtype is not _dtypes.string or t.shape.rank not in (None, 0):
        raise ValueError(f"{what} must be a scalar string, got {t.dtype.name} {t.shape}")


def _dynamic_match_rule(x: Any, pattern: Any) -> TensorSpec:
    _scalar_rule(pattern, "pattern")
    return TensorSpec(x.shape, _dtypes.bool)


def _dynamic_replace_rule(x: Any, pattern: Any, rewrite: Any, *,
                          replace_global: bool) -> TensorSpec:
    _scalar_rule(pattern, "pattern")
    _scalar_rule(rewrite, "rewrite")
    return TensorSpec(x.shape, x.dtype)


# The same two ops with the pattern (and rewrite) as tensors known only when the graph runs.
REGEX_FULL_MATCH = defop(
    "RegexFullMatch", shape=_dynamic_match_rule, dtypes=STRING, same_dtype=False,
    kernel=lambda x, pattern: STATIC_REGEX_FULL_MATCH.kernel(x, pattern=_scalar_text(pattern)))
REGEX_REPLACE = defop(
    "RegexReplace", shape=_dynamic_replace_rule, dtypes=STRING, same_dtype=False,
    kernel=lambda x, pattern, rewrite, *, replace_global: STATIC_REGEX_REPLACE.kernel(
        x, pattern=_scalar_text(pattern), rewrite=_scalar_text(rewrite),
        replace_global=replace_global))


def regex_full_match(input: Any, pattern: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """True where the whole string matches `pattern` (a Python regular expression, which
    agrees with TF's RE2 syntax on the common subset).

    >>> import kilnflow as kf
    >>> kf.strings.regex_full_match(["abc", "a1"], "[a-z]+").numpy()
    array([ True, False])
    """
    if is_symbolic(pattern):
        return bind(REGEX_FULL_MATCH, (strings_tensor(input), pattern), name=name)
    attrs = {"pattern": _text(pattern)}
    return bind(STATIC_REGEX_FULL_MATCH, (strings_tensor(input),), attrs, name)


def regex_replace(input: Any, pattern: Any, rewrite: Any, replace_global: bool = True,  # noqa: A002
                  name: Optional[str] = None) -> Tensor:
    """Replace matches of `pattern` by `rewrite` (\\1 names a group), all or the first."""
    if is_symbolic(pattern) or is_symbolic(rewrite):
        inputs = (strings_tensor(input), strings_tensor(pattern, "pattern"),
                  strings_tensor(rewrite, "rewrite"))
        return bind(REGEX_REPLACE, inputs, {"replace_global": bool(replace_global)}, name)
    attrs = {"pattern": _text(pattern), "rewrite": _text(rewrite),
             "replace_global": bool(replace_global)}
    return bind(STATIC_REGEX_REPLACE, (strings_tensor(input),), attrs, name)


# ---------------------------------------------------------------- numbers <-> strings

_INT_TEXT = re.compile(rb"\s*[+-]?\d+\s*")
_HEX_TEXT = re.compile(rb"\s*[+-]?0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*([pP][+-]?\d+)?\s*")


def _to_number(s: bytes, *, out_type: Any) -> Any:
    try:
        if out_type.is_integer:
            if not _INT_TEXT.fullmatch(s):
                raise ValueError(s)
            value = int(s)
            info = np.iinfo(out_type.as_numpy_dtype)
            if not info.min <= value <= info.max:
                raise ValueError(s)
            return value
        if b"_" in s:  # Python's float() takes digit separators; TF does not
            raise ValueError(s)
        if _HEX_TEXT.fullmatch(s):  # TF parses with strtod, which reads C99 hex floats
            return float.fromhex(s.decode("ascii").strip())
        return float(s)
    except ValueError:
        raise errors.InvalidArgumentError(errors.with_location(
            f"StringToNumberOp could not correctly convert string: {s.decode('utf-8', 'replace')}"
        )) from None


def _to_number_kernel(x: np.ndarray, *, out_type: Any) -> np.ndarray:
    return map_strings(_to_number, out_type.as_numpy_dtype)(x, out_type=out_type)


def _to_number_rule(x: Any, *, out_type: Any) -> TensorSpec:
    if out_type not in _NUMBERS:
        raise TypeError(f"out_type must be one of float32, float64, int32, int64, got "
                        f"{out_type.name}")
    return TensorSpec(x.shape, out_type)


STRING_TO_NUMBER = defop("StringToNumber", shape=_to_number_rule, kernel=_to_number_kernel,
                         dtypes=STRING)


def to_number(input: Any, out_type: Any = _dtypes.float32,  # noqa: A002
              name: Optional[str] = None) -> Tensor:
    """Parse each string as a number of `out_type`; InvalidArgumentError if one is not.

    >>> import kilnflow as kf
    >>> kf.strings.to_number(["1.5", "-2"]).numpy()
    array([ 1.5, -2. ], dtype=float32)
    """
    attrs = {"out_type": _dtypes.as_dtype(out_type)}
    return bind(STRING_TO_NUMBER, (strings_tensor(input),), attrs, name)


def _format_of(kind: str, precision: int, scientific: bool, shortest: bool, width: int,
               fill: str) -> str:
    spec = "%" + fill + (str(width) if width >= 0 else "")
    if kind in "fc":
        spec += ("." + str(precision) if precision >= 0 else "")
        return spec + ("e" if scientific else "g" if shortest else "f")
    return spec + "d"


def _as_string_kernel(x: np.ndarray, *, precision: int, scientific: bool, shortest: bool,
                      width: int, fill: str) -> np.ndarray:
    kind = x.dtype.kind
    if kind == "b":
        text = [b"true" if v else b"false" for v in x.reshape(-1)]
    else:
        spec = _format_of(kind, precision, scientific, shortest, width, fill)
        if kind == "c":
            spec = "(" + spec + "," + spec + ")"
            text = [(spec % (v.real, v.imag)).encode() for v in x.reshape(-1)]
        else:
            text = [(spec % v).encode() for v in x.reshape(-1)]
    out = np.empty(x.shape, object)
    out.reshape(-1)[:] = text if text else []
    return out


def _as_string_rule(x: Any, *, precision: int, scientific: bool, shortest: bool, width: int,
                    fill: str) -> TensorSpec:
    if scientific and shortest:
        raise ValueError("Cannot select both scientific and shortest notation")
    if len(fill) > 1 or fill not in ("", " ", "0", "-", "+", "#"):
        raise ValueError(f"Fill string must be one or fewer characters, got {fill!r}")
    if x.dtype.kind not in "fc" and (precision >= 0 or scientific or shortest):
        raise ValueError("precision, scientific and shortest apply to floating inputs only")
    return TensorSpec(x.shape, _dtypes.string)


AS_STRING = defop("AsString", shape=_as_string_rule, kernel=_as_string_kernel,
                  dtypes=_AS_STRING, check_eager=True)


def as_string(input: Any, precision: int = -1, scientific: bool = False,  # noqa: A002
              shortest: bool = False, width: int = -1, fill: str = "",
              name: Optional[str] = None) -> Tensor:
    """Each number as a string (floats in %f by default, bools as true/false).

    >>> import kilnflow as kf
    >>> kf.strings.as_string([1.5, 2.0], precision=2).numpy()
    array([b'1.50', b'2.00'], dtype=object)
    """
    attrs = {"precision": int(precision), "scientific": bool(scientific),
             "shortest": bool(shortest), "width": int(width), "fill": str(fill)}
    return bind(AS_STRING, (convert_to_tensor(input),), attrs, name)


# ---------------------------------------------------------------- joining and splitting

def _join_kernel(*xs: np.ndarray, separator: str) -> np.ndarray:
    sep = _raw(separator)
    parts = np.broadcast_arrays(*xs)
    out = np.empty(parts[0].shape, object)
    flat = out.reshape(-1)
    columns = [p.reshape(-1) for p in parts]
    for i in range(flat.size):
        flat[i] = sep.join(c[i] for c in columns)
    return out


def _join_rule(*xs: Any, separator: str) -> TensorSpec:
    return rules.broadcast(_dtypes.string)(*xs)


STRING_JOIN = defop("StringJoin", shape=_join_rule, kernel=_join_kernel, dtypes=STRING)


def join(inputs: Sequence, separator: str = "", name: Optional[str] = None) -> Tensor:
    """Join the strings of several tensors elementwise (scalars broadcast).

    >>> import kilnflow as kf
    >>> kf.strings.join([["a", "b"], "!"], separator="-").numpy()
    array([b'a-!', b'b-!'], dtype=object)
    """
    tensors = tuple(strings_tensor(x, "inputs") for x in inputs)
    if not tensors:
        raise ValueError("kf.strings.join needs at least one input")
    return bind(STRING_JOIN, tensors, {"separator": _text(separator)}, name)


def _reduce_join_rule(x: Any, *, axis: Any, keepdims: bool, separator: str) -> TensorSpec:
    return TensorSpec(rules.reduced_shape(x.shape, axis, keepdims), _dtypes.string)


def _reduce_join_kernel(x: np.ndarray, *, axis: Any, keepdims: bool,
                        separator: str) -> np.ndarray:
    axes = tuple(range(x.ndim)) if axis is None else tuple(a % max(x.ndim, 1) for a in axis)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(axes))
    lead = moved.shape[:len(kept)]
    rows = moved.reshape(lead + (int(np.prod(moved.shape[len(kept):], dtype=np.int64)),))
    out = np.empty(lead, object)
    sep = _raw(separator)
    for index in np.ndindex(lead):
        out[index] = sep.join(rows[index])
    if keepdims:
        out = out.reshape([1 if i in axes else d for i, d in enumerate(x.shape)])
    return out


REDUCE_JOIN = defop("ReduceJoin", shape=_reduce_join_rule, kernel=_reduce_join_kernel,
                    dtypes=STRING)


def reduce_join(inputs: Any, axis: Any = None, keepdims: bool = False, separator: str = "",
                name: Optional[str] = None) -> Tensor:
    """Join the strings along `axis` (all of them when None), in row-major order.

    >>> import kilnflow as kf
    >>> kf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1).numpy()
    array([b'ab', b'cd'], dtype=object)
    """
    x = strings_tensor(inputs, "inputs")
    attrs = {"axis": rules.normalize_axes(axis, x.shape.rank), "keepdims": bool(keepdims),
             "separator": _text(separator)}
    return bind(REDUCE_JOIN, (x,), attrs, name)


def _split_kernel(x: np.ndarray, sep: np.ndarray, *, maxsplit: int) -> tuple:
    separator = sep[()] if sep.ndim == 0 else sep.reshape(-1)[0]
    indices, values, width = [], [], 0
    for row, s in enumerate(x.reshape(-1)):
        pieces = s.split(separator or None, maxsplit if maxsplit >= 0 else -1)
        for col, piece in enumerate(pieces):
            indices.append((row, col))
            values.append(piece)
        width = max(width, len(pieces))
    index_array = np.array(indices, np.int64).reshape(-1, 2)
    value_array = np.empty(len(values), object)
    value_array[:] = values
    return index_array, value_array, np.array([x.shape[0], width], np.int64)


def _split_rule(x: Any, sep: Any, *, maxsplit: int) -> list:
    if x.shape.rank not in (None, 1):
        raise ValueError(f"input must be a vector, got shape: {x.shape}")
    if sep.shape.rank not in (None, 0):
        raise ValueError(f"sep must be a scalar, got shape: {sep.shape}")
    return [TensorSpec([None, 2], _dtypes.int64), TensorSpec([None], _dtypes.string),
            TensorSpec([2], _dtypes.int64)]


STRING_SPLIT_V2 = defop("StringSplitV2", shape=_split_rule, kernel=_split_kernel,
                        multi_output=True, dtypes=STRING)


def split_components(rows: Any, sep: Any = None, maxsplit: int = -1,
                     name: Optional[str] = None) -> tuple:
    """(indices, values, dense_shape) of the pieces of each string of a vector: the
    SparseTensor components TF's StringSplitV2 gives (kf.strings.split makes the
    RaggedTensor of them, kilnflow/ragged/string_ops.py)."""
    separator = convert_to_tensor(b"" if sep is None else sep, _dtypes.string)
    return bind(STRING_SPLIT_V2, (strings_tensor(rows), separator),
                {"maxsplit": int(maxsplit)}, name)


def split(input: Any, sep: Any = None, maxsplit: int = -1,  # noqa: A002
          name: Optional[str] = None) -> Tensor:
    """The pieces of a scalar string split at `sep` (runs of whitespace when None), as a
    vector. kf.strings.split (kilnflow/ragged/string_ops.py) gives a RaggedTensor for
    higher ranks.

    >>> import kilnflow as kf
    >>> kf.strings.split("a b  c").numpy()
    array([b'a', b'b', b'c'], dtype=object)
    """
    x = strings_tensor(input)
    if x.shape.rank != 0:
        raise ValueError(f"ops.strings.split takes a scalar, got shape {x.shape}")
    return split_components(reshape(x, [-1]), sep, maxsplit, name)[1]


# ---------------------------------------------------------------- substrings

def _substr_kernel(x: np.ndarray, pos: np.ndarray, size: np.ndarray, *, unit: str) -> np.ndarray:
    xs, ps, ns = np.broadcast_arrays(x, pos, size)
    out = np.empty(xs.shape, object)
    for index in np.ndindex(xs.shape):
        s = xs[index]
        text = s.decode("utf-8", "replace") if unit == "UTF8_CHAR" else s
        p, n = int(ps[index]), int(ns[index])
        if not -len(text) <= p <= len(text):
            raise errors.InvalidArgumentError(errors.with_location(
                f"Substr: pos {p} out of range for string {s!r} at index {list(index)}"))
        start = p + len(text) if p < 0 else p
        piece = text[start:start + max(n, 0)]
        out[index] = piece.encode("utf-8") if unit == "UTF8_CHAR" else piece
    return out


def _substr_rule(x: Any, pos: Any, size: Any, *, unit: str) -> TensorSpec:
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    if pos.dtype not in _INTS:
        raise TypeError(f"Substr: pos must be int32 or int64, got {pos.dtype.name}")
    return TensorSpec(rules.broadcast()(x, pos, size).shape, _dtypes.string)


SUBSTR = defop("Substr", shape=_substr_rule, kernel=_substr_kernel, dtypes=STRING,
               same_dtype=(1, 2), check_eager=True)


def substr(input: Any, pos: Any, len: Any, unit: str = "BYTE",  # noqa: A002
           name: Optional[str] = None) -> Tensor:
    """`len` bytes (or UTF-8 characters) of each string from `pos`; a negative `pos` counts
    from the end. InvalidArgumentError when `pos` is past either end.

    >>> import kilnflow as kf
    >>> kf.strings.substr("hello", 1, 3).numpy()
    b'ell'
    """
    x = strings_tensor(input)
    pos = convert_to_tensor(pos)
    size = convert_to_tensor(len, pos.dtype)
    return bind(SUBSTR, (x, pos, size), {"unit": unit}, name)


# ---------------------------------------------------------------- format

def _format_kernel(*xs: np.ndarray, template: str, placeholder: str, summarize: int) -> Any:
    pieces = template.split(placeholder)
    text = pieces[0]
    for value, piece in zip(xs, pieces[1:]):
        text += summarize_array(value, summarize) + piece
    return np.array(_raw(text), object)


def _format_rule(*xs: Any, template: str, placeholder: str, summarize: int) -> TensorSpec:
    holes = template.count(placeholder)
    if holes != len(xs):
        raise ValueError(f"num placeholders in template and num inputs must match: {holes} "
                         f"vs. {len(xs)}")
    return TensorSpec([], _dtypes.string)


STRING_FORMAT = defop("StringFormat", shape=_format_rule, kernel=_format_kernel,
                      same_dtype=False, check_eager=True)


def format(template: str, inputs: Any, placeholder: str = "{}",  # noqa: A001
           summarize: int = 3, name: Optional[str] = None) -> Tensor:
    """A scalar string: `template` with each `placeholder` replaced by a tensor printed as
    tf.print prints it.

    >>> import kilnflow as kf
    >>> kf.strings.format("x = {}", kf.range(3)).numpy()
    b'x = [0 1 2]'
    """
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    tensors = tuple(convert_to_tensor(x) for x in inputs)
    attrs = {"template": _text(template), "placeholder": _text(placeholder),
             "summarize": int(summarize)}
    return bind(STRING_FORMAT, tensors, attrs, name)
