"""compile()'s metrics as Keras 3 holds them: one Metric named `compile_metrics`.

`model.metrics` is `[loss tracker, compile_metrics, per-output loss trackers]` and
`model.metrics_names` is `['loss', 'compile_metrics', ...]`, as in Keras 3, while the logs
name each sub-metric. The sub-metrics are made from the first batch (so 'accuracy' can be
chosen from the loss and shapes). A metric given as a string is named by that string
('mae' logs as `mae`, 'acc' as `acc`); a metric object or function keeps its own name.
`metrics` ignore sample weights; `weighted_metrics` get them (and are named
`weighted_<name>` when that name is taken by an unweighted metric).
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import nest
from kilnflow.keras import metrics as _metrics
from kilnflow.keras.metrics.base import Metric
from kilnflow.keras.models import multi_output


def _renamed(metric: Any, name: str) -> Any:
    if metric.name != name:
        object.__setattr__(metric, "_name", name)
    return metric


def resolve_metric(spec: Any, loss: Any, y_true: Any, y_pred: Any,
                   prefix: Optional[str] = None) -> Any:
    """A Metric for `spec` ('accuracy' chosen from the loss and shapes, as in Keras), named
    by the string it was given as, with the output's name in front when there are
    several outputs."""
    if spec in ("accuracy", "acc"):
        metric = _metrics.resolve_accuracy(spec, loss, y_true, y_pred)
    else:
        metric = _metrics.get(spec)
        if isinstance(spec, str):
            metric = _renamed(metric, spec)
    return _renamed(metric, f"{prefix}_{metric.name}") if prefix else metric


class CompileMetrics(Metric):
    """The metrics and weighted metrics of compile(), updated together each step."""

    def __init__(self, metrics: Any, weighted_metrics: Any):
        super().__init__(name="compile_metrics")
        self.specs = metrics  # as compile() got them (the .keras archive saves them)
        self.weighted_specs = weighted_metrics
        self.metrics: list = []
        self._weighted: set = set()  # ids of the metrics that see sample weights
        self._outputs: dict = {}  # id(metric) -> output index (several outputs)
        self.built = False

    def build(self, model: Any, y: Any, y_pred: Any) -> None:
        """Make the sub-metrics from the first batch's targets and predictions."""
        self.built = True
        trues, preds, names = multi_output.flat_targets(model, y, y_pred)
        several = len(preds) > 1
        for weighted, specs in ((False, self.specs), (True, self.weighted_specs)):
            if specs is None:
                continue
            per_output = multi_output.metrics_by_output(model, specs, y_pred)
            if per_output is None:  # one flat list: it applies to the first output
                per_output = [(0, list(specs))]
                several_here = False
            else:
                several_here = several
            for index, output_specs in per_output:
                loss = multi_output.loss_for_output(model, index, names)
                for spec in output_specs:
                    metric = resolve_metric(spec, loss, trues[index], preds[index],
                                            prefix=names[index] if several_here else None)
                    if weighted:
                        if metric.name in {m.name for m in self.metrics}:
                            _renamed(metric, f"weighted_{metric.name}")
                        self._weighted.add(id(metric))
                    if several_here:
                        self._outputs[id(metric)] = index
                    self.metrics.append(metric)

    def update_state(self, model: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if not self.built:
            self.build(model, y, y_pred)
        flat = multi_output.flat_targets(model, y, y_pred) if self._outputs else None
        first_true = nest.flatten(y)[0] if y is not None else None
        first_pred = nest.flatten(y_pred)[0]
        for metric in self.metrics:
            weight = sample_weight if id(metric) in self._weighted else None
            index = self._outputs.get(id(metric))
            if index is not None:
                metric.update_state(flat[0][index], flat[1][index], weight)
            elif isinstance(y_pred, (list, tuple, dict)):
                metric.update_state(first_true, first_pred, weight)
            else:
                metric.update_state(y, y_pred, weight)

    def result(self) -> dict:
        return {m.name: m.result() for m in self.metrics}

    def reset_state(self) -> None:
        for metric in self.metrics:
            metric.reset_state()

    @property
    def variables(self) -> tuple:
        return tuple(v for m in self.metrics for v in m.variables)
