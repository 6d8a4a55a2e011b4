"""The kf.math namespace (tf.math): re-exports only, an explicit list of TF's names."""
from kilnflow.ops.math import abs as abs  # noqa: A004
from kilnflow.ops.math import add as add
from kilnflow.ops.math import add_n as add_n
from kilnflow.ops.reduction import argmax as argmax
from kilnflow.ops.reduction import argmin as argmin
from kilnflow.ops.math import ceil as ceil
from kilnflow.ops.math import cos as cos
from kilnflow.ops.reduction import cumsum as cumsum
from kilnflow.ops.math import divide as divide
from kilnflow.ops.math import equal as equal
from kilnflow.ops.math import erf as erf
from kilnflow.ops.math import exp as exp
from kilnflow.ops.math import expm1 as expm1
from kilnflow.ops.math import floor as floor
from kilnflow.ops.math import floordiv as floordiv
from kilnflow.ops.math import floormod as floormod
from kilnflow.ops.math import greater as greater
from kilnflow.ops.math import greater_equal as greater_equal
from kilnflow.ops.math import is_finite as is_finite
from kilnflow.ops.math import is_inf as is_inf
from kilnflow.ops.math import is_nan as is_nan
from kilnflow.ops.math import less as less
from kilnflow.ops.math import less_equal as less_equal
from kilnflow.ops.math import log as log
from kilnflow.ops.math import log1p as log1p
from kilnflow.ops.math import logical_and as logical_and
from kilnflow.ops.math import logical_not as logical_not
from kilnflow.ops.math import logical_or as logical_or
from kilnflow.ops.math import logical_xor as logical_xor
from kilnflow.ops.math import maximum as maximum
from kilnflow.ops.math import minimum as minimum
from kilnflow.ops.math import multiply as multiply
from kilnflow.ops.math import negative as negative
from kilnflow.ops.math import not_equal as not_equal
from kilnflow.ops.math import pow as pow  # noqa: A004
from kilnflow.ops.math import reciprocal as reciprocal
from kilnflow.ops.reduction import reduce_all as reduce_all
from kilnflow.ops.reduction import reduce_any as reduce_any
from kilnflow.ops.reduction import reduce_logsumexp as reduce_logsumexp
from kilnflow.ops.reduction import reduce_max as reduce_max
from kilnflow.ops.reduction import reduce_mean as reduce_mean
from kilnflow.ops.reduction import reduce_min as reduce_min
from kilnflow.ops.reduction import reduce_prod as reduce_prod
from kilnflow.ops.reduction import reduce_sum as reduce_sum
from kilnflow.ops.math import round as round  # noqa: A004
from kilnflow.ops.math import rsqrt as rsqrt
from kilnflow.ops.segment import segment_max as segment_max
from kilnflow.ops.segment import segment_mean as segment_mean
from kilnflow.ops.segment import segment_min as segment_min
from kilnflow.ops.segment import segment_prod as segment_prod
from kilnflow.ops.segment import segment_sum as segment_sum
from kilnflow.ops.math import sigmoid as sigmoid
from kilnflow.ops.math import sign as sign
from kilnflow.ops.math import sin as sin
from kilnflow.ops.math import sqrt as sqrt
from kilnflow.ops.math import square as square
from kilnflow.ops.math import squared_difference as squared_difference
from kilnflow.ops.math import subtract as subtract
from kilnflow.ops.math import tanh as tanh
from kilnflow.ops.sorting import top_k as top_k
from kilnflow.ops.math import truediv as truediv
from kilnflow.ops.segment import unsorted_segment_max as unsorted_segment_max
from kilnflow.ops.segment import unsorted_segment_mean as unsorted_segment_mean
from kilnflow.ops.segment import unsorted_segment_min as unsorted_segment_min
from kilnflow.ops.segment import unsorted_segment_prod as unsorted_segment_prod
from kilnflow.ops.segment import unsorted_segment_sum as unsorted_segment_sum
from kilnflow.ops.elementwise import acos as acos
from kilnflow.ops.elementwise import acosh as acosh
from kilnflow.ops.elementwise import asin as asin
from kilnflow.ops.elementwise import asinh as asinh
from kilnflow.ops.elementwise import atan as atan
from kilnflow.ops.elementwise import atan2 as atan2
from kilnflow.ops.elementwise import atanh as atanh
from kilnflow.ops.elementwise import cosh as cosh
from kilnflow.ops.elementwise import divide_no_nan as divide_no_nan
from kilnflow.ops.elementwise import erfc as erfc
from kilnflow.ops.elementwise import multiply_no_nan as multiply_no_nan
from kilnflow.ops.elementwise import nextafter as nextafter
from kilnflow.ops.elementwise import reciprocal_no_nan as reciprocal_no_nan
from kilnflow.ops.elementwise import rint as rint
from kilnflow.ops.elementwise import sinh as sinh
from kilnflow.ops.elementwise import softsign as softsign
from kilnflow.ops.elementwise import tan as tan
from kilnflow.ops.elementwise import xdivy as xdivy
from kilnflow.ops.elementwise import xlog1py as xlog1py
from kilnflow.ops.elementwise import xlogy as xlogy
from kilnflow.ops.math import floormod as mod
from kilnflow.ops.math_extra import accumulate_n as accumulate_n
from kilnflow.ops.math_extra import approx_max_k as approx_max_k
from kilnflow.ops.math_extra import approx_min_k as approx_min_k
from kilnflow.ops.math_extra import bincount as bincount
from kilnflow.ops.math_extra import confusion_matrix as confusion_matrix
from kilnflow.ops.math_extra import count_nonzero as count_nonzero
from kilnflow.ops.math_extra import cumprod as cumprod
from kilnflow.ops.math_extra import cumulative_logsumexp as cumulative_logsumexp
from kilnflow.ops.math_extra import in_top_k as in_top_k
from kilnflow.ops.math_extra import invert_permutation as invert_permutation
from kilnflow.ops.math_extra import is_non_decreasing as is_non_decreasing
from kilnflow.ops.math_extra import is_strictly_increasing as is_strictly_increasing
from kilnflow.ops.math_extra import log_sigmoid as log_sigmoid
from kilnflow.ops.math_extra import polyval as polyval
from kilnflow.ops.math_extra import reduce_euclidean_norm as reduce_euclidean_norm
from kilnflow.ops.math_extra import reduce_std as reduce_std
from kilnflow.ops.math_extra import reduce_variance as reduce_variance
from kilnflow.ops.math_extra import scalar_mul as scalar_mul
from kilnflow.ops.math_extra import unsorted_segment_sqrt_n as unsorted_segment_sqrt_n
from kilnflow.ops.math_extra import zero_fraction as zero_fraction
from kilnflow.ops.nn import l2_normalize as l2_normalize
from kilnflow.ops.nn import log_softmax as log_softmax
from kilnflow.ops.nn import softmax as softmax
from kilnflow.ops.nn import softplus as softplus
from kilnflow.ops.complex import angle as angle
from kilnflow.ops.complex import conj as conj
from kilnflow.ops.complex import imag as imag
from kilnflow.ops.complex import real as real
from kilnflow.ops.special import betainc as betainc
from kilnflow.ops.special import digamma as digamma
from kilnflow.ops.special import erfcinv as erfcinv
from kilnflow.ops.special import erfinv as erfinv
from kilnflow.ops.special import igamma as igamma
from kilnflow.ops.special import igammac as igammac
from kilnflow.ops.special import lbeta as lbeta
from kilnflow.ops.special import lgamma as lgamma
from kilnflow.ops.special import ndtri as ndtri
from kilnflow.ops.special import polygamma as polygamma
from kilnflow.ops.special import zeta as zeta
from kilnflow.ops.special import bessel_i0 as bessel_i0
from kilnflow.ops.special import bessel_i0e as bessel_i0e
from kilnflow.ops.special import bessel_i1 as bessel_i1
from kilnflow.ops.special import bessel_i1e as bessel_i1e
from types import SimpleNamespace as _Namespace  # noqa: E402
from kilnflow.ops import special_bessel as _bessel  # noqa: E402

# tf.math.special: the functions kilnflow has of TF's list
special = _Namespace(bessel_i0=bessel_i0, bessel_i0e=bessel_i0e, bessel_i1=bessel_i1,
                     bessel_i1e=bessel_i1e, bessel_j0=_bessel.bessel_j0,
                     bessel_j1=_bessel.bessel_j1, bessel_k0=_bessel.bessel_k0,
                     bessel_k0e=_bessel.bessel_k0e, bessel_k1=_bessel.bessel_k1,
                     bessel_k1e=_bessel.bessel_k1e, bessel_y0=_bessel.bessel_y0,
                     bessel_y1=_bessel.bessel_y1, dawsn=_bessel.dawsn, expint=_bessel.expint,
                     fresnel_cos=_bessel.fresnel_cos, fresnel_sin=_bessel.fresnel_sin,
                     spence=_bessel.spence)
