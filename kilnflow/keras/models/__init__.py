"""keras.models: Model (with its Functional half) and Sequential, and loading saved
models."""
from kilnflow.keras.models.cloning import clone_model as clone_model
from kilnflow.keras.models.cloning import model_from_json as model_from_json
from kilnflow.keras.models.model import Model as Model
from kilnflow.keras.models.sequential import Sequential as Sequential
from kilnflow.keras.saving.archive import load_model as load_model
from kilnflow.keras.saving.archive import save_model as save_model
