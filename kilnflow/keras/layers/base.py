"""keras.layers.Layer, and KerasTensor: the symbolic value the functional API passes around.

A Layer is a kf.Module whose weights come from `add_weight` in `build(input_shape)`,
which runs on the first call. `__call__` converts inputs, passes `training` through when
`call` accepts it (or inherits it from the enclosing call), runs `call` through AutoGraph
while a graph is built, and, given KerasTensors, records a Node instead of computing: the
output shapes come from tracing `call` into a graph (no values computed), so functional
models can be built in eager and compat.v1 graph mode alike.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import nest
from kilnflow.autograph.api import converted_call
from kilnflow.context import building, ctx, no_tapes
from kilnflow.keras import backend
from kilnflow.keras.layers import boundary
from kilnflow.keras import constraints as _constraints
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.module import Module, leaves_with_paths
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor
from kilnflow.variables import Variable
from kilnflow.keras import variables as _kvariables
from kilnflow.keras.layers.keras_tensor import KerasTensor, Node, has_keras_tensors


def _any_keras_tensor(args: tuple, kwargs: dict) -> bool:
    """has_keras_tensors((args, kwargs)) without flattening plain tensor arguments."""
    for value in args + tuple(kwargs.values()) if kwargs else args:
        if isinstance(value, KerasTensor):
            return True
        if isinstance(value, (list, tuple, dict)) and has_keras_tensors(value):
            return True
    return False


def _call_parameters(layer: "Layer") -> dict:
    call = type(layer).call
    call = getattr(call, "python_function", call)  # a @kf.function method
    try:
        return dict(inspect.signature(call).parameters)
    except (TypeError, ValueError):
        return {}


_IGNORED = frozenset({
    "_inbound_nodes", "_weights_list", "_weight_names", "_regularizer_fns", "_call_losses",
    "_deferred", "_last_output_shape", "_build_input_shape", "_call_has_training",
    "_batch_input_shape", "_input_dtype", "_dtype", "_trainable", "built", "_scope",
    "_activity_regularizer", "_name", "_autocast", "supports_masking", "_call_params"})


class Layer(Module):
    """Base class of Keras layers: weights made in build(), computation in call().

    >>> import kilnflow as kf
    >>> from kilnflow.keras.layers import Layer
    >>> class Scale(Layer):
    ...     def build(self, input_shape):
    ...         self.w = self.add_weight("w", shape=[input_shape[-1]], initializer="ones")
    ...     def call(self, x):
    ...         return x * self.w
    >>> layer = Scale()
    >>> layer(kf.ones([2, 3])).shape, [w.path for w in layer.weights]
    (TensorShape([2, 3]), ['scale/w'])
    """

    _MODULE_IGNORED_PROPERTIES = _IGNORED
    _SORT_ATTRIBUTES = False  # Keras order: as assigned
    supports_jit = True  # Keras 3: False on layers compile(jit_compile=True) must not compile

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Keras 3 runs every build() under the layer's path, so weights of sublayers built
        # there get `parent/child/...` paths, also when build() is called directly.
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_keras_path_scoped", False):
            cls.build = _path_scoped(build)
        init = cls.__dict__.get("__init__")
        if init is not None and cls.__module__.startswith("kilnflow.") \
                and not getattr(init, "named_init", False):
            cls.__init__ = boundary.named_init(init)  # bad arguments name the layer

    def __init__(self, trainable: bool = True, name: Optional[str] = None, dtype: Any = None,
                 dynamic: bool = False, input_shape: Any = None, batch_input_shape: Any = None,
                 input_dim: Optional[int] = None, activity_regularizer: Any = None,
                 autocast: bool = True, **kwargs: Any):
        unknown = set(kwargs) - {"batch_size", "input_dtype", "weights"}
        if unknown:
            raise TypeError(f"Keyword argument(s) not understood by {type(self).__name__}: "
                            f"{sorted(unknown)}")
        if name is None:
            name = backend.unique_object_name(backend.to_snake_case(type(self).__name__))
        super().__init__(name=name)
        self._trainable = bool(trainable)
        self._dtype = _dtypes.as_dtype(getattr(dtype, "name", dtype) or backend.floatx())
        self._autocast = autocast
        self.built = False
        self.supports_masking = False
        self._weights_list: list = []
        self._weight_names: list = []
        self._regularizer_fns: list = []
        self._call_losses: list = []
        self._deferred: dict = {}
        self._inbound_nodes: list = []
        self._last_output_shape: Any = None
        self._build_input_shape: Any = None
        self._activity_regularizer = _regularizers.get(activity_regularizer)
        self._call_params = _call_parameters(self)
        self._call_has_training = "training" in self._call_params
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (kwargs.get("batch_size"),) + tuple(input_shape)
        self._batch_input_shape = tuple(batch_input_shape) if batch_input_shape else None
        self._input_dtype = kwargs.get("input_dtype")

    # ---------------------------------------------------------------- properties

    @property
    def dtype(self) -> str:
        """The dtype of the layer's weights and computations, e.g. 'float32'."""
        return self._dtype.name

    compute_dtype = dtype
    variable_dtype = dtype

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = bool(value)
        for sub in self._flatten(predicate=lambda x: isinstance(x, Layer)):
            sub._trainable = bool(value)

    @property
    def activity_regularizer(self) -> Any:
        return self._activity_regularizer

    @property
    def input_spec(self) -> Any:
        """The InputSpec (or list of them) calls are checked against; None checks nothing."""
        return self.__dict__.get("_input_spec")

    @input_spec.setter
    def input_spec(self, value: Any) -> None:
        self.__dict__["_input_spec"] = value

    # ---------------------------------------------------------------- weights

    def add_weight(self, name: Optional[str] = None, shape: Any = None, dtype: Any = None,
                   initializer: Any = None, regularizer: Any = None, trainable: bool = True,
                   constraint: Any = None, use_resource: Any = None, **kwargs: Any) -> Variable:
        """Create a weight variable owned by this layer: a keras.Variable named `name`,
        with path `layer/name` under any layers building this one (Keras 3's names)."""
        if isinstance(shape, TensorShape):
            shape = shape.as_list()
        shape = tuple(int(d) for d in (shape or ()))
        dtype = _dtypes.as_dtype(dtype or self._dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = _initializers.get(initializer)
        base = name or "weight"
        unique, n = base, 0
        while unique in self._weight_names:
            n += 1
            unique = f"{base}_{n}"
        # Keras 3 names: `name` as given (repeats allowed), `path` under the layers being
        # built; `unique` stays the checkpoint key.
        short = name or backend.unique_object_name("variable")
        prefix = _kvariables.current_path(self)
        var = _kvariables.make_variable(init, short, f"{prefix}/{short}", shape, dtype,
                                        trainable)
        self._weights_list.append(var)
        self._weight_names.append(unique)
        constraint = _constraints.get(constraint)
        if constraint is not None:
            var.constraint = constraint  # the optimizer projects the weight after each step
        reg = _regularizers.get(regularizer)
        if reg is not None:
            self._regularizer_fns.append(lambda: reg(var))
        consume = self._deferred.pop(unique, None)
        if consume is not None:  # a checkpoint value arrived before the weight existed
            consume(var)
        return var

    def _own_and_children(self) -> tuple:
        """This layer's own variables and its direct child modules, in tracking order."""
        own = list(self._weights_list)
        seen = {id(v) for v in own}
        children = []
        for key, value in self._tracked_children():
            for _, leaf in leaves_with_paths(value, (key,)):
                if id(leaf) in seen:
                    continue
                if isinstance(leaf, Variable) and _kvariables.is_keras_variable(leaf):
                    seen.add(id(leaf))
                    own.append(leaf)
                elif isinstance(leaf, Module):
                    seen.add(id(leaf))
                    children.append(leaf)
        return own, children

    @property
    def trainable_weights(self) -> list:
        if not self._trainable:
            return []
        own, children = self._own_and_children()
        out = [v for v in own if v.trainable]
        for child in children:
            out.extend(child.trainable_weights if isinstance(child, Layer)
                       else child.trainable_variables)
        return _dedup(out)

    @property
    def non_trainable_weights(self) -> list:
        own, children = self._own_and_children()
        if self._trainable:
            out = [v for v in own if not v.trainable]
            for child in children:
                out.extend(child.non_trainable_weights if isinstance(child, Layer)
                           else child.non_trainable_variables)
        else:
            out = list(own)
            for child in children:
                out.extend(child.weights if isinstance(child, Layer) else child.variables)
        return _dedup(out)

    @property
    def weights(self) -> list:
        """trainable_weights + non_trainable_weights."""
        return _dedup(self.trainable_weights + self.non_trainable_weights)

    variables = weights  # type: ignore[assignment]
    trainable_variables = trainable_weights  # type: ignore[assignment]
    non_trainable_variables = non_trainable_weights  # type: ignore[assignment]

    @property
    def layers(self) -> list:
        """Direct sublayers, in tracking order."""
        return [c for c in self._own_and_children()[1] if isinstance(c, Layer)]

    def count_params(self) -> int:
        if not self.built:
            raise ValueError(f"You tried to call count_params on layer {self.name}, but the "
                             "layer isn't built. Call it on data (or build it) first.")
        return int(sum(np.prod(w.shape.as_list(), dtype=np.int64) for w in self.weights))

    def get_weights(self) -> list:
        return [np.array(w.numpy()) for w in self.weights]

    def set_weights(self, weights: list) -> None:
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f"Layer {self.name} expects {len(params)} weights, but the given "
                             f"list has {len(weights)}")
        for p, w in zip(params, weights):
            w = np.asarray(w)
            if not p.shape.is_compatible_with(w.shape):
                raise ValueError(f"Layer {self.name}: weight {p.name} has shape {p.shape}, "
                                 f"the value has shape {w.shape}")
            p.assign(w.astype(p.dtype.as_numpy_dtype))

    # ---------------------------------------------------------------- losses

    def add_loss(self, loss: Any) -> None:
        """Add a loss tensor (or a zero-argument callable) to `layer.losses`."""
        self._call_losses.append(loss)

    @property
    def losses(self) -> list:
        """Losses added in the last call plus weight-regularization penalties, here and in
        every sublayer (computed now, so inside @kf.function they are graph tensors)."""
        out = [loss() if callable(loss) else loss for loss in self._call_losses]
        out.extend(fn() for fn in self._regularizer_fns)
        for child in self._own_and_children()[1]:
            if isinstance(child, Layer):
                out.extend(child.losses)
        return out

    # ---------------------------------------------------------------- building and calling

    def build(self, input_shape: Any) -> None:
        """Create the weights; runs once, on the first call, with the input's shape."""
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return inputs

    def _maybe_build(self, inputs: Any) -> None:
        if self.built:
            return
        boundary.check_inputs(self, inputs)
        shapes = nest.map_structure(lambda t: TensorShape(t.shape), inputs)
        self._build_input_shape = shapes
        boundary.build_named(self, shapes)
        self.built = True

    def _convert(self, x: Any) -> Any:
        if isinstance(x, (Tensor, KerasTensor)):
            t = x
        elif isinstance(x, Variable) or isinstance(x, (np.ndarray, np.generic, list, float,
                                                         int)):
            t = convert_to_tensor(x)
        else:
            return x
        if self._autocast and t.dtype.is_floating and t.dtype is not self._dtype \
                and self._dtype.is_floating and isinstance(t, Tensor):
            t = kmath.cast(t, self._dtype)
        return t

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not args:
            if "inputs" not in kwargs:
                raise TypeError(f"{self.name}: __call__ needs the inputs as first argument")
            args = (kwargs.pop("inputs"),)
        if _any_keras_tensor(args, kwargs):
            return self._functional_call(args, kwargs)
        first = args[0]
        in_mask = _input_masks(first)  # lazy: computed only if someone reads it
        if in_mask is not None and "mask" in self._call_params and "mask" not in kwargs:
            kwargs["mask"] = backend.resolve_mask(in_mask)
        inputs = self._convert(first) if isinstance(first, Tensor) else \
            nest.map_structure(self._convert, first)
        # `training`: given here, else inherited from the enclosing layer call.
        explicit = kwargs.pop("training", None)
        inherited = backend.call_training()
        training = inherited if explicit is None else explicit
        if self._call_has_training and training is not None:
            kwargs["training"] = training
        if self.__dict__.get("_input_spec") is not None:
            boundary.check_compatible(self, self._input_spec, inputs)
        if not self.built:
            self._maybe_build(inputs)
        self._call_losses = []
        try:
            with _kvariables.path_scope(self):  # sublayers first built in call: `self/...`
                if (explicit is None or explicit == inherited) and ctx.graph is None:
                    outputs = self.call(inputs, *args[1:], **kwargs)  # the common eager path
                else:
                    with backend.training_scope(training), self.name_scope:
                        if ctx.graph is None:
                            outputs = self.call(inputs, *args[1:], **kwargs)
                        else:  # building a graph: AutoGraph turns tensor `if`/`while` to ops
                            outputs = _graph_call(self.call, (inputs,) + tuple(args[1:]),
                                                  kwargs)
        except boundary.INTERNAL as exc:
            raise boundary.call_error(self, first, exc) from exc
        except (TypeError, ValueError) as exc:
            new = boundary.renamed(f"Layer '{self.name}' ({type(self).__name__})", exc,
                                   "cannot be called on these inputs")
            if new is exc:
                raise
            raise new from exc
        if self._activity_regularizer is not None:
            for out in nest.flatten(outputs):
                batch = kmath.cast(_batch_size(out), out.dtype)
                self._call_losses.append(self._activity_regularizer(out) / batch)
        self._last_output_shape = outputs.shape if isinstance(outputs, Tensor) else \
            nest.map_structure(lambda t: getattr(t, "shape", None), outputs)
        if (in_mask is not None and self.supports_masking) or \
                type(self).compute_mask is not Layer.compute_mask:
            given = kwargs.get("mask", in_mask)
            _attach_masks(outputs, lambda: self.compute_mask(
                inputs, backend.resolve_mask(given)))
        return outputs

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The mask of the outputs: the input mask passed on when the layer supports
        masking (elementwise and per-step layers), else None."""
        return mask if self.supports_masking else None

    # ---------------------------------------------------------------- functional API

    def _functional_call(self, args: tuple, kwargs: dict) -> Any:
        inputs = args[0]
        with _kvariables.path_scope(self):
            if not self.built:
                self._maybe_build(inputs)
            specs = self._output_specs_for(args, kwargs)
        node_index = len(self._inbound_nodes)
        flat = nest.flatten(specs)
        outputs = nest.pack_sequence_as(specs, [
            KerasTensor(s.shape, s.dtype, history=(self, node_index, i))
            for i, s in enumerate(flat)])
        self._inbound_nodes.append(Node(self, args, dict(kwargs), outputs))
        self._last_output_shape = nest.map_structure(lambda t: t.shape, outputs)
        return outputs

    def _output_specs_for(self, args: tuple, kwargs: dict) -> Any:
        """Output TensorSpecs of calling the layer on these (KerasTensor) arguments."""
        cls = type(self)
        first = args[0]
        if cls.compute_output_signature is not Layer.compute_output_signature:
            return self.compute_output_signature(nest.map_structure(
                lambda t: TensorSpec(t.shape, t.dtype), first))
        if cls.compute_output_shape is not Layer.compute_output_shape and \
                not isinstance(first, (list, tuple, dict)):
            shape = self.compute_output_shape(first.shape)
            dtype = self._dtype if first.dtype.is_floating or not self._autocast else first.dtype
            return TensorSpec(shape, dtype)
        return self._trace_specs(args, kwargs)

    def _trace_specs(self, args: tuple, kwargs: dict) -> Any:
        """Trace `call` into a scratch graph (placeholders in, nothing run) for the specs."""
        from kilnflow.graph import Graph
        graph = ctx.graph
        if graph is None:
            # A scratch graph. Marked as a function graph so that variables a sublayer
            # creates while being traced get their values at once, as they would eagerly.
            graph = Graph()
            graph.is_function = True
        saved_losses = self._call_losses
        saved_shape = self._last_output_shape

        def placeholder(x: Any) -> Any:
            return graph.placeholder(x.dtype, x.shape) if isinstance(x, KerasTensor) else x
        try:
            with building(graph), no_tapes():
                args, kwargs = nest.map_structure(placeholder, (args, kwargs))
                if self._call_has_training and kwargs.get("training") is None:
                    kwargs["training"] = False
                out = Layer.__call__(self, *args, **kwargs)
        except (TypeError, ValueError) as exc:
            raise type(exc)(
                f"{exc}\n(while tracing layer {self.name!r} ({type(self).__name__}) on symbolic "
                "inputs to find its output shape; a layer whose call() needs concrete values "
                "can implement compute_output_shape or compute_output_signature)") from exc
        finally:
            self._call_losses = saved_losses
            self._last_output_shape = saved_shape
        return nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), out)

    def compute_output_shape(self, input_shape: Any) -> Any:
        """The output shape for an input of `input_shape` (None dims allowed)."""
        if not self.built:
            self._maybe_build(KerasTensor(input_shape, self._dtype))
        spec = self._trace_specs((KerasTensor(input_shape, self._dtype),), {})
        return nest.map_structure(lambda s: s.shape, spec)

    def compute_output_signature(self, input_signature: Any) -> Any:
        """Output TensorSpec(s) for input TensorSpec(s)."""
        if not self.built:
            self._maybe_build(input_signature)
        kt = nest.map_structure(lambda s: KerasTensor(s.shape, s.dtype), input_signature)
        return self._trace_specs((kt,), {})

    # ---------------------------------------------------------------- config

    def get_config(self) -> dict:
        config = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config: dict) -> "Layer":
        return cls(**config)

    def get_build_config(self) -> dict:
        """What build() was called with, so a loaded layer is built the same way."""
        shape = self._build_input_shape
        if shape is None:
            return {}
        if isinstance(shape, TensorShape):
            return {"input_shape": shape.as_list() if shape.rank is not None else None}
        return {"input_shape": [s.as_list() for s in nest.flatten(shape)]}

    def build_from_config(self, config: dict) -> None:
        """Build from get_build_config()'s dict (a loaded model's layers)."""
        shape = config.get("input_shape")
        if shape is None or self.built:
            return
        single = all(d is None or isinstance(d, int) for d in shape)
        shapes = TensorShape(shape) if single else [TensorShape(s) for s in shape]
        self._build_input_shape = shapes
        self.build(shapes)
        self.built = True

    # ---------------------------------------------------------------- checkpoints

    def _tracked_children(self) -> list:
        """Weights under their add_weight names, then the attributes (assignment order);
        what `variables`, a parent kf.Module and checkpoints all walk."""
        return list(zip(self._weight_names, self._weights_list)) + super()._tracked_children()

    def _defer_restore(self, relative_path: str, consume: Any) -> bool:
        """Keep a checkpoint value for weight `relative_path` until add_weight makes it."""
        if self.built or "/" in relative_path:
            return False
        self._deferred[relative_path] = consume
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _path_scoped(build: Any) -> Any:
    """`build` run with its layer on the variable path stack."""
    @functools.wraps(build)
    def scoped_build(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _kvariables.path_scope(self):
            return build(self, *args, **kwargs)
    scoped_build._keras_path_scoped = True  # type: ignore[attr-defined]
    return scoped_build


def _input_masks(first: Any) -> Any:
    """The Keras mask of a layer's input (a list of them for list inputs), or None."""
    if isinstance(first, Tensor):
        return backend.peek_keras_mask(first)
    if isinstance(first, (list, tuple)):
        masks = [backend.peek_keras_mask(t) if isinstance(t, Tensor) else None for t in first]
        return masks if any(m is not None for m in masks) else None
    return None


def _attach_masks(outputs: Any, compute: Any) -> None:
    """Attach the outputs' masks, computed when first read. A model's outputs are its
    last layer's tensors and already carry their masks: those are left alone."""
    if isinstance(outputs, Tensor):
        if backend.peek_keras_mask(outputs) is None:
            backend.set_keras_mask(outputs, backend.LazyMask(compute, 0))
        return
    for i, out in enumerate(nest.flatten(outputs)):
        if isinstance(out, Tensor) and backend.peek_keras_mask(out) is None:
            backend.set_keras_mask(out, backend.LazyMask(compute, i))


def _graph_call(call: Any, args: tuple, kwargs: dict) -> Any:
    """Call a layer's call() while a graph is built, converted by AutoGraph as TF-Keras does
    (kilnflow's own layers are library code, which AutoGraph leaves as written)."""
    return converted_call(call, args, kwargs)


def _dedup(items: list) -> list:
    seen, out = set(), []
    for x in items:
        if id(x) not in seen:
            seen.add(id(x))
            out.append(x)
    return out


def _batch_size(t: Any) -> Any:
    from kilnflow.ops import array
    if t.shape.rank and t.shape[0] is not None:
        return t.shape[0]
    return array.shape(t)[0]
