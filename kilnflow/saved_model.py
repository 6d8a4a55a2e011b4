"""The kf.saved_model namespace (tf.saved_model): re-exports only."""
from kilnflow.saving.saved_model import load as load  # noqa: F401
from kilnflow.saving.saved_model import save as save  # noqa: F401
