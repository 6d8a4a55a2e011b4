"""keras.utils: data helpers (PyDataset, datasets from arrays and directories, padding,
one-hot), the custom-object registry, Progbar and the session/seed utilities."""
from kilnflow.keras.backend import clear_session as clear_session
from kilnflow.keras.backend import set_random_seed as set_random_seed
from kilnflow.keras.progbar import Progbar as Progbar
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
from kilnflow.keras.utils.dataset_utils import PyDataset as PyDataset
from kilnflow.keras.utils.dataset_utils import Sequence as Sequence
from kilnflow.keras.utils.dataset_utils import pack_x_y_sample_weight as pack_x_y_sample_weight
from kilnflow.keras.utils.dataset_utils import split_dataset as split_dataset
from kilnflow.keras.utils.dataset_utils import timeseries_dataset_from_array as \
    timeseries_dataset_from_array
from kilnflow.keras.utils.dataset_utils import unpack_x_y_sample_weight as \
    unpack_x_y_sample_weight
from kilnflow.keras.utils.directory import image_dataset_from_directory as \
    image_dataset_from_directory
from kilnflow.keras.utils.directory import text_dataset_from_directory as \
    text_dataset_from_directory
from kilnflow.keras.utils.misc import Config as Config
from kilnflow.keras.utils.misc import disable_interactive_logging as disable_interactive_logging
from kilnflow.keras.utils.misc import enable_interactive_logging as enable_interactive_logging
from kilnflow.keras.utils.misc import get_file as get_file
from kilnflow.keras.utils.misc import get_source_inputs as get_source_inputs
from kilnflow.keras.utils.misc import is_interactive_logging_enabled as \
    is_interactive_logging_enabled
from kilnflow.keras.utils.misc import is_keras_tensor as is_keras_tensor
from kilnflow.keras.utils.misc import model_to_dot as model_to_dot
from kilnflow.keras.utils.misc import standardize_dtype as standardize_dtype
from kilnflow.keras.utils.sequence_utils import normalize as normalize
from kilnflow.keras.utils.sequence_utils import pad_sequences as pad_sequences
from kilnflow.keras.utils.sequence_utils import to_categorical as to_categorical
