"""The kf.nn namespace (tf.nn): re-exports only."""
from types import SimpleNamespace as _Namespace

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
from kilnflow.ops.nn_extra import batch_normalization as batch_normalization
from kilnflow.ops.nn_extra import batch_norm_with_global_normalization as \
    batch_norm_with_global_normalization
from kilnflow.ops.nn_extra import sufficient_statistics as sufficient_statistics
from kilnflow.ops.nn_extra import normalize_moments as normalize_moments
from kilnflow.ops.nn_extra import weighted_moments as weighted_moments
from kilnflow.ops.nn_extra import local_response_normalization as local_response_normalization
from kilnflow.ops.nn_extra import lrn as lrn
from kilnflow.ops.nn_extra import crelu as crelu
from kilnflow.ops.nn_extra import weighted_cross_entropy_with_logits as \
    weighted_cross_entropy_with_logits
from kilnflow.ops.nn_extra import log_poisson_loss as log_poisson_loss
from kilnflow.ops.nn_extra import compute_average_loss as compute_average_loss
from kilnflow.ops.nn_extra import scale_regularization_loss as scale_regularization_loss
from kilnflow.ops.nn_extra import embedding_lookup as embedding_lookup
from kilnflow.sparse.embedding import embedding_lookup_sparse as embedding_lookup_sparse
from kilnflow.sparse.embedding import safe_embedding_lookup_sparse as \
    safe_embedding_lookup_sparse
from kilnflow.ops.nn_extra import space_to_depth as space_to_depth
from kilnflow.ops.nn_extra import depth_to_space as depth_to_space
from kilnflow.ops.nn_extra import conv1d as conv1d
from kilnflow.ops.nn_extra import conv2d_transpose as conv2d_transpose
from kilnflow.ops.nn_extra import conv1d_transpose as conv1d_transpose
from kilnflow.ops.nn_extra import atrous_conv2d as atrous_conv2d
from kilnflow.ops.nn_extra import atrous_conv2d_transpose as atrous_conv2d_transpose
from kilnflow.ops.nn_extra import depthwise_conv2d as depthwise_conv2d
from kilnflow.ops.nn_extra import separable_conv2d as separable_conv2d
from kilnflow.ops.nn_extra import max_pool1d as max_pool1d
from kilnflow.ops.nn_extra import avg_pool1d as avg_pool1d
from kilnflow.ops.nn_extra import convolution as convolution
from kilnflow.ops.nn_extra import conv_transpose as conv_transpose
from kilnflow.ops.nn_extra import pool as pool
from kilnflow.ops.candidate_sampling import uniform_candidate_sampler as uniform_candidate_sampler
from kilnflow.ops.candidate_sampling import log_uniform_candidate_sampler as \
    log_uniform_candidate_sampler
from kilnflow.ops.candidate_sampling import learned_unigram_candidate_sampler as \
    learned_unigram_candidate_sampler
from kilnflow.ops.candidate_sampling import fixed_unigram_candidate_sampler as \
    fixed_unigram_candidate_sampler
from kilnflow.ops.candidate_sampling import all_candidate_sampler as all_candidate_sampler
from kilnflow.ops.candidate_sampling import compute_accidental_hits as compute_accidental_hits
from kilnflow.ops.candidate_sampling import nce_loss as nce_loss
from kilnflow.ops.candidate_sampling import sampled_softmax_loss as sampled_softmax_loss
from kilnflow.ops.nn_windows import max_pool_with_argmax as max_pool_with_argmax
from kilnflow.ops.nn_windows import dilation2d as dilation2d
from kilnflow.ops.nn_windows import erosion2d as erosion2d
from kilnflow.ops.nn_windows import conv3d as conv3d
from kilnflow.ops.conv3d_transpose import conv3d_transpose as conv3d_transpose
from kilnflow.ops.nn_windows import depthwise_conv2d_backprop_input as \
    depthwise_conv2d_backprop_input
from kilnflow.ops.nn_windows import depthwise_conv2d_backprop_filter as \
    depthwise_conv2d_backprop_filter
from kilnflow.ops.nn_windows import space_to_batch as space_to_batch
from kilnflow.ops.nn_windows import collapse_repeated as collapse_repeated
from kilnflow.ops.nn_windows import max_pool3d as max_pool3d
from kilnflow.ops.nn_windows import avg_pool3d as avg_pool3d
from kilnflow.ops.nn_windows import general_dropout as _general_dropout
from kilnflow.ops.nn_windows import stateless_dropout as _stateless_dropout

# tf.nn.experimental
experimental = _Namespace(general_dropout=_general_dropout, stateless_dropout=_stateless_dropout)
