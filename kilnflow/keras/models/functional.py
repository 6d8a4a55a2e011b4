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

    @property
    def input(self) -> Any:
        """The model's input KerasTensor (a list for several inputs)."""
        return _one_or_list(self.inputs, "input", self)

    @property
    def output(self) -> Any:
        """The model's output KerasTensor (a list for several outputs)."""
        return _one_or_list(self.outputs, "output", self)

    @property
    def input_shape(self) -> Any:
        """The input shape as a tuple with None for the batch, e.g. (None, 4)."""
        return _shapes(self.inputs, "input", self)

    @property
    def output_shape(self) -> Any:
        """The output shape as a tuple with None for the batch, e.g. (None, 2)."""
        return _shapes(self.outputs, "output", self)

    @property
    def output_names(self) -> list:
        """The names of the layers producing the outputs (how dict losses address them)."""
        return [t._keras_history[0].name for t in self.outputs]

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


# ---------------------------------------------------------------- config

def _history_key(t: KerasTensor, node_map: dict) -> list:
    layer, node_index, tensor_index = t._keras_history
    return [layer.name, node_map[(id(layer), node_index)], tensor_index]


def _one_or_list(tensors: list, what: str, model: Any) -> Any:
    if not tensors:
        raise AttributeError(f"The model {model.name} has no defined {what} yet: build it or "
                             "call it on data first (a subclassed model has none)")
    return tensors[0] if len(tensors) == 1 else list(tensors)


def _shapes(tensors: list, what: str, model: Any) -> Any:
    found = _one_or_list(tensors, what, model)
    if isinstance(found, list):
        return [tuple(t.shape.as_list()) for t in found]
    return tuple(found.shape.as_list())


def functional_config(model: Any) -> dict:
    """Keras 3's functional config: each layer's config plus its `inbound_nodes` (call
    arguments with KerasTensors as `__keras_tensor__` references), and the input and
    output layers as [layer name, node index, tensor index]."""
    from kilnflow.keras.saving.serialization import _jsonable, serialize_keras_object
    node_map: dict = {}  # (id(layer), original node index) -> index within this model
    per_layer: dict = {}
    for node in model._nodes:
        index = node.layer._inbound_nodes.index(node)
        node_map[(id(node.layer), index)] = len(per_layer.setdefault(id(node.layer), []))
        per_layer[id(node.layer)].append(node)

    def encode(value: Any) -> Any:
        if isinstance(value, KerasTensor):
            return {"class_name": "__keras_tensor__", "config": {
                "shape": value.shape.as_list(), "dtype": value.dtype.name,
                "keras_history": _history_key(value, node_map)}}
        if isinstance(value, (list, tuple)):
            return [encode(v) for v in value]
        if isinstance(value, dict):
            return {k: encode(v) for k, v in value.items()}
        return _jsonable(value)
    layers = []
    for layer in model._functional_layers:
        entry = serialize_keras_object(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = [] if isinstance(layer, InputLayer) else [
            {"args": encode(list(n.args)), "kwargs": encode(n.kwargs)}
            for n in per_layer[id(layer)]]
        layers.append(entry)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": [_history_key(t, node_map) for t in model.inputs],
            "output_layers": [_history_key(t, node_map) for t in model.outputs],
            "single_input": not isinstance(model._model_inputs, (list, tuple, dict)),
            "single_output": not isinstance(model._model_outputs, (list, tuple, dict))}


def functional_from_config(cls: Any, config: dict, custom_objects: Optional[dict] = None) -> Any:
    """Rebuild the layers, replay their calls in dependency order, and make the model."""
    from kilnflow.keras.saving.serialization import deserialize_keras_object
    layers, pending, tensors = {}, [], {}
    for entry in config["layers"]:
        inner = {**entry, "config": {**entry["config"], "name": entry["name"]}}
        inner.setdefault("module", "keras.layers")
        inner.pop("build_config", None)  # the replayed calls build the layer
        layer = deserialize_keras_object(inner, custom_objects)
        layers[entry["name"]] = layer
        if isinstance(layer, InputLayer):
            tensors[(entry["name"], 0, 0)] = layer.output
        for node in entry["inbound_nodes"]:
            pending.append((entry["name"], node))

    def decode(value: Any) -> Any:
        if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
            key = tuple(value["config"]["keras_history"])
            if key not in tensors:
                raise LookupError(key)
            return tensors[key]
        if isinstance(value, list):
            return [decode(v) for v in value]
        if isinstance(value, dict):
            return {k: decode(v) for k, v in value.items()}
        return value
    calls: dict = {}
    while pending:
        waiting = []
        for name, node in pending:
            try:
                args, kwargs = decode(node["args"]), decode(node["kwargs"])
            except LookupError:  # an input is produced by a call not replayed yet
                waiting.append((name, node))
                continue
            out = layers[name](*args, **kwargs)
            index = calls.get(name, 0)
            calls[name] = index + 1
            for i, t in enumerate(nest.flatten(out)):
                tensors[(name, index, i)] = t
        if len(waiting) == len(pending):
            raise ValueError("Functional config: some layer calls refer to tensors that no "
                             "layer produces")
        pending = waiting

    def endpoints(keys: list, single: bool) -> Any:
        found = [tensors[tuple(k)] for k in keys]
        return found[0] if single and len(found) == 1 else found
    inputs = endpoints(config["input_layers"], config.get("single_input", True))
    outputs = endpoints(config["output_layers"], config.get("single_output", True))
    return cls(inputs, outputs, name=config.get("name"))
