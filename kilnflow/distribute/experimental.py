"""tf.distribute.experimental: communication options of the multi-worker strategy.

Collectives here always go through Ray's object store (see ray_worker.py), so the chosen
implementation is recorded, not acted on; `timeout_seconds` bounds a step.
"""
from __future__ import annotations

import enum
from typing import Optional

from kilnflow.distribute import coordinator as coordinator
from kilnflow.distribute.multi_worker import MultiWorkerMirroredStrategy as \
    MultiWorkerMirroredStrategy
from kilnflow.distribute.parameter_server import ParameterServerStrategy as \
    ParameterServerStrategy


class CommunicationImplementation(enum.Enum):
    """Which collective implementation to use (TF's names)."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


CollectiveCommunication = CommunicationImplementation


class CommunicationOptions:
    """Options for collective communication (TF's
    tf.distribute.experimental.CommunicationOptions).

    >>> import kilnflow as kf
    >>> kf.distribute.experimental.CommunicationOptions(timeout_seconds=30).timeout_seconds
    30
    """

    def __init__(self, bytes_per_pack: int = 0, timeout_seconds: Optional[float] = None,
                 implementation: CommunicationImplementation =
                 CommunicationImplementation.AUTO):
        if bytes_per_pack < 0:
            raise ValueError(f"bytes_per_pack must be non-negative, got {bytes_per_pack}")
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation
