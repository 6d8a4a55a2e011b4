"""keras.Model (subclassed and functional), keras.Sequential, and the training API:
compile / fit / evaluate / predict, train_step / test_step, summary, save_weights.

The train step is a plain Python function of (x, y, sample_weight); compile/fit wrap it
in @kf.function unless run_eagerly=True (see training.compiled). A functional model
replays its recorded layer calls (Nodes) in topological order.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import nest
from kilnflow.autodiff.tape import GradientTape
from kilnflow.keras import backend
from kilnflow.keras import losses as _losses
from kilnflow.keras import metrics as _metrics
from kilnflow.keras import optimizers as _optimizers
from kilnflow.keras import training
from kilnflow.keras.layers.base import KerasTensor, Layer
from kilnflow.keras.layers.core import Input, InputLayer
from kilnflow.ops import math as kmath
from kilnflow.saving import checkpoint as _checkpoint
from kilnflow.shapes import TensorShape

_MODEL_STATE = frozenset({
    "optimizer", "loss", "compiled_loss", "compiled_metrics", "history", "stop_training",
    "_loss_object", "_metric_specs", "_compiled_metrics", "_loss_tracker", "_run_eagerly",
    "_train_function", "_test_function", "_predict_function", "_is_compiled", "_nodes",
    "_functional_layers", "_model_inputs", "_model_outputs", "_seq_layers",
    "_metrics_resolved", "_jit_compile"})


class Model(Layer):
    """Groups layers into an object with training and inference features.

    Functional: `Model(inputs, outputs)` from keras.Input and layer calls. Subclassed:
    define layers in __init__ and the forward pass in call().

    >>> from kilnflow import keras
    >>> inputs = keras.Input(shape=(3,))
    >>> outputs = keras.layers.Dense(2)(inputs)
    >>> model = keras.Model(inputs, outputs)
    >>> model.predict(np.ones((4, 3)), verbose=0).shape
    (4, 2)
    """

    _MODULE_IGNORED_PROPERTIES = Layer._MODULE_IGNORED_PROPERTIES | _MODEL_STATE

    def __init__(self, *args: Any, **kwargs: Any):
        inputs = kwargs.pop("inputs", args[0] if args else None)
        outputs = kwargs.pop("outputs", args[1] if len(args) > 1 else None)
        if len(args) > 2:
            raise TypeError("Model() takes at most (inputs, outputs) positionally")
        super().__init__(**kwargs)
        self.optimizer: Any = None
        self.loss: Any = None
        self.history: Any = None
        self.stop_training = False
        self._is_compiled = False
        self._run_eagerly = False
        self._train_function: Any = None
        self._test_function: Any = None
        self._predict_function: Any = None
        self._loss_tracker: Any = None
        self._compiled_metrics: list = []
        self._nodes: Optional[list] = None
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("A functional Model needs both `inputs` and `outputs`")
            self._init_functional(inputs, outputs)

    # ---------------------------------------------------------------- functional graph

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

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None,
                loss_weights: Any = None, weighted_metrics: Any = None,
                run_eagerly: bool = False, steps_per_execution: int = 1,
                jit_compile: Any = None, **kwargs: Any) -> None:
        """Configure training: the optimizer, the loss and the metrics to report."""
        if loss_weights is not None or weighted_metrics is not None:
            raise NotImplementedError("loss_weights and weighted_metrics are not supported yet")
        self.optimizer = _optimizers.get(optimizer)
        self.loss = loss
        self._loss_object = _losses.get(loss)
        self._metric_specs = list(metrics or [])
        self._compiled_metrics = []
        self._metrics_resolved = False
        self._loss_tracker = _metrics.Mean(name="loss")
        self._run_eagerly = bool(run_eagerly)
        self._jit_compile = jit_compile
        self._train_function = self._test_function = self._predict_function = None
        self._is_compiled = True

    @property
    def run_eagerly(self) -> bool:
        return self._run_eagerly

    @run_eagerly.setter
    def run_eagerly(self, value: bool) -> None:
        self._run_eagerly = bool(value)
        self._train_function = self._test_function = self._predict_function = None

    @property
    def metrics(self) -> list:
        """The loss tracker and the compiled metrics (after the first batch)."""
        out = [self._loss_tracker] if self._loss_tracker is not None else []
        return out + list(self._compiled_metrics)

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def _resolve_metrics(self, y: Any, y_pred: Any) -> None:
        """Turn compile()'s metric names into Metric objects, once, from the first batch."""
        if self._metrics_resolved:
            return
        self._metrics_resolved = True
        for spec in self._metric_specs:
            if spec in ("accuracy", "acc"):
                metric = _metrics.resolve_accuracy(spec, self._loss_object, y, y_pred)
            else:
                metric = _metrics.get(spec)
            self._compiled_metrics.append(metric)

    def _check_compiled(self) -> None:
        if not self._is_compiled:
            raise RuntimeError("You must compile your model before training/testing. Use "
                               "`model.compile(optimizer, loss)`.")

    # ---------------------------------------------------------------- steps

    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None,
                     sample_weight: Any = None) -> Any:
        """The compiled loss plus the layers' regularization losses."""
        total = None
        if self._loss_object is not None:
            if isinstance(y_pred, (list, tuple)):
                parts = [self._loss_object(t, p, sample_weight)
                         for t, p in zip(nest.flatten(y), y_pred)]
                total = kmath.add_n(parts)
            else:
                total = self._loss_object(y, y_pred, sample_weight)
        extra = self.losses
        if extra:
            reg = kmath.add_n([kmath.cast(l, total.dtype) if total is not None else l
                               for l in extra])
            total = reg if total is None else total + reg
        if total is None:
            raise ValueError("No loss to compute: compile() the model with a `loss`, or add "
                             "losses with add_loss()")
        return total

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any) -> dict:
        self._resolve_metrics(y, y_pred)
        for metric in self._compiled_metrics:
            metric.update_state(y, y_pred, sample_weight)
        return {m.name: m.result() for m in self.metrics}

    def train_step(self, data: tuple) -> dict:
        """One optimization step on a batch: forward, loss, gradients, update, metrics."""
        x, y, sample_weight = (tuple(data) + (None, None))[:3]
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
        variables = self.trainable_variables
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        self._loss_tracker.update_state(loss)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data: tuple) -> dict:
        x, y, sample_weight = (tuple(data) + (None, None))[:3]
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight)
        self._loss_tracker.update_state(loss)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data: Any) -> Any:
        x = data[0] if isinstance(data, tuple) else data
        return self(x, training=False)

    def make_train_function(self, force: bool = False) -> Any:
        if self._train_function is None or force:
            def train_function(x: Any, y: Any, sample_weight: Any) -> dict:
                return self.train_step((x, y, sample_weight))
            self._train_function = training.compiled(train_function, self._run_eagerly)
        return self._train_function

    def make_test_function(self, force: bool = False) -> Any:
        if self._test_function is None or force:
            def test_function(x: Any, y: Any, sample_weight: Any) -> dict:
                return self.test_step((x, y, sample_weight))
            self._test_function = training.compiled(test_function, self._run_eagerly)
        return self._test_function

    def make_predict_function(self, force: bool = False) -> Any:
        if self._predict_function is None or force:
            def predict_function(x: Any) -> Any:
                return self.predict_step(x)
            self._predict_function = training.compiled(predict_function, self._run_eagerly)
        return self._predict_function

    @property
    def train_function(self) -> Any:
        return self._train_function

    # ---------------------------------------------------------------- loops

    def fit(self, x: Any = None, y: Any = None, batch_size: Optional[int] = None,
            epochs: int = 1, verbose: Any = "auto", callbacks: Any = None,
            validation_split: float = 0.0, validation_data: Any = None, shuffle: bool = True,
            class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
            steps_per_epoch: Optional[int] = None, validation_steps: Optional[int] = None,
            validation_batch_size: Optional[int] = None, validation_freq: int = 1) -> Any:
        """Train for `epochs` passes over the data; returns a History."""
        self._check_compiled()
        if class_weight is not None:
            raise NotImplementedError("class_weight is not supported yet; pass sample_weight")
        return training.fit_loop(self, x, y, batch_size, epochs, verbose, callbacks,
                                 validation_split, validation_data, shuffle, sample_weight,
                                 initial_epoch, steps_per_epoch, validation_batch_size,
                                 validation_freq)

    def evaluate(self, x: Any = None, y: Any = None, batch_size: Optional[int] = None,
                 verbose: Any = "auto", sample_weight: Any = None, steps: Optional[int] = None,
                 callbacks: Any = None, return_dict: bool = False, **kwargs: Any) -> Any:
        """The loss and metrics over the data: a scalar (loss only), a list, or a dict."""
        self._check_compiled()
        logs = training.evaluate_loop(self, x, y, batch_size, sample_weight, steps, callbacks)
        if return_dict:
            return logs
        values = [logs[name] for name in self.metrics_names if name in logs]
        return values[0] if len(values) == 1 else values

    def predict(self, x: Any, batch_size: Optional[int] = None, verbose: Any = "auto",
                steps: Optional[int] = None, callbacks: Any = None) -> Any:
        """The model's outputs for all of x, as NumPy arrays."""
        return training.predict_loop(self, x, batch_size, steps, callbacks)

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                       reset_metrics: bool = True, return_dict: bool = False) -> Any:
        self._check_compiled()
        if reset_metrics:
            self.reset_metrics()
        logs = training._python_logs(self.make_train_function()(
            *training.tensors((training.arrays(x), training.arrays(y),
                               training.arrays(sample_weight)))))
        return logs if return_dict else self._as_list(logs)

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                      reset_metrics: bool = True, return_dict: bool = False) -> Any:
        self._check_compiled()
        if reset_metrics:
            self.reset_metrics()
        logs = training._python_logs(self.make_test_function()(
            *training.tensors((training.arrays(x), training.arrays(y),
                               training.arrays(sample_weight)))))
        return logs if return_dict else self._as_list(logs)

    def predict_on_batch(self, x: Any) -> Any:
        out = self.make_predict_function()(training.tensors(training.arrays(x)))
        return nest.map_structure(np.asarray, out)

    def _as_list(self, logs: dict) -> Any:
        values = [logs[n] for n in self.metrics_names if n in logs]
        return values[0] if len(values) == 1 else values

    # ---------------------------------------------------------------- weights on disk

    def save_weights(self, filepath: str, overwrite: bool = True, save_format: Any = None,
                     options: Any = None) -> None:
        """Write the model's variables to `filepath` (.json object graph + .safetensors)."""
        import os
        prefix = _checkpoint.split_prefix(os.fspath(filepath))
        if not overwrite and os.path.exists(prefix + ".json"):
            raise FileExistsError(f"{prefix}.json exists and overwrite=False")
        _checkpoint.write_checkpoint(self, prefix)

    def load_weights(self, filepath: str, skip_mismatch: bool = False, by_name: bool = False,
                     options: Any = None) -> Any:
        """Restore weights saved by save_weights, matching by attribute path. Weights of
        layers not built yet are restored when they are built. Returns the load status."""
        if by_name or skip_mismatch:
            raise NotImplementedError("load_weights(by_name/skip_mismatch) is not supported")
        import os
        return _checkpoint.restore_checkpoint(self, os.fspath(filepath))

    # ---------------------------------------------------------------- summary

    def summary(self, line_length: Optional[int] = None, positions: Any = None,
                print_fn: Any = None, expand_nested: bool = False,
                show_trainable: bool = False) -> None:
        """Print a table of the layers: name (type), output shape, parameter count."""
        if not self.built:
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
        print_fn(f'Model: "{self.name}"')
        print_fn("_" * width)
        print_fn(row([" Layer (type)", "Output Shape", "Param #"]))
        print_fn("=" * width)
        layers = self.layers
        for i, layer in enumerate(layers):
            shape = _shape_text(layer._last_output_shape)
            params = layer.count_params() if layer.built else 0
            print_fn(row([f" {layer.name} ({type(layer).__name__})", shape, params]))
            if i != len(layers) - 1:
                print_fn("")
        print_fn("=" * width)
        trainable = sum(int(np.prod(w.shape.as_list())) for w in self.trainable_weights)
        frozen = sum(int(np.prod(w.shape.as_list())) for w in self.non_trainable_weights)
        print_fn(f"Total params: {trainable + frozen:,}")
        print_fn(f"Trainable params: {trainable:,}")
        print_fn(f"Non-trainable params: {frozen:,}")
        print_fn("_" * width)

    def get_config(self) -> dict:
        if self._nodes is not None:
            raise NotImplementedError("get_config of functional models is not supported yet")
        raise NotImplementedError(f"Model {type(self).__name__} is a subclassed model: it has "
                                  "no config (rebuild it in code, as in Keras)")


def _is_single_shape(shape: Any) -> bool:
    if isinstance(shape, TensorShape):
        return True
    return isinstance(shape, (list, tuple)) and all(
        d is None or isinstance(d, (int, np.integer)) for d in shape)


def _shape_text(shape: Any) -> str:
    """A layer's last output shape as summary() shows it: the batch dim as None."""
    if shape is None:
        return "multiple"
    if isinstance(shape, TensorShape):
        if shape.rank is None:
            return "?"
        dims = shape.as_list()
        return str(tuple([None] + dims[1:] if dims else dims))
    if isinstance(shape, (list, tuple)):
        return ", ".join(_shape_text(s) for s in shape)
    return str(shape)


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

    def _tracked_children(self) -> list:
        return [("layers", self._seq_layers)] + Layer._tracked_children(self)

    def _build_chain(self, batch_shape: Any, dtype: Any = None) -> None:
        x = Input(batch_shape=tuple(batch_shape), dtype=dtype or backend.floatx())
        for layer in self._seq_layers:
            x = layer(x)
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
        return {"name": self.name, "layers": [
            {"class_name": type(l).__name__, "config": l.get_config()}
            for l in self._seq_layers]}

    @classmethod
    def from_config(cls, config: dict) -> "Sequential":
        from kilnflow.keras import layers as layers_module
        model = cls(name=config.get("name"))
        for entry in config.get("layers", []):
            layer_cls = getattr(layers_module, entry["class_name"], None)
            if not (isinstance(layer_cls, type) and issubclass(layer_cls, Layer)):
                raise ValueError(f"Unknown layer class {entry['class_name']!r} in config")
            model.add(layer_cls.from_config(entry["config"]))
        return model
