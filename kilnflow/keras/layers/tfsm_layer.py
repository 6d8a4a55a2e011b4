"""TFSMLayer: a SavedModel (from kf.saved_model.save or model.export) reloaded as a Keras
layer for inference, calling one of its endpoints (an attribute such as `serve`, or a
serving signature). The SavedModel's variables become the layer's weights."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras.layers.base import Layer


class TFSMLayer(Layer):
    """Reload a SavedModel as a layer: `TFSMLayer("path", call_endpoint="serve")`."""

    _MODULE_IGNORED_PROPERTIES = Layer._MODULE_IGNORED_PROPERTIES | {
        "_reloaded_obj", "_call_fn", "_training_fn"}

    def __init__(self, filepath: str, call_endpoint: str = "serve",
                 call_training_endpoint: Optional[str] = None, trainable: bool = True,
                 name: Optional[str] = None, dtype: Any = None):
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        from kilnflow import saved_model
        self.filepath = filepath
        self.call_endpoint, self.call_training_endpoint = call_endpoint, call_training_endpoint
        self._reloaded_obj = saved_model.load(filepath)
        self._call_fn = self._endpoint(call_endpoint)
        self._training_fn = None if call_training_endpoint is None else \
            self._endpoint(call_training_endpoint)
        variables = list(getattr(self._reloaded_obj, "variables", []) or [])
        for v in variables:  # a `path` makes them tracked as this layer's weights (Keras 3)
            if "path" not in v.__dict__:
                v.path = v.name.split(":")[0]
        self._savedmodel_trainable = [v for v in variables if v.trainable]
        self._savedmodel_frozen = [v for v in variables if not v.trainable]
        self.built = True

    def _endpoint(self, name: str) -> Any:
        obj = self._reloaded_obj
        if hasattr(obj, name):
            return getattr(obj, name)
        signatures = getattr(obj, "signatures", {}) or {}
        if name in signatures:
            return signatures[name]
        raise ValueError(f"The endpoint '{name}' is neither an attribute of the reloaded "
                         "SavedModel, nor an entry in the `signatures` field of the reloaded "
                         "SavedModel. Select another endpoint via the `call_endpoint` argument. "
                         f"Available endpoints for this SavedModel: {list(signatures.keys())}")

    def call(self, inputs: Any, training: Any = False, **kwargs: Any) -> Any:
        fn = self._training_fn if training and self._training_fn is not None else self._call_fn
        if isinstance(inputs, dict):
            return fn(**inputs, **kwargs)
        try:
            return fn(inputs, **kwargs)
        except TypeError:
            # a serving signature takes keyword arguments only: pass the one input by name
            names = list(getattr(fn, "structured_input_signature", ({}, {}))[1] or {})
            if len(names) != 1:
                raise
            return fn(**{names[0]: inputs}, **kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), "filepath": self.filepath,
                "call_endpoint": self.call_endpoint,
                "call_training_endpoint": self.call_training_endpoint}
