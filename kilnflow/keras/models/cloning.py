"""model_from_json and clone_model: new models (fresh weights) from a model's config."""
from __future__ import annotations

import json
from typing import Any, Optional

from kilnflow.keras.saving.serialization import deserialize_keras_object, \
    serialize_keras_object


def model_from_json(json_string: str, custom_objects: Optional[dict] = None) -> Any:
    """The model a `model.to_json()` string describes, with newly initialized weights."""
    return deserialize_keras_object(json.loads(json_string), custom_objects)


def clone_model(model: Any, input_tensors: Any = None, clone_function: Any = None,
                **kwargs: Any) -> Any:
    """A new model with the same architecture (config) and fresh weights."""
    if input_tensors is not None or clone_function is not None:
        raise NotImplementedError("clone_model(input_tensors=, clone_function=) is not "
                                  "supported yet")
    return deserialize_keras_object(serialize_keras_object(model))
