"""keras.Sequential: a Model that is a plain stack of layers."""
from __future__ import annotations

from typing import Any, Optional


from kilnflow.keras import backend
from kilnflow.keras.layers.base import KerasTensor, Layer
from kilnflow.keras.layers.core import Input, InputLayer
from kilnflow.keras.variables import path_scope
from kilnflow.shapes import TensorShape
from kilnflow.keras.models.model import Model


class Sequential(Model):
    """A linear stack of layers, each feeding the next.

    >>> from kilnflow import keras
    >>> model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(2)])
    >>> [w.shape.as_list() for w in model.weights]
    [[4, 2], [2]]
    """

    def __init__(self, layers: Any = None, name: Optional[str] = None, trainable: bool = True):
        super().__init__(name=name, trainable=trainable)
        self._seq_layers: list = []
        self._seq_io: Any = None
        self._input_spec_shape: Any = None
        self._input_dtype_name: Any = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer: Any) -> None:
        """Append a layer; an Input (or InputLayer) first fixes the input shape."""
        if isinstance(layer, KerasTensor) and isinstance(layer._keras_history[0], InputLayer):
            layer = layer._keras_history[0]
        if isinstance(layer, InputLayer):
            if self._seq_layers or self._input_spec_shape is not None:
                raise ValueError("An Input must be the first element of a Sequential model")
            self._input_spec_shape = layer._batch_input_shape
            self._input_dtype_name = layer.dtype
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Received: "
                            f"layer={layer!r} of type {type(layer)}.")
        if any(layer is l for l in self._seq_layers):
            raise ValueError(f"Layer {layer.name} is already in this Sequential model")
        if not self._seq_layers and self._input_spec_shape is None and \
                layer._batch_input_shape is not None:
            self._input_spec_shape = layer._batch_input_shape
            self._input_dtype_name = layer._input_dtype
        self._seq_layers.append(layer)
        self.built = False
        if self._input_spec_shape is not None:
            self._build_chain(self._input_spec_shape, self._input_dtype_name)

    def pop(self) -> Layer:
        if not self._seq_layers:
            raise TypeError("There are no layers in the model.")
        layer = self._seq_layers.pop()
        self.built = False
        return layer

    @property
    def layers(self) -> list:
        return list(self._seq_layers)

    @property
    def inputs(self) -> list:
        io = getattr(self, "_seq_io", None)
        return list(io[0]) if io is not None and self.built else []

    @property
    def outputs(self) -> list:
        io = getattr(self, "_seq_io", None)
        return list(io[1]) if io is not None and self.built else []

    def _tracked_children(self) -> list:
        return [("layers", self._seq_layers)] + Layer._tracked_children(self)

    def _build_chain(self, batch_shape: Any, dtype: Any = None) -> None:
        x = first = Input(batch_shape=tuple(batch_shape), dtype=dtype or backend.floatx())
        with path_scope(self):  # Keras 3: weights built here get `sequential/...` paths
            for layer in self._seq_layers:
                x = layer(x)
        self._seq_io = ([first], [x])  # what .inputs / .outputs / .input_shape report
        self._build_input_shape = TensorShape(batch_shape)
        self._last_output_shape = x.shape
        self.built = True

    def build(self, input_shape: Any = None) -> None:
        shape = input_shape if input_shape is not None else self._input_spec_shape
        if shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        dims = TensorShape(shape).as_list()
        self._build_chain([None] + dims[1:], self._input_dtype_name)

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = inputs
        for layer in self._seq_layers:
            x = layer(x)
        return x

    def get_config(self) -> dict:
        """Keras 3's Sequential config: the InputLayer (when the input shape is known) then
        each layer's serialized config."""
        from kilnflow.keras.saving.serialization import serialize_keras_object
        layers = []
        if self._input_spec_shape is not None:
            layers.append({"module": "keras.layers", "class_name": "InputLayer",
                           "config": {"batch_shape": list(self._input_spec_shape),
                                      "dtype": self._input_dtype_name or backend.floatx(),
                                      "sparse": False, "name": "input_layer"},
                           "registered_name": None})
        layers.extend(serialize_keras_object(l) for l in self._seq_layers)
        config = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype,
                  "layers": layers}
        if self._build_input_shape is not None:
            config["build_input_shape"] = TensorShape(self._build_input_shape).as_list()
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Sequential":
        from kilnflow.keras.saving.serialization import deserialize_keras_object
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for entry in config.get("layers", []):
            if "module" not in entry and entry.get("class_name") != "InputLayer":
                entry = {**entry, "module": "keras.layers"}
            layer = deserialize_keras_object(entry, custom_objects)
            if not isinstance(layer, Layer):
                raise ValueError(f"Sequential config entry {entry.get('class_name')!r} is "
                                 "not a layer")
            model.add(layer)
        if not model.built and config.get("build_input_shape") is not None:
            model.build(config["build_input_shape"])
        return model
