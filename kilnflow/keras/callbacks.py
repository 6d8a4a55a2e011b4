"""Callbacks for fit/evaluate/predict: History, EarlyStopping, ModelCheckpoint,
LearningRateScheduler, CSVLogger, TerminateOnNaN, LambdaCallback, and ProgbarLogger (the
per-epoch progress bar: steps, time and metrics on a terminal, silent otherwise)."""
from __future__ import annotations

import csv
import math
import os
import sys
from typing import Any, Callable, Optional

import numpy as np


class Callback:
    """Base class: override the on_* hooks you need; `self.model` is set by fit()."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict = {}

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict) -> None:
        self.params = params

    def on_train_begin(self, logs: Optional[dict] = None) -> None: pass
    def on_train_end(self, logs: Optional[dict] = None) -> None: pass
    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None: pass
    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None: pass
    def on_train_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: pass
    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: pass
    def on_test_begin(self, logs: Optional[dict] = None) -> None: pass
    def on_test_end(self, logs: Optional[dict] = None) -> None: pass
    def on_test_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: pass
    def on_test_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: pass
    def on_predict_begin(self, logs: Optional[dict] = None) -> None: pass
    def on_predict_end(self, logs: Optional[dict] = None) -> None: pass
    def on_predict_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: pass
    def on_predict_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: pass


class CallbackList:
    """Calls every callback's hook in order."""

    def __init__(self, callbacks: Any, model: Any, params: dict):
        self.callbacks = list(callbacks or [])
        for cb in self.callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be keras.callbacks.Callback instances, got "
                                f"{cb!r}")
            cb.set_model(model)
            cb.set_params(params)

    def __getattr__(self, hook: str) -> Callable:
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        # every hook receives `logs` (a dict, empty when there is nothing to log), as
        # Keras passes it, so LambdaCallback(on_epoch_begin=lambda epoch, logs: ...) works
        arity = 2 if ("epoch" in hook or "batch" in hook) else 1

        def call(*args: Any) -> None:
            if len(args) < arity:
                args = args + ({},)
            for cb in self.callbacks:
                getattr(cb, hook)(*args)
        return call


class History(Callback):
    """Records each epoch's logs: `history.history['loss']` is a list per metric.
    fit() returns it."""

    def __init__(self) -> None:
        super().__init__()
        self.epoch: list = []
        self.history: dict = {}

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if self.model is not None:
            self.model.history = self


def _monitor_mode(monitor: str, mode: str) -> Callable:
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode == "auto":
        mode = "max" if ("acc" in monitor or monitor.endswith("auc")) else "min"
    return np.greater if mode == "max" else np.less


class EarlyStopping(Callback):
    """Stops training when `monitor` has not improved by `min_delta` for `patience`
    epochs; optionally restores the best epoch's weights."""

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0.0, patience: int = 0,
                 verbose: int = 0, mode: str = "auto", baseline: Optional[float] = None,
                 restore_best_weights: bool = False, start_from_epoch: int = 0):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.monitor_op = _monitor_mode(monitor, mode)
        self.min_delta = abs(min_delta) if self.monitor_op is np.greater else -abs(min_delta)
        self.stopped_epoch = 0
        self.best_weights: Any = None
        self.best_epoch = 0

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf if self.monitor_op is np.less else -np.inf
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        current = (logs or {}).get(self.monitor)
        if current is None:
            available = ", ".join(sorted(logs or {}))
            print(f"Early stopping conditioned on metric `{self.monitor}` which is not "
                  f"available. Available metrics are: {available}", file=sys.stderr)
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self.monitor_op(current - self.min_delta,
                                                        self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        # Keras 3 restores the best epoch's weights whether or not training stopped early
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class ModelCheckpoint(Callback):
    """Saves the model at the end of every epoch, or only when `monitor` improves with
    save_best_only. As in Keras 3: the whole model (`model.save`) to a `.keras` path, or
    with save_weights_only=True the weights (`.weights.h5` with h5py, else a kilnflow
    checkpoint prefix). `filepath` may contain `{epoch}` and log keys, e.g.
    'ckpt/model.{epoch:02d}-{val_loss:.2f}.keras'."""

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = False,
                 mode: str = "auto", save_freq: Any = "epoch",
                 initial_value_threshold: Optional[float] = None):
        super().__init__()
        if save_freq != "epoch":
            raise NotImplementedError("ModelCheckpoint supports save_freq='epoch' only")
        self.filepath = os.fspath(filepath)
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError("The filepath provided must end in `.keras` (Keras model "
                             "format), or pass save_weights_only=True. Received: "
                             f"filepath={self.filepath}")
        self.save_weights_only = save_weights_only
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.monitor_op = _monitor_mode(monitor, mode)
        self.best = initial_value_threshold if initial_value_threshold is not None else (
            np.inf if self.monitor_op is np.less else -np.inf)

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                print(f"Can save best model only with {self.monitor} available, skipping.",
                      file=sys.stderr)
                return
            if not self.monitor_op(current, self.best):
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to "
                      f"{current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when `monitor` has not improved by
    `min_delta` for `patience` epochs, then waits `cooldown` epochs; never below
    `min_lr`."""

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10,
                 verbose: int = 0, mode: str = "auto", min_delta: float = 1e-4,
                 cooldown: int = 0, min_lr: float = 0.0, **kwargs: Any):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received "
                             f"factor={factor}")
        self.monitor, self.factor, self.patience = monitor, float(factor), patience
        self.verbose, self.min_delta, self.cooldown = verbose, min_delta, cooldown
        self.min_lr = float(min_lr)
        self.mode_op = _monitor_mode(monitor, mode)
        self._reset()

    def _reset(self) -> None:
        self.best = np.inf if self.mode_op is np.less else -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def _improved(self, current: float) -> bool:
        if self.mode_op is np.less:
            return current < self.best - self.min_delta
        return current > self.best + self.min_delta

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._reset()

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        logs = logs if logs is not None else {}
        optimizer = self.model.optimizer
        logs["learning_rate"] = float(np.asarray(optimizer.learning_rate.numpy()))
        current = logs.get(self.monitor)
        if current is None:
            print(f"Learning rate reduction is conditioned on metric `{self.monitor}` which "
                  f"is not available. Available metrics are: {','.join(sorted(logs))}.",
                  file=sys.stderr)
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improved(current):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = logs["learning_rate"]
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    optimizer.learning_rate = new_lr
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning "
                              f"rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class BackupAndRestore(Callback):
    """Saves the model (weights, optimizer state) to `backup_dir` after each epoch; a
    `fit` interrupted and started again with the same callback resumes after the last
    finished epoch. The backup is deleted when training ends normally."""

    def __init__(self, backup_dir: str, save_freq: Any = "epoch",
                 delete_checkpoint: bool = True, double_checkpoint: bool = False):
        super().__init__()
        if save_freq != "epoch":
            raise NotImplementedError("BackupAndRestore supports save_freq='epoch' only")
        self.backup_dir = os.fspath(backup_dir)
        self.delete_checkpoint = delete_checkpoint
        self._model_path = os.path.join(self.backup_dir, "latest.keras")
        self._epoch_path = os.path.join(self.backup_dir, "training_metadata.json")

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        if not (os.path.exists(self._model_path) and os.path.exists(self._epoch_path)):
            return
        import json
        from kilnflow.keras.saving import archive
        archive.restore_into(self.model, self._model_path)
        with open(self._epoch_path) as f:
            self.model._initial_epoch = int(json.load(f)["epoch"]) + 1

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        import json
        from kilnflow.saving.fileio import write_atomically
        os.makedirs(self.backup_dir, exist_ok=True)
        self.model.save(self._model_path)
        write_atomically(self._epoch_path, json.dumps({"epoch": epoch}).encode())

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        if self.delete_checkpoint:  # only reached when fit finished (no exception)
            for path in (self._model_path, self._epoch_path):
                if os.path.exists(path):
                    os.remove(path)


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at the start of each epoch to
    `schedule(epoch, lr)` (or `schedule(epoch)`)."""

    def __init__(self, schedule: Callable, verbose: int = 0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        optimizer = self.model.optimizer
        if not hasattr(optimizer.learning_rate, "assign"):
            raise ValueError("LearningRateScheduler needs an optimizer whose learning rate is "
                             "a value, not a schedule")
        lr = float(optimizer.learning_rate.numpy())
        try:
            new = self.schedule(epoch, lr)
        except TypeError:
            new = self.schedule(epoch)
        new = float(np.asarray(new))
        if not math.isfinite(new):
            raise ValueError(f"The output of the schedule function should be a finite float, "
                             f"got {new}")
        optimizer.learning_rate = new
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {new}.")

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate.numpy())


class CSVLogger(Callback):
    """Writes one CSV row per epoch: epoch, then every log key (sorted)."""

    def __init__(self, filename: str, separator: str = ",", append: bool = False):
        super().__init__()
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self._file: Any = None
        self._writer: Any = None
        self._keys: Optional[list] = None

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        exists = self.append and os.path.exists(self.filename) and \
            os.path.getsize(self.filename) > 0
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self._keys = None
        self._header_written = exists

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        logs = logs or {}
        if self._keys is None:
            self._keys = sorted(logs)
            self._writer = csv.DictWriter(self._file, ["epoch"] + self._keys,
                                          delimiter=self.sep)
            if not self._header_written:
                self._writer.writeheader()
        row = {"epoch": epoch, **{k: logs.get(k, "NA") for k in self._keys}}
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch's loss is NaN or infinite."""

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback from plain functions: LambdaCallback(on_epoch_end=lambda e, logs: ...)."""

    def __init__(self, **hooks: Callable):
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_"):
                raise TypeError(f"Unknown callback hook {name!r}")
            setattr(self, name, fn)


class ProgbarLogger(Callback):
    """What fit / evaluate / predict print, as Keras 3 prints it: "Epoch i/n" (when n > 1),
    then a progress bar per epoch with the step time and the logs (validation ones included;
    the validation inside fit draws no bar of its own). `verbose` and `stream` default to
    fit's verbose and stdout; see keras.utils.Progbar for terminals vs pipes."""

    def __init__(self, verbose: Any = None, stream: Any = None):
        super().__init__()
        self.verbose = verbose
        self.stream = stream
        self.epochs = 1
        self.target: Optional[int] = None
        self.seen = 0
        self.progbar: Any = None
        self._called_in_fit = False
        self._fixed_verbose = verbose is not None

    def set_params(self, params: dict) -> None:
        super().set_params(params)
        if not self._fixed_verbose:
            verbose = params.get("verbose", 1)
            self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._called_in_fit = True

    def on_test_begin(self, logs: Optional[dict] = None) -> None:
        if not self._called_in_fit:
            self._reset()

    def on_predict_begin(self, logs: Optional[dict] = None) -> None:
        self._reset()

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._reset()
        if self.verbose and self.epochs > 1:
            from kilnflow.keras.progbar import output_stream
            out = output_stream(self.stream)
            out.write(f"Epoch {epoch + 1}/{self.epochs}\n")
            out.flush()

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self._update(batch, logs)

    def on_test_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_predict_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self._update(batch, None)

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._finalize(logs)

    def on_test_end(self, logs: Optional[dict] = None) -> None:
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs: Optional[dict] = None) -> None:
        self._finalize(logs)

    def _reset(self) -> None:
        from kilnflow.keras.progbar import Progbar
        self.seen = 0
        self.progbar = Progbar(self.target, verbose=self.verbose, unit_name="step",
                               stateless_metrics=set(), stream=self.stream)

    def _update(self, batch: int, logs: Optional[dict]) -> None:
        if self.progbar is None:
            self._reset()
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, _numbers(logs), finalize=False)

    def _finalize(self, logs: Optional[dict]) -> None:
        if self.progbar is None:
            self._reset()
        if self.target is None:  # learnt from the first pass, kept for the next ones
            self.target = self.seen
            self.progbar.target = self.target
        self.progbar.update(self.target, _numbers(logs), finalize=True)


def _numbers(logs: Optional[dict]) -> dict:
    """The logs' numbers (running means already: the bar shows them as they are)."""
    return {k: v for k, v in (logs or {}).items() if isinstance(v, (int, float))}


from kilnflow.keras.tensorboard import TensorBoard as TensorBoard  # noqa: E402,F401
