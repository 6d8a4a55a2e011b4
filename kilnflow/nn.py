"""The kf.nn namespace (tf.nn): re-exports only."""
from kilnflow.ops.math import sigmoid as sigmoid
from kilnflow.ops.math import tanh as tanh
from kilnflow.ops.conv import avg_pool as avg_pool
from kilnflow.ops.conv import avg_pool2d as avg_pool2d
from kilnflow.ops.conv import conv2d as conv2d
from kilnflow.ops.conv import max_pool as max_pool
from kilnflow.ops.conv import max_pool2d as max_pool2d
from kilnflow.ops.nn import bias_add as bias_add
from kilnflow.ops.nn import dropout as dropout
from kilnflow.ops.nn import elu as elu
from kilnflow.ops.nn import gelu as gelu
from kilnflow.ops.nn import l2_loss as l2_loss
from kilnflow.ops.nn import l2_normalize as l2_normalize
from kilnflow.ops.nn import leaky_relu as leaky_relu
from kilnflow.ops.nn import log_softmax as log_softmax
from kilnflow.ops.nn import moments as moments
from kilnflow.ops.nn import relu as relu
from kilnflow.ops.nn import relu6 as relu6
from kilnflow.ops.nn import selu as selu
from kilnflow.ops.nn import sigmoid_cross_entropy_with_logits as \
    sigmoid_cross_entropy_with_logits
from kilnflow.ops.nn import silu as silu
from kilnflow.ops.nn import softmax as softmax
from kilnflow.ops.nn import softmax_cross_entropy_with_logits as \
    softmax_cross_entropy_with_logits
from kilnflow.ops.nn import softplus as softplus
from kilnflow.ops.nn import sparse_softmax_cross_entropy_with_logits as \
    sparse_softmax_cross_entropy_with_logits
from kilnflow.ops.nn import swish as swish
from kilnflow.ops.sorting import top_k as top_k  # noqa: F401,E402
from kilnflow.ops.math_extra import in_top_k as in_top_k
from kilnflow.ops.elementwise import softsign as softsign
from kilnflow.ops.math_extra import zero_fraction as zero_fraction
from kilnflow.ops.math_extra import approx_max_k as approx_max_k
from kilnflow.ops.math_extra import approx_min_k as approx_min_k
