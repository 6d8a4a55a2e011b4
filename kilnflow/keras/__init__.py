"""kf.keras: layers, models (Sequential, functional, subclassed), losses, metrics,
optimizers, callbacks and training (compile / fit / evaluate / predict), TF-Keras style."""
from kilnflow.keras import activations as activations
from kilnflow.keras import backend as backend
from kilnflow.keras import callbacks as callbacks
from kilnflow.keras import constraints as constraints
from kilnflow.keras import datasets as datasets
from kilnflow.keras import initializers as initializers
from kilnflow.keras import layers as layers
from kilnflow.keras import losses as losses
from kilnflow.keras import metrics as metrics
from kilnflow.keras import models as models
from kilnflow.keras import ops as ops
from kilnflow.keras import optimizers as optimizers
from kilnflow.keras import random as random
from kilnflow.keras import regularizers as regularizers
from kilnflow.keras import saving as saving
from kilnflow.keras import utils as utils
from kilnflow.keras.layers.core import Input as Input
from kilnflow.keras.models import Model as Model
from kilnflow.keras.models import Sequential as Sequential
from kilnflow.keras.variables import Variable as Variable
