"""kf.compat.v1.train: Saver, the TF1 optimizers, the global step, checkpoint lookup; the
rest of kf.train (Checkpoint, CheckpointManager, ...) through it too, as in TF."""
from typing import Any

from kilnflow.compat.v1.optimizers import AdamOptimizer as AdamOptimizer
from kilnflow.compat.v1.optimizers import GradientDescentOptimizer as GradientDescentOptimizer
from kilnflow.compat.v1.optimizers import MomentumOptimizer as MomentumOptimizer
from kilnflow.compat.v1.optimizers import Optimizer as Optimizer
from kilnflow.compat.v1.optimizers import create_global_step as create_global_step
from kilnflow.compat.v1.optimizers import get_global_step as get_global_step
from kilnflow.compat.v1.optimizers import get_or_create_global_step as get_or_create_global_step
from kilnflow.compat.v1.saver import Saver as Saver
from kilnflow.distribute.cluster_session import Server as Server
from kilnflow.compat.v1.saver import checkpoint_exists as checkpoint_exists
from kilnflow.saving.checkpoint import latest_checkpoint as latest_checkpoint


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from kilnflow import train
    try:
        return getattr(train, name)
    except AttributeError:
        raise AttributeError(f"module 'kilnflow.compat.v1.train' has no attribute {name!r}") \
            from None
