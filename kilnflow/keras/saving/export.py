"""model.export(dir): a serving SavedModel of the model's forward pass, as Keras 3 writes
one with format="tf_saved_model": an object with a `serve` endpoint (inference mode, the
model's input signature) that is also the `serving_default` signature, and the model's
variables. kf.saved_model.load(dir) reads it back without the model's Python code.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import nest
from kilnflow.function.api import function
from kilnflow.module import Module
from kilnflow.saving import saved_model
from kilnflow.shapes import TensorSpec


class _ServingArchive(Module):
    """The exported root: the model's variables and the `serve` function."""


def _input_signature(model: Any) -> list:
    inputs = getattr(model, "_model_inputs", None) if getattr(model, "_nodes", None) else None
    if inputs is None:
        inputs = getattr(model, "inputs", None) or None
        if isinstance(inputs, list) and len(inputs) == 1:
            inputs = inputs[0]
    if inputs is None:
        raise ValueError(f"model.export: the model {model.name!r} has no known inputs; build "
                         "it (call it on data, or give it a keras.Input) or pass "
                         "`input_signature=`")
    return [nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype, name=t.name), inputs)]


def export_model(model: Any, filepath: str, format: str = "tf_saved_model",  # noqa: A002
                 verbose: Optional[bool] = True, input_signature: Any = None) -> None:
    """Write `model` to `filepath` as a serving SavedModel (endpoint `serve`)."""
    if format != "tf_saved_model":
        raise ValueError(f"model.export: format {format!r} is not supported here; "
                         "kilnflow exports 'tf_saved_model' (ONNX: kf.onnx)")
    signature = list(input_signature) if input_signature is not None \
        else _input_signature(model)
    def serve(self: Any, *args: Any) -> Any:
        return model(*args, training=False)

    # the saved object tree keeps kf.function methods of the class: one class per export
    archive_class = type("ServingArchive", (_ServingArchive,),
                         {"serve": function(serve, input_signature=signature)})
    archive = archive_class(name="serving_archive")
    archive.model_variables = list(model.variables)
    concrete = archive.serve.get_concrete_function()
    saved_model.save(archive, filepath, signatures={"serve": concrete,
                                                     "serving_default": concrete})
    if verbose:
        print(f"Saved artifact at '{filepath}'. The following endpoints are available:\n\n"
              f"* Endpoint 'serve'\n  args_0: {signature[0]}")
