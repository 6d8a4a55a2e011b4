"""Text preprocessing cases shared by scripts/record_keras_text.py (TF 2.21 + Keras 3 in a
side venv) and tests/keras/test_text_layers.py: each adapts a layer on CORPUS (or gives it
a vocabulary) and applies it to PROBE; tests/keras/data/keras_text.json holds Keras's
vocabularies and outputs."""

CORPUS = ["The quick brown fox.", "the LAZY dog!", "The dog, the fox; the end",
          "quick quick fox", "a b c d e f g", "Dog-fox? Brown... end"]
PROBE = ["the fox and the dog", "Quick, BROWN cat!", "", "zebra the the"]

CASES = {
    "tv_int": ("TextVectorization", dict()),
    "tv_int_len": ("TextVectorization", dict(output_sequence_length=4)),
    "tv_int_len_long": ("TextVectorization", dict(output_sequence_length=8)),
    "tv_max_tokens": ("TextVectorization", dict(max_tokens=6)),
    "tv_bigrams": ("TextVectorization", dict(ngrams=2, max_tokens=12)),
    "tv_multi_hot": ("TextVectorization", dict(output_mode="multi_hot")),
    "tv_count": ("TextVectorization", dict(output_mode="count", max_tokens=8)),
    "tv_tf_idf": ("TextVectorization", dict(output_mode="tf_idf")),
    "tv_lower_only": ("TextVectorization", dict(standardize="lower")),
    "tv_no_standardize": ("TextVectorization", dict(standardize=None)),
    "tv_character": ("TextVectorization", dict(split="character", max_tokens=10,
                                               output_sequence_length=6)),
    "tv_vocab": ("TextVectorization", dict(vocabulary=["fox", "dog", "the"])),
    "sl_int": ("StringLookup", dict()),
    "sl_mask": ("StringLookup", dict(mask_token="", num_oov_indices=1)),
    "sl_multi_hot": ("StringLookup", dict(output_mode="multi_hot")),
    "sl_count": ("StringLookup", dict(output_mode="count", max_tokens=5)),
    "sl_one_hot": ("StringLookup", dict(output_mode="one_hot", vocabulary=["a", "b"])),
    "sl_tf_idf": ("StringLookup", dict(output_mode="tf_idf")),
    "sl_vocab": ("StringLookup", dict(vocabulary=["fox", "dog", "the", "cat", "zzz"],
                                      num_oov_indices=0)),
}


def lookup_data():
    """StringLookup adapts on / is applied to the whitespace tokens (a dense [n, 5] array
    padded with '' would add '' to the vocabulary, so these are ragged-free rows)."""
    corpus = [row.lower().replace(",", "").replace(".", "").split()[:3] for row in CORPUS]
    corpus = [(r + ["fox"] * 3)[:3] for r in corpus]
    probe = [["the", "cat", "fox"], ["dog", "dog", "zzz"]]
    return corpus, probe


def lookup_probe(kwargs):
    """one_hot encodes one token per example: the first column then."""
    probe = lookup_data()[1]
    return [row[0] for row in probe] if kwargs.get("output_mode") == "one_hot" else probe
