"""kilnflow: TensorFlow 2's programming model on NumPy. `import kilnflow as tf` reads naturally.

This module only re-exports public names; nothing is defined here.
"""
from kilnflow import dtypes as dtypes
from kilnflow import version as version
from kilnflow.ops.checks import assert_equal as assert_equal
from kilnflow.ops.checks import assert_greater as assert_greater
from kilnflow.ops.checks import assert_less as assert_less
from kilnflow.ops.checks import assert_rank as assert_rank
from kilnflow.ops.linalg import norm as norm
from kilnflow.ops.reduction import histogram_fixed_width as histogram_fixed_width
from kilnflow.ops.sorting import searchsorted as searchsorted
from kilnflow.ops.scatter import gather_nd as gather_nd
from kilnflow.ops.scatter import scatter_nd as scatter_nd
from kilnflow.ops.scatter import tensor_scatter_nd_add as tensor_scatter_nd_add
from kilnflow.ops.scatter import tensor_scatter_nd_max as tensor_scatter_nd_max
from kilnflow.ops.scatter import tensor_scatter_nd_min as tensor_scatter_nd_min
from kilnflow.ops.scatter import tensor_scatter_nd_sub as tensor_scatter_nd_sub
from kilnflow.ops.scatter import tensor_scatter_nd_update as tensor_scatter_nd_update
from kilnflow.ops.reduction import clip_by_global_norm as clip_by_global_norm
from kilnflow.ops.reduction import clip_by_norm as clip_by_norm
from kilnflow.ops.reduction import reduce_logsumexp as reduce_logsumexp
from kilnflow.version import VERSION as __version__
from kilnflow import errors as errors
from kilnflow import nest as nest
from kilnflow.autodiff.custom_gradient import custom_gradient as custom_gradient
from kilnflow.autodiff.tape import GradientTape as GradientTape
from kilnflow.autodiff.tape import UnconnectedGradients as UnconnectedGradients
from kilnflow.context import executing_eagerly as executing_eagerly
from kilnflow.dtypes import DType as DType
from kilnflow.dtypes import as_dtype as as_dtype
from kilnflow.dtypes import bool as bool  # noqa: A004
from kilnflow.dtypes import complex64 as complex64
from kilnflow.dtypes import complex128 as complex128
from kilnflow.dtypes import double as double
from kilnflow.dtypes import float16 as float16
from kilnflow.dtypes import bfloat16 as bfloat16  # usable with the extra kilnflow[bf16]
from kilnflow.dtypes import float32 as float32
from kilnflow.dtypes import float64 as float64
from kilnflow.dtypes import half as half
from kilnflow.dtypes import int8 as int8
from kilnflow.dtypes import int16 as int16
from kilnflow.dtypes import int32 as int32
from kilnflow.dtypes import int64 as int64
from kilnflow.dtypes import string as string
from kilnflow.dtypes import uint8 as uint8
from kilnflow.dtypes import uint16 as uint16
from kilnflow.dtypes import uint32 as uint32
from kilnflow.dtypes import uint64 as uint64
from kilnflow import bitwise as bitwise
from kilnflow.ops.sorting import argsort as argsort
from kilnflow.ops.slicing import boolean_mask as boolean_mask
from kilnflow.ops.array import eye as eye
from kilnflow.ops.array import linspace as linspace
from kilnflow.ops.slicing import meshgrid as meshgrid
from kilnflow.ops.args import newaxis as newaxis
from kilnflow.ops.array import one_hot as one_hot
from kilnflow.ops.reshaping import pad as pad
from kilnflow.ops.reshaping import reverse as reverse
from kilnflow.ops.slicing import slice as slice  # noqa: A004
from kilnflow.ops.sorting import sort as sort
from kilnflow.ops.reshaping import squeeze as squeeze
from kilnflow.ops.reshaping import tile as tile
from kilnflow.ops.reshaping import broadcast_to as broadcast_to
from kilnflow.ops.joining import concat as concat
from kilnflow.ops.reshaping import expand_dims as expand_dims
from kilnflow.ops.array import fill as fill
from kilnflow.ops.slicing import gather as gather
from kilnflow.ops.array import identity as identity
from kilnflow.ops.array import ones as ones
from kilnflow.ops.array import ones_like as ones_like
from kilnflow.ops.array import range as range  # noqa: A004
from kilnflow.ops.array import rank as rank
from kilnflow.ops.reshaping import reshape as reshape
from kilnflow.ops.array import shape as shape
from kilnflow.ops.array import size as size
from kilnflow.ops.joining import split as split
from kilnflow.ops.joining import stack as stack
from kilnflow.ops.array import stop_gradient as stop_gradient
from kilnflow.ops.reshaping import transpose as transpose
from kilnflow.ops.joining import unstack as unstack
from kilnflow.ops.array import where as where
from kilnflow.ops.array import zeros as zeros
from kilnflow.ops.array import zeros_like as zeros_like
from kilnflow.ops.logging import Assert as Assert
from kilnflow.ops.tensor_array import TensorArray as TensorArray
from kilnflow.ops.cond import case as case
from kilnflow.ops.cond import cond as cond
from kilnflow.ops.cond import switch_case as switch_case
from kilnflow.ops.while_loop import while_loop as while_loop
from kilnflow.ops.convert import constant as constant
from kilnflow.ops.logging import print_ as print  # noqa: A004
from kilnflow.ops.convert import convert_to_tensor as convert_to_tensor
from kilnflow.ops.math import abs as abs  # noqa: A004
from kilnflow.ops.math import add as add
from kilnflow.ops.math import add_n as add_n
from kilnflow.ops.reduction import argmax as argmax
from kilnflow.ops.reduction import argmin as argmin
from kilnflow.ops.math import cast as cast
from kilnflow.ops.math import ceil as ceil
from kilnflow.ops.math import clip_by_value as clip_by_value
from kilnflow.ops.math import cos as cos
from kilnflow.ops.reduction import cumsum as cumsum
from kilnflow.ops.math import divide as divide
from kilnflow.ops.linalg import einsum as einsum
from kilnflow.ops.math import equal as equal
from kilnflow.ops.math import erf as erf
from kilnflow.ops.math import exp as exp
from kilnflow.ops.math import expm1 as expm1
from kilnflow.ops.math import floor as floor
from kilnflow.ops.math import floordiv as floordiv
from kilnflow.ops.math import floormod as floormod
from kilnflow.ops.math import greater as greater
from kilnflow.ops.math import greater_equal as greater_equal
from kilnflow.ops.math import less as less
from kilnflow.ops.math import less_equal as less_equal
from kilnflow.ops.math import log as log
from kilnflow.ops.math import log1p as log1p
from kilnflow.ops.math import logical_and as logical_and
from kilnflow.ops.math import logical_not as logical_not
from kilnflow.ops.math import logical_or as logical_or
from kilnflow.ops.math import logical_xor as logical_xor
from kilnflow.ops.linalg import matmul as matmul
from kilnflow.ops.math import maximum as maximum
from kilnflow.ops.math import minimum as minimum
from kilnflow.ops.math import multiply as multiply
from kilnflow.ops.math import negative as negative
from kilnflow.ops.math import not_equal as not_equal
from kilnflow.ops.math import pow as pow  # noqa: A004
from kilnflow.ops.math import reciprocal as reciprocal
from kilnflow.ops.reduction import reduce_all as reduce_all
from kilnflow.ops.reduction import reduce_any as reduce_any
from kilnflow.ops.reduction import reduce_max as reduce_max
from kilnflow.ops.reduction import reduce_mean as reduce_mean
from kilnflow.ops.reduction import reduce_min as reduce_min
from kilnflow.ops.reduction import reduce_prod as reduce_prod
from kilnflow.ops.reduction import reduce_sum as reduce_sum
from kilnflow.ops.math import round as round  # noqa: A004
from kilnflow.ops.math import rsqrt as rsqrt
from kilnflow.ops.math import sigmoid as sigmoid
from kilnflow.ops.math import sign as sign
from kilnflow.ops.math import sin as sin
from kilnflow.ops.math import sqrt as sqrt
from kilnflow.ops.math import square as square
from kilnflow.ops.math import squared_difference as squared_difference
from kilnflow.ops.math import subtract as subtract
from kilnflow.ops.math import tanh as tanh
from kilnflow.ops.linalg import tensordot as tensordot
from kilnflow.ops.math import truediv as truediv
from kilnflow.ops.elementwise import acos as acos
from kilnflow.ops.elementwise import acosh as acosh
from kilnflow.ops.elementwise import asin as asin
from kilnflow.ops.elementwise import asinh as asinh
from kilnflow.ops.elementwise import atan as atan
from kilnflow.ops.elementwise import atan2 as atan2
from kilnflow.ops.elementwise import atanh as atanh
from kilnflow.ops.elementwise import cosh as cosh
from kilnflow.ops.elementwise import sinh as sinh
from kilnflow.ops.elementwise import tan as tan
from kilnflow.ops.math_extra import scalar_mul as scalar_mul
from kilnflow.ops.complex import complex as complex  # noqa: A004
from kilnflow.ops.elementwise import realdiv as realdiv
from kilnflow.ops.elementwise import truncatediv as truncatediv
from kilnflow.ops.elementwise import truncatemod as truncatemod
from kilnflow.ops.math_extra import saturate_cast as saturate_cast
from kilnflow.ops.nn_windows import batch_to_space as batch_to_space
from kilnflow.ops.nn_windows import space_to_batch as space_to_batch
from kilnflow.ops.nn_windows import space_to_batch as space_to_batch_nd
from kilnflow.ops.stateless_random import index_shuffle as random_index_shuffle
from kilnflow.shapes import TensorShape as TensorShape
from kilnflow.shapes import TensorSpec as TensorSpec
from kilnflow.tensor import Tensor as Tensor
from kilnflow.tensor import is_tensor_like as is_tensor
from kilnflow.variables import Variable as Variable
from kilnflow.variables import variable_creator_scope as variable_creator_scope

from kilnflow.function.api import function as function
from kilnflow.function.api import Function as Function
from kilnflow.function.concrete import ConcreteFunction as ConcreteFunction
from kilnflow.graph import Graph as Graph
from kilnflow.graph import control_dependencies as control_dependencies
from kilnflow.graph import device as device
from kilnflow.graph import name_scope as name_scope
from kilnflow.graph import Operation as Operation

from kilnflow import linalg as linalg  # noqa: E402 - the tf.linalg namespace
from kilnflow import signal as signal  # noqa: E402 - the tf.signal namespace
from kilnflow import image as image  # noqa: E402 - the tf.image namespace
from kilnflow import math as math  # noqa: E402 - the tf.math namespace
from kilnflow import config as config  # noqa: E402
from kilnflow import compat as compat  # noqa: E402
from kilnflow import debugging as debugging  # noqa: E402
from kilnflow import autograph as autograph  # noqa: E402
from kilnflow import keras as keras  # noqa: E402
from kilnflow import saved_model as saved_model  # noqa: E402
from kilnflow.saving import onnx_export as onnx  # noqa: E402  (kf.onnx.export; extra [onnx])
from kilnflow import train as train  # noqa: E402
from kilnflow.keras import initializers as initializers  # noqa: E402
from kilnflow.keras import losses as losses  # noqa: E402
from kilnflow.keras import metrics as metrics  # noqa: E402
from kilnflow.keras import optimizers as optimizers  # noqa: E402
from kilnflow.module import Module as Module  # noqa: E402
from kilnflow import nn as nn  # noqa: E402 - the tf.nn namespace
from kilnflow import random as random  # noqa: E402 - the tf.random namespace
from kilnflow import strings as strings  # noqa: E402 - the tf.strings namespace
from kilnflow.ops.strings import as_string as as_string  # noqa: E402
from kilnflow import data as data  # noqa: E402 - the tf.data namespace
from kilnflow import summary as summary
from kilnflow import profiler as profiler
from kilnflow.debugging import get_logger as get_logger
from kilnflow import distribute as distribute  # noqa: E402 - the tf.distribute namespace
from kilnflow.distribute.reduce_util import VariableAggregation as VariableAggregation
from kilnflow.distribute.reduce_util import VariableSynchronization as \
    VariableSynchronization
from kilnflow.autodiff.py_function import numpy_function as numpy_function  # noqa: E402
from kilnflow.autodiff.py_function import py_function as py_function  # noqa: E402
from kilnflow.functional.higher_order import foldl as foldl  # noqa: E402
from kilnflow.functional.higher_order import foldr as foldr  # noqa: E402
from kilnflow.functional.higher_order import map_fn as map_fn  # noqa: E402
from kilnflow.functional.higher_order import scan as scan  # noqa: E402
from kilnflow.ops.graph_utils import ensure_shape as ensure_shape  # noqa: E402
from kilnflow.ops.graph_utils import get_current_name_scope as get_current_name_scope  # noqa
from kilnflow.ops.graph_utils import get_static_value as get_static_value  # noqa: E402
from kilnflow.ops.graph_utils import group as group  # noqa: E402
from kilnflow.ops.graph_utils import identity_n as identity_n  # noqa: E402
from kilnflow.ops.graph_utils import init_scope as init_scope  # noqa: E402
from kilnflow.ops.graph_utils import inside_function as inside_function  # noqa: E402
from kilnflow.ops.graph_utils import is_symbolic_tensor as is_symbolic_tensor  # noqa: E402
from kilnflow.ops.graph_utils import no_op as no_op  # noqa: E402
from kilnflow.ops.graph_utils import tuple as tuple  # noqa: E402,A004
from kilnflow.functional.higher_order import vectorized_map as vectorized_map  # noqa: E402
from kilnflow.functional.gradients import AggregationMethod as AggregationMethod  # noqa: E402
from kilnflow.functional.gradients import RegisterGradient as RegisterGradient  # noqa: E402
from kilnflow.functional.gradients import grad_pass_through as grad_pass_through  # noqa: E402
from kilnflow.functional.gradients import gradients as gradients  # noqa: E402
from kilnflow.functional.gradients import hessians as hessians  # noqa: E402
from kilnflow.functional.gradients import no_gradient as no_gradient  # noqa: E402
from kilnflow.functional.gradients import recompute_grad as recompute_grad  # noqa: E402
from kilnflow import types as types  # noqa: E402
from kilnflow.functional.initializers import Constant as constant_initializer  # noqa: E402
from kilnflow.functional.initializers import Ones as ones_initializer  # noqa: E402
from kilnflow.functional.initializers import RandomNormal as random_normal_initializer  # noqa
from kilnflow.functional.initializers import RandomUniform as random_uniform_initializer  # noqa
from kilnflow.functional.initializers import Zeros as zeros_initializer  # noqa: E402
from kilnflow.ops.critical_section import CriticalSection as CriticalSection  # noqa: E402
# issue 12: the remaining top-level array, conv and matrix names
from kilnflow.ops.array_extra import dynamic_partition as dynamic_partition  # noqa: E402
from kilnflow.ops.array_extra import dynamic_stitch as dynamic_stitch  # noqa: E402
from kilnflow.ops.array_extra import repeat as repeat  # noqa: E402
from kilnflow.ops.array_extra import reverse_sequence as reverse_sequence  # noqa: E402
from kilnflow.ops.array_extra import roll as roll  # noqa: E402
from kilnflow.ops.array_extra import unique as unique  # noqa: E402
from kilnflow.ops.array_extra import unique_with_counts as unique_with_counts  # noqa: E402
from kilnflow.ops.shape_extra import approx_top_k as approx_top_k  # noqa: E402
from kilnflow.ops.shape_extra import bitcast as bitcast  # noqa: E402
from kilnflow.ops.shape_extra import broadcast_dynamic_shape as \
    broadcast_dynamic_shape  # noqa: E402
from kilnflow.ops.shape_extra import broadcast_static_shape as \
    broadcast_static_shape  # noqa: E402
from kilnflow.ops.shape_extra import histogram_fixed_width_bins as \
    histogram_fixed_width_bins  # noqa: E402
from kilnflow.ops.shape_extra import parallel_stack as parallel_stack  # noqa: E402
from kilnflow.ops.shape_extra import required_space_to_batch_paddings as \
    required_space_to_batch_paddings  # noqa: E402
from kilnflow.ops.shape_extra import sequence_mask as sequence_mask  # noqa: E402
from kilnflow.ops.shape_extra import shape_n as shape_n  # noqa: E402
from kilnflow.ops.shape_extra import strided_slice as strided_slice  # noqa: E402
from kilnflow.ops.shape_extra import timestamp as timestamp  # noqa: E402
from kilnflow.ops.shape_extra import unravel_index as unravel_index  # noqa: E402
from kilnflow.ops.conv_extra import conv as conv  # noqa: E402
from kilnflow.ops.conv_extra import conv2d_backprop_filter_v2 as \
    conv2d_backprop_filter_v2  # noqa: E402
from kilnflow.ops.conv_extra import conv2d_backprop_input_v2 as \
    conv2d_backprop_input_v2  # noqa: E402
from kilnflow.ops.conv_extra import extract_volume_patches as \
    extract_volume_patches  # noqa: E402
from kilnflow.ops.decompositions import eig as eig  # noqa: E402
from kilnflow.ops.decompositions import eigvals as eigvals  # noqa: E402
from kilnflow.ops.matrix_functions import sqrtm as matrix_square_root  # noqa: E402
from kilnflow.type_spec import TypeSpec as TypeSpec
from kilnflow.type_spec import type_spec_from_value as type_spec_from_value
from kilnflow import sparse as sparse
from kilnflow.sparse.sparse_tensor import SparseTensor as SparseTensor
from kilnflow.sparse.sparse_tensor import SparseTensorSpec as SparseTensorSpec
from kilnflow.sparse.indexed_slices import IndexedSlices as IndexedSlices
from kilnflow.sparse.indexed_slices import IndexedSlicesSpec as IndexedSlicesSpec
from kilnflow import ragged as ragged
from kilnflow.ragged.ragged_tensor import RaggedTensor as RaggedTensor
from kilnflow.ragged.ragged_tensor import RaggedTensorSpec as RaggedTensorSpec
from kilnflow.ragged.ops import ragged_fill_empty_rows as ragged_fill_empty_rows
from kilnflow import experimental as experimental  # noqa: E402 - the tf.experimental namespace
from kilnflow.ops.edit_distance import edit_distance as edit_distance  # noqa: E402
from kilnflow.ops.string_hash import fingerprint as fingerprint  # noqa: E402
from kilnflow.ops.signal_nd import fftnd as fftnd  # noqa: E402
from kilnflow.ops.signal_nd import ifftnd as ifftnd  # noqa: E402
from kilnflow.ops.signal_nd import irfftnd as irfftnd  # noqa: E402
from kilnflow.ops.signal_nd import rfftnd as rfftnd  # noqa: E402
from kilnflow.experimental.optional import OptionalSpec as OptionalSpec  # noqa: E402
from kilnflow.framework.device_spec import DeviceSpec as DeviceSpec  # noqa: E402
from kilnflow.ops.ragged_grad import ragged_fill_empty_rows_grad as ragged_fill_empty_rows_grad  # noqa
