"""The loops behind Model.fit / evaluate / predict: batching NumPy inputs (with
shuffling and validation splits), wrapping the step functions in @kf.function, and
driving callbacks. Model (models.py) owns the steps; this module owns the iteration.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Optional

import numpy as np

from kilnflow import nest
from kilnflow.function.api import function
from kilnflow.keras import backend
from kilnflow.keras import callbacks as _callbacks
from kilnflow.keras.epoch_iterator import EpochIterator, known_batches
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.tensor import Tensor
from kilnflow.variables import Variable


# ---------------------------------------------------------------- data

def _is_batch_iterable(x: Any) -> bool:
    """True for generators and other iterables of (x, y[, sample_weight]) batches."""
    if isinstance(x, (np.ndarray, Tensor, Variable, list, tuple, dict, str, bytes)):
        return False
    return hasattr(x, "__iter__") or hasattr(x, "__next__")


def _to_array(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (Tensor, Variable)):
        return np.asarray(x)
    array = np.asarray(x)
    if array.dtype == np.float64 and not isinstance(x, np.ndarray):
        array = array.astype(backend.floatx())  # Python floats: the default float, as in TF
    return array


def arrays(data: Any) -> Any:
    """The NumPy form of a (nested) input: lists of arrays stay lists (multi-input)."""
    if isinstance(data, dict):
        return {k: _to_array(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)) and data and all(
            isinstance(v, (np.ndarray, Tensor, Variable)) for v in data):
        return [_to_array(v) for v in data]
    return _to_array(data)


def num_samples(data: Any) -> int:
    counts = {len(a) for a in nest.flatten(data) if a is not None}
    if len(counts) > 1:
        raise ValueError(f"Data cardinality is ambiguous: the arrays have different numbers "
                         f"of samples {sorted(counts)}. Make sure all arrays contain the "
                         "same number of samples.")
    if not counts:
        raise ValueError("No data given")
    return counts.pop()


def take(data: Any, index: Any) -> Any:
    return nest.map_structure(lambda a: None if a is None else a[index], data)


def tensors(data: Any) -> Any:
    return nest.map_structure(lambda a: None if a is None else convert_to_tensor(a), data)


def split_validation(x: Any, y: Any, sw: Any, fraction: float) -> tuple:
    """(train data, validation data): the validation part is the last `fraction` of the
    samples, taken before any shuffling (as in Keras)."""
    if not 0 < fraction < 1:
        raise ValueError(f"validation_split must be in (0, 1), got {fraction}")
    n = num_samples((x, y))
    cut = int(n * (1.0 - fraction))
    if cut == 0 or cut == n:
        raise ValueError(f"validation_split={fraction} leaves no samples for training or "
                         f"validation out of {n}")
    first, rest = slice(0, cut), slice(cut, n)
    return (take(x, first), take(y, first), take(sw, first)), \
        (take(x, rest), take(y, rest), take(sw, rest))


class ArrayBatches:
    """Batches of (x, y, sample_weight) NumPy data, reshuffled every epoch if asked."""

    def __init__(self, x: Any, y: Any, sw: Any, batch_size: int, shuffle: bool):
        self.x, self.y, self.sw = x, y, sw
        self.n = num_samples((x, y, sw))
        self.batch_size = int(batch_size)
        if self.batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.shuffle = shuffle

    @property
    def steps(self) -> int:
        return -(-self.n // self.batch_size)

    def __iter__(self) -> Iterator[tuple]:
        order = backend.rng().permutation(self.n) if self.shuffle else None
        for start in range(0, self.n, self.batch_size):
            if order is None:
                index: Any = slice(start, start + self.batch_size)
            else:
                index = np.sort(order[start:start + self.batch_size])
            yield take(self.x, index), take(self.y, index), take(self.sw, index)


class IterableBatches:
    """Batches from a user's iterable of (x, y) or (x, y, sample_weight) tuples."""

    def __init__(self, source: Any, steps: Optional[int]):
        self.source = source
        self.steps_limit = steps

    @property
    def steps(self) -> Optional[int]:
        if self.steps_limit is not None:
            return self.steps_limit
        return known_batches(self.source)

    def __iter__(self) -> Iterator[tuple]:
        for i, item in enumerate(self.source):
            if self.steps_limit is not None and i >= self.steps_limit:
                return
            if not isinstance(item, tuple):
                item = (item,)
            if len(item) == 1:
                yield arrays(item[0]), None, None
            elif len(item) in (2, 3):
                yield tuple(arrays(v) for v in item) + (None,) * (3 - len(item))
            else:
                raise ValueError(f"Each batch must be (x,), (x, y) or (x, y, sample_weight); "
                                 f"got a tuple of {len(item)}")


def batches(x: Any, y: Any, sw: Any, batch_size: Optional[int], shuffle: bool,
            steps: Optional[int]) -> Any:
    if _is_batch_iterable(x):
        if y is not None:
            raise ValueError("`y` must not be given when `x` yields (x, y) batches")
        return IterableBatches(x, steps)
    return ArrayBatches(arrays(x), arrays(y), arrays(sw), batch_size or 32, shuffle)


# ---------------------------------------------------------------- step functions

def compiled(step: Callable, run_eagerly: bool) -> Callable:
    """`step` wrapped in kf.function (shape-relaxing, so the last short batch does not
    retrace), unless run_eagerly."""
    if run_eagerly:
        return step
    return function(step, reduce_retracing=True)


def _python_logs(logs: Any) -> dict:
    return {k: float(np.asarray(v)) for k, v in dict(logs).items()}


# ---------------------------------------------------------------- loops

def class_weights_to_samples(y: Any, class_weight: dict) -> np.ndarray:
    """One weight per sample from {class index: weight}: the class is the integer label
    ((N,) or (N, 1)), or the argmax of one-hot labels; classes not listed weigh 1."""
    if isinstance(y, (list, dict)):
        raise ValueError("`class_weight` is only supported for models with a single output")
    y = np.asarray(y)
    classes = y.argmax(-1) if y.ndim == 2 and y.shape[1] > 1 else y.reshape(len(y))
    classes = np.round(classes).astype(np.int64)
    weights = np.ones(len(y), backend.floatx())
    for cls, weight in class_weight.items():
        weights[classes == int(cls)] = weight
    return weights


def fit_loop(model: Any, x: Any, y: Any, batch_size: Optional[int], epochs: int, verbose: Any,
             callbacks: Any, validation_split: float, validation_data: Any, shuffle: bool,
             sample_weight: Any, initial_epoch: int, steps_per_epoch: Optional[int],
             validation_batch_size: Optional[int], validation_freq: int,
             class_weight: Optional[dict] = None, validation_steps: Optional[int] = None) -> Any:
    if class_weight is not None:
        if _is_batch_iterable(x):
            raise NotImplementedError("class_weight with a batch iterable is not supported; "
                                      "weight the batches' samples instead")
        if sample_weight is not None:
            raise ValueError("You cannot use `class_weight` and `sample_weight` at the same "
                             "time.")
        sample_weight = class_weights_to_samples(arrays(y), class_weight)
    if validation_split and validation_data is None:
        if _is_batch_iterable(x):
            raise ValueError("validation_split needs array inputs, not a batch iterable")
        (x, y, sample_weight), validation_data = split_validation(
            arrays(x), arrays(y), arrays(sample_weight), validation_split)
    data = EpochIterator(batches(x, y, sample_weight, batch_size, shuffle, None),
                         steps_per_epoch)
    val = None
    if validation_data is not None and _is_batch_iterable(validation_data):
        val = (validation_data, None, None)  # a kf.data.Dataset or batch iterable
    elif validation_data is not None:
        if not isinstance(validation_data, tuple) or len(validation_data) not in (2, 3):
            raise ValueError("validation_data must be a tuple (x_val, y_val) or "
                             "(x_val, y_val, val_sample_weight), or a dataset")
        val = tuple(validation_data) + (None,) * (3 - len(validation_data))
    verbose = 1 if verbose == "auto" else verbose
    history = _callbacks.History()
    extra = [_callbacks.ProgbarLogger(verbose)] if verbose else []
    cbs = _callbacks.CallbackList(list(callbacks or []) + extra + [history], model,
                                  {"epochs": epochs, "steps": data.steps, "verbose": verbose})
    train_function = model.make_train_function()
    model.stop_training = False
    model._initial_epoch = None
    logs: dict = {}
    cbs.on_train_begin()
    if model._initial_epoch is not None:  # BackupAndRestore resumes an interrupted fit
        initial_epoch = max(initial_epoch, model._initial_epoch)
    for epoch in range(initial_epoch, epochs):
        model.reset_metrics()
        cbs.on_epoch_begin(epoch)
        for step, (xb, yb, swb) in data.epoch():
            cbs.on_train_batch_begin(step)
            logs = _python_logs(train_function(tensors(xb), tensors(yb), tensors(swb)))
            cbs.on_train_batch_end(step, logs)
            if model.stop_training:
                break
        if data.exhausted:  # the data gave nothing more: the out-of-data warning was issued
            break
        epoch_logs = dict(logs)
        if val is not None and (epoch + 1) % validation_freq == 0:
            results = evaluate_loop(model, val[0], val[1], validation_batch_size or batch_size,
                                    val[2], validation_steps, None)
            epoch_logs.update({f"val_{k}": v for k, v in results.items()})
        cbs.on_epoch_end(epoch, epoch_logs)
        logs = epoch_logs
        if model.stop_training:
            break
    finalize = getattr(model.optimizer, "finalize_variable_values", None)
    if finalize is not None:  # use_ema: the weights become their moving averages
        finalize(model.trainable_variables)
    cbs.on_train_end(logs)
    return history


def _progbar(verbose: Any, steps: Optional[int]) -> Any:
    """A Progbar for evaluate/predict (verbose='auto' means 1, as in Keras), or None."""
    verbose = 1 if verbose == "auto" else verbose
    if not verbose:
        return None
    from kilnflow.keras.progbar import Progbar
    return Progbar(steps, verbose=verbose, stateful_metrics=_callbacks.EVERYTHING)


def evaluate_loop(model: Any, x: Any, y: Any, batch_size: Optional[int], sample_weight: Any,
                  steps: Optional[int], callbacks: Any, verbose: Any = 0) -> dict:
    data = batches(x, y, sample_weight, batch_size, False, steps)
    bar = _progbar(verbose, data.steps)
    cbs = _callbacks.CallbackList(callbacks, model, {"steps": data.steps})
    test_function = model.make_test_function()
    model.reset_metrics()
    logs: dict = {}
    cbs.on_test_begin()
    for step, (xb, yb, swb) in enumerate(data):
        cbs.on_test_batch_begin(step)
        logs = _python_logs(test_function(tensors(xb), tensors(yb), tensors(swb)))
        cbs.on_test_batch_end(step, logs)
        if bar is not None:
            bar.update(step + 1, logs, finalize=False)
    if bar is not None:
        bar.update(bar.target or len(logs), logs, finalize=True)
    cbs.on_test_end(logs)
    return logs


def predict_loop(model: Any, x: Any, batch_size: Optional[int], steps: Optional[int],
                 callbacks: Any, verbose: Any = 0) -> Any:
    data = batches(x, None, None, batch_size, False, steps)
    bar = _progbar(verbose, data.steps)
    cbs = _callbacks.CallbackList(callbacks, model, {"steps": data.steps})
    predict_function = model.make_predict_function()
    outputs = []
    cbs.on_predict_begin()
    for step, (xb, _, _) in enumerate(data):
        cbs.on_predict_batch_begin(step)
        out = nest.map_structure(np.asarray, predict_function(tensors(xb)))
        outputs.append(out)
        cbs.on_predict_batch_end(step, {"outputs": out})
        if bar is not None:
            bar.update(step + 1, finalize=False)
    if bar is not None:
        bar.update(bar.target or len(outputs), finalize=True)
    cbs.on_predict_end()
    if not outputs:
        raise ValueError("predict() got no data")
    flat = [nest.flatten(o) for o in outputs]
    joined = [np.concatenate([f[i] for f in flat], axis=0) for i in range(len(flat[0]))]
    return nest.pack_sequence_as(outputs[0], joined)
