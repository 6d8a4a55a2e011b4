"""Layer wrappers: TimeDistributed (a layer applied to every step) and Bidirectional (an
RNN run forwards and backwards, outputs merged)."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array
from kilnflow.ops import joining
from kilnflow.ops import reshaping
from kilnflow.shapes import TensorShape


def _deserialize(config: dict) -> Layer:
    from kilnflow.keras.saving.serialization import deserialize_keras_object
    config = {**config}
    config.setdefault("module", "keras.layers")
    return deserialize_keras_object(config)


def _serialize(layer: Layer) -> dict:
    from kilnflow.keras.saving.serialization import serialize_keras_object
    return serialize_keras_object(layer)


class TimeDistributed(Layer):
    """Applies `layer` to every step of [batch, steps, ...]: the steps are folded into the
    batch, the layer runs once, and the result is unfolded."""

    def __init__(self, layer: Layer, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        self.layer = layer

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape).as_list()
        if len(shape) < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with "
                             f"at least 3 dimensions, received: {shape}")
        if not self.layer.built:
            self.layer.build_from_config({"input_shape": [None] + shape[2:]})
        self.built = True

    def call(self, inputs: Any, training: Any = None) -> Any:
        inner = inputs.shape.as_list()[2:]
        folded = reshaping.reshape(inputs, [-1] + [d if d is not None else -1 for d in inner])
        out = self.layer(folded, training=training) if self.layer._call_has_training \
            else self.layer(folded)
        out_inner = [d if d is not None else -1 for d in out.shape.as_list()[1:]]
        lead = [inputs.shape[0], inputs.shape[1]]
        if all(isinstance(d, int) for d in lead):
            return reshaping.reshape(out, lead + out_inner)
        dims = array.shape(inputs)  # an unknown batch or step count: read it at run time
        lead = [dims[i] if d is None else d for i, d in enumerate(lead)]
        return reshaping.reshape(out, joining.stack(lead + out_inner))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        inner = TensorShape(self.layer.compute_output_shape([None] + shape[2:])).as_list()
        return TensorShape(shape[:2] + inner[1:])

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": _serialize(self.layer)}

    @classmethod
    def from_config(cls, config: dict) -> "TimeDistributed":
        config = dict(config)
        layer = _deserialize(config.pop("layer"))
        return cls(layer, **config)


class Bidirectional(Layer):
    """Runs an RNN layer forwards and a copy backwards over the steps and merges the two
    outputs with `merge_mode` ('concat', 'sum', 'mul', 'ave' or None for a list). With
    return_sequences the backward outputs are reversed back into step order."""

    def __init__(self, layer: Layer, merge_mode: Optional[str] = "concat", weights: Any = None,
                 backward_layer: Optional[Layer] = None, **kwargs: Any):
        super().__init__(**kwargs)
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should "
                             "be one of {'sum', 'mul', 'ave', 'concat', None}")
        if getattr(layer, "return_state", False):
            raise NotImplementedError("Bidirectional(return_state=True) is not supported yet")
        self.merge_mode = merge_mode
        config = layer.get_config()
        self.forward_layer = layer
        if backward_layer is None:
            config = {**config, "name": "backward_" + layer.name,
                      "go_backwards": not config.get("go_backwards", False)}
            backward_layer = type(layer).from_config(config)
        self.backward_layer = backward_layer
        self.return_sequences = getattr(layer, "return_sequences", False)

    def call(self, inputs: Any, training: Any = None) -> Any:
        forward = self.forward_layer(inputs)
        backward = self.backward_layer(inputs)
        if self.return_sequences:
            backward = reshaping.reverse(backward, [1])
        if self.merge_mode == "concat":
            return joining.concat([forward, backward], -1)
        if self.merge_mode == "sum":
            return forward + backward
        if self.merge_mode == "mul":
            return forward * backward
        if self.merge_mode == "ave":
            return (forward + backward) * 0.5
        return [forward, backward]

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = TensorShape(self.forward_layer.compute_output_shape(input_shape)).as_list()
        if self.merge_mode == "concat":
            return TensorShape(shape[:-1] + [shape[-1] * 2])
        if self.merge_mode is None:
            return [TensorShape(shape), TensorShape(shape)]
        return TensorShape(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": _serialize(self.forward_layer),
                "backward_layer": _serialize(self.backward_layer)}

    @classmethod
    def from_config(cls, config: dict) -> "Bidirectional":
        config = dict(config)
        layer = _deserialize(config.pop("layer"))
        backward = config.pop("backward_layer", None)
        backward = _deserialize(backward) if backward is not None else None
        return cls(layer, backward_layer=backward, **config)


