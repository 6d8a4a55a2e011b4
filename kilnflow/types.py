"""kf.types: TF's namespace of abstract types (its names live in kf.types.experimental)."""
from kilnflow.functional import types as experimental  # noqa: F401
