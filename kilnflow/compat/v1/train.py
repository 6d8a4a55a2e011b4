"""kf.compat.v1.train: Saver, the TF1 optimizers, the global step, checkpoint lookup."""
from kilnflow.compat.v1.optimizers import AdamOptimizer as AdamOptimizer
from kilnflow.compat.v1.optimizers import GradientDescentOptimizer as GradientDescentOptimizer
from kilnflow.compat.v1.optimizers import MomentumOptimizer as MomentumOptimizer
from kilnflow.compat.v1.optimizers import Optimizer as Optimizer
from kilnflow.compat.v1.optimizers import create_global_step as create_global_step
from kilnflow.compat.v1.optimizers import get_global_step as get_global_step
from kilnflow.compat.v1.optimizers import get_or_create_global_step as get_or_create_global_step
from kilnflow.compat.v1.saver import Saver as Saver
from kilnflow.compat.v1.saver import checkpoint_exists as checkpoint_exists
from kilnflow.saving.checkpoint import latest_checkpoint as latest_checkpoint
