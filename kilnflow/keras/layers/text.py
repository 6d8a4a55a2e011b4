"""StringLookup and TextVectorization: strings to vocabulary indices, or to multi-hot,
count and TF-IDF vectors, with vocabularies from `adapt` (lists, arrays, tensors or kf.data
datasets) or given. As in Keras 3: the vocabulary is ordered by descending frequency, ties
by descending token; index 0 is the mask token when there is one ('' for TextVectorization's
int mode), then the OOV slot ('[UNK]'), then the vocabulary; TF-IDF weights are
log(1 + documents / (1 + documents containing the token)), the OOV slot's their mean.
The string work runs in the KerasTextTokenize / KerasStringToIndex ops (ops/text_lookup.py),
so the layers work inside kf.function too.
"""
from __future__ import annotations

import collections
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array, reduction, reshaping, slicing
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.text_lookup import string_to_index, text_tokenize
from kilnflow.shapes import TensorShape, TensorSpec

MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _batches(data: Any) -> list:
    """adapt()'s data as a list of NumPy batches: a kf.data dataset or other iterable of
    batches gives each batch; an array, tensor or list is one batch."""
    if isinstance(data, (str, bytes)):
        return [np.asarray([data], dtype=object)]
    if hasattr(data, "element_spec") or (hasattr(data, "__iter__") and not isinstance(
            data, (list, tuple, np.ndarray)) and not hasattr(data, "numpy")):
        return [np.asarray(b, dtype=object) for b in data]
    return [np.asarray(data, dtype=object)]


class _IndexLookup(Layer):
    """Vocabulary, adapt and the output modes shared by StringLookup and TextVectorization."""
    supports_jit = False  # as in Keras 3: compile(jit_compile=True) warns and runs without

    def __init__(self, max_tokens: Optional[int] = None, num_oov_indices: int = 1,
                 mask_token: Optional[str] = None, oov_token: str = "[UNK]",
                 vocabulary: Any = None, idf_weights: Any = None, invert: bool = False,
                 output_mode: str = "int", sparse: bool = False,
                 pad_to_max_tokens: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if output_mode not in MODES:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of "
                             f"{list(MODES)}. Received: output_mode={output_mode!r}")
        if sparse:
            raise NotImplementedError(f"{type(self).__name__}(sparse=True): kilnflow has "
                                      "dense tensors only")
        if num_oov_indices > 1:
            raise NotImplementedError(f"{type(self).__name__}(num_oov_indices > 1) hashes "
                                      "tokens into OOV slots, which is not supported yet")
        if invert and output_mode != "int":
            raise ValueError("`invert=True` needs output_mode='int'")
        self.max_tokens, self.num_oov_indices = max_tokens, int(num_oov_indices)
        self.mask_token, self.oov_token, self.invert = mask_token, oov_token, invert
        self.output_mode, self.pad_to_max_tokens = output_mode, pad_to_max_tokens
        self._vocab: Optional[list] = None
        self._idf: Optional[np.ndarray] = None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # vocabulary ------------------------------------------------------------
    def _reserved(self) -> list:
        head = [] if self.mask_token is None else [self.mask_token]
        return head + [self.oov_token] * self.num_oov_indices

    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        """Index i's token: [mask,] OOV slot(s), then the vocabulary."""
        vocab = list(self._vocab or [])
        return self._reserved() + vocab if include_special_tokens else vocab

    def vocabulary_size(self) -> int:
        return len(self.get_vocabulary())

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Use `vocabulary` (tokens, without the special ones) and, for tf_idf, its
        `idf_weights` (one per token)."""
        vocab = [_text(v) for v in np.asarray(vocabulary, dtype=object).reshape(-1)]
        vocab = [v for v in vocab if v not in self._reserved()]
        if len(set(vocab)) != len(vocab):
            raise ValueError(f"The passed vocabulary has at least one repeated term: {vocab}")
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'")
            weights = np.asarray(idf_weights, np.float64).reshape(-1)
            self._idf = np.concatenate([[weights.mean()], weights])
        self._vocab = vocab

    def _documents(self, batch: np.ndarray) -> list:
        """A batch of adapt() data as token lists, one per document (rows of a 2-D batch,
        elements of a 1-D one)."""
        rows = batch.reshape(len(batch), -1) if batch.ndim else batch.reshape(1, 1)
        return [[_text(t) for t in row] for row in rows]

    def adapt(self, data: Any, batch_size: Any = None, steps: Optional[int] = None) -> None:
        """Build the vocabulary (and IDF weights) from `data`."""
        counts: collections.Counter = collections.Counter()
        documents: collections.Counter = collections.Counter()
        total = 0
        for i, batch in enumerate(_batches(data)):
            if steps is not None and i >= steps:
                break
            for doc in self._documents(batch):
                tokens = [t for t in doc if t != self.mask_token]
                counts.update(tokens)
                documents.update(set(tokens))
                total += 1
        order = sorted(counts, key=lambda t: (counts[t], t.encode("utf-8")), reverse=True)
        reserved = len(self._reserved())
        if self.max_tokens is not None:
            order = order[:max(self.max_tokens - reserved, 0)]
        self._vocab = order
        if self.output_mode == "tf_idf":
            weights = np.log1p(total / (1.0 + np.asarray([documents[t] for t in order],
                                                          np.float64)))
            self._idf = np.concatenate([[weights.mean() if len(weights) else 0.0], weights])

    # encoding --------------------------------------------------------------
    def _depth(self) -> int:
        size = self.vocabulary_size()
        if self.pad_to_max_tokens and self.max_tokens is not None:
            return max(size, int(self.max_tokens))
        return size

    def _lookup(self, tokens: Any, extra_pad: bool = False) -> Any:
        """Token indices; with extra_pad, '' (padding) takes index 0 and every other index
        shifts up by one, so padding can be dropped after counting (TextVectorization's
        non-int modes)."""
        if self._vocab is None:
            raise ValueError(f"{self.name}: pass `vocabulary` or call adapt() first")
        table = self.get_vocabulary()
        oov = 1 if self.mask_token is not None else 0
        if self.num_oov_indices == 0:
            oov = -1  # Keras raises on OOV here; kilnflow marks it with -1
        if extra_pad:  # '' at index 0, everything else shifted by one
            table = [""] + table
            oov += 1
        return string_to_index(tokens, convert_to_tensor([t.encode("utf-8") for t in table],
                                                         _dtypes.string), default=oov)

    def _encode(self, ids: Any, shifted: bool) -> Any:
        """int / one_hot / multi_hot / count / tf_idf from indices (shifted: index 0 is
        padding to drop)."""
        if self.output_mode == "int":
            return ids
        depth = self._depth() + (1 if shifted else 0)
        if self.output_mode == "one_hot":
            if ids.shape.rank and ids.shape.rank > 1 and ids.shape[-1] == 1:
                ids = reshaping.squeeze(ids, [-1])
            out = array.one_hot(ids, depth, dtype=_dtypes.int64)
        else:
            if ids.shape.rank == 1:
                ids = reshaping.expand_dims(ids, -1)
            out = reduction.reduce_sum(array.one_hot(ids, depth, dtype=_dtypes.int64), -2)
        if shifted:
            out = out[..., 1:]
        if self.output_mode == "multi_hot":
            return kmath.cast(out > 0, _dtypes.int64)
        if self.output_mode == "tf_idf":
            weights = np.zeros(self._depth(), np.float32)
            weights[:len(self._idf)] = self._idf
            return kmath.cast(out, _dtypes.float32) * convert_to_tensor(weights)
        return out

    def _output_dtype(self) -> Any:
        if self.invert:
            return _dtypes.string
        return _dtypes.float32 if self.output_mode == "tf_idf" else _dtypes.int64

    def get_config(self) -> dict:
        idf = None if self._idf is None else [float(w) for w in self._idf[1:]]
        return {**super().get_config(), "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "mask_token": self.mask_token,
                "oov_token": self.oov_token, "vocabulary": self._vocab,
                "idf_weights": idf, "invert": self.invert, "output_mode": self.output_mode,
                "sparse": False, "pad_to_max_tokens": self.pad_to_max_tokens}


class StringLookup(_IndexLookup):
    """Strings to vocabulary indices (int64), or to one_hot / multi_hot / count / tf_idf
    vectors; invert=True maps indices back to strings.

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> layer = keras.layers.StringLookup(vocabulary=["a", "b"])
    >>> layer(kf.constant([["a", "c", "b"]])).numpy().tolist()
    [[1, 0, 2]]
    """

    def __init__(self, max_tokens: Optional[int] = None, num_oov_indices: int = 1,
                 mask_token: Optional[str] = None, oov_token: str = "[UNK]",
                 vocabulary: Any = None, idf_weights: Any = None, invert: bool = False,
                 output_mode: str = "int", pad_to_max_tokens: bool = False,
                 sparse: bool = False, encoding: str = "utf-8", **kwargs: Any):
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary,
                         idf_weights, invert, output_mode, sparse, pad_to_max_tokens,
                         **kwargs)
        self.encoding = encoding

    def call(self, inputs: Any) -> Any:
        if self.invert:
            table = convert_to_tensor([t.encode("utf-8") for t in self.get_vocabulary()],
                                      _dtypes.string)
            return slicing.gather(table, kmath.cast(inputs, _dtypes.int64))
        return self._encode(self._lookup(convert_to_tensor(inputs, _dtypes.string)), False)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        if self.output_mode == "int":
            return TensorShape(shape)
        if self.output_mode == "one_hot" and shape and shape[-1] == 1:
            shape = shape[:-1]
        elif self.output_mode != "one_hot" and len(shape) > 1:
            shape = shape[:-1]
        return TensorShape(shape + [self._depth() if self._vocab is not None else None])

    def compute_output_signature(self, input_signature: Any) -> Any:
        return TensorSpec(self.compute_output_shape(input_signature.shape),
                          self._output_dtype())

    def get_config(self) -> dict:
        return {**super().get_config(), "encoding": self.encoding}


class TextVectorization(_IndexLookup):
    """Raw strings to token indices or bag-of-words vectors: standardize (lowercase, strip
    punctuation), split (whitespace or characters), n-grams, then a vocabulary lookup.
    int mode pads with 0 to the longest text, or to `output_sequence_length`.

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> layer = keras.layers.TextVectorization(vocabulary=["the", "fox"])
    >>> layer(kf.constant(["The fox, the end."])).numpy().tolist()
    [[2, 3, 2, 1]]
    """

    def __init__(self, max_tokens: Optional[int] = None,
                 standardize: Any = "lower_and_strip_punctuation", split: Any = "whitespace",
                 ngrams: Any = None, output_mode: str = "int",
                 output_sequence_length: Optional[int] = None, pad_to_max_tokens: bool = False,
                 vocabulary: Any = None, idf_weights: Any = None, sparse: bool = False,
                 ragged: bool = False, encoding: str = "utf-8", **kwargs: Any):
        for what, value in (("standardize", standardize), ("split", split)):
            if callable(value):
                raise NotImplementedError(f"TextVectorization: a callable `{what}` is not "
                                          "supported; use one of the built-in names")
        if ragged:
            raise NotImplementedError("TextVectorization(ragged=True): kilnflow has dense "
                                      "tensors here; int outputs are 0-padded")
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is "
                             "not 'int'")
        self.standardize, self.split, self.encoding = standardize, split, encoding
        self.ngrams = ngrams if ngrams is None or isinstance(ngrams, int) else tuple(ngrams)
        self.output_sequence_length = output_sequence_length
        super().__init__(max_tokens, 1, "" if output_mode == "int" else None, "[UNK]",
                         vocabulary, idf_weights, False, output_mode, sparse,
                         pad_to_max_tokens, **kwargs)

    def _tokens(self, inputs: Any, length: Optional[int] = None) -> Any:
        x = convert_to_tensor(inputs, _dtypes.string)
        if x.shape.rank == 0:
            x = reshaping.reshape(x, [1])
        if x.shape.rank == 2 and x.shape[-1] == 1:
            x = reshaping.squeeze(x, [-1])
        return text_tokenize(x, self.standardize, self.split, self.ngrams, length)

    def _documents(self, batch: np.ndarray) -> list:
        texts = np.asarray([_text(v).encode("utf-8") for v in batch.reshape(-1)], dtype=object)
        tokens = np.asarray(self._tokens(texts))
        return [[_text(t) for t in row if t != b""] for row in tokens]

    def call(self, inputs: Any) -> Any:
        if self.output_mode == "int":
            return self._lookup(self._tokens(inputs, self.output_sequence_length))
        return self._encode(self._lookup(self._tokens(inputs), extra_pad=True), True)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch = TensorShape(input_shape).as_list()[0] if TensorShape(input_shape).rank \
            else None
        if self.output_mode == "int":
            return TensorShape([batch, self.output_sequence_length])
        return TensorShape([batch, self._depth() if self._vocab is not None else None])

    def compute_output_signature(self, input_signature: Any) -> Any:
        return TensorSpec(self.compute_output_shape(input_signature.shape),
                          self._output_dtype())

    def get_config(self) -> dict:
        config = super().get_config()
        for key in ("num_oov_indices", "mask_token", "oov_token", "invert"):
            config.pop(key)
        return {**config, "standardize": self.standardize, "split": self.split,
                "ngrams": self.ngrams, "output_sequence_length": self.output_sequence_length,
                "ragged": False, "encoding": self.encoding}
