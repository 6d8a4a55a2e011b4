"""The enums of tf.distribute: ReduceOp, VariableSynchronization, VariableAggregation.

Values and names copy TF's, so `kf.distribute.ReduceOp.SUM` reads like TF code. The
variable enums live with kf.Variable (as in TF) and are re-exported here.
"""
from __future__ import annotations

import enum
from typing import Any

from kilnflow.variables import VariableAggregation as VariableAggregation
from kilnflow.variables import VariableSynchronization as VariableSynchronization


class ReduceOp(enum.Enum):
    """How values from several replicas are combined: `SUM` or `MEAN`.

    >>> import kilnflow as kf
    >>> kf.distribute.ReduceOp.from_variable_aggregation("mean")
    <ReduceOp.MEAN: 'MEAN'>
    """

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation: Any) -> "ReduceOp":
        aggregation = VariableAggregation.of(aggregation)
        if aggregation is VariableAggregation.SUM:
            return ReduceOp.SUM
        if aggregation is VariableAggregation.MEAN:
            return ReduceOp.MEAN
        raise ValueError(f"Could not convert from `tf.VariableAggregation` {aggregation} to "
                         "`tf.distribute.ReduceOp` type")


def as_reduce_op(value: Any) -> ReduceOp:
    """ReduceOp from a ReduceOp or its name ("sum", "MEAN")."""
    if isinstance(value, ReduceOp):
        return value
    if isinstance(value, str) and value.upper() in ReduceOp.__members__:
        return ReduceOp[value.upper()]
    raise ValueError(f"reduce_op must be tf.distribute.ReduceOp.SUM or MEAN, got {value!r}")
