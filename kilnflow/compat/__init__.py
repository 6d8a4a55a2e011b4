"""kf.compat: the TF1 API surface (kf.compat.v1)."""
from kilnflow.compat import v1 as v1
