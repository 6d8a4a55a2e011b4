"""Samples of kilnflow/ops/text_lookup.py (the string kernels of TextVectorization and
StringLookup)."""
import numpy as np

from kilnflow.ops.text_lookup import string_to_index, text_tokenize
from tests.ops.samples import add

TEXTS = np.array([b"The quick, brown fox.", b"", b"a  b"], dtype=object)


def _rows(rows, width):
    out = np.full((len(rows), width), b"", dtype=object)
    for i, row in enumerate(rows):
        out[i, :len(row[:width])] = row[:width]
    return out


add("KerasTextTokenize", text_tokenize, (TEXTS,),
    lambda x: _rows([[b"the", b"quick", b"brown", b"fox"], [], [b"a", b"b"]], 4),
    static_shape=False)  # padded to the longest row: a width known from the values only
add("KerasTextTokenize", lambda x: text_tokenize(x, "lower", "whitespace", 2, 3), (TEXTS,),
    lambda x: _rows([[b"the", b"quick,", b"brown", b"fox."], [], [b"a", b"b", b"a b"]], 3),
    name="bigrams_fixed_length")
add("KerasTextTokenize", lambda x: text_tokenize(x, None, "character", None, 2), (TEXTS,),
    lambda x: _rows([[b"T", b"h"], [], [b"a", b" "]], 2), name="characters")
add("KerasStringToIndex", string_to_index,
    (np.array([[b"b", b"zz"], [b"a", b""]], dtype=object),
     np.array([b"", b"[UNK]", b"a", b"b"], dtype=object)),
    lambda x, t: np.array([[3, 0], [2, 0]], np.int64))
add("KerasStringToIndex", lambda x, t: string_to_index(x, t, default=1),
    (np.array([b"q", b"a"], dtype=object), np.array([b"a", b"a"], dtype=object)),
    lambda x, t: np.array([1, 0], np.int64), name="first_occurrence_and_default")
