"""keras.saving: whole-model `.keras` files, the registry of custom objects, and Keras 3
object (de)serialization."""
from kilnflow.keras.saving.archive import load_model as load_model
from kilnflow.keras.saving.archive import save_model as save_model
from kilnflow.keras.saving.serialization import CustomObjectScope as CustomObjectScope
from kilnflow.keras.saving.serialization import custom_object_scope as custom_object_scope
from kilnflow.keras.saving.serialization import deserialize_keras_object as \
    deserialize_keras_object
from kilnflow.keras.saving.serialization import get_custom_objects as get_custom_objects
from kilnflow.keras.saving.serialization import get_registered_name as get_registered_name
from kilnflow.keras.saving.serialization import get_registered_object as get_registered_object
from kilnflow.keras.saving.serialization import register_keras_serializable as \
    register_keras_serializable
from kilnflow.keras.saving.serialization import serialize_keras_object as \
    serialize_keras_object
