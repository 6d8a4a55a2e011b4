"""The ragged string ops of kf.strings: split and unicode_decode give RaggedTensors for
non-scalar inputs, as in TF (a scalar input gives a dense vector)."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import dtypes as _dtypes
from kilnflow.ops import strings as _strings
from kilnflow.ops import unicode as _unicode
from kilnflow.ops import unicode_offsets as _offsets
from kilnflow.ops.array import shape as _shape
from kilnflow.ops.array import range as _range
from kilnflow.ops.math import cast
from kilnflow.ops.reduction import reduce_sum
from kilnflow.ops.reshaping import reshape
from kilnflow.ops.slicing import gather
from kilnflow.ops.string_grouping import unsorted_segment_join
from kilnflow.ragged.ragged_tensor import RaggedTensor
from kilnflow.tensor import Tensor

_I64 = _dtypes.int64


def _uniform_outer(rt: RaggedTensor, dims: Any) -> RaggedTensor:
    """Wrap rows that came from a flattened input of shape `dims` back into its outer dims
    (uniform row lengths, as TF's ragged result of a rank > 1 input)."""
    rank = len(dims) if isinstance(dims, list) else dims.shape.as_list()[0]
    for axis in range(rank - 1, 0, -1):
        width = dims[axis]
        count = rt.nrows(out_type=_I64) // width
        rt = RaggedTensor.from_uniform_row_length(rt, width, count, validate=False)
    return rt


def _dims(x: Tensor) -> Any:
    """The input's dims: Python ints when static (uniform row lengths TF reports in the
    shape), else a shape tensor."""
    if x.shape.is_fully_defined():
        return x.shape.as_list()
    return _shape(x, out_type=_I64)


def split(input: Any = None, sep: Any = None, maxsplit: int = -1,  # noqa: A002
          name: Optional[str] = None) -> Any:
    """Split each string at `sep` (runs of whitespace when None). A scalar gives a vector
    of pieces; a tensor of rank N gives a RaggedTensor of rank N + 1, as in TF.

    >>> import kilnflow as kf
    >>> kf.strings.split(["a b", "c"])
    <tf.RaggedTensor [[b'a', b'b'], [b'c']]>
    """
    x = _strings.strings_tensor(input)
    if x.shape.rank == 0:
        return _strings.split(x, sep, maxsplit, name)
    indices, values, dense_shape = _strings.split_components(reshape(x, [-1]), sep, maxsplit,
                                                             name)
    rows = RaggedTensor.from_value_rowids(values, indices[:, 0], dense_shape[0],
                                          validate=False)
    if x.shape.rank == 1:
        return rows
    return _uniform_outer(rows, _dims(x))


def unicode_decode(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, replace_control_characters: bool = False,
                   name: Optional[str] = None) -> Any:
    """The code points of each string: an int32 vector for a scalar, a RaggedTensor (one
    row per string) for a vector, as in TF.

    >>> import kilnflow as kf
    >>> kf.strings.unicode_decode(["hé", "x"], "UTF-8")
    <tf.RaggedTensor [[104, 233], [120]]>
    """
    x = _strings.strings_tensor(input)
    if x.shape.rank == 0:
        return _unicode.unicode_decode(x, input_encoding, errors, replacement_char,
                                       replace_control_characters, name)
    splits, points = _unicode.unicode_decode_components(reshape(x, [-1]), input_encoding,
                                                        errors, replacement_char, name)
    rows = RaggedTensor.from_row_splits(points, splits, validate=False)
    if x.shape.rank == 1:
        return rows
    return _uniform_outer(rows, _dims(x))


def unicode_split(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                  replacement_char: int = 65533, name: Optional[str] = None) -> Any:
    """Each string cut into its characters: a vector for a scalar, a RaggedTensor (one row
    per string) for a vector, as in TF.

    >>> import kilnflow as kf
    >>> kf.strings.unicode_split(["hé", "x"], "UTF-8")
    <tf.RaggedTensor [[b'h', b'\\xc3\\xa9'], [b'x']]>
    """
    x = _strings.strings_tensor(input)
    if x.shape.rank == 0:
        return _unicode.unicode_split(x, input_encoding, errors, replacement_char, name)
    points = unicode_decode(x, input_encoding, errors, replacement_char)
    encoding = input_encoding if input_encoding in ("UTF-8", "UTF-16-BE", "UTF-32-BE") \
        else "UTF-8"
    return points.with_flat_values(_unicode.unicode_encode(
        reshape(points.flat_values, [-1, 1]), encoding, errors, replacement_char))


def bytes_split(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """The bytes of each string as one-byte strings: a vector for a scalar, a RaggedTensor
    (one row per string) for higher ranks, as in TF.

    >>> import kilnflow as kf
    >>> kf.strings.bytes_split(["ab", "c"])
    <tf.RaggedTensor [[b'a', b'b'], [b'c']]>
    """
    x = _strings.strings_tensor(input)
    if x.shape.rank == 0:
        return _unicode.bytes_split(x, name)
    flat = reshape(x, [-1])
    lengths = cast(_strings.length(flat), _I64)
    rows = RaggedTensor.from_row_lengths(_range(reduce_sum(lengths)), lengths, validate=False)
    position = rows.flat_values - gather(rows.row_splits, rows.value_rowids())
    pieces = _strings.substr(gather(flat, rows.value_rowids()), position, 1)
    rows = rows.with_flat_values(pieces)
    return rows if x.shape.rank == 1 else _uniform_outer(rows, _dims(x))


def unicode_decode_with_offsets(input: Any, input_encoding: str,  # noqa: A002
                                errors: str = "replace", replacement_char: int = 65533,
                                replace_control_characters: bool = False,
                                name: Optional[str] = None) -> Any:
    """(code points, starting byte offsets) of each string's characters, shaped as
    unicode_decode's result (vectors for a scalar, RaggedTensors for a vector).

    >>> import kilnflow as kf
    >>> points, offsets = kf.strings.unicode_decode_with_offsets(["hé", "x"], "UTF-8")
    >>> offsets
    <tf.RaggedTensor [[0, 1], [0]]>
    """
    x = _strings.strings_tensor(input)
    splits, points, offsets = _offsets.unicode_decode_with_offsets_components(
        reshape(x, [-1]), input_encoding, errors, replacement_char, name)
    if x.shape.rank == 0:
        return points, offsets
    rows = RaggedTensor.from_row_splits(points, splits, validate=False)
    starts = RaggedTensor.from_row_splits(offsets, splits, validate=False)
    if x.shape.rank == 1:
        return rows, starts
    return _uniform_outer(rows, _dims(x)), _uniform_outer(starts, _dims(x))


def unicode_split_with_offsets(input: Any, input_encoding: str,  # noqa: A002
                               errors: str = "replace", replacement_char: int = 65533,
                               name: Optional[str] = None) -> Any:
    """(characters, starting byte offsets) of each string, shaped as unicode_split's."""
    points, offsets = unicode_decode_with_offsets(input, input_encoding, errors,
                                                  replacement_char, name=name)
    encoding = input_encoding if input_encoding in _offsets.ENCODINGS else "UTF-8"
    if isinstance(points, RaggedTensor):
        return points.with_flat_values(_unicode.unicode_encode(
            reshape(points.flat_values, [-1, 1]), encoding, errors, replacement_char)), offsets
    return _unicode.unicode_encode(reshape(points, [-1, 1]), encoding, errors,
                                   replacement_char), offsets
def unicode_encode(input: Any, output_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, name: Optional[str] = None) -> Any:
    """Encode code points along the innermost dimension as strings; a RaggedTensor input
    (one row of code points per string, as unicode_decode gives) encodes row by row.

    >>> import kilnflow as kf
    >>> kf.strings.unicode_encode(kf.ragged.constant([[104, 105], [], [233]]), "UTF-8")
    <tf.Tensor: shape=(3,), dtype=string, numpy=array([b'hi', b'', b'\\xc3\\xa9'], dtype=object)>
    """
    if not isinstance(input, RaggedTensor):
        return _unicode.unicode_encode(input, output_encoding, errors, replacement_char, name)
    if isinstance(input.values, RaggedTensor):
        return input.with_values(unicode_encode(input.values, output_encoding, errors,
                                                replacement_char, name))
    # each code point on its own, then the points of a row joined in order
    chars = _unicode.unicode_encode(reshape(input.values, [-1, 1]), output_encoding, errors,
                                    replacement_char)
    return unsorted_segment_join(chars, input.value_rowids(), input.nrows(), name=name)
