"""The loops behind Model.fit / evaluate / predict: batching NumPy inputs (with
shuffling and validation splits), wrapping the step functions in @kf.function, and
driving callbacks. Model (models.py) owns the steps; this module owns the iteration.
"""
from __future__ import annotations

import itertools
import warnings
from typing import Any, Callable, Iterator, Optional

import numpy as np

from kilnflow import nest
from kilnflow.distribute.hooks import steps_run_eagerly
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


PEEKED_BATCHES = 2  # Keras reads a generator's first batches to learn their specs


class IterableBatches:
    """Batches from a user's iterable of (x,), (x, y) or (x, y, sample_weight) tuples.

    A one-shot iterator (a Python generator) is read as Keras 3 reads it: its first two
    batches are taken up front, and every pass yields them again before the rest of the
    generator, so once the generator is exhausted each new pass (a new epoch, or
    validation) sees those two batches."""

    def __init__(self, source: Any):
        self.source = source
        self._first: Optional[list] = None
        if iter(source) is source:  # a generator or other one-shot iterator
            self._first = list(itertools.islice(source, PEEKED_BATCHES))
            if not self._first:
                raise ValueError("When passing a Python generator to a Keras model, the "
                                 "generator must yield at least one batch. Received an "
                                 "empty generator.")
            if not isinstance(self._first[0], tuple):
                raise ValueError("When passing a Python generator to a Keras model, the "
                                 "generator must return a tuple, either (input,) or "
                                 "(inputs, targets) or (inputs, targets, sample_weights). "
                                 f"Received: {self._first[0]!r}")

    @property
    def steps(self) -> Optional[int]:
        if self._first is not None:
            return None
        return known_batches(self.source)

    def __iter__(self) -> Iterator[tuple]:
        items = self.source if self._first is None else \
            itertools.chain(self._first, self.source)
        for item in items:
            yield unpack_batch(item)


def unpack_batch(item: Any) -> tuple:
    """(x, y, sample_weight) of one batch given as x, (x,), (x, y) or (x, y, sw)."""
    if not isinstance(item, tuple):
        item = (item,)
    if len(item) not in (1, 2, 3):
        raise ValueError(f"Each batch must be (x,), (x, y) or (x, y, sample_weight); "
                         f"got a tuple of {len(item)}")
    return tuple(arrays(v) for v in item) + (None,) * (3 - len(item))


class PyDatasetBatches:
    """Batches of a keras.utils.PyDataset (or any object with __len__ and __getitem__
    giving batches): one pass indexes 0..len-1, in a shuffled order when fit shuffles,
    and the dataset's on_epoch_end runs after each pass."""

    def __init__(self, dataset: Any, shuffle: bool):
        self.dataset = dataset
        self.shuffle = shuffle

    @property
    def steps(self) -> Optional[int]:
        return len(self.dataset)

    def __iter__(self) -> Iterator[tuple]:
        order = np.arange(len(self.dataset))
        if self.shuffle:
            order = backend.rng().permutation(order)
        for i in order:
            yield unpack_batch(self.dataset[int(i)])

    def on_epoch_end(self) -> None:
        hook = getattr(self.dataset, "on_epoch_end", None)
        if hook is not None:
            hook()


def _is_indexed_dataset(x: Any) -> bool:
    from kilnflow.keras.utils.dataset_utils import PyDataset
    return isinstance(x, PyDataset)


def _source_kind(x: Any) -> str:
    if hasattr(x, "element_spec"):
        return "tf.data.Dataset"
    if _is_indexed_dataset(x):
        return "PyDataset"
    return "generator"


_SHUFFLE_IGNORED = {
    "tf.data.Dataset": "a tf.data.Dataset. The Dataset is expected to already be shuffled "
                       "(via `.shuffle(buffer_size)`).",
    "generator": "a generator. The generator is expected to yield already-shuffled data.",
}


def batches(x: Any, y: Any, sw: Any, batch_size: Optional[int], shuffle: bool) -> Any:
    """The batches of fit/evaluate/predict's inputs, per pass; a dataset, generator or
    PyDataset brings its own targets and weights, as Keras's data adapters say."""
    if not (_is_indexed_dataset(x) or _is_batch_iterable(x)):
        return ArrayBatches(arrays(x), arrays(y), arrays(sw), batch_size or 32, shuffle)
    kind = _source_kind(x)
    for name, value, what in (("y", y, "the targets"),
                              ("sample_weights", sw, "the sample weights")):
        if value is not None:
            raise ValueError(f"When providing `x` as a {kind}, `{name}` should not be "
                             f"passed. Instead, {what} should be included as part of the "
                             f"{kind}.")
    if kind == "PyDataset":
        return PyDatasetBatches(x, shuffle)
    if shuffle:
        warnings.warn("`shuffle=True` was passed, but will be ignored since the data `x` "
                      f"was provided as {_SHUFFLE_IGNORED[kind]}", stacklevel=4)
    return IterableBatches(x)


# ---------------------------------------------------------------- step functions

def compiled(step: Callable, run_eagerly: bool, jit_compile: bool = False) -> Callable:
    """`step` wrapped in kf.function (shape-relaxing, so the last short batch does not
    retrace), unless run_eagerly; with jit_compile, compiled by the numba backend."""
    if run_eagerly:
        return step
    return function(step, reduce_retracing=True, jit_compile=True if jit_compile else None)


def resolve_jit_compile(model: Any, value: Any, run_eagerly: bool) -> Any:
    """compile()'s jit_compile as Keras 3 resolves it: "auto" is False (XLA is off on
    CPU-only machines, and kilnflow runs on the CPU); True with run_eagerly, or with a
    layer whose `supports_jit` is False, warns and gives False. None stays None (the
    property reads it as False)."""
    if value == "auto":
        return False
    if value and run_eagerly:
        warnings.warn("If `run_eagerly` is True, then `jit_compile` cannot also be True. "
                      "Disabling `jit_compile`.", stacklevel=3)
        return False
    if value and not all(getattr(layer, "supports_jit", True) for layer in
                         _all_layers(model)):
        warnings.warn("Model doesn't support `jit_compile=True`. Proceeding with "
                      "`jit_compile=False`.", stacklevel=3)
        return False
    return value


def _all_layers(layer: Any) -> Iterator[Any]:
    yield layer
    for sub in getattr(layer, "layers", None) or ():
        if sub is not layer:
            yield from _all_layers(sub)


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


def _per_execution(model: Any) -> int:
    """compile(steps_per_execution=): batches per callback step, as Keras groups them."""
    return int(getattr(model, "_steps_per_execution", 1) or 1)


def metrics_result_or_logs(model: Any, logs: dict, in_workers: bool = False) -> dict:
    """The model's metric results when the step's logs name exactly them (Keras reads
    the metrics, not the last step's logs), else the logs (a custom train_step's).

    `in_workers`: the steps ran in worker processes (MultiWorkerMirroredStrategy), each
    accumulating metric state over its own shards; the metric variables here hold only
    worker 0's state (pulled after each step), so the step's logs, the mean of the
    workers' (distribute hooks.run_step), stand for the metrics."""
    if in_workers:
        return dict(logs)
    results = _python_logs(model.get_metrics_result())
    return results if set(logs) == set(results) else dict(logs)


def _should_eval(epoch: int, validation_freq: Any) -> bool:
    if isinstance(validation_freq, int):
        return (epoch + 1) % validation_freq == 0
    return epoch + 1 in validation_freq


def fit_loop(model: Any, x: Any, y: Any, batch_size: Optional[int], epochs: int, verbose: Any,
             callbacks: Any, validation_split: float, validation_data: Any, shuffle: bool,
             sample_weight: Any, initial_epoch: int, steps_per_epoch: Optional[int],
             validation_batch_size: Optional[int], validation_freq: Any,
             class_weight: Optional[dict] = None, validation_steps: Optional[int] = None) -> Any:
    """Keras 3's fit: epochs of train steps; validation runs evaluate's loop with the
    same callbacks (on_test_begin ... on_test_end), its logs prefixed `val_`."""
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
    val = None
    if validation_data is not None and (_is_batch_iterable(validation_data) or
                                        _is_indexed_dataset(validation_data)):
        val = (validation_data, None, None)  # a kf.data.Dataset or batch iterable
    elif validation_data is not None:
        if not isinstance(validation_data, tuple) or len(validation_data) not in (2, 3):
            raise ValueError("validation_data must be a tuple (x_val, y_val) or "
                             "(x_val, y_val, val_sample_weight), or a dataset")
        val = tuple(validation_data) + (None,) * (3 - len(validation_data))
    data = EpochIterator(batches(x, y, sample_weight, batch_size, shuffle), steps_per_epoch,
                         _per_execution(model))
    cbs = callback_list(callbacks, model, verbose, epochs, data.steps, history=True)
    train_function = model.make_train_function()
    in_workers = steps_run_eagerly(getattr(model, "distribute_strategy", None))
    model.stop_training = False
    model._initial_epoch = None
    cbs.on_train_begin()
    if model._initial_epoch is not None:  # BackupAndRestore resumes an interrupted fit
        initial_epoch = max(initial_epoch, model._initial_epoch)
    training_logs, logs, val_data = None, {}, None
    for epoch in range(initial_epoch, epochs):
        model.reset_metrics()
        cbs.on_epoch_begin(epoch)
        for step in data.epoch():
            cbs.on_train_batch_begin(step)
            group = data.next_batches()
            if group is None:
                break
            for batch in group:
                logs = _python_logs(train_function(*tensors(batch)))
            cbs.on_train_batch_end(data.last_step(step), logs)
            if model.stop_training:
                break
        epoch_logs = metrics_result_or_logs(model, logs, in_workers)
        if val is not None and _should_eval(epoch, validation_freq):
            if val_data is None:  # made once, reused by every validation (as Keras)
                val_data = EpochIterator(batches(val[0], val[1], val[2], validation_batch_size
                                                 or batch_size, False), validation_steps,
                                         _per_execution(model))
            results = run_evaluation(model, val_data, cbs)
            epoch_logs.update({f"val_{k}": v for k, v in results.items()})
        cbs.on_epoch_end(epoch, epoch_logs)
        training_logs = epoch_logs
        if model.stop_training:
            break
    finalize = getattr(model.optimizer, "finalize_variable_values", None)
    if finalize is not None and epochs > 0:  # use_ema: the weights become their averages
        finalize(model.trainable_variables)
    cbs.on_train_end(training_logs)
    return next(c for c in cbs.callbacks if isinstance(c, _callbacks.History))


def callback_list(callbacks: Any, model: Any, verbose: Any, epochs: int,
                  steps: Optional[int], history: bool = False) -> Any:
    """The user's callbacks, then ProgbarLogger (unless verbose=0) and History (fit), as
    Keras 3 adds them; one already in the list is not added again."""
    if isinstance(callbacks, _callbacks.CallbackList):
        return callbacks
    callbacks = list(callbacks or [])
    if verbose and not any(isinstance(c, _callbacks.ProgbarLogger) for c in callbacks):
        callbacks.append(_callbacks.ProgbarLogger())
    if history and not any(isinstance(c, _callbacks.History) for c in callbacks):
        callbacks.append(_callbacks.History())
    return _callbacks.CallbackList(callbacks, model, {"epochs": epochs, "steps": steps,
                                                      "verbose": verbose})


def run_evaluation(model: Any, data: EpochIterator, cbs: Any) -> dict:
    """evaluate's loop over `data` (started afresh), calling the test callbacks."""
    test_function = model.make_test_function()
    data.reset()
    cbs.on_test_begin()
    logs: dict = {}
    model.reset_metrics()
    for step in data.epoch():
        cbs.on_test_batch_begin(step)
        group = data.next_batches()
        if group is None:
            break
        for batch in group:
            logs = _python_logs(test_function(*tensors(batch)))
        cbs.on_test_batch_end(data.last_step(step), logs)
    logs = metrics_result_or_logs(model, logs)
    cbs.on_test_end(logs)
    return logs


def evaluate_loop(model: Any, x: Any, y: Any, batch_size: Optional[int], sample_weight: Any,
                  steps: Optional[int], callbacks: Any, verbose: Any = 0) -> dict:
    data = EpochIterator(batches(x, y, sample_weight, batch_size, False), steps,
                         _per_execution(model))
    return run_evaluation(model, data, callback_list(callbacks, model, verbose, 1, data.steps))


def predict_loop(model: Any, x: Any, batch_size: Optional[int], steps: Optional[int],
                 callbacks: Any, verbose: Any = 0) -> Any:
    data = EpochIterator(batches(x, None, None, batch_size, False), steps,
                         _per_execution(model))
    cbs = callback_list(callbacks, model, verbose, 1, data.steps)
    predict_function = model.make_predict_function()
    outputs = []
    cbs.on_predict_begin()
    for step in data.epoch():
        cbs.on_predict_batch_begin(step)
        group = data.next_batches()
        if group is None:
            break
        for batch in group:
            out = nest.map_structure(np.asarray, predict_function(tensors(batch[0])))
            outputs.append(out)
        cbs.on_predict_batch_end(data.last_step(step), {"outputs": out})
    cbs.on_predict_end()
    if not outputs:
        raise ValueError("predict() got no data")
    flat = [nest.flatten(o) for o in outputs]
    joined = [np.concatenate([f[i] for f in flat], axis=0) for i in range(len(flat[0]))]
    return nest.pack_sequence_as(outputs[0], joined)
