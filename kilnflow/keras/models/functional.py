"""Functional models: `Model(inputs, outputs)` records the layer calls between keras.Input and
the outputs (Nodes) and replays them in topological order. Model mixes this class in; its
methods fall back to Layer's (through super()) for subclassed models."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import nest
from kilnflow.keras.layers.base import KerasTensor, Layer
from kilnflow.keras.layers.core import InputLayer
from kilnflow.shapes import TensorShape


def _is_single_shape(shape: Any) -> bool:
    if isinstance(shape, TensorShape):
        return True
    return isinstance(shape, (list, tuple)) and all(
        d is None or isinstance(d, (int, np.integer)) for d in shape)


class Functional:
    """The functional-graph half of keras.Model (inputs, outputs, layers, get_layer)."""

    def _init_functional(self, inputs: Any, outputs: Any) -> None:
        flat_inputs, flat_outputs = nest.flatten(inputs), nest.flatten(outputs)
        for t in flat_inputs + flat_outputs:
            if not isinstance(t, KerasTensor):
                raise ValueError(f"Functional model inputs and outputs must be KerasTensors "
                                 f"(from keras.Input and layer calls), got {t!r}")
        for t in flat_inputs:
            if not isinstance(t._keras_history[0], InputLayer):
                raise ValueError(f"Model inputs must come from keras.Input(); {t!r} is the "
                                 "output of a layer")
        input_ids = {id(t) for t in flat_inputs}
        order: list = []
        visited: set = set()
        stack = [(t, False) for t in reversed(flat_outputs)]
        while stack:  # iterative post-order walk from the outputs: a topological order
            tensor, expanded = stack.pop()
            layer, node_index, _ = tensor._keras_history
            node = layer._inbound_nodes[node_index]
            if expanded:
                if id(node) not in visited:
                    visited.add(id(node))
                    order.append(node)
                continue
            if id(node) in visited:
                continue
            if isinstance(layer, InputLayer) and id(tensor) not in input_ids:
                raise ValueError(f"Graph disconnected: cannot obtain value for {tensor!r}; it "
                                 "is an Input that is not listed in the model's inputs")
            stack.append((tensor, True))
            stack.extend((p, False) for p in reversed(node.parents))
        self._nodes = order
        self._model_inputs, self._model_outputs = inputs, outputs
        layers: list = []
        for node in order:
            if all(node.layer is not l for l in layers):
                layers.append(node.layer)
        self._functional_layers = layers
        self._build_input_shape = nest.map_structure(lambda t: t.shape, inputs)
        self.built = True

    @property
    def inputs(self) -> list:
        return nest.flatten(getattr(self, "_model_inputs", None)) if self._nodes else []

    @property
    def outputs(self) -> list:
        return nest.flatten(getattr(self, "_model_outputs", None)) if self._nodes else []

    def _run_nodes(self, inputs: Any) -> Any:
        flat_inputs = nest.flatten(self._model_inputs)
        given = nest.flatten(inputs)
        if len(given) != len(flat_inputs):
            raise ValueError(f"Model {self.name} expects {len(flat_inputs)} input(s), but it "
                             f"received {len(given)} input tensors")
        values = {id(k): v for k, v in zip(flat_inputs, given)}

        def value(t: Any) -> Any:
            return values[id(t)] if isinstance(t, KerasTensor) else t
        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            args, kwargs = nest.map_structure(value, (node.args, node.kwargs))
            out = node.layer(*args, **kwargs)
            for kt, v in zip(nest.flatten(node.outputs), nest.flatten(out)):
                values[id(kt)] = v
        return nest.pack_sequence_as(self._model_outputs,
                                     [values[id(t)] for t in nest.flatten(self._model_outputs)])

    def call(self, inputs: Any, training: Any = None) -> Any:
        if self._nodes is not None:
            return self._run_nodes(inputs)
        raise NotImplementedError(f"Model {type(self).__name__} has no call(): subclasses of "
                                  "keras.Model must implement call(), or construct it with "
                                  "Model(inputs, outputs)")

    def _tracked_children(self) -> list:
        if self._nodes is not None:
            return [("layers", [l for l in self._functional_layers
                                if not isinstance(l, InputLayer)])] + super()._tracked_children()
        return super()._tracked_children()

    @property
    def layers(self) -> list:
        if self._nodes is not None:
            return list(self._functional_layers)
        return super().layers

    def get_layer(self, name: Optional[str] = None, index: Optional[int] = None) -> Layer:
        layers = self.layers
        if index is not None:
            if not 0 <= index < len(layers):
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                                 f"has {len(layers)} layers.")
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[l.name for l in layers]}.")

    def build(self, input_shape: Any) -> None:
        """Create the weights by tracing call() on an input of `input_shape`."""
        if self._nodes is not None:
            self.built = True
            return
        if self.built:
            return
        if _is_single_shape(input_shape):
            spec: Any = KerasTensor(input_shape, self._dtype)
        else:
            spec = nest.map_structure(lambda s: KerasTensor(s, self._dtype), input_shape)
        self.built = True  # first: tracing call() goes through __call__, which builds
        try:
            self._trace_specs((spec,), {})
        except Exception:
            self.built = False
            raise

    # ---------------------------------------------------------------- compile
