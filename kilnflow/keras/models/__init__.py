"""keras.models: Model (with its Functional half) and Sequential."""
from kilnflow.keras.models.model import Model as Model
from kilnflow.keras.models.sequential import Sequential as Sequential
