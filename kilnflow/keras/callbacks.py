"""Callbacks for fit/evaluate/predict: History, EarlyStopping, ModelCheckpoint,
LearningRateScheduler, CSVLogger, TerminateOnNaN, LambdaCallback, and ProgbarLogger (the
per-epoch progress bar: steps, time and metrics on a terminal, silent otherwise)."""
from __future__ import annotations

import csv
import math
import os
import sys
import time
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

        def call(*args: Any) -> None:
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
        if self.restore_best_weights and self.best_weights is not None and self.stopped_epoch:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class ModelCheckpoint(Callback):
    """Saves the model's weights (a kilnflow checkpoint: `.json` + `.safetensors`) at the
    end of every epoch, or only when `monitor` improves with save_best_only. `filepath`
    may contain `{epoch}` and log keys, e.g. 'ckpt/weights.{epoch:02d}-{val_loss:.2f}'."""

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = True,
                 mode: str = "auto", save_freq: Any = "epoch",
                 initial_value_threshold: Optional[float] = None):
        super().__init__()
        if save_freq != "epoch":
            raise NotImplementedError("ModelCheckpoint supports save_freq='epoch' only")
        if not save_weights_only:
            raise NotImplementedError("ModelCheckpoint saves weights only; use "
                                      "kf.saved_model for whole models")
        self.filepath = os.fspath(filepath)
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
        self.model.save_weights(path)


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
    """The progress bar fit() prints: one bar per epoch that fills as steps finish, with
    the time per step and the running metrics. It draws only on a terminal (verbose=1);
    verbose=2 prints one line per epoch anywhere; verbose=0 is silent."""

    def __init__(self, verbose: Any = 1, stream: Any = None, width: int = 30):
        super().__init__()
        self.verbose = verbose
        self.stream = stream
        self.width = width

    def _out(self) -> Any:
        return self.stream if self.stream is not None else sys.stdout

    def _active(self) -> bool:
        if self.verbose == 2:
            return True
        if self.verbose != 1:
            return False
        isatty = getattr(self._out(), "isatty", None)
        return bool(isatty and isatty())

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._enabled = self._active()

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._start = time.perf_counter()
        self._last_draw = 0.0
        self._steps = self.params.get("steps")
        if self._enabled:
            self._out().write(f"Epoch {epoch + 1}/{self.params.get('epochs', '?')}\n")
            self._out().flush()

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        if not self._enabled or self.verbose != 1:
            return
        now = time.perf_counter()
        done = batch + 1
        if now - self._last_draw < 0.05 and done != self._steps:
            return  # redraw at most 20 times a second
        self._last_draw = now
        self._draw(done, logs or {}, final=False)

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if self._enabled:
            self._draw(self._steps or 0, logs or {}, final=True)

    def _draw(self, done: int, logs: dict, final: bool) -> None:
        total = self._steps
        elapsed = time.perf_counter() - self._start
        per_step = elapsed / max(done, 1)
        if total:
            filled = int(self.width * done / total)
            arrow = ">" if filled < self.width else ""
            bar = "[" + "=" * max(filled - len(arrow), 0) + arrow + \
                "." * (self.width - filled) + "]"
            head = f"{done:>{len(str(total))}}/{total} {bar}"
        else:
            head = f"{done}"
        if final or not total:
            timing = f"{elapsed:.0f}s {per_step * 1000:.0f}ms/step"
        else:
            timing = f"ETA: {per_step * (total - done):.0f}s"
        metrics = " - ".join(f"{k}: {v:.4f}" for k, v in logs.items()
                             if isinstance(v, (int, float)))
        line = f"{head} - {timing}" + (f" - {metrics}" if metrics else "")
        out = self._out()
        if self.verbose == 1:
            out.write("\r" + line + ("\n" if final else ""))
        else:
            out.write(line + "\n")
        out.flush()
from kilnflow.keras.tensorboard import TensorBoard as TensorBoard  # noqa: E402,F401
