"""Losses and metrics of models with several outputs, named as Keras 3 logs them.

`compile(loss={"a": ..., "b": ...}, metrics={"a": ["mae"], "b": ["accuracy"]})` (or lists in
output order, metrics as a list of lists) gives logs `loss`, `a_loss`, `b_loss` (each output's
unweighted loss, kept when more than one output has a loss), `a_mae`, `b_accuracy`: a
metric given as a string is named by that string, as in Keras (see compile_metrics.py).
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import nest
from kilnflow.keras import metrics as _metrics
from kilnflow.ops import array
from kilnflow.ops import math as kmath


def output_names(model: Any, count: int) -> list:
    if getattr(model, "_nodes", None) is not None:
        return list(model.output_names)
    return [f"output_{i}" for i in range(count)]


def flat_targets(model: Any, y: Any, y_pred: Any) -> tuple:
    """(targets, predictions, output names), flat and in output order."""
    preds = list(y_pred.values()) if isinstance(y_pred, dict) else nest.flatten(y_pred)
    names = output_names(model, len(preds))
    if isinstance(getattr(model, "_loss_object", None), dict) and \
            getattr(model, "_nodes", None) is None:
        raise ValueError("Losses by output name need a functional model")
    if isinstance(y, dict):
        missing = [n for n in names if n not in y]
        if missing:
            raise KeyError(f"The targets have no entry for the outputs {missing}: got keys "
                           f"{sorted(y)}; the model's outputs are {names}")
        trues = [y[n] for n in names]
    else:
        trues = nest.flatten(y)
    if len(trues) != len(preds):
        raise ValueError(f"The model has {len(preds)} outputs but {len(trues)} targets "
                         "were given")
    return trues, preds, names


def metrics_by_output(model: Any, metrics: Any, y_pred: Any) -> Optional[list]:
    """[(output index, [metric specs])] when `metrics` is given per output (a dict by output
    name, or a list of lists / None in output order); None for one flat list."""
    if metrics is None:
        return None
    count = len(y_pred) if isinstance(y_pred, dict) else len(nest.flatten(y_pred))
    if isinstance(metrics, dict):
        names = output_names(model, count)
        unknown = sorted(set(metrics) - set(names))
        if unknown:
            raise ValueError(f"compile(metrics=...) names {unknown}, which are not outputs "
                             f"of the model; its outputs are {names}")
        return [(names.index(k), v if isinstance(v, (list, tuple)) else [v])
                for k, v in sorted(metrics.items(), key=lambda kv: names.index(kv[0]))
                if v is not None]
    if count > 1:  # a list over outputs: one metric, a list of them or None per output
        if len(metrics) != count:
            raise ValueError(f"Invalid `metrics`. `metrics` should contain metrics objects "
                             "and either be a dict or a list matching the output names of "
                             f"the model {output_names(model, count)}: {count} entries. "
                             f"Received: metrics={list(metrics)}")
        return [(i, list(m) if isinstance(m, (list, tuple)) else [m])
                for i, m in enumerate(metrics) if m is not None]
    return None


def loss_for_output(model: Any, index: int, names: list) -> Any:
    """The compiled loss object of output `index` (the one loss when it is shared)."""
    loss = getattr(model, "_loss_object", None)
    if isinstance(loss, (list, tuple)):
        return loss[index] if index < len(loss) else None
    if isinstance(loss, dict):
        return loss.get(names[index])
    return loss


def track_output_losses(model: Any, values: list) -> None:
    """Update one Mean per output (`<name>_loss`) with that output's unweighted loss,
    weighted by the batch size as Keras's trackers are."""
    if model._output_loss_trackers is None:
        model._output_loss_trackers = [_metrics.Mean(name=f"{name}_loss")
                                       for name, _, _ in values]
    for tracker, (_, value, pred) in zip(model._output_loss_trackers, values):
        batch = kmath.cast(array.shape(pred)[0], value.dtype)
        tracker.update_state(value, sample_weight=batch)


def track_loss(tracker: Any, loss: Any, x: Any) -> None:
    """The total loss's Mean, weighted by the batch size as in Keras 3 (a short last
    batch counts for its samples, not as a whole batch)."""
    first = nest.flatten(x)[0] if x is not None else None
    if first is None or getattr(first, "shape", None) is None or first.shape.rank == 0:
        tracker.update_state(loss)
        return
    tracker.update_state(loss, sample_weight=kmath.cast(array.shape(first)[0], loss.dtype))
