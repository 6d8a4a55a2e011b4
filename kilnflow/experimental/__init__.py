"""The kf.experimental namespace (tf.experimental): re-exports only."""
from kilnflow.experimental import dlpack as dlpack
from kilnflow.experimental.optional import Optional as Optional
from kilnflow.experimental.optional import OptionalSpec as OptionalSpec
from kilnflow.experimental.strict_mode import enable_strict_mode as enable_strict_mode
