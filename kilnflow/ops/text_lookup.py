"""The two string kernels behind keras.layers.TextVectorization and StringLookup, as ops so
the layers run inside kf.function and in saved graphs:

  KerasTextTokenize: [batch] strings -> [batch, length] tokens ('' pads): standardize
    (lowercase and/or strip ASCII punctuation, Keras's regex), split (whitespace runs, or
    characters), optional n-grams (all widths in order, ' '-joined, as tf.strings.ngrams),
    padded to the longest row or cut/padded to a fixed `length`.
  KerasStringToIndex: each string's position in a 1-D `table` (first occurrence), or
    `default` when absent.

Neither is differentiable (strings). Imports ops only.
"""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.strings import STRING, strings_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation", "none")
SPLIT = ("whitespace", "character", "none")
# Keras's punctuation class: ASCII punctuation, stripped before splitting
PUNCTUATION = re.compile(r"[!\"#$%&()\*\+,\-\./:;<=>?@\[\\\]^_`{|}~']")


def _tokens(text: bytes, standardize: str, split: str, ngrams: Sequence[int]) -> list:
    s = text.decode("utf-8", "replace")
    if standardize in ("lower_and_strip_punctuation", "lower"):
        s = s.lower()
    if standardize in ("lower_and_strip_punctuation", "strip_punctuation"):
        s = PUNCTUATION.sub("", s)
    if split == "whitespace":
        words = s.split()
    elif split == "character":
        words = list(s)
    else:
        words = [s]
    if ngrams:
        words = [" ".join(words[i:i + n]) for n in ngrams for i in range(len(words) - n + 1)]
    return [w.encode("utf-8") for w in words]


def _tokenize_rule(x: Any, *, standardize: str, split: str, ngrams: Sequence[int],
                   length: int) -> TensorSpec:
    if standardize not in STANDARDIZE:
        raise ValueError(f"standardize must be one of {STANDARDIZE}, got {standardize!r}")
    if split not in SPLIT:
        raise ValueError(f"split must be one of {SPLIT}, got {split!r}")
    if any(int(n) < 1 for n in ngrams):
        raise ValueError(f"ngrams must be positive widths, got {list(ngrams)}")
    if x.shape.rank is not None and x.shape.rank != 1:
        raise ValueError(f"KerasTextTokenize needs a 1-D batch of strings, got shape "
                         f"{x.shape}")
    batch = x.shape[0] if x.shape.rank else None
    return TensorSpec([batch, length if length >= 0 else None], _dtypes.string)


def _tokenize_kernel(x: np.ndarray, *, standardize: str, split: str, ngrams: Sequence[int],
                     length: int) -> np.ndarray:
    rows = [_tokens(item, standardize, split, ngrams) for item in x.reshape(-1)]
    width = length if length >= 0 else max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), b"", dtype=object)
    for i, row in enumerate(rows):
        row = row[:width]
        out[i, :len(row)] = row
    return out


def _index_rule(x: Any, table: Any, *, default: int) -> TensorSpec:
    if table.shape.rank is not None and table.shape.rank != 1:
        raise ValueError(f"KerasStringToIndex: table must be 1-D, got shape {table.shape}")
    return TensorSpec(x.shape, _dtypes.int64)


def _index_kernel(x: np.ndarray, table: np.ndarray, *, default: int) -> np.ndarray:
    positions: dict = {}
    for i, token in enumerate(table.reshape(-1)):
        positions.setdefault(token, i)
    flat = [positions.get(item, default) for item in x.reshape(-1)]
    return np.asarray(flat, np.int64).reshape(x.shape)


TEXT_TOKENIZE = defop("KerasTextTokenize", shape=_tokenize_rule, kernel=_tokenize_kernel,
                      dtypes=STRING)
STRING_TO_INDEX = defop("KerasStringToIndex", shape=_index_rule, kernel=_index_kernel,
                        dtypes=STRING)


def text_tokenize(input: Any, standardize: Optional[str] = "lower_and_strip_punctuation",  # noqa: A002
                  split: Optional[str] = "whitespace", ngrams: Any = None,
                  length: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Tokens of each string of a 1-D batch, '' padded: [batch, length or longest]."""
    x = strings_tensor(input)
    if ngrams is None:
        widths: tuple = ()
    elif isinstance(ngrams, int):
        widths = tuple(range(1, int(ngrams) + 1))
    else:
        widths = tuple(int(n) for n in ngrams)
    if length is not None and int(length) < 0:
        raise errors.InvalidArgumentError(errors.with_location(
            f"text_tokenize: length must be >= 0, got {length}"))
    attrs = {"standardize": standardize or "none", "split": split or "none",
             "ngrams": widths, "length": -1 if length is None else int(length)}
    return bind(TEXT_TOKENIZE, (x,), attrs, name=name)


def string_to_index(input: Any, table: Any, default: int = 0,  # noqa: A002 - TF's name
                    name: Optional[str] = None) -> Tensor:
    """The index of each string in the 1-D string `table`, or `default` when absent."""
    return bind(STRING_TO_INDEX, (strings_tensor(input), strings_tensor(table, "table")),
                {"default": int(default)}, name=name)
