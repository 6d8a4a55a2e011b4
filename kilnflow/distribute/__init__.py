"""kf.distribute: TF's distribution strategies on CPU replicas (threads of this process)
and, with the `distributed` extra, Ray worker processes. Re-exports only.
"""
from kilnflow.distribute import cluster_resolver as cluster_resolver
from kilnflow.distribute import coordinator as coordinator
from kilnflow.distribute import experimental as experimental
from kilnflow.distribute.cluster_session import Server as Server
from kilnflow.distribute.hooks import compute_average_loss as compute_average_loss
from kilnflow.distribute.input_lib import DistributedDataset as DistributedDataset
from kilnflow.distribute.input_lib import DistributedIterator as DistributedIterator
from kilnflow.distribute.input_lib import InputContext as InputContext
from kilnflow.distribute.input_lib import InputOptions as InputOptions
from kilnflow.distribute.mirrored import MirroredStrategy as MirroredStrategy
from kilnflow.distribute.multi_worker import MultiWorkerMirroredStrategy as \
    MultiWorkerMirroredStrategy
from kilnflow.distribute.parameter_server import ParameterServerStrategy as \
    ParameterServerStrategy
from kilnflow.distribute.reduce_util import ReduceOp as ReduceOp
from kilnflow.distribute.strategy import OneDeviceStrategy as OneDeviceStrategy
from kilnflow.distribute.strategy import ReplicaContext as ReplicaContext
from kilnflow.distribute.strategy import Strategy as Strategy
from kilnflow.distribute.strategy import StrategyExtended as StrategyExtended
from kilnflow.distribute.strategy import experimental_set_strategy as \
    experimental_set_strategy
from kilnflow.distribute.strategy import get_cross_replica_context as \
    get_cross_replica_context
from kilnflow.distribute.strategy import get_replica_context as get_replica_context
from kilnflow.distribute.strategy import get_strategy as get_strategy
from kilnflow.distribute.strategy import has_strategy as has_strategy
from kilnflow.distribute.strategy import in_cross_replica_context as in_cross_replica_context
from kilnflow.distribute.values import DistributedValues as DistributedValues
from kilnflow.distribute.distributed_variables import MirroredVariable as MirroredVariable
from kilnflow.distribute.distributed_variables import SyncOnReadVariable as SyncOnReadVariable
