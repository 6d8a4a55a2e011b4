"""tf.distribute.coordinator (and .experimental.coordinator): scheduling functions on the
workers of a ParameterServerStrategy. Re-exports only."""
from kilnflow.distribute.parameter_server import ClusterCoordinator as ClusterCoordinator
from kilnflow.distribute.parameter_server import RemoteValue as RemoteValue
