"""Keras 3's CTC loss: `ctc(y_true, y_pred)` and the `CTC` Loss class.

Labels are integer (batch, max_label_len) with 0 as the blank and padding; predictions are
unnormalised logits (batch, time, classes). A row's label length is its count of non-zero
labels and every row uses the full time axis, as Keras 3 does. Built on
`keras.ops.ctc_loss` (kilnflow/keras/ops/nn_ctc.py), so it differentiates on the tape and
traces inside `kf.function`.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras.losses import Loss, LossFunctionWrapper
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction as kreduce
from kilnflow.ops.convert import convert_to_tensor

MASK_INDEX = 0  # Keras 3 fixes the blank class at 0


def _shape_text(x: Any) -> str:
    """The shape as Keras prints it in its error messages: a Python tuple."""
    return str(tuple(x.shape.as_list())) if x.shape.rank is not None else "<unknown>"


def ctc(y_true: Any, y_pred: Any) -> Any:
    """Per-example CTC loss of integer labels `y_true` (batch, max_length), 0 = blank/mask,
    against logits `y_pred` (batch, max_length, num_classes), which must not be softmaxed.

    >>> from kilnflow import keras
    >>> loss = keras.losses.ctc([[1, 0]], [[[0.0, 0.0], [0.0, 0.0]]])
    >>> round(float(loss[0]), 4)  # -log(3/4): paths 1-, -1, 11 of four
    0.2877
    """
    y_true = convert_to_tensor(y_true)
    y_pred = convert_to_tensor(y_pred)
    if y_true.shape.rank != 2:
        raise ValueError("Targets `y_true` are expected to be a tensor of shape "
                         "`(batch_size, max_length)` in integer format. "
                         f"Received: y_true.shape={_shape_text(y_true)}")
    if y_pred.shape.rank != 3:
        raise ValueError("Logits `y_pred` are expected to be a tensor of shape "
                         "`(batch_size, max_length, num_classes)`. "
                         f"Received: y_pred.shape={_shape_text(y_pred)}")
    # imported here: kilnflow.keras.ops pulls in the whole kf namespace, which loads losses
    from kilnflow.keras.ops.nn_ctc import ctc_loss
    labels = kmath.cast(y_true, "int32")
    dims = array.shape(y_pred, out_type="int32")
    logit_length = array.fill(dims[:1], dims[1])
    label_length = kmath.cast(kreduce.reduce_sum(
        kmath.cast(kmath.not_equal(labels, MASK_INDEX), "int32"), axis=-1), "int32")
    return ctc_loss(labels, y_pred, label_length, logit_length, mask_index=MASK_INDEX)


class CTC(LossFunctionWrapper):
    """CTC (connectionist temporal classification) loss, reduced over the batch.

    >>> from kilnflow import keras
    >>> round(float(keras.losses.CTC()([[1, 0]], [[[0.0, 0.0], [0.0, 0.0]]])), 4)
    0.2877
    """

    default_name = "ctc"

    def __init__(self, reduction: Any = "sum_over_batch_size", name: Optional[str] = "ctc",
                 dtype: Any = None):
        super().__init__(ctc, reduction=reduction, name=name, dtype=dtype)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return ctc(y_true, y_pred)  # no rank alignment: labels are rank 2, logits rank 3

    def get_config(self) -> dict:
        return Loss.get_config(self)


__all__ = ["CTC", "ctc"]
