"""Model.summary(): the table of layers, their output shapes and parameter counts."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.shapes import TensorShape


def print_summary(model: Any, line_length: Optional[int] = None, positions: Any = None,
            print_fn: Any = None, expand_nested: bool = False,
            show_trainable: bool = False) -> None:
    """Print a model's table of layers as Keras does: name (type), output shape, parameter
    count, then the totals."""
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by "
                         "calling `build()` or by calling the model on a batch of data.")
    print_fn = print_fn or print
    width = line_length or 65
    cols = [int(width * f) for f in (positions or (0.45, 0.85, 1.0))]
    if cols[-1] <= 1:
        cols = [int(width * f) for f in cols]

    def row(fields: list) -> str:
        line = ""
        for field, end in zip(fields, cols):
            line = (line + str(field))[:end - 1].ljust(end)  # keep a space between
        return line.rstrip()
    print_fn(f'Model: "{model.name}"')
    print_fn("_" * width)
    print_fn(row([" Layer (type)", "Output Shape", "Param #"]))
    print_fn("=" * width)
    layers = model.layers
    for i, layer in enumerate(layers):
        shape = shape_text(layer._last_output_shape)
        params = layer.count_params() if layer.built else 0
        print_fn(row([f" {layer.name} ({type(layer).__name__})", shape, params]))
        if i != len(layers) - 1:
            print_fn("")
    print_fn("=" * width)
    trainable = sum(int(np.prod(w.shape.as_list())) for w in model.trainable_weights)
    frozen = sum(int(np.prod(w.shape.as_list())) for w in model.non_trainable_weights)
    print_fn(f"Total params: {trainable + frozen:,}")
    print_fn(f"Trainable params: {trainable:,}")
    print_fn(f"Non-trainable params: {frozen:,}")
    print_fn("_" * width)


def shape_text(shape: Any) -> str:
    """A layer's last output shape as summary() shows it: the batch dim as None."""
    if shape is None:
        return "multiple"
    if isinstance(shape, TensorShape):
        if shape.rank is None:
            return "?"
        dims = shape.as_list()
        return str(tuple([None] + dims[1:] if dims else dims))
    if isinstance(shape, (list, tuple)):
        return ", ".join(shape_text(s) for s in shape)
    return str(shape)
