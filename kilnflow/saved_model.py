"""The kf.saved_model namespace (tf.saved_model): re-exports only."""
from kilnflow.saving.saved_model import load as load  # noqa: F401
from kilnflow.saving.saved_model import save as save  # noqa: F401
from kilnflow.saving.saved_model import DEFAULT_SERVING_SIGNATURE_DEF_KEY as DEFAULT_SERVING_SIGNATURE_DEF_KEY  # noqa: E501,F401
from kilnflow.saving.saved_model import SaveOptions as SaveOptions  # noqa: F401
from kilnflow.saving.saved_model import LoadOptions as LoadOptions  # noqa: F401
from kilnflow.saving.saved_model import contains_saved_model as contains_saved_model  # noqa: F401


# Tags and signature-method names TF programs pass around (values as TF 2.21 has them). The
# names of TF's protobuf files (SAVED_MODEL_FILENAME_PB, VARIABLES_FILENAME, ...) are left
# out: kilnflow's saved models are saved_model.json + variables.safetensors.
SERVING = "serve"
TRAINING = "train"
GPU = "gpu"
TPU = "tpu"
ASSETS_KEY = "saved_model_assets"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_INPUTS = "inputs"
PREDICT_OUTPUTS = "outputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_INPUTS = "inputs"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_INPUTS = "inputs"
REGRESS_OUTPUTS = "outputs"
SAVED_MODEL_SCHEMA_VERSION = 1
