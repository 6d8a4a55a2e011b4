"""keras.Model: compile / fit / evaluate / predict, train_step / test_step, the *_on_batch
calls, summary and weights. The train step is a plain Python function of (x, y,
sample_weight); compile/fit wrap it in @kf.function unless run_eagerly=True (see
training.compiled). Functional behaviour comes from the Functional mixin.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import nest
from kilnflow.autodiff.tape import GradientTape
from kilnflow.distribute import hooks as distribute_hooks
from kilnflow.distribute.strategy import get_strategy
from kilnflow.keras import losses as _losses
from kilnflow.keras import metrics as _metrics
from kilnflow.keras import optimizers as _optimizers
from kilnflow.keras import training
from kilnflow.keras.models import multi_output
from kilnflow.keras.models.compile_metrics import CompileMetrics
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import math as kmath
from kilnflow.saving import checkpoint as _checkpoint
from kilnflow.keras.models.functional import Functional, functional_config, \
    functional_from_config
from kilnflow.keras.summary import print_summary

_MODEL_STATE = frozenset({
    "optimizer", "loss", "compiled_loss", "compiled_metrics", "history", "stop_training",
    "_loss_object", "_loss_tracker", "_run_eagerly",
    "_train_function", "_test_function", "_predict_function", "_is_compiled", "_nodes",
    "_compile_metrics", "_output_loss_trackers",
    "_functional_layers", "_model_inputs", "_model_outputs", "_seq_layers",
    "_jit_compile", "_steps_per_execution", "_initial_epoch", "_loss_weights", "_seq_io"})


def _by_output(spec: Any, index: int, names: list) -> Any:
    """spec's entry for output `index`: a list entry, a dict entry by output name, or the
    single value shared by every output."""
    if isinstance(spec, (list, tuple)):
        return spec[index]
    if isinstance(spec, dict):
        if not names:
            raise ValueError("Losses by output name need a functional model")
        return spec.get(names[index])
    return spec


def pack_data(x: Any, y: Any, sample_weight: Any) -> tuple:
    """The batch a train_step / test_step receives, as Keras packs it: (x,), (x, y) or
    (x, y, sample_weight), so an override can write `x, y = data`."""
    if y is None and sample_weight is None:
        return (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


class Model(Functional, Layer):
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
        self._compile_metrics: Any = None
        self._nodes: Optional[list] = None
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("A functional Model needs both `inputs` and `outputs`")
            self._init_functional(inputs, outputs)

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None,
                loss_weights: Any = None, weighted_metrics: Any = None,
                run_eagerly: bool = False, steps_per_execution: int = 1,
                jit_compile: Any = "auto", **kwargs: Any) -> None:
        """Configure training: the optimizer, the loss and the metrics to report
        (`metrics` ignore sample weights, `weighted_metrics` use them).

        `jit_compile=True` compiles the train/test/predict steps with
        kf.function(jit_compile=True) (the numba backend, the `fast` extra); "auto" is
        False, as Keras resolves it on a CPU-only machine."""
        self.optimizer = _optimizers.get(optimizer)
        self.distribute_strategy = get_strategy()  # fit splits batches over its replicas
        self.loss = loss
        self._loss_weights = loss_weights
        if isinstance(loss, (list, tuple)):  # one loss per output, in output order
            self._loss_object: Any = [_losses.get(l) for l in loss]
        elif isinstance(loss, dict):  # one loss per output, by output layer name
            self._loss_object = {k: _losses.get(v) for k, v in loss.items()}
        else:
            self._loss_object = _losses.get(loss)
        self._output_loss_trackers: Any = None
        self._compile_metrics = None
        if metrics is not None or weighted_metrics is not None:
            self._compile_metrics = CompileMetrics(metrics, weighted_metrics)
        self._loss_tracker = _metrics.Mean(name="loss")
        self._run_eagerly = bool(run_eagerly)
        self._jit_compile = training.resolve_jit_compile(self, jit_compile, self._run_eagerly)
        self._steps_per_execution = int(steps_per_execution)
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
    def jit_compile(self) -> bool:
        """Whether the step functions compile with the numba backend (never set: False,
        Keras's "auto" on a CPU-only machine)."""
        if getattr(self, "_jit_compile", None) is None:
            self._jit_compile = False
        return self._jit_compile

    @jit_compile.setter
    def jit_compile(self, value: Any) -> None:
        self._jit_compile = training.resolve_jit_compile(self, value, False)
        self._train_function = self._test_function = self._predict_function = None

    @property
    def metrics(self) -> list:
        """As in Keras 3: the loss tracker, `compile_metrics` (compile()'s metrics as one
        Metric) and, with several outputs, the per-output loss trackers (`a_loss`, ...),
        these once the first batch has been seen."""
        out = [self._loss_tracker] if self._loss_tracker is not None else []
        if self._compile_metrics is not None:
            out.append(self._compile_metrics)
        return out + list(getattr(self, "_output_loss_trackers", None) or [])

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def get_metrics_result(self) -> dict:
        """Every metric's current result, compile_metrics' sub-metrics by their names."""
        logs: dict = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                logs.update(result)
            else:
                logs[metric.name] = result
        return logs

    def flatten_metrics_in_order(self, logs: dict) -> Any:
        """evaluate()'s list: the logs in metric order (sub-metrics in compile order),
        then any other keys sorted; one value alone is returned bare."""
        names = []
        for metric in self.metrics:
            names += [m.name for m in metric.metrics] if metric is self._compile_metrics \
                else [metric.name]
        values = [logs[n] for n in names if n in logs]
        values += [logs[k] for k in sorted(logs) if k not in names]
        return values[0] if len(values) == 1 else values

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
            total = self._compiled_loss(y, y_pred, sample_weight)
        extra = self.losses
        if extra:
            reg = kmath.add_n([kmath.cast(l, total.dtype) if total is not None else l
                               for l in extra])
            total = reg if total is None else total + reg
        if total is None:
            raise ValueError("No loss to compute: compile() the model with a `loss`, or add "
                             "losses with add_loss()")
        return total

    def _compiled_loss(self, y: Any, y_pred: Any, sample_weight: Any) -> Any:
        """The compiled loss over every output: one loss for all outputs, or a list / dict
        of them (dicts by output layer name), each scaled by its loss_weights entry."""
        if not isinstance(y_pred, (list, tuple, dict)) and not isinstance(
                self._loss_object, (list, dict)):
            return self._loss_object(y, y_pred, sample_weight)
        trues, preds, names = multi_output.flat_targets(self, y, y_pred)
        parts, unweighted = [], []
        for i, (t, p) in enumerate(zip(trues, preds)):
            loss = _by_output(self._loss_object, i, names)
            if loss is None:
                continue
            value = loss(t, p, sample_weight)
            unweighted.append((names[i], value, p))
            weight = _by_output(self._loss_weights, i, names)
            parts.append(value if weight is None else value * float(weight))
        if len(unweighted) > 1:  # Keras 3 logs each output's unweighted loss: `a_loss`
            multi_output.track_output_losses(self, unweighted)
        return kmath.add_n(parts)

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any) -> dict:
        """Update compile()'s metrics with the batch; return every metric's result."""
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(self, y, y_pred, sample_weight)
        return self.get_metrics_result()

    def train_step(self, data: tuple) -> dict:
        """One optimization step on a batch: forward, loss, gradients, update, metrics."""
        x, y, sample_weight = (tuple(data) + (None, None))[:3]
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
            # in one replica of several: its share, so the all-reduced sum is the mean's
            scaled = distribute_hooks.scale_loss_for_distribution(loss)
            scale_loss = getattr(self.optimizer, "scale_loss", None)
            if scale_loss is not None:  # a LossScaleOptimizer scales it up
                scaled = scale_loss(scaled)
        variables = self.trainable_variables
        grads = tape.gradient(scaled, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        multi_output.track_loss(self._loss_tracker, loss, x)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data: tuple) -> dict:
        x, y, sample_weight = (tuple(data) + (None, None))[:3]
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight)
        multi_output.track_loss(self._loss_tracker, loss, x)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data: Any) -> Any:
        x = data[0] if isinstance(data, tuple) else data
        return self(x, training=False)

    def make_train_function(self, force: bool = False) -> Any:
        if self._train_function is None or force:
            def train_function(x: Any, y: Any, sample_weight: Any) -> dict:
                return distribute_hooks.run_step(self.distribute_strategy, self.train_step,
                                                 pack_data(x, y, sample_weight))
            self._train_function = training.compiled(
                train_function, self._run_eagerly or distribute_hooks.steps_run_eagerly(
                    self.distribute_strategy), self.jit_compile)
        return self._train_function

    def make_test_function(self, force: bool = False) -> Any:
        if self._test_function is None or force:
            def test_function(x: Any, y: Any, sample_weight: Any) -> dict:
                return self.test_step(pack_data(x, y, sample_weight))
            self._test_function = training.compiled(test_function, self._run_eagerly,
                                                    self.jit_compile)
        return self._test_function

    def make_predict_function(self, force: bool = False) -> Any:
        if self._predict_function is None or force:
            def predict_function(x: Any) -> Any:
                return self.predict_step(x)
            self._predict_function = training.compiled(predict_function, self._run_eagerly,
                                                       self.jit_compile)
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
        return training.fit_loop(self, x, y, batch_size, epochs, verbose, callbacks,
                                 validation_split, validation_data, shuffle, sample_weight,
                                 initial_epoch, steps_per_epoch, validation_batch_size,
                                 validation_freq, class_weight, validation_steps)

    def evaluate(self, x: Any = None, y: Any = None, batch_size: Optional[int] = None,
                 verbose: Any = "auto", sample_weight: Any = None, steps: Optional[int] = None,
                 callbacks: Any = None, return_dict: bool = False, **kwargs: Any) -> Any:
        """The loss and metrics over the data: a scalar (loss only), a list, or a dict."""
        self._check_compiled()
        logs = training.evaluate_loop(self, x, y, batch_size, sample_weight, steps, callbacks,
                                      verbose)
        return logs if return_dict else self.flatten_metrics_in_order(logs)

    def predict(self, x: Any, batch_size: Optional[int] = None, verbose: Any = "auto",
                steps: Optional[int] = None, callbacks: Any = None) -> Any:
        """The model's outputs for all of x, as NumPy arrays."""
        return training.predict_loop(self, x, batch_size, steps, callbacks, verbose)

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                       class_weight: Any = None, return_dict: bool = False,
                       reset_metrics: bool = True) -> Any:
        """One train step on one batch (Keras 3's argument order; `class_weight` becomes
        per-sample weights)."""
        self._check_compiled()
        if class_weight is not None:
            if sample_weight is not None:
                raise ValueError("Arguments `sample_weight` and `class_weight` cannot be "
                                 "specified at the same time.")
            sample_weight = training.class_weights_to_samples(training.arrays(y),
                                                              class_weight)
        if reset_metrics:
            self.reset_metrics()
        logs = training._python_logs(self.make_train_function()(
            *training.tensors((training.arrays(x), training.arrays(y),
                               training.arrays(sample_weight)))))
        return logs if return_dict else self.flatten_metrics_in_order(logs)

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                      reset_metrics: bool = True, return_dict: bool = False) -> Any:
        self._check_compiled()
        if reset_metrics:
            self.reset_metrics()
        logs = training._python_logs(self.make_test_function()(
            *training.tensors((training.arrays(x), training.arrays(y),
                               training.arrays(sample_weight)))))
        return logs if return_dict else self.flatten_metrics_in_order(logs)

    def predict_on_batch(self, x: Any) -> Any:
        out = self.make_predict_function()(training.tensors(training.arrays(x)))
        return nest.map_structure(np.asarray, out)

    # ---------------------------------------------------------------- weights on disk

    def save_weights(self, filepath: str, overwrite: bool = True, save_format: Any = None,
                     options: Any = None) -> None:
        """Write the model's variables: Keras 3's HDF5 layout for a `.weights.h5` path (needs
        h5py), else a kilnflow checkpoint (.json object graph + .safetensors)."""
        import os
        if os.fspath(filepath).endswith(".weights.h5"):
            from kilnflow.keras.saving import archive
            if not overwrite and os.path.exists(filepath):
                raise FileExistsError(f"{filepath} exists and overwrite=False")
            archive.save_weights_h5(self, os.fspath(filepath))
            return
        prefix = _checkpoint.split_prefix(os.fspath(filepath))
        if not overwrite and os.path.exists(prefix + ".json"):
            raise FileExistsError(f"{prefix}.json exists and overwrite=False")
        _checkpoint.write_checkpoint(self, prefix)

    def load_weights(self, filepath: str, skip_mismatch: bool = False, by_name: bool = False,
                     options: Any = None) -> Any:
        """Restore weights saved by save_weights, matching by attribute path. Weights of
        layers not built yet are restored when they are built. Returns the load status."""
        import os
        if os.fspath(filepath).endswith(".weights.h5"):
            from kilnflow.keras.saving import archive
            archive.load_weights_h5(self, os.fspath(filepath), skip_mismatch)
            return None
        if by_name or skip_mismatch:
            raise NotImplementedError("load_weights(by_name/skip_mismatch) is not supported")
        return _checkpoint.restore_checkpoint(self, os.fspath(filepath))

    # ---------------------------------------------------------------- summary

    def summary(self, line_length: Optional[int] = None, positions: Any = None,
                print_fn: Any = None, expand_nested: bool = False,
                show_trainable: bool = False) -> None:
        """Print a table of the layers: name (type), output shape, parameter count."""
        print_summary(self, line_length, positions, print_fn, expand_nested, show_trainable)

    def get_config(self) -> dict:
        """A functional model's graph of layer configs; a subclassed model's name and
        trainable flag (override get_config when __init__ takes other arguments)."""
        if self._nodes is not None:
            return functional_config(self)
        return {"name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Model":
        if "input_layers" in config and "layers" in config:
            return functional_from_config(cls, config, custom_objects)
        try:
            return cls(**config)
        except TypeError as exc:
            raise TypeError(f"Unable to revive model {cls.__name__} from its config "
                            f"{config}: {exc}. A subclassed model whose __init__ takes other "
                            "arguments must implement get_config() and from_config().") from exc

    # ---------------------------------------------------------------- whole-model saving

    def save(self, filepath: Any, overwrite: bool = True, zipped: Any = None,
             **kwargs: Any) -> None:
        """Save architecture, weights, optimizer state and compile settings to a `.keras`
        file; keras.models.load_model restores it."""
        from kilnflow.keras.saving import archive
        archive.save_model(self, filepath, overwrite=overwrite, **kwargs)

    def export(self, filepath: str, format: str = "tf_saved_model",  # noqa: A002 - Keras's
               verbose: Optional[bool] = True, input_signature: Any = None) -> None:
        """Write a serving SavedModel (endpoint `serve`, also `serving_default`) that
        kf.saved_model.load reads back without this model's code."""
        from kilnflow.keras.saving.export import export_model
        export_model(self, filepath, format, verbose, input_signature)

    def to_json(self, **kwargs: Any) -> str:
        """The model's architecture as Keras 3 JSON (keras.models.model_from_json)."""
        import json
        from kilnflow.keras.saving.serialization import serialize_keras_object
        return json.dumps(serialize_keras_object(self), **kwargs)
