"""The keras.ops names kilnflow leaves out, and why (tests/keras/ops checks this list against
the names recorded from Keras 3). Every Keras 3 name is present today; partial support is
listed in PARTIAL."""

MISSING: dict = {}

PARTIAL = {
    "ctc_decode": "strategy='greedy' only; 'beam_search' raises NotImplementedError",
    "unique": "axis=None only (the flattened tensor), as most Keras code uses it",
    "vectorize": "no `signature`; Keras's TF backend raises for vectorize altogether",
    "image.resize": "crop_to_aspect_ratio / pad_to_aspect_ratio raise NotImplementedError",
    "rearrange": "names and parenthesised groups; no '...' or anonymous axes",
    "scan": "xs (or length) needs a static leading dimension: the loop is unrolled, so "
            "gradients flow through every step",
}
