"""The Keras layers of the bad-input tier: how to build each public layer and a valid input.

Pure data, so the same table builds kilnflow's layers and (scripts/record_bad_input_tf.py)
TF's: SPECS maps a layer class name to (constructor args, constructor kwargs, input kind).
An argument written ("layer", name, args, kwargs) is itself a layer built from the table's
module. INPUTS gives each input kind's valid arrays (a tuple: several mean a list input).
EXCLUDED names the public Layer classes left out, with the reason.
"""
from __future__ import annotations

from typing import Any

import numpy as np

_R = np.random.default_rng(19)


def _f(*shape: int) -> np.ndarray:
    return _R.uniform(0.1, 1.0, shape).astype(np.float32)


INPUTS = {
    "vec": (_f(2, 4),),
    "seq": (_f(2, 6, 4),),
    "img": (_f(2, 8, 8, 3),),
    "vol": (_f(2, 4, 4, 4, 2),),
    "ints": (np.array([[1, 2, 3], [0, 4, 2]], np.int32),),
    "words": (np.array([[b"a", b"b"], [b"c", b"a"]], object),),
    "pair": (_f(2, 4), _f(2, 4)),
    "pair_seq": (_f(2, 3, 4), _f(2, 5, 4)),
    "query_value": (_f(2, 3, 4), _f(2, 5, 4)),  # positional call arguments, not a list
    "audio": (_f(2, 512),),
    "audio3": (_f(2, 512, 1),),
    "cross": (np.array([1, 2], np.int64), np.array([3, 4], np.int64)),
}

_L = "layer"
SPECS: dict = {
    # core
    "Dense": ((3,), {}, "vec"),
    "EinsumDense": (("ab,bc->ac", 3), {}, "vec"),
    "Embedding": ((10, 3), {}, "ints"),
    "ReversibleEmbedding": ((10, 3), {}, "ints"),
    "Identity": ((), {}, "vec"),
    "Lambda": (("__square__",), {}, "vec"),
    "Masking": ((), {}, "seq"),
    "InputLayer": ((), {"shape": (4,)}, None),
    # activations
    "Activation": (("relu",), {}, "vec"),
    "ELU": ((), {}, "vec"), "LeakyReLU": ((), {}, "vec"), "PReLU": ((), {}, "vec"),
    "ReLU": ((), {}, "vec"), "Softmax": ((), {}, "vec"), "ThresholdedReLU": ((), {}, "vec"),
    # convolutions
    "Conv1D": ((2, 3), {}, "seq"), "Conv2D": ((2, 3), {}, "img"), "Conv3D": ((2, 2), {}, "vol"),
    "Convolution1D": ((2, 3), {}, "seq"), "Convolution2D": ((2, 3), {}, "img"),
    "Convolution3D": ((2, 2), {}, "vol"),
    "Conv1DTranspose": ((2, 3), {}, "seq"), "Conv2DTranspose": ((2, 3), {}, "img"),
    "Conv3DTranspose": ((2, 2), {}, "vol"),
    "Convolution1DTranspose": ((2, 3), {}, "seq"),
    "Convolution2DTranspose": ((2, 3), {}, "img"),
    "Convolution3DTranspose": ((2, 2), {}, "vol"),
    "DepthwiseConv1D": ((3,), {}, "seq"), "DepthwiseConv2D": ((3,), {}, "img"),
    "SeparableConv1D": ((2, 3), {}, "seq"), "SeparableConv2D": ((2, 3), {}, "img"),
    "SeparableConvolution1D": ((2, 3), {}, "seq"), "SeparableConvolution2D": ((2, 3), {}, "img"),
    # pooling
    **{f"{kind}{d}D": ((2,), {}, data) for kind in ("MaxPooling", "AveragePooling", "MaxPool",
                                                    "AvgPool")
       for d, data in ((1, "seq"), (2, "img"), (3, "vol"))},
    **{f"{kind}{d}D": ((), {}, data) for kind in ("GlobalMaxPooling",
                                                  "GlobalAveragePooling", "GlobalMaxPool",
                                                  "GlobalAvgPool")
       for d, data in ((1, "seq"), (2, "img"), (3, "vol"))},
    **{f"Adaptive{kind}Pooling{d}D": ((size,), {}, data)
       for kind in ("Average", "Max")
       for d, data, size in ((1, "seq", 2), (2, "img", (2, 2)), (3, "vol", (2, 2, 2)))},
    # recurrent
    "LSTM": ((2,), {}, "seq"), "GRU": ((2,), {}, "seq"), "SimpleRNN": ((2,), {}, "seq"),
    "RNN": (((_L, "SimpleRNNCell", (2,), {}),), {}, "seq"),
    "LSTMCell": ((2,), {}, None), "GRUCell": ((2,), {}, None), "SimpleRNNCell": ((2,), {}, None),
    "StackedRNNCells": (([(_L, "SimpleRNNCell", (2,), {})],), {}, None),
    "Bidirectional": (((_L, "LSTM", (2,), {}),), {}, "seq"),
    "TimeDistributed": (((_L, "Dense", (2,), {}),), {}, "seq"),
    "ConvLSTM1D": ((2, 3), {}, "img"), "ConvLSTM2D": ((2, 3), {}, "vol"),
    "ConvLSTM3D": ((2, 2), {}, None),
    # normalization
    "BatchNormalization": ((), {}, "vec"), "LayerNormalization": ((), {}, "vec"),
    "GroupNormalization": ((), {"groups": 2}, "vec"), "UnitNormalization": ((), {}, "vec"),
    "RMSNormalization": ((), {}, "vec"), "SpectralNormalization": (((_L, "Dense", (2,), {}),),
                                                                   {}, "vec"),
    # regularization
    "Dropout": ((0.5,), {}, "vec"), "AlphaDropout": ((0.5,), {}, "vec"),
    "GaussianDropout": ((0.5,), {}, "vec"), "GaussianNoise": ((0.5,), {}, "vec"),
    "SpatialDropout1D": ((0.5,), {}, "seq"), "SpatialDropout2D": ((0.5,), {}, "img"),
    "SpatialDropout3D": ((0.5,), {}, "vol"), "ActivityRegularization": ((), {}, "vec"),
    # attention
    "Attention": ((), {}, "pair_seq"), "AdditiveAttention": ((), {}, "pair_seq"),
    "MultiHeadAttention": ((2, 4), {}, "query_value"),
    "GroupQueryAttention": ((4, 2, 1), {}, "query_value"),
    # reshaping
    "Flatten": ((), {}, "img"), "Reshape": (((2, -1),), {}, "vec"), "Permute": (((2, 1),), {},
                                                                               "seq"),
    "RepeatVector": ((3,), {}, "vec"),
    **{f"{kind}{d}D": ((), {}, data) for kind in ("Cropping", "UpSampling", "ZeroPadding")
       for d, data in ((1, "seq"), (2, "img"), (3, "vol"))},
    # merging
    "Add": ((), {}, "pair"), "Average": ((), {}, "pair"), "Concatenate": ((), {}, "pair"),
    "Maximum": ((), {}, "pair"), "Minimum": ((), {}, "pair"), "Multiply": ((), {}, "pair"),
    "Subtract": ((), {}, "pair"), "Dot": ((1,), {}, "pair"),
    # preprocessing: numbers, text, hashing
    "Normalization": ((), {"mean": 0.5, "variance": 0.1}, "vec"), "Rescaling": ((0.5,), {}, "vec"),
    "Discretization": ((), {"bin_boundaries": [0.3, 0.6]}, "vec"),
    "CategoryEncoding": ((), {"num_tokens": 6}, "ints"),
    "Hashing": ((8,), {}, "ints"), "HashedCrossing": ((8,), {}, "cross"),
    "IntegerLookup": ((), {"vocabulary": [1, 2, 3]}, "ints"),
    "StringLookup": ((), {"vocabulary": ["a", "b"]}, "words"),
    "TextVectorization": ((), {"vocabulary": ["a", "b"], "split": None}, "words"),
    "MelSpectrogram": ((), {"fft_length": 64, "sequence_stride": 32, "num_mel_bins": 8},
                       "audio"),
    "STFTSpectrogram": ((), {"frame_length": 64, "frame_step": 32}, "audio3"),
    # preprocessing: images
    "CenterCrop": ((4, 4), {}, "img"), "RandomCrop": ((4, 4), {}, "img"),
    "Resizing": ((4, 4), {}, "img"), "RandomFlip": ((), {}, "img"),
    "RandomRotation": ((0.1,), {}, "img"), "RandomTranslation": ((0.1, 0.1), {}, "img"),
    "RandomZoom": ((0.1,), {}, "img"), "RandomContrast": ((0.1,), {}, "img"),
    "RandomBrightness": ((0.1,), {}, "img"), "RandomHue": ((0.1,), {}, "img"),
    "RandomSaturation": ((0.1,), {}, "img"), "RandomSharpness": ((0.1,), {}, "img"),
    "RandomColorDegeneration": ((0.1,), {}, "img"),
    "RandomPosterization": ((4,), {}, "img"), "RandomGrayscale": ((), {}, "img"),
    "RandomInvert": ((), {}, "img"), "RandomShear": ((), {"x_factor": 0.1}, "img"),
    "RandomPerspective": ((), {}, "img"), "RandomErasing": ((), {}, "img"),
    "RandomGaussianBlur": ((), {}, "img"), "RandomElasticTransform": ((), {}, "img"),
    "RandomColorJitter": ((), {}, "img"), "AutoContrast": ((), {}, "img"),
    "Equalization": ((), {}, "img"), "Solarization": ((), {}, "img"),
    "ContrastLimitedAdaptiveHistogramEqualization": ((), {}, None),
    "AugMix": ((), {}, "img"), "CutMix": ((), {}, "img"), "MixUp": ((), {}, "img"),
    "RandAugment": ((), {}, "img"),
    "MaxNumBoundingBoxes": ((3,), {}, None),
}

EXCLUDED = {
    "Layer": "the abstract base class",
    "Wrapper": "an abstract base class (Bidirectional and TimeDistributed are covered)",
    "TFSMLayer": "loads a SavedModel from a path: the saving tier's loaders cover it",
    "Pipeline": "a list of other layers, each covered",
    "FlaxLayer": "wraps a JAX/Flax module (Keras 3 only; kilnflow has no JAX backend)",
    "JaxLayer": "wraps a JAX function (Keras 3 only; kilnflow has no JAX backend)",
    "TorchModuleWrapper": "wraps a torch module (Keras 3 only; no torch backend)",
    "RandomHeight": "not in kilnflow yet (an API gap, not a bad-input case)",
    "RandomWidth": "not in kilnflow yet (an API gap, not a bad-input case)",
}


def build(layers: Any, spec: Any) -> Any:
    """The constructor argument `spec` with ("layer", ...) entries built from `layers`."""
    if isinstance(spec, tuple) and len(spec) == 4 and spec[0] == _L:
        return getattr(layers, spec[1])(*[build(layers, a) for a in spec[2]],
                                        **{k: build(layers, v) for k, v in spec[3].items()})
    if isinstance(spec, list):
        return [build(layers, a) for a in spec]
    if spec == "__square__":
        return lambda x: x * x
    return spec


def make_layer(layers: Any, name: str) -> Any:
    args, kwargs, _ = SPECS[name]
    return getattr(layers, name)(*[build(layers, a) for a in args],
                                 **{k: build(layers, v) for k, v in kwargs.items()})


def call_layer(layers: Any, name: str, inputs: list) -> Any:
    """Build layer `name` and call it on `inputs` (one tensor, or a list for several)."""
    layer = make_layer(layers, name)
    if SPECS[name][2] == "query_value":
        return layer(*inputs)
    return layer(inputs[0] if len(inputs) == 1 else list(inputs))


def called_specs() -> list:
    """(name, input arrays) of the layers called with an input."""
    return [(name, INPUTS[kind]) for name, (_, _, kind) in sorted(SPECS.items())
            if kind is not None]


# Constructor arguments in place of a layer's first (size) argument: units, filters...
CTOR_BAD = {"ctor_negative": -1, "ctor_zero": 0, "ctor_none": None, "ctor_string": "abc",
            "ctor_huge": 2 ** 62, "ctor_float": 1.5, "ctor_object": object()}


def layer_cases(layers: Any, constant: Any, rejected: dict, odd: dict):
    """((prefix, category), call) for every called layer: each input replaced in turn by each
    malformed value (the op tier's categories), then the first constructor argument, when an
    int size, replaced by each of CTOR_BAD."""
    for name, arrays in called_specs():
        for position, valid in enumerate(arrays):
            for category, make in list(rejected.items()) + list(odd.items()):
                bad = make(valid)
                if bad is None and category != "none":
                    continue

                def call(name=name, position=position, bad=bad, arrays=arrays):
                    inputs = [constant(a) for a in arrays]
                    inputs[position] = constant(bad) if isinstance(bad, np.ndarray) else bad
                    return call_layer(layers, name, inputs)
                yield (f"{name}[{position}]", category), call
        args, kwargs, kind = SPECS[name]
        if args and type(args[0]) is int:
            for category, bad in CTOR_BAD.items():
                def call(name=name, bad=bad, arrays=arrays, args=args, kwargs=kwargs):
                    layer = getattr(layers, name)(bad, *args[1:], **kwargs)
                    inputs = [constant(a) for a in arrays]
                    return layer(inputs[0] if len(inputs) == 1 else inputs)
                yield (f"{name}[ctor]", category), call
