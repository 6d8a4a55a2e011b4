"""The kf.saved_model namespace (tf.saved_model): re-exports only."""
from kilnflow.saving.saved_model import load as load  # noqa: F401
from kilnflow.saving.saved_model import save as save  # noqa: F401
from kilnflow.saving.saved_model import DEFAULT_SERVING_SIGNATURE_DEF_KEY as DEFAULT_SERVING_SIGNATURE_DEF_KEY  # noqa: E501,F401
from kilnflow.saving.saved_model import SaveOptions as SaveOptions  # noqa: F401
from kilnflow.saving.saved_model import contains_saved_model as contains_saved_model  # noqa: F401
