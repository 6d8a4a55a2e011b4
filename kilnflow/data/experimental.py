"""kf.data.experimental (tf.data.experimental): re-exports only."""
from kilnflow.data.dataset import INFINITE as INFINITE_CARDINALITY
from kilnflow.data.dataset import UNKNOWN as UNKNOWN_CARDINALITY
from kilnflow.data.options import AUTOTUNE as AUTOTUNE
from kilnflow.data.options import AutoShardPolicy as AutoShardPolicy
from kilnflow.data.options import DistributeOptions as DistributeOptions
from kilnflow.data.options import ExternalStatePolicy as ExternalStatePolicy
from kilnflow.data.options import OptimizationOptions as OptimizationOptions
from kilnflow.data.options import ThreadingOptions as ThreadingOptions
from kilnflow.data.iterator import Optional as Optional
from kilnflow.data.iterator import HostIterator as HostIterator
from kilnflow.data.experimental_ops import cardinality as cardinality
from kilnflow.data.experimental_ops import sample_from_datasets as sample_from_datasets
from kilnflow.data.experimental_ops import choose_from_datasets as choose_from_datasets
from kilnflow.data.functions import enable_debug_mode as enable_debug_mode
from kilnflow.data.experimental_ops import assert_cardinality as assert_cardinality
