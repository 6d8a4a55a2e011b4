"""kf.keras.ops: Keras 3's backend-neutral ops (`keras.ops.mean(x, axis, keepdims)`,
`keras.ops.take`, `keras.ops.softmax(x, axis=-1)`...) on kilnflow tensors. Arguments may be
kilnflow tensors, Variables, NumPy arrays or Python values; every op works eagerly, inside
kf.function and in a Keras layer's call(). Names Keras has and kilnflow leaves out are listed,
with the reason, in kilnflow/keras/ops/missing.py.
"""
from kilnflow.keras.ops import (nn_conv, nn_ctc, numpy_array, numpy_index, numpy_linear,
                                numpy_math, numpy_reduce)
from kilnflow.keras.ops import symbolic
from kilnflow.keras.ops import core as core
from kilnflow.keras.ops import einops as einops
from kilnflow.keras.ops import image as image
from kilnflow.keras.ops import linalg as linalg
from kilnflow.keras.ops import math as math
from kilnflow.keras.ops import nn as nn
from kilnflow.keras.ops import numpy as numpy

# ops on KerasTensors become Lambda layers (Keras 3's functional API); wrapped before the
# star imports below so the package namespace gets the wrapped functions
symbolic.wrap_modules([numpy_array, numpy_index, numpy_linear, numpy_math, numpy_reduce,
                       nn_conv, nn_ctc, nn, math, linalg, image, core, einops, numpy])
from kilnflow.keras.ops.core import *  # noqa: F401,F403
from kilnflow.keras.ops.einops import *  # noqa: F401,F403
from kilnflow.keras.ops.linalg import *  # noqa: F401,F403
from kilnflow.keras.ops.math import *  # noqa: F401,F403
from kilnflow.keras.ops.nn import *  # noqa: F401,F403
from kilnflow.keras.ops.numpy import *  # noqa: F401,F403
