"""CSV files as datasets: experimental.CsvDataset (one tuple of scalars per record) and
experimental.make_csv_dataset (batches of a dict of columns, with column types inferred).

Files are read lazily with Python's csv module (quoted fields may hold the delimiter, a
doubled quote or a newline); bytes that are not UTF-8 pass through unchanged.
"""
from __future__ import annotations

import collections
import csv
import io
from typing import Any, Iterator, List, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.data import readers
from kilnflow.data.dataset import Dataset, as_count, skipped
from kilnflow.data.transforms import Identity
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec

_ENCODING = dict(encoding="utf-8", errors="surrogateescape")
_INTS = {"int32": np.iinfo(np.int32), "int64": np.iinfo(np.int64)}


def _rows(f: Any, delim: str, quotes: bool) -> Iterator[List[str]]:
    text = io.TextIOWrapper(f, newline="", **_ENCODING)
    return csv.reader(text, delimiter=delim, quoting=csv.QUOTE_MINIMAL if quotes
                      else csv.QUOTE_NONE, strict=False)


def _parse(field: str, default: Optional[np.ndarray], dtype: Any, index: int) -> np.ndarray:
    """One field as a scalar of `dtype`; empty (or na_value, mapped to "" by the caller)
    takes the default, or is an error for a required column."""
    if field == "":
        if default is None:
            raise errors.InvalidArgumentError(
                f"CsvDataset: Field {index} is required but missing in record!")
        return default
    name = dtype.name
    try:
        if name in _INTS:
            value = int(field)
            if not _INTS[name].min <= value <= _INTS[name].max:
                raise ValueError
            return np.array(value, dtype.as_numpy_dtype)
        if dtype.is_floating:
            return np.array(float(field), dtype.as_numpy_dtype)
    except ValueError:
        raise errors.InvalidArgumentError(f"CsvDataset: Field {index} in record is not a "
                                          f"valid {name}: {field}") from None
    return readers.as_string(field.encode(**_ENCODING))


def _defaults(record_defaults: Sequence) -> tuple:
    """(dtypes, defaults): a dtype is a required column, a value its column's default."""
    types, defaults = [], []
    for value in record_defaults:
        if isinstance(value, (_dtypes.DType, type)) and not isinstance(value, str):
            dtype, default = _dtypes.as_dtype(value), None
        else:
            array = np.asarray(convert_to_tensor(value))  # TF's rules: 0 is int32
            array = array.reshape(-1)[0] if array.ndim == 1 and array.size == 1 else array
            if array.ndim != 0:
                raise ValueError(f"CsvDataset: each record default must be a scalar or a "
                                 f"dtype, got {value!r}")
            dtype = _dtypes.as_dtype(array.dtype)
            default = readers.as_string(array.item()) if dtype is _dtypes.string else array
        if dtype.name not in ("int32", "int64", "float32", "float64", "string"):
            raise TypeError(f"CsvDataset: unsupported column type {dtype.name}")
        types.append(dtype)
        defaults.append(default)
    return types, defaults


class CsvRecords(Dataset):
    """The parsed records of one CSV file."""

    def __init__(self, path: str, kind: str, types: list, defaults: list, columns: list,
                 header: bool, delim: str, quotes: bool, na_value: str, skip_bad: bool):
        self._args = (path, kind, header, delim, quotes, na_value)
        self._types, self._defaults, self._columns = types, defaults, columns
        self.skip_bad = skip_bad
        super().__init__([], tuple(TensorSpec([], t) for t in types))

    def _elements(self) -> Iterator[list]:
        return self._read(self.skip_bad, False)

    def _read(self, skip_bad: bool, log: bool) -> Iterator[list]:
        path, kind, header, delim, quotes, na_value = self._args
        with readers.open_file(path, kind, readers.READ_BYTES, "CsvDataset") as f:
            rows = _rows(f, delim, quotes)
            if header:
                next(rows, None)
            for row in rows:
                if not row:
                    continue  # a blank line is no record
                try:
                    yield self._record(row, na_value)
                except errors.InvalidArgumentError as exc:
                    if not skip_bad:
                        raise
                    skipped(exc, log)

    def _tolerant(self, log: bool) -> Iterator[list]:
        return self._read(True, log)  # a bad record is skipped; the file reads on

    def _record(self, row: List[str], na_value: str) -> list:
        out = []
        for i, (column, dtype, default) in enumerate(zip(self._columns, self._types,
                                                          self._defaults)):
            if column >= len(row):
                raise errors.InvalidArgumentError(
                    f"CsvDataset: Expect {max(self._columns) + 1} fields but have "
                    f"{len(row)} in record")
            field = row[column]
            out.append(_parse("" if field == na_value else field, default, dtype, i))
        return out


class CsvDataset(Identity):
    """tf.data.experimental.CsvDataset: one tuple of scalars per CSV record.

    `record_defaults` has one entry per selected column: a dtype (the column is required)
    or a scalar (its default, whose dtype is the column's). `select_cols` /
    `exclude_cols` pick columns by index.
    """

    def __init__(self, filenames: Any, record_defaults: Sequence, compression_type: Any = None,
                 buffer_size: Any = None, header: bool = False, field_delim: str = ",",
                 use_quote_delim: bool = True, na_value: str = "",
                 select_cols: Optional[Sequence[int]] = None,
                 exclude_cols: Optional[Sequence[int]] = None, name: Optional[str] = None,
                 ignore_errors: bool = False):
        what = "CsvDataset"
        types, defaults = _defaults(record_defaults)
        if select_cols is not None and exclude_cols is not None:
            raise errors.InvalidArgumentError(f"{what}: give select_cols or exclude_cols, "
                                              "not both")
        if select_cols is not None:
            columns = [as_count(c, what, "select_cols") for c in select_cols]
            if columns != sorted(set(columns)) or (columns and columns[0] < 0):
                raise errors.InvalidArgumentError(f"{what}: select_cols must be sorted, "
                                                  f"unique and non-negative: {columns}")
        else:
            excluded = {as_count(c, what, "exclude_cols") for c in exclude_cols or ()}
            columns = [c for c in range(len(types) + len(excluded)) if c not in excluded]
        if len(columns) != len(types):
            raise errors.InvalidArgumentError(
                f"{what}: {len(types)} record_defaults for {len(columns)} selected columns")
        kind = readers.compression(compression_type, what)
        names = readers.filename_dataset(filenames, what)
        args = (kind, types, defaults, columns, bool(header), field_delim,
                bool(use_quote_delim), na_value, ignore_errors)
        super().__init__(names.flat_map(
            lambda path: CsvRecords(readers.path_of(path), *args)))


def _infer(values: List[str]) -> Any:
    """The narrowest of int32, int64, float32, string that holds every non-empty value."""
    present = [v for v in values if v != ""]
    for dtype in (_dtypes.int32, _dtypes.int64, _dtypes.float32):
        try:
            for i, v in enumerate(present):
                _parse(v, None, dtype, i)
            return dtype
        except errors.InvalidArgumentError:
            continue
    return _dtypes.string


def make_csv_dataset(file_pattern: Any, batch_size: int, column_names: Optional[list] = None,
                     column_defaults: Optional[list] = None, label_name: Optional[str] = None,
                     select_columns: Optional[list] = None, field_delim: str = ",",
                     use_quote_delim: bool = True, na_value: str = "", header: bool = True,
                     num_epochs: Optional[int] = None, shuffle: bool = True,
                     shuffle_buffer_size: int = 10000, shuffle_seed: Optional[int] = None,
                     prefetch_buffer_size: Optional[int] = None,
                     num_parallel_reads: Optional[int] = None, sloppy: bool = False,
                     num_rows_for_inference: int = 100, compression_type: Any = None,
                     ignore_errors: bool = False, encoding: str = "utf-8") -> Dataset:
    """Batches of (features, label) from CSV files: features an OrderedDict of columns in
    file order (without label_name), column types inferred from the first rows unless
    column_defaults are given. Repeats forever unless num_epochs; shuffles unless
    shuffle=False."""
    what = "make_csv_dataset"
    files = readers.list_files(file_pattern, False, None)
    paths = [readers.path_of(p) for (p,) in files._elements()]
    kind = readers.compression(compression_type, what)
    with readers.open_file(paths[0], kind, readers.READ_BYTES, what) as f:
        rows = _rows(f, field_delim, use_quote_delim)
        first = next(rows, [])
        sample = [first] + [r for _, r in zip(range(num_rows_for_inference), rows)]
    if column_names is None:
        if not header:
            raise ValueError(f"{what}: column_names is required when the files have no header")
        column_names = list(first)
    if header:
        sample = sample[1:]
    if len(set(column_names)) != len(column_names):
        raise ValueError(f"{what}: column names must be unique, got {column_names}")
    if select_columns is None:
        columns = list(range(len(column_names)))
    else:
        columns = sorted(c if isinstance(c, int) else _index(column_names, c, what)
                         for c in select_columns)
    names = [column_names[c] for c in columns]
    if label_name is not None and label_name not in names:
        raise ValueError(f"{what}: label_name {label_name!r} is not a selected column "
                         f"({names})")
    if column_defaults is None:
        types = [_infer([r[c] if c < len(r) else "" for r in sample]) for c in columns]
        column_defaults = [np.array(b"" if t is _dtypes.string else 0, t.as_numpy_dtype)
                           for t in types]
    if len(column_defaults) != len(columns):
        raise ValueError(f"{what}: {len(column_defaults)} column_defaults for "
                         f"{len(columns)} selected columns")
    names_ds = files.shuffle(len(paths), seed=shuffle_seed) if shuffle else files
    dataset = names_ds.interleave(
        lambda path: CsvDataset(path, column_defaults, compression_type, None, header,
                                field_delim, use_quote_delim, na_value, columns,
                                ignore_errors=ignore_errors),
        cycle_length=num_parallel_reads or 1, num_parallel_calls=num_parallel_reads,
        deterministic=not sloppy)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    dataset = dataset.repeat(num_epochs).batch(batch_size)

    def as_features(*values: Any) -> Any:
        features = collections.OrderedDict(zip(names, values))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label
    return dataset.map(as_features).prefetch(prefetch_buffer_size or -1)


def _index(names: List[str], name: str, what: str) -> int:
    if name not in names:
        raise ValueError(f"{what}: select_columns names {name!r}, not a column of {names}")
    return names.index(name)
