"""The enums of tf.distribute: ReduceOp, VariableSynchronization, VariableAggregation.

Values and names copy TF's, so `kf.distribute.ReduceOp.SUM` reads like TF code.
Imports nothing from kilnflow.
"""
from __future__ import annotations

import enum
from typing import Any


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


class VariableSynchronization(enum.Enum):
    """When the copies of a distributed variable are brought in sync (TF's values)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3

    @staticmethod
    def of(value: Any) -> "VariableSynchronization":
        if value is None:
            return VariableSynchronization.AUTO
        if isinstance(value, VariableSynchronization):
            return value
        if isinstance(value, str) and value.upper() in VariableSynchronization.__members__:
            return VariableSynchronization[value.upper()]
        raise ValueError(f"Invalid variable synchronization mode: {value!r}")


class VariableAggregation(enum.Enum):
    """How the per-replica updates (or reads) of a distributed variable are combined."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3

    @staticmethod
    def of(value: Any) -> "VariableAggregation":
        if value is None:
            return VariableAggregation.NONE
        if isinstance(value, VariableAggregation):
            return value
        if isinstance(value, ReduceOp):
            return VariableAggregation[value.value]
        if isinstance(value, str) and value.upper() in VariableAggregation.__members__:
            return VariableAggregation[value.upper()]
        raise ValueError(f"Invalid variable aggregation mode: {value!r}")
