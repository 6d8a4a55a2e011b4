"""keras.layers helpers beside the layer classes: the functional merge forms (add, subtract,
multiply, average, maximum, minimum, concatenate, dot), serialize/deserialize, InputSpec
with Keras 3's input checks, and the Wrapper base class of layers that wrap a layer."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import dtypes as _dtypes
from kilnflow import nest
from kilnflow.keras.layers.base import Layer
from kilnflow.shapes import TensorShape


def _merge(layer_class: str, inputs: Any, kwargs: dict) -> Any:
    from kilnflow.keras import layers
    return getattr(layers, layer_class)(**kwargs)(inputs)


def add(inputs: Any, **kwargs: Any) -> Any:
    """Functional form of `Add`: the elementwise sum of a list of inputs."""
    return _merge("Add", inputs, kwargs)


def subtract(inputs: Any, **kwargs: Any) -> Any:
    """Functional form of `Subtract`: inputs[0] - inputs[1]."""
    return _merge("Subtract", inputs, kwargs)


def multiply(inputs: Any, **kwargs: Any) -> Any:
    """Functional form of `Multiply`: the elementwise product of a list of inputs."""
    return _merge("Multiply", inputs, kwargs)


def average(inputs: Any, **kwargs: Any) -> Any:
    """Functional form of `Average`: the elementwise mean of a list of inputs."""
    return _merge("Average", inputs, kwargs)


def maximum(inputs: Any, **kwargs: Any) -> Any:
    """Functional form of `Maximum`: the elementwise maximum of a list of inputs."""
    return _merge("Maximum", inputs, kwargs)


def minimum(inputs: Any, **kwargs: Any) -> Any:
    """Functional form of `Minimum`: the elementwise minimum of a list of inputs."""
    return _merge("Minimum", inputs, kwargs)


def concatenate(inputs: Any, axis: int = -1, **kwargs: Any) -> Any:
    """Functional form of `Concatenate`: the inputs joined along `axis`."""
    return _merge("Concatenate", inputs, {"axis": axis, **kwargs})


def dot(inputs: Any, axes: Any = -1, normalize: bool = False, **kwargs: Any) -> Any:
    """Functional form of `Dot`: dot products between samples of two inputs."""
    return _merge("Dot", inputs, {"axes": axes, "normalize": normalize, **kwargs})


def serialize(layer: Any) -> dict:
    """A layer's Keras 3 config dict ({"module", "class_name", "config", ...})."""
    from kilnflow.keras.saving.serialization import serialize_keras_object
    return serialize_keras_object(layer)


def deserialize(config: dict, custom_objects: Optional[dict] = None) -> Any:
    """The layer a `serialize` dict describes (custom classes via `custom_objects`)."""
    from kilnflow.keras.saving.serialization import deserialize_keras_object
    if not isinstance(config, dict):
        raise ValueError(f"Could not deserialize {config!r}: expected a layer config dict")
    config = dict(config)
    config.setdefault("module", "keras.layers")
    return deserialize_keras_object(config, custom_objects=custom_objects)


def image_sizes(layer: str, height: Any, width: Any) -> tuple:
    """(height, width) as ints; a fractional or negative size is TF's error (there at call
    time: a float size has no int32 kernel), not a silent int() truncation."""
    for argument, value in (("height", height), ("width", width)):
        if isinstance(value, float) and not value.is_integer() or int(value) < 0:
            raise ValueError(f"{layer}: `{argument}` must be a non-negative integer, "
                             f"received {argument}={value!r}")
    return int(height), int(width)


class InputSpec:
    """The rank, dtype and shape a layer accepts for each input (None dims match any).

    A layer that sets `self.input_spec` has its inputs checked on every call, with errors
    naming the layer, as Keras 3 checks them.
    """

    def __init__(self, dtype: Any = None, shape: Any = None, ndim: Optional[int] = None,
                 max_ndim: Optional[int] = None, min_ndim: Optional[int] = None,
                 axes: Optional[dict] = None, allow_last_axis_squeeze: bool = False,
                 name: Optional[str] = None, optional: bool = False):
        self.dtype = None if dtype is None else _dtypes.as_dtype(dtype).name
        if shape is not None:
            self.shape = tuple(None if d is None else int(d) for d in shape)
            self.ndim = len(self.shape)
        else:
            self.shape, self.ndim = None, ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.name, self.optional = name, optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            self.axes = {int(k): v for k, v in (axes or {}).items()}
        except (ValueError, TypeError, AttributeError):
            raise TypeError("Argument `axes` must be a dict with integer keys. "
                            f"Received: axes={axes}") from None
        limit = self.ndim if self.ndim else self.max_ndim
        if self.axes and limit is not None and max(self.axes) > limit - 1:
            raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed "
                             f"value: {limit - 1}")

    def __repr__(self) -> str:
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape),
                                         ("ndim", self.ndim), ("max_ndim", self.max_ndim),
                                         ("min_ndim", self.min_ndim), ("axes", self.axes))
                 if v]
        return f"InputSpec({', '.join(parts)})"

    def get_config(self) -> dict:
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes,
                "optional": self.optional}

    @classmethod
    def from_config(cls, config: dict) -> "InputSpec":
        return cls(**config)


def assert_input_compatibility(input_spec: Any, inputs: Any, layer_name: str) -> None:
    """Raise ValueError when `inputs` do not meet `input_spec` (one spec or a list)."""
    if not input_spec:
        return
    specs = nest.flatten(input_spec)
    flat = nest.flatten(inputs)
    if len(flat) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
                         f"{len(flat)} input tensors. Inputs received: {inputs}")
    for index, (x, spec) in enumerate(zip(flat, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        shape = TensorShape(x.shape)
        rank = shape.rank
        where = (f"Input {index} with name '{spec.name}' of layer '{layer_name}' is "
                 "incompatible with the layer:")
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and rank != spec.ndim:
            raise ValueError(f"{where} expected ndim={spec.ndim}, found ndim={rank}. Full "
                             f"shape received: {tuple(shape.as_list())}")
        if spec.max_ndim is not None and rank is not None and rank > spec.max_ndim:
            raise ValueError(f"{where} expected max_ndim={spec.max_ndim}, found ndim={rank}")
        if spec.min_ndim is not None and rank is not None and rank < spec.min_ndim:
            raise ValueError(f"{where} expected min_ndim={spec.min_ndim}, found ndim={rank}. "
                             f"Full shape received: {tuple(shape.as_list())}")
        if spec.dtype is not None and x.dtype.name != spec.dtype:
            raise ValueError(f"{where} expected dtype={spec.dtype}, found dtype={x.dtype.name}")
        dims = shape.as_list() if rank is not None else None
        if spec.axes and dims is not None:
            for axis, value in spec.axes.items():
                if value is not None and dims[axis] not in (value, None):
                    raise ValueError(f"{where} expected axis {axis} of input shape to have "
                                     f"value {value}, but received input with shape "
                                     f"{tuple(dims)}")
        if spec.shape is not None and dims is not None:
            want, got = list(spec.shape), list(dims)
            if spec.allow_last_axis_squeeze:
                want = want[:-1] if want and want[-1] == 1 else want
                got = got[:-1] if got and got[-1] == 1 else got
            if len(want) != len(got) or any(
                    w is not None and g is not None and w != g for w, g in zip(want, got)):
                raise ValueError(f"{where} expected shape={spec.shape}, found "
                                 f"shape={tuple(dims)}")


class Wrapper(Layer):
    """Base class of layers that wrap another layer (`self.layer`), e.g. TimeDistributed,
    Bidirectional, SpectralNormalization. Its config holds the wrapped layer's."""

    def __init__(self, layer: Layer, **kwargs: Any):
        if not isinstance(layer, Layer):
            raise ValueError("Layer {} supplied to Wrapper isn't a supported layer type. "
                             "Please ensure wrapped layer is a valid Keras layer.".format(layer))
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: Any = None) -> None:
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": serialize(self.layer)}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Wrapper":
        config = dict(config)
        config["layer"] = deserialize(config["layer"], custom_objects=custom_objects)
        return cls(**config)
