"""keras.callbacks.TensorBoard: training curves, weight histograms, the train step's graph
and a profile of chosen batches, written as TensorBoard event files through kf.summary
(the optional extra `tensorboard`), laid out as Keras writes them: `<log_dir>/train` and
`<log_dir>/validation`, tags `epoch_loss` / `batch_loss`, profiles under
`<log_dir>/train/plugins/profile`.
"""
from __future__ import annotations

import os
import time
from typing import Any, Optional

import numpy as np

from kilnflow import summary
from kilnflow.keras.callbacks import Callback
from kilnflow.profiler import experimental as profiler
from kilnflow.summary.trace import combined_graph_def
from kilnflow.summary.writer import require_tensorboard


def _profile_range(profile_batch: Any) -> tuple:
    """(start, stop) batch numbers, 1-based and inclusive; (0, 0) is off."""
    if isinstance(profile_batch, str):
        profile_batch = [int(p) for p in profile_batch.split(",")]
    if isinstance(profile_batch, int):
        profile_batch = (profile_batch, profile_batch)
    start, stop = (int(p) for p in profile_batch)
    if start < 0 or stop < start:
        raise ValueError(f"profile_batch must be a non-negative integer or a (start, stop) "
                         f"pair with start <= stop, got {profile_batch}")
    return start, stop


class TensorBoard(Callback):
    """Write TensorBoard logs during fit(), as Keras 3's callback does.

    log_dir: root folder (`train/` and `validation/` below it). histogram_freq: every how
    many epochs to write weight histograms `<weight path>/histogram` (0: never).
    write_graph: write the model's config (tag `keras`) and the train step's graph.
    write_images: with the histograms, each weight as an image (`<weight path>/image`).
    update_freq: 'epoch', 'batch' or N: write `batch_*` scalars every N batches; as in
    Keras, while N is an int every summary of the run is gated on the optimizer's
    iteration count being a multiple of N (epoch summaries included). profile_batch: a
    batch number or (start, stop) range (1-based) to profile into
    `log_dir/train/plugins/profile`.
    """

    def __init__(self, log_dir: str = "logs", histogram_freq: int = 0,
                 write_graph: bool = True, write_images: bool = False,
                 write_steps_per_second: bool = False, update_freq: Any = "epoch",
                 profile_batch: Any = 0, embeddings_freq: int = 0,
                 embeddings_metadata: Any = None):
        super().__init__()
        require_tensorboard()
        if update_freq not in ("epoch", "batch") and not isinstance(update_freq, int):
            raise ValueError(f"update_freq must be 'epoch', 'batch' or an int, got "
                             f"{update_freq!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = int(histogram_freq)
        self.write_steps_per_second = write_steps_per_second
        self.write_graph = write_graph
        self.write_images = write_images
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._profile_start, self._profile_stop = _profile_range(profile_batch)
        self._writers: dict = {}
        self._global_batch = 0
        self._graph_written = False
        self._profiling = False
        self._batch_start = 0.0

    def _writer(self, name: str) -> Any:
        if name not in self._writers:
            self._writers[name] = summary.create_file_writer(os.path.join(self.log_dir, name))
        return self._writers[name]

    def _iterations(self) -> int:
        """The optimizer's step count (what Keras gates and steps summaries on)."""
        iterations = getattr(getattr(self.model, "optimizer", None), "iterations", None)
        try:
            return int(np.asarray(iterations.numpy() if hasattr(iterations, "numpy")
                                  else iterations))
        except (TypeError, ValueError):
            return self._global_batch

    def _recording(self) -> bool:
        """Keras' record_if(iterations % update_freq == 0) around the whole run."""
        return not isinstance(self.update_freq, int) or \
            self._iterations() % self.update_freq == 0

    def _scalars(self, writer: str, prefix: str, values: dict, step: int,
                 suffix: str = "") -> None:
        if values and self._recording():
            with self._writer(writer).as_default(step=step):
                for name, value in values.items():
                    summary.scalar(prefix + name + suffix, float(value))

    # ---------------------------------------------------------------- hooks

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._global_batch = 0
        self._graph_written = False
        if self.write_graph:
            self._write_model_config()

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._epoch_start = (time.perf_counter(), self._global_batch)

    def on_train_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        self._global_batch += 1
        self._batch_start = time.perf_counter()
        if self._profile_start and self._global_batch == self._profile_start:
            profiler.start(os.path.join(self.log_dir, "train"))
            self._profiling = True

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        if self.write_graph and not self._graph_written:
            self._write_train_graph()
        if isinstance(self.update_freq, int):
            values = {}
            if self.write_steps_per_second:
                values["steps_per_second"] = \
                    1.0 / max(time.perf_counter() - self._batch_start, 1e-9)
            values.update(logs or {})
            self._scalars("train", "batch_", values, self._global_batch)
        if self._profiling and self._global_batch >= self._profile_stop:
            profiler.stop()
            self._profiling = False

    def on_test_end(self, logs: Optional[dict] = None) -> None:
        if getattr(getattr(self.model, "optimizer", None), "iterations", None) is not None:
            self._scalars("validation", "evaluation_", dict(logs or {}),
                          self._iterations(), "_vs_iterations")

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        logs = dict(logs or {})
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        rate = self._learning_rate()
        if rate is not None:
            train["learning_rate"] = rate
        if self.write_steps_per_second and hasattr(self, "_epoch_start"):
            start, first = self._epoch_start
            elapsed = max(time.perf_counter() - start, 1e-9)
            train["steps_per_second"] = (self._global_batch - first) / elapsed
        self._scalars("train", "epoch_", train, epoch)
        self._scalars("validation", "epoch_", val, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0 and self._recording():
            with self._writer("train").as_default(step=epoch):
                self._log_weights()

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        if self._profiling:
            profiler.stop()
            self._profiling = False
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    # ---------------------------------------------------------------- pieces

    def _write_model_config(self) -> None:
        """The model's JSON config under tag `keras` (TensorBoard's Keras model graph)."""
        try:
            config = self.model.to_json()
        except (AttributeError, NotImplementedError, TypeError, ValueError):
            return   # subclassed models without get_config: Keras skips it too
        from tensorboard.compat.proto import summary_pb2
        from tensorboard.util import tensor_util
        meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
            plugin_name="graph_keras_model", content=b"1"))
        proto = summary_pb2.Summary()
        proto.value.add(tag="keras", metadata=meta,
                        tensor=tensor_util.make_tensor_proto(np.array(config, object)))
        self._writer("train").write_event(step=0, summary=proto)

    def _write_train_graph(self) -> None:
        self._graph_written = True
        function = getattr(self.model, "_train_function", None)
        traced = getattr(function, "traced_concrete_functions", lambda: [])()
        if traced:
            graphs = {c.name: c.graph for c in traced[:1]}
            self._writer("train").write_event(
                step=0, graph_def=combined_graph_def(graphs).SerializeToString())

    def _log_weights(self) -> None:
        for layer in getattr(self.model, "layers", []):
            for weight in layer.weights:
                name = getattr(weight, "path", weight.name).replace(":", "_")
                summary.histogram(name + "/histogram", np.asarray(weight.numpy()))
                if self.write_images:
                    self._log_weight_as_image(np.asarray(weight.numpy()), name + "/image")

    @staticmethod
    def _log_weight_as_image(weight: np.ndarray, tag: str) -> None:
        """A bias as a 1-row image, a Dense kernel as one (wide side across), a conv
        kernel as one image per output channel; other shapes are skipped, as in Keras."""
        image = np.squeeze(weight)
        if image.ndim == 1:
            image = image.reshape(1, image.shape[0], 1, 1)
        elif image.ndim == 2:
            if image.shape[0] > image.shape[1]:
                image = image.T
            image = image.reshape(1, image.shape[0], image.shape[1], 1)
        elif image.ndim == 3:   # channels_last: every output channel its own image
            image = np.transpose(image, (2, 0, 1))
            image = image.reshape(image.shape + (1,))
        if image.ndim == 4 and image.shape[-1] in (1, 3, 4):
            summary.image(tag, image)

    def _learning_rate(self) -> Optional[float]:
        optimizer = getattr(self.model, "optimizer", None)
        rate = getattr(optimizer, "learning_rate", None)
        try:
            return float(np.asarray(rate.numpy() if hasattr(rate, "numpy") else rate))
        except (TypeError, ValueError):
            return None
