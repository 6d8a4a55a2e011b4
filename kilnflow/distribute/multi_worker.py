"""MultiWorkerMirroredStrategy: one replica per Ray worker process (the `distributed`
extra). Placeholder until the Ray runner lands."""
from __future__ import annotations

from typing import Any

from kilnflow import errors
from kilnflow.distribute.strategy import Strategy


def require_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise errors.UnimplementedError(
            "MultiWorkerMirroredStrategy runs its workers on Ray: install the `distributed` "
            "extra (pip install 'kilnflow[distributed]')") from None
    return ray


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous data parallelism over worker processes (Ray)."""

    def __init__(self, cluster_resolver: Any = None, communication_options: Any = None):
        require_ray()
        raise errors.UnimplementedError("MultiWorkerMirroredStrategy: not yet")
