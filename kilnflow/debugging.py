"""The kf.debugging namespace (tf.debugging): re-exports (compare_modes and check_numerics
live in kilnflow/profiler/), plus get_logger and AutoGraph's verbosity."""
from __future__ import annotations

import logging

from kilnflow.ops.checks import assert_all_finite as assert_all_finite
from kilnflow.ops.checks import assert_equal as assert_equal
from kilnflow.ops.checks import assert_greater as assert_greater
from kilnflow.ops.checks import assert_greater_equal as assert_greater_equal
from kilnflow.ops.checks import assert_less as assert_less
from kilnflow.ops.checks import assert_less_equal as assert_less_equal
from kilnflow.ops.checks import assert_near as assert_near
from kilnflow.ops.checks import assert_negative as assert_negative
from kilnflow.ops.checks import assert_non_negative as assert_non_negative
from kilnflow.ops.checks import assert_non_positive as assert_non_positive
from kilnflow.ops.checks import assert_none_equal as assert_none_equal
from kilnflow.ops.checks import assert_positive as assert_positive
from kilnflow.ops.checks import assert_rank as assert_rank
from kilnflow.ops.checks import assert_type as assert_type
from kilnflow.ops.checks import check_numerics as check_numerics
from kilnflow.ops.checks import assert_integer as assert_integer
from kilnflow.ops.checks import assert_proper_iterable as assert_proper_iterable
from kilnflow.ops.checks import assert_rank_at_least as assert_rank_at_least
from kilnflow.ops.checks import assert_rank_in as assert_rank_in
from kilnflow.ops.checks import assert_same_float_dtype as assert_same_float_dtype
from kilnflow.ops.checks import assert_scalar as assert_scalar
from kilnflow.ops.checks import assert_shapes as assert_shapes
from kilnflow.ops.checks import is_numeric_tensor as is_numeric_tensor
from kilnflow.autograph.api import get_verbosity as get_verbosity
from kilnflow.autograph.api import set_verbosity as set_verbosity
from kilnflow.ops.logging import Assert as Assert
from kilnflow.ops.math import is_finite as is_finite
from kilnflow.ops.math import is_inf as is_inf
from kilnflow.ops.math import is_nan as is_nan
from kilnflow.profiler.modes import ModeComparison as ModeComparison
from kilnflow.profiler.modes import ModeMismatchWarning as ModeMismatchWarning
from kilnflow.profiler.modes import compare_modes as compare_modes
from kilnflow.profiler.modes import disable_compare_modes as disable_compare_modes
from kilnflow.profiler.modes import enable_compare_modes as enable_compare_modes
from kilnflow.profiler.numerics import disable_check_numerics as disable_check_numerics
from kilnflow.debug_tools.placement import get_log_device_placement as get_log_device_placement
from kilnflow.debug_tools.placement import set_log_device_placement as set_log_device_placement
from kilnflow.debug_tools.traceback_filter import disable_traceback_filtering as \
    disable_traceback_filtering
from kilnflow.debug_tools.traceback_filter import enable_traceback_filtering as \
    enable_traceback_filtering
from kilnflow.debug_tools.traceback_filter import is_traceback_filtering_enabled as \
    is_traceback_filtering_enabled
from kilnflow.profiler.numerics import enable_check_numerics as enable_check_numerics


def get_logger() -> logging.Logger:
    """kf.get_logger(): the 'kilnflow' logger (tf.get_logger's 'tensorflow')."""
    return logging.getLogger("kilnflow")


from kilnflow.debug_tools import experimental as experimental  # noqa: E402
