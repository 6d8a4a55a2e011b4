"""Fixed-input cases for keras.ops, shared by the recorder (scripts/record_keras_ops.py, run
with TF 2.21's Keras in a side venv) and the kilnflow tests. Plain NumPy only: no kilnflow,
no Keras. Each case: (id, function path in keras.ops, args, kwargs)."""
from __future__ import annotations

import numpy as np

f32 = np.float32
A = np.array([[-1.5, 0.25, 2.0, -0.75], [0.5, -2.25, 1.0, 3.0], [1.25, -0.5, -1.0, 0.75]], f32)
P = (np.abs(A) + 0.1).astype(f32)                      # positive
U = (A / 3.5).astype(f32)                              # inside (-1, 1)
G = (P + 1.0).astype(f32)                              # > 1
V = np.array([0.5, -1.0, 2.0, 1.5, -0.25], f32)
I = np.array([[1, -2, 3, 0], [4, 5, -6, 7], [0, 2, 2, -1]], np.int32)
NI = np.array([[1, 2, 3, 0], [4, 5, 6, 7], [0, 2, 2, 1]], np.int32)  # non-negative ints
B = np.array([[True, False, True, False], [False, False, True, True], [True, True, False,
                                                                           False]])
M = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], f32)  # SPD
M2 = np.array([[1.0, 2.0, 0.0], [3.0, 1.0, 4.0], [0.0, 5.0, 2.0]], f32)
NANS = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, -1.0]], f32)
X3 = np.linspace(-1, 1, 2 * 5 * 3, dtype=f32).reshape(2, 5, 3)          # (batch, steps, ch)
X4 = np.linspace(-1, 1, 2 * 4 * 4 * 3, dtype=f32).reshape(2, 4, 4, 3)   # images
K1 = np.linspace(-0.5, 0.5, 3 * 3 * 2, dtype=f32).reshape(3, 3, 2)
K2 = np.linspace(-0.5, 0.5, 2 * 2 * 3 * 2, dtype=f32).reshape(2, 2, 3, 2)
DK2 = np.linspace(-0.5, 0.5, 2 * 2 * 3 * 2, dtype=f32).reshape(2, 2, 3, 2)
PK2 = np.linspace(-0.5, 0.5, 6 * 4, dtype=f32).reshape(1, 1, 6, 4)
TK2 = np.linspace(-0.5, 0.5, 3 * 3 * 2 * 3, dtype=f32).reshape(3, 3, 2, 3)
X5 = np.arange(2 * 5 * 4 * 3, dtype=f32).reshape(2, 5, 4, 3)
IMG = (np.arange(2 * 4 * 4 * 3, dtype=f32).reshape(2, 4, 4, 3) / 96.0).astype(f32)
Q = np.linspace(-1, 1, 1 * 3 * 2 * 4, dtype=f32).reshape(1, 3, 2, 4)
KV = np.linspace(1, -1, 1 * 5 * 2 * 4, dtype=f32).reshape(1, 5, 2, 4)
SIG = np.sin(np.arange(32, dtype=f32) / 3.0).reshape(2, 16).astype(f32)
LOGITS = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], f32)
PROBS = np.array([[0.2, 0.7, 0.1], [0.3, 0.3, 0.4]], f32)
ONEHOT = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], f32)

UNARY = {  # name -> input
    "abs": A, "absolute": A, "fabs": A, "negative": A, "square": A, "sign": A, "sin": A,
    "cos": A, "tan": U, "arcsin": U, "arccos": U, "arctan": A, "sinh": A, "cosh": A,
    "tanh": A, "arcsinh": A, "arccosh": G, "arctanh": U, "exp": A, "exp2": A, "expm1": A,
    "log": P, "log10": P, "log2": P, "log1p": P, "sqrt": P, "rsqrt": P, "cbrt": A, "erf": A,
    "erfc": A, "erfinv": U, "i0": A, "deg2rad": A, "rad2deg": A, "reciprocal": P, "ceil": A,
    "floor": A, "trunc": A, "sinc": A, "round": A * 3, "isfinite": NANS, "isinf": NANS,
    "isnan": NANS, "isposinf": np.array([np.inf, -np.inf, 1.0], f32),
    "isneginf": np.array([np.inf, -np.inf, 1.0], f32), "isreal": A, "signbit": A,
    "logical_not": B, "bitwise_invert": I, "bitwise_not": I, "conj": A, "conjugate": A,
    "real": A, "imag": A, "angle": A, "copy": A, "relu": A, "relu6": A * 4, "sigmoid": A,
    "softplus": A, "softsign": A, "silu": A, "swish": A, "log_sigmoid": A, "leaky_relu": A,
    "hard_sigmoid": A, "hard_silu": A, "hard_swish": A, "elu": A, "selu": A, "gelu": A,
    "celu": A, "glu": A, "tanh_shrink": A, "hard_tanh": A, "hard_shrink": A,
    "soft_shrink": A, "squareplus": A, "sparse_plus": A, "sparse_sigmoid": A,
    "sparsemax": A, "softmax": A, "log_softmax": A, "nan_to_num": NANS, "ravel": A,
    "transpose": A, "flip": A, "fliplr": A, "flipud": A, "rot90": A, "size": A, "ndim": A,
    "shape": A, "dtype": A, "sort": A, "argsort": A, "nonzero": I, "count_nonzero": I,
    "diag": A, "diagonal": A, "trace": A, "tril": A, "triu": A, "diagflat": V, "diff": A,
    "cumsum": A, "cumprod": A, "nancumsum": NANS, "nancumprod": NANS, "unique": I,
    "stop_gradient": A, "convert_to_tensor": A, "array": A, "identity": 3,
    "zeros_like": A, "ones_like": A, "corrcoef": A, "median": A, "ptp": A, "std": A, "var": A,
    "sum": A, "prod": A, "mean": A, "max": A, "min": A, "amax": A, "amin": A, "all": B,
    "any": B, "argmax": A, "argmin": A, "logsumexp": A, "nansum": NANS, "nanprod": NANS,
    "nanmean": NANS, "nanvar": NANS, "nanstd": NANS, "nanmax": NANS, "nanmin": NANS,
    "nanargmax": NANS, "nanargmin": NANS, "nanmedian": NANS, "squeeze": A[None],
    "bartlett": 5, "blackman": 5, "hamming": 5, "hanning": 5, "vander": V, "eye": 3,
    "tri": 3, "view_as_real": None, "unstack": A, "is_tensor": A,
}

CASES = [(name, name, (x,), {}) for name, x in UNARY.items() if x is not None]

BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "fmax",
          "fmin", "power", "mod", "fmod", "floor_divide", "arctan2", "hypot", "logaddexp",
          "logaddexp2", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
          "heaviside", "isclose", "allclose", "divide_no_nan", "nextafter", "copy"]
CASES += [(name, name, (A, P[::-1]), {}) for name in BINARY if name != "copy"]
CASES += [
    ("add_int_float", "add", (I, 1.5), {}), ("add_int_int", "add", (I, 2), {}),
    ("multiply_mixed", "multiply", (I, A), {}), ("divide_ints", "divide", (I, 4), {}),
    ("mean_ints", "mean", (I,), {"axis": 0}), ("sum_bool", "sum", (B,), {"axis": 1}),
    ("sin_int", "sin", (I,), {}), ("sqrt_int", "sqrt", (NI,), {}),
    ("floor_int", "floor", (I,), {}), ("abs_int", "abs", (I,), {}),
    ("logical_and", "logical_and", (B, B[::-1]), {}), ("logical_or", "logical_or", (B, B[::-1]), {}),
    ("logical_xor", "logical_xor", (B, B[::-1]), {}),
    ("bitwise_and", "bitwise_and", (I, NI), {}), ("bitwise_or", "bitwise_or", (I, NI), {}),
    ("bitwise_xor", "bitwise_xor", (I, NI), {}),
    ("left_shift", "left_shift", (NI, 2), {}), ("right_shift", "right_shift", (NI, 1), {}),
    ("bitwise_left_shift", "bitwise_left_shift", (NI, 1), {}),
    ("bitwise_right_shift", "bitwise_right_shift", (NI, 1), {}),
    ("gcd", "gcd", (np.array([12, 18, 7, 0], np.int32), np.array([8, 27, 3, 5], np.int32)), {}),
    ("lcm", "lcm", (np.array([4, 6, 7, 0], np.int32), np.array([6, 4, 3, 5], np.int32)), {}),
    ("ldexp", "ldexp", (A, np.array([1, 2, 0, -1], np.int32)), {}),
    ("clip", "clip", (A, -1.0, 1.0), {}), ("power_pos", "power", (P, A), {}), ("round_decimals", "round", (A, 1), {}),
    ("sum_axis", "sum", (A,), {"axis": 1, "keepdims": True}),
    ("mean_axes", "mean", (X3,), {"axis": (0, 2)}), ("max_axis", "max", (A,), {"axis": 0}),
    ("max_initial", "max", (A,), {"axis": 1, "initial": 2.5}),
    ("prod_axis", "prod", (A,), {"axis": 0}), ("std_axis", "std", (A,), {"axis": 1}),
    ("var_keep", "var", (A,), {"axis": 0, "keepdims": True}),
    ("argmax_axis", "argmax", (A,), {"axis": 1}), ("argmin_keep", "argmin", (A,), {"axis": 0,
                                                                                 "keepdims": True}),
    ("cumsum_axis", "cumsum", (A,), {"axis": 1}), ("cumprod_axis", "cumprod", (A,), {"axis": 0}),
    ("average", "average", (A,), {"axis": 1, "weights": np.array([1.0, 2.0, 3.0, 4.0], f32)}),
    ("quantile", "quantile", (A, np.array([0.25, 0.5], f32)), {"axis": 1}),
    ("quantile_lower", "quantile", (A, 0.3), {"method": "lower"}),
    ("percentile", "percentile", (A, 40.0), {"axis": 0}),
    ("median_axis", "median", (A,), {"axis": 1, "keepdims": True}),
    ("nanquantile", "nanquantile", (NANS, 0.5), {"axis": 1}),
    ("nanpercentile", "nanpercentile", (NANS, 50.0), {}),
    ("nansum_axis", "nansum", (NANS,), {"axis": 0}),
    ("logsumexp_axis", "logsumexp", (A,), {"axis": 1}),
    ("count_nonzero_axis", "count_nonzero", (I,), {"axis": 0}),
    ("ptp_axis", "ptp", (A,), {"axis": 1}),
    ("arange", "arange", (5,), {}), ("arange_float", "arange", (0.0, 1.0, 0.25), {}),
    ("arange_step", "arange", (1, 10, 3), {}),
    ("linspace", "linspace", (0.0, 1.0, 5), {}), ("linspace_noend", "linspace", (0.0, 2.0, 4),
                                                  {"endpoint": False}),
    ("logspace", "logspace", (0.0, 2.0, 3), {}), ("geomspace", "geomspace", (1.0, 100.0, 3), {}),
    ("zeros", "zeros", ((2, 3),), {}), ("ones", "ones", ((2,),), {"dtype": "int32"}),
    ("full", "full", ((2, 2), 7.0), {}), ("full_like", "full_like", (A, 3), {}),
    ("empty", "empty", ((2, 2),), {}), ("empty_like", "empty_like", (A,), {}),
    ("eye_k", "eye", (3, 4), {"k": 1}), ("tri_k", "tri", (3, 4), {"k": -1}),
    ("identity_dtype", "identity", (2,), {"dtype": "int32"}),
    ("kaiser", "kaiser", (5, 2.0), {}),
    ("reshape", "reshape", (A, (2, 6)), {}), ("reshape_neg", "reshape", (A, (-1, 3)), {}),
    ("transpose_axes", "transpose", (X3, (2, 0, 1)), {}),
    ("moveaxis", "moveaxis", (X3, 0, -1), {}), ("swapaxes", "swapaxes", (X3, 0, 2), {}),
    ("expand_dims", "expand_dims", (A, 1), {}), ("expand_dims_tuple", "expand_dims", (A, (0, 3)), {}),
    ("squeeze_axis", "squeeze", (A[None],), {"axis": 0}),
    ("broadcast_to", "broadcast_to", (V, (2, 5)), {}),
    ("concatenate", "concatenate", ([A, P],), {"axis": 1}),
    ("append", "append", (A, P), {"axis": 0}), ("stack", "stack", ([A, P],), {"axis": 1}),
    ("hstack", "hstack", ([A, P],), {}), ("vstack", "vstack", ([A, P],), {}),
    ("dstack", "dstack", ([A, P],), {}),
    ("split", "split", (A, 2), {"axis": 1}), ("split_at", "split", (A, [1, 3]), {"axis": 1}),
    ("array_split", "array_split", (V, 3), {}), ("hsplit", "hsplit", (A, 2), {}),
    ("vsplit", "vsplit", (A[:2], 2), {}), ("dsplit", "dsplit", (X3[:, :, :2], 2), {}),
    ("unstack_axis", "unstack", (A,), {"axis": 1}),
    ("tile", "tile", (A, (2, 1)), {}), ("tile_int", "tile", (V, 2), {}),
    ("repeat", "repeat", (A, 2), {"axis": 0}), ("repeat_flat", "repeat", (V, 2), {}),
    ("pad", "pad", (A, ((1, 0), (0, 2))), {}), ("pad_value", "pad", (A, ((1, 1), (1, 1))), {"constant_values": 9.0}),
    ("pad_reflect", "pad", (A, ((1, 1), (2, 1))), {"mode": "reflect"}),
    ("pad_symmetric", "pad", (A, ((1, 1), (2, 1))), {"mode": "symmetric"}),
    ("flip_axis", "flip", (A,), {"axis": 1}), ("rot90_k", "rot90", (A,), {"k": 3}),
    ("roll", "roll", (A, 2), {}), ("roll_axis", "roll", (A, -1), {"axis": 1}),
    ("diag_k", "diag", (V,), {"k": 1}), ("diag_mat_k", "diag", (A,), {"k": -1}),
    ("diagonal_offset", "diagonal", (X3,), {"offset": 1, "axis1": 1, "axis2": 2}),
    ("trace_offset", "trace", (A,), {"offset": 1}), ("tril_k", "tril", (A,), {"k": -1}),
    ("triu_k", "triu", (A,), {"k": 1}),
    ("meshgrid", "meshgrid", (V[:3], V[:2]), {}), ("meshgrid_ij", "meshgrid", (V[:3], V[:2]),
                                                     {"indexing": "ij"}),
    ("vander_n", "vander", (V[:3],), {"N": 4, "increasing": True}),
    ("matmul", "matmul", (A, P.T), {}), ("matmul_vec", "matmul", (A, V[:4]), {}),
    ("matmul_batch", "matmul", (X3, np.ones((3, 2), f32)), {}),
    ("dot", "dot", (A, P.T), {}), ("dot_vec", "dot", (V, V), {}),
    ("dot_nd", "dot", (X3, K1[0]), {}), ("vdot", "vdot", (A, P), {}),
    ("inner", "inner", (A, P), {}), ("outer", "outer", (V, V[:3]), {}),
    ("tensordot", "tensordot", (A, P.T), {"axes": 1}),
    ("tensordot_axes", "tensordot", (X3, A[:, :3]), {"axes": ([2], [1])}),
    ("einsum", "einsum", ("ij,kj->ik", A, P), {}), ("einsum_trace", "einsum", ("ii", M), {}),
    ("kron", "kron", (M[:2, :2], A[:2, :2]), {}),
    ("cross", "cross", (A[:, :3], P[:, :3]), {}), ("cross_2d", "cross", (A[:, :2], P[:, :2]), {}),
    ("diff_n", "diff", (A,), {"n": 2, "axis": 1}), ("diff_axis", "diff", (A,), {"axis": 0}),
    ("trapezoid", "trapezoid", (A,), {}), ("trapezoid_dx", "trapezoid", (A,), {"dx": 0.5, "axis": 0}),
    ("trapezoid_x", "trapezoid", (V, np.array([0, 1, 3, 4, 7], f32)), {}),
    ("correlate", "correlate", (V, V[:3]), {}), ("correlate_same", "correlate", (V, V[:2]),
                                                 {"mode": "same"}),
    ("correlate_full", "correlate", (V, V[:3]), {"mode": "full"}),
    ("take", "take", (A, np.array([0, 2], np.int32)), {"axis": 1}),
    ("take_flat", "take", (A, np.array([[0, 5], [11, 3]], np.int32)), {}),
    ("take_along_axis", "take_along_axis", (A, np.array([[0, 3], [1, 1], [2, 0]], np.int32)),
     {"axis": 1}),
    ("take_along_axis0", "take_along_axis", (A, np.array([[2, 0, 1, 1]], np.int32)), {"axis": 0}),
    ("where", "where", (B, A, P), {}), ("where_scalar", "where", (B, A, 0.0), {}),
    ("where_one", "where", (B,), {}),
    ("select", "select", ([A > 1, A < -1], [A, -A]), {"default": 7.0}),
    ("sort_axis", "sort", (A,), {"axis": 0}), ("argsort_axis", "argsort", (A,), {"axis": 0}),
    ("searchsorted", "searchsorted", (np.array([0.0, 1.0, 2.0, 3.0], f32), V), {}),
    ("searchsorted_right", "searchsorted", (np.array([0.0, 1.0, 2.0, 2.0], f32),
                                            np.array([2.0, 0.5], f32)), {"side": "right"}),
    ("digitize", "digitize", (V, np.array([-0.5, 0.5, 1.5], f32)), {}),
    ("unique_all", "unique", (np.array([3, 1, 3, 2, 1], np.int32),),
     {"return_index": True, "return_inverse": True, "return_counts": True}),
    ("isin_2", "isin", (I, np.array([2, 5, 0], np.int32)), {}),
    ("isin_invert", "isin", (I, np.array([2, 5], np.int32)), {"invert": True}),
    ("histogram", "histogram", (V,), {"bins": 4}),
    ("histogram_range", "histogram", (V,), {"bins": 3, "range": (-1.0, 2.0)}),
    ("bincount", "bincount", (np.array([0, 1, 1, 4], np.int32),), {}),
    ("bincount_w", "bincount", (np.array([0, 1, 1, 4], np.int32),),
     {"weights": np.array([0.5, 1.0, 2.0, 0.25], f32), "minlength": 6}),
    ("unravel_index", "unravel_index", (np.array([1, 7, 10], np.int32), (3, 4)), {}),
    ("view", "view", (A,), {"dtype": "int32"}),
    ("polar", "polar", (P, A), {}),
    ("view_as_complex", "view_as_complex", (A[:, :2].copy(),), {}),
    ("get_item", "get_item", (A, 1), {}),
    ("nan_to_num_args", "nan_to_num", (NANS,), {"nan": -1.0}),
    ("cbrt_neg", "cbrt", (np.array([-8.0, 27.0], f32),), {}),
    ("cast", "cast", (A, "int32"), {}), ("saturate_cast", "saturate_cast", (A * 100, "int8"), {}),
    ("convert_to_tensor_dtype", "convert_to_tensor", (I,), {"dtype": "float32"}),
    ("slice", "slice", (A, (1, 1), (2, 2)), {}),
    ("slice_update", "slice_update", (A, (1, 1), np.ones((2, 2), f32)), {}),
    ("scatter", "scatter", (np.array([[0, 1], [2, 0]], np.int32), np.array([5.0, 6.0], f32),
                            (3, 2)), {}),
    ("scatter_update", "scatter_update", (A, np.array([[0, 1], [2, 3]], np.int32),
                                          np.array([9.0, 8.0], f32)), {}),
    ("segment_sum", "segment_sum", (V, np.array([0, 0, 1, 2, 2], np.int32)), {}),
    ("segment_max", "segment_max", (V, np.array([0, 0, 1, 2, 2], np.int32)), {"num_segments": 3}),
    ("segment_min", "segment_min", (A, np.array([0, 1, 1], np.int32)), {}),
    ("segment_prod", "segment_prod", (V, np.array([0, 0, 1, 2, 2], np.int32)), {}),
    ("top_k", "top_k", (A, 2), {}), ("in_top_k", "in_top_k", (np.array([1, 2], np.int32),
                                                               LOGITS, 1), {}),
    ("extract_sequences", "extract_sequences", (SIG, 4, 3), {}),
    ("fft", "fft", ((A, P),), {}), ("fft2", "fft2", ((A, P),), {}),
    ("ifft2", "ifft2", ((A, P),), {}), ("rfft", "rfft", (SIG,), {}),
    ("rfft_len", "rfft", (SIG,), {"fft_length": 8}),
    ("irfft", "irfft", ((A, P),), {}), ("irfft_len", "irfft", ((A, P),), {"fft_length": 5}),
    ("stft", "stft", (SIG, 8, 4, 8), {}), ("stft_hamming", "stft", (SIG, 6, 3, 8),
                                           {"window": "hamming", "center": False}),
    ("istft", "istft", ((np.cos(LOGITS[:, :2, None] * np.ones((2, 2, 5), f32)).astype(f32),
                         np.zeros((2, 2, 5), f32)), 8, 4, 8), {}),
    ("cdist", "cdist", (A, P[:2]), {}),
    ("one_hot", "one_hot", (np.array([0, 2, -1, 1], np.int32), 3), {}),
    ("one_hot_axis", "one_hot", (np.array([0, 2, 1], np.int32), 3), {"axis": 0}),
    ("multi_hot", "multi_hot", (np.array([[0, 2], [1, 1]], np.int32), 4), {}),
    ("binary_crossentropy", "binary_crossentropy", (ONEHOT, PROBS), {}),
    ("binary_crossentropy_logits", "binary_crossentropy", (ONEHOT, LOGITS), {"from_logits": True}),
    ("categorical_crossentropy", "categorical_crossentropy", (ONEHOT, PROBS), {}),
    ("categorical_crossentropy_logits", "categorical_crossentropy", (ONEHOT, LOGITS),
     {"from_logits": True}),
    ("sparse_categorical_crossentropy", "sparse_categorical_crossentropy",
     (np.array([1, 2], np.int32), PROBS), {}),
    ("sparse_categorical_crossentropy_logits", "sparse_categorical_crossentropy",
     (np.array([1, 2], np.int32), LOGITS), {"from_logits": True}),
    ("softmax_axis0", "softmax", (A,), {"axis": 0}), ("softmax_tuple", "softmax", (X3,),
                                                       {"axis": (1, 2)}),
    ("log_softmax_axis0", "log_softmax", (A,), {"axis": 0}),
    ("leaky_relu_slope", "leaky_relu", (A,), {"negative_slope": 0.1}),
    ("elu_alpha", "elu", (A,), {"alpha": 0.5}), ("celu_alpha", "celu", (A,), {"alpha": 2.0}),
    ("gelu_exact", "gelu", (A,), {"approximate": False}),
    ("glu_axis", "glu", (X3[:, :4],), {"axis": 1}),
    ("threshold", "threshold", (A, 0.5, -9.0), {}),
    ("squareplus_b", "squareplus", (A,), {"b": 1.0}),
    ("hard_shrink_t", "hard_shrink", (A,), {"threshold": 1.0}),
    ("soft_shrink_t", "soft_shrink", (A,), {"threshold": 1.0}),
    ("moments", "moments", (X3, [0, 1]), {}), ("moments_keep", "moments", (A, [1]),
                                               {"keepdims": True}),
    ("batch_normalization", "batch_normalization", (A, V[:4], P[0], -1),
     {"offset": V[1:], "scale": P[1], "epsilon": 1e-3}),
    ("normalize", "normalize", (A,), {}), ("normalize_l1", "normalize", (A,), {"axis": 0, "order": 1}),
    ("layer_normalization", "layer_normalization", (A,), {}),
    ("layer_normalization_gb", "layer_normalization", (A, P[0], V[:4]), {"epsilon": 1e-5}),
    ("rms_normalization", "rms_normalization", (A,), {}),
    ("rms_normalization_scale", "rms_normalization", (A, P[0]), {"epsilon": 1e-5}),
    ("psnr", "psnr", (IMG, IMG[::-1], 1.0), {}),
    ("dot_product_attention", "dot_product_attention", (Q, KV, KV), {}),
    ("dot_product_attention_causal", "dot_product_attention", (Q, KV[:, :3], KV[:, :3]),
     {"is_causal": True}),
    ("dot_product_attention_mask", "dot_product_attention", (Q, KV, KV),
     {"mask": np.tril(np.ones((3, 5), bool))[None, None], "scale": 0.3}),
    ("conv1d", "conv", (X3, K1), {}), ("conv1d_same", "conv", (X3, K1), {"padding": "same",
                                                                         "strides": 2}),
    ("conv2d", "conv", (X4, K2), {}), ("conv2d_dil", "conv", (X4, K2), {"padding": "same",
                                                                        "dilation_rate": 2}),
    ("conv2d_cf", "conv", (np.transpose(X4, (0, 3, 1, 2)).copy(), K2),
     {"data_format": "channels_first"}),
    ("depthwise_conv", "depthwise_conv", (X4, DK2), {}),
    ("depthwise_conv1d", "depthwise_conv", (X3, K1[:, :, :1].repeat(3, 2)), {"padding": "same"}),
    ("separable_conv", "separable_conv", (X4, DK2, PK2), {"padding": "same"}),
    ("conv_transpose", "conv_transpose", (X4, TK2), {"strides": 2}),
    ("conv_transpose_same", "conv_transpose", (X4, TK2), {"strides": 2, "padding": "same"}),
    ("conv_transpose_outpad", "conv_transpose", (X4, TK2), {"strides": 2,
                                                             "output_padding": 1}),
    ("conv_transpose1d", "conv_transpose", (X3, K1.transpose(0, 2, 1).copy()), {"strides": 2}),
    ("max_pool", "max_pool", (X4, 2), {}), ("max_pool_same", "max_pool", (X4, 3),
                                            {"strides": 2, "padding": "same"}),
    ("average_pool", "average_pool", (X4, 2), {}),
    ("average_pool_same", "average_pool", (X4, 3), {"strides": 2, "padding": "same"}),
    ("max_pool1d", "max_pool", (X3, 2), {}), ("average_pool1d", "average_pool", (X3, 2),
                                              {"strides": 1}),
    ("adaptive_average_pool", "adaptive_average_pool", (X5, (3, 2)), {}),
    ("adaptive_max_pool", "adaptive_max_pool", (X5, (3, 2)), {}),
    ("depth_to_space", "depth_to_space", (np.arange(32, dtype=f32).reshape(1, 2, 2, 8), 2), {}),
    ("space_to_depth", "space_to_depth", (X4, 2), {}),
    ("cholesky", "cholesky", (M,), {}), ("cholesky_upper", "cholesky", (M,), {"upper": True}),
    ("cholesky_inverse", "cholesky_inverse", (np.linalg.cholesky(M).astype(f32),), {}),
    ("det", "det", (M2,), {}), ("slogdet", "slogdet", (M2,), {}), ("logdet", "logdet", (M,), {}),
    ("eigh", "eigh", (M,), {}), ("inv", "inv", (M2,), {}), ("pinv", "pinv", (A,), {}),
    ("solve", "solve", (M2, M), {}), ("solve_vec", "solve", (M2, V[:3]), {}),
    ("solve_triangular", "solve_triangular", (np.triu(M2), M), {}),
    ("solve_triangular_lower", "solve_triangular", (np.tril(M2), M), {"lower": True}),
    ("lstsq", "lstsq", (A.T.copy(), V[:4]), {}), ("qr", "qr", (A.T.copy(),), {}),
    ("qr_complete", "qr", (A.T.copy(),), {"mode": "complete"}),
    ("svd_values", "svd", (A,), {"compute_uv": False}),
    ("lu_factor", "lu_factor", (M2,), {}),
    ("matrix_rank", "matrix_rank", (A,), {}), ("matrix_rank_low", "matrix_rank",
                                               (np.outer(V, V).astype(f32),), {}),
    ("norm", "norm", (A,), {}), ("norm_axis", "norm", (A,), {"axis": 1}),
    ("norm_inf", "norm", (A,), {"ord": np.inf, "axis": 1}), ("norm_l1", "norm", (A,), {"ord": 1}),
    ("norm_nuc", "norm", (A,), {"ord": "nuc"}), ("norm_fro_keep", "norm", (A,), {"ord": "fro",
                                                                                 "keepdims": True}),
    ("norm_p3", "norm", (V,), {"ord": 3}),
    ("image.resize", "image.resize", (IMG, (6, 5)), {}),
    ("image.resize_nearest", "image.resize", (IMG, (2, 3)), {"interpolation": "nearest"}),
    ("image.rgb_to_grayscale", "image.rgb_to_grayscale", (IMG,), {}),
    ("image.rgb_to_hsv", "image.rgb_to_hsv", (IMG,), {}),
    ("image.hsv_to_rgb", "image.hsv_to_rgb", (IMG,), {}),
    ("image.extract_patches", "image.extract_patches", (IMG, 2), {}),
    ("image.pad_images", "image.pad_images", (IMG, 1, 2), {"target_height": 6,
                                                           "target_width": 7}),
    ("image.crop_images", "image.crop_images", (IMG, 1, 1), {"target_height": 2,
                                                             "target_width": 3}),
]


def _custom(ops):
    @ops.custom_gradient
    def log1pexp(x):
        e = ops.exp(x)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1.0, e))
        return ops.log(1.0 + e), grad
    return log1pexp(A)


def _svd(ops):
    u, s, vh = ops.svd(A, full_matrices=False)
    return ops.matmul(ops.multiply(u, s), vh), s, ops.shape(ops.svd(A)[0])


def _qr(ops):
    q, r = ops.qr(A.T.copy())
    return ops.matmul(q, r), ops.abs(r)


# cases whose arguments are functions: each gets the ops module and returns the result
CALLS = {
    "cond": lambda ops: ops.cond(ops.greater(ops.sum(A), 0.0), lambda: ops.add(A, 1.0),
                                 lambda: ops.subtract(A, 1.0)),
    "while_loop": lambda ops: ops.while_loop(lambda i, x: ops.less(i, 3),
                                             lambda i, x: (i + 1, ops.multiply(x, 2.0)), (0, V)),
    "while_loop_single": lambda ops: ops.while_loop(lambda x: ops.less(ops.sum(x), 100.0),
                                                    lambda x: ops.multiply(x, 2.0), P),
    "while_loop_max": lambda ops: ops.while_loop(lambda x: ops.less(ops.sum(x), 1e9),
                                                 lambda x: ops.multiply(x, 2.0), V,
                                                 maximum_iterations=3),
    "fori_loop": lambda ops: ops.fori_loop(0, 4, lambda i, x: ops.add(x, ops.cast(i, "float32")),
                                           V),
    "scan": lambda ops: ops.scan(lambda c, x: (ops.add(c, x), ops.multiply(c, x)),
                                 np.zeros(4, f32), A),
    "scan_reverse": lambda ops: ops.scan(lambda c, x: (ops.add(c, x), ops.multiply(c, x)),
                                         np.ones(4, f32), A, reverse=True),
    "associative_scan": lambda ops: ops.associative_scan(ops.add, A, axis=1),
    "associative_scan_reverse": lambda ops: ops.associative_scan(ops.multiply, V, reverse=True),
    "map": lambda ops: ops.map(lambda x: ops.sum(ops.square(x)), A),
    "switch": lambda ops: ops.switch(1, [lambda x: ops.add(x, 1.0),
                                         lambda x: ops.multiply(x, 3.0)], V),
    "switch_clamp": lambda ops: ops.switch(5, [lambda x: ops.add(x, 1.0),
                                               lambda x: ops.multiply(x, 3.0)], V),
    "vectorized_map": lambda ops: ops.vectorized_map(lambda x: ops.multiply(ops.sum(x), 2.0), A),
    "custom_gradient": _custom,
    "jvp": lambda ops: ops.jvp(lambda x: ops.multiply(ops.sin(x), x), (ops.convert_to_tensor(V),),
                               (ops.convert_to_tensor(np.ones(5, f32)),)),
    "convert_to_numpy": lambda ops: ops.convert_to_numpy(ops.add(A, 1.0)),
    "eig": lambda ops: ops.sort(ops.real(ops.eig(M)[0])),
    "eigh_values": lambda ops: ops.eigh(M)[0],
    "svd": _svd, "qr_product": _qr,
    "linalg.norm": lambda ops: ops.linalg.norm(A, ord=-1),
    "numpy.add": lambda ops: ops.numpy.add(A, P),
    "nn.relu": lambda ops: ops.nn.relu(A),
}

# matrices whose decompositions are unique only up to signs are compared through invariants
INVARIANT = {"eigh", "qr", "qr_complete"}
# gradient-test details: which argument to differentiate (default 0), which output (default:
# the first float one), inputs read as symmetric matrices, float32-internal ops
GRAD_ARG = {"where": 1, "einsum": 1, "sparse_categorical_crossentropy_logits": 1,
            "binary_crossentropy_logits": 1, "categorical_crossentropy": 1}
GRAD_OUT = {"slogdet": 1}
GRAD_SYMMETRIC = {"cholesky", "logdet", "slogdet"}
GRAD_FLOAT32 = {"image.resize", "image.rgb_to_grayscale"}
# differentiable cases checked against finite differences (gradient wrt the first argument)
GRAD = ["sin", "tanh", "exp", "log", "sqrt", "softmax", "log_softmax", "gelu", "silu", "elu",
        "celu", "sparsemax", "glu", "sparse_plus", "squareplus", "log_sigmoid", "hard_silu",
        "mean_axes", "std_axis", "var_keep", "logsumexp_axis", "median_axis", "quantile",
        "nanmean", "norm_axis", "matmul", "einsum", "dot_nd", "kron", "cross",
        "take_along_axis", "take", "where", "cumprod_axis", "cumsum_axis", "sort_axis",
        "concatenate", "pad_reflect", "tile", "repeat", "roll_axis", "trapezoid_x", "diff_n",
        "correlate_same", "cdist", "hypot", "arctan2", "logaddexp", "divide", "power_pos",
        "categorical_crossentropy", "binary_crossentropy_logits",
        "sparse_categorical_crossentropy_logits", "batch_normalization",
        "layer_normalization_gb", "rms_normalization", "normalize", "dot_product_attention",
        "dot_product_attention_mask", "conv1d_same", "conv2d_dil", "depthwise_conv",
        "separable_conv", "conv_transpose_same", "max_pool", "average_pool_same",
        "adaptive_average_pool", "det", "inv", "solve", "cholesky", "slogdet", "logdet",
        "image.resize", "image.rgb_to_grayscale", "rfft", "stft", "moments",
        "segment_sum", "slice_update", "scatter_update", "cbrt", "nan_to_num_args"]

# Keras 3's dtype promotion: add() over pairs of dtypes and with Python scalars (weak types)
DTYPED = {d: np.array([1, 0, 3], dtype=d) for d in
          ("bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "float16", "float32",
           "float64")}
_PAIRS = [("int8", "uint8"), ("int8", "int16"), ("uint8", "int32"), ("uint32", "int32"),
          ("int32", "int64"), ("int32", "float16"), ("int64", "float32"), ("float16", "float32"),
          ("float32", "float64"), ("bool", "int8"), ("bool", "float16"), ("uint8", "float16"),
          ("int16", "uint8"), ("bool", "bool")]
CASES += [(f"promote_{a}_{b}", "add", (DTYPED[a], DTYPED[b]), {}) for a, b in _PAIRS]
CASES += [(f"promote_{a}_{type(s).__name__}", "multiply", (DTYPED[a], s), {})
          for a in ("bool", "int8", "uint8", "int64", "float16") for s in (2, 1.5)]
CASES += [(f"mean_{d}", "mean", (DTYPED[d],), {}) for d in ("int8", "bool", "float16")]
CASES += [(f"sum_{d}", "sum", (DTYPED[d],), {}) for d in ("int8", "uint8", "int64", "float16")]
CASES += [(f"sqrt_{d}", "sqrt", (DTYPED[d],), {}) for d in ("int8", "int64", "float16", "bool")]
CASES += [(f"matmul_{d}", "matmul", (DTYPED[d][:2].reshape(1, 2), DTYPED[d][:2].reshape(2, 1)),
           {}) for d in ("int8", "uint8", "bool")]
CASES += [("view_as_real", "view_as_real", ((A[:, :2] + 1j * P[:, :2]).astype(np.complex64),), {}),
          ("abs_complex", "abs", ((A[:, :2] + 1j * P[:, :2]).astype(np.complex64),), {}),
          ("arange_dtype", "arange", (0, 5, 2), {"dtype": "float32"}),
          ("zeros_int", "zeros_like", (A,), {"dtype": "int32"}),
          ("floor_divide_int", "floor_divide", (I, 3), {}), ("mod_int", "mod", (I, 3), {}),
          ("power_int", "power", (NI, 2), {}), ("true_divide_int", "true_divide", (I, NI + 1), {}),
          ("clip_int", "clip", (I, 0, 4), {}), ("round_int", "round", (I * 10, -1), {}),
          ("trunc_int", "trunc", (I,), {}), ("sign_int", "sign", (I,), {}),
          ("cumsum_bool", "cumsum", (B,), {"axis": 1}), ("prod_int8", "prod", (DTYPED["int8"],), {}),
          ("argmax_bool", "argmax", (B,), {"axis": 1}), ("max_bool", "max", (B,), {})]

XCF = np.arange(2 * 2 * 4 * 5, dtype=f32).reshape(2, 2, 4, 5) / 40.0  # channels-first images
CTC_LOGITS = np.sin(np.arange(2 * 5 * 4, dtype=f32)).reshape(2, 5, 4).astype(f32)
CTC_TARGET = np.array([[1, 2, 1], [3, 1, 0]], np.int32)
CASES += [
    ("unfold", "unfold", (XCF, 2), {}),
    ("unfold_args", "unfold", (XCF, (2, 3)), {"dilation": 1, "padding": 1, "stride": 2}),
    ("unfold_dilated", "unfold", (XCF, 2), {"dilation": 2}),
    ("fold", "fold", (np.linspace(-1, 1, 2 * 8 * 12, dtype=f32).reshape(2, 8, 12), (4, 5), 2),
     {}),
    ("fold_args", "fold", (np.linspace(-1, 1, 2 * 12 * 9, dtype=f32).reshape(2, 12, 9), (4, 5),
                           (2, 3)), {"padding": 1, "stride": 2}),
    ("rearrange", "rearrange", (X3, "b t c -> b (t c)"), {}),
    ("rearrange_split", "rearrange", (X3.reshape(2, 15), "b (t c) -> c b t"), {"c": 3}),
    ("rearrange_transpose", "rearrange", (X4, "b h w c -> b c (w h)"), {}),
    ("ctc_loss", "ctc_loss", (CTC_TARGET, CTC_LOGITS, np.array([3, 2], np.int32),
                              np.array([5, 4], np.int32)), {}),
    ("ctc_loss_blank", "ctc_loss", (CTC_TARGET[:, :2] + 1, CTC_LOGITS,
                                    np.array([2, 1], np.int32), np.array([5, 5], np.int32)),
     {"mask_index": 0}),
    ("ctc_loss_repeat", "ctc_loss", (np.array([[2, 2, 1]], np.int32), CTC_LOGITS[:1],
                                     np.array([3], np.int32), np.array([5], np.int32)), {}),
    ("ctc_decode", "ctc_decode", (CTC_LOGITS, np.array([5, 4], np.int32)), {}),
    ("ctc_decode_nomerge", "ctc_decode", (CTC_LOGITS, np.array([5, 4], np.int32)),
     {"merge_repeated": False, "mask_index": 1}),
]
GRAD_ARG["ctc_loss"] = 1
GRAD_ARG["ctc_loss_repeat"] = 1
GRAD_FLOAT32 |= {"ctc_loss", "ctc_loss_repeat"}  # Keras computes CTC in float32
GRAD += ["unfold_args", "fold_args", "ctc_loss", "ctc_loss_repeat", "rearrange_split"]

# Python values and lists as inputs, half precision through nn functions
H = A.astype(np.float16)
CASES += [
    ("scalar_sin", "sin", (1.0,), {}), ("scalar_add", "add", (1, 2), {}),
    ("scalar_add_float", "add", (1, 2.5), {}), ("list_add", "add", ([1, 2], [3, 4]), {}),
    ("list_float_multiply", "multiply", ([1.5, 2.0], 2), {}),
    ("maximum_int_float", "maximum", (I, 0.5), {}), ("where_int_float", "where", (B, I, 0.5), {}),
    ("clip_int_float", "clip", (I, 0.5, 2.5), {}), ("list_mean", "mean", ([1, 2, 4],), {}),
    ("list_sum", "sum", ([[1, 2], [3, 4]],), {"axis": 0}),
    ("list_concatenate", "concatenate", ([[1, 2], [3]],), {}),
    ("bool_list_any", "any", ([True, False],), {}),
    ("softmax_f16", "softmax", (H,), {}), ("gelu_f16", "gelu", (H,), {}),
    ("relu_int", "relu", (I,), {}), ("sigmoid_int", "sigmoid", (I,), {}),
    ("layer_normalization_f16", "layer_normalization", (H,), {}),
    ("mean_f16", "mean", (H,), {"axis": 1}), ("var_f16", "var", (H,), {}),
    ("matmul_f16", "matmul", (H, H.T), {}), ("exp_f16", "exp", (H,), {}),
    ("one_hot_dtype", "one_hot", (np.array([1, 0], np.int32), 3), {"dtype": "int32"}),
    ("arange_neg", "arange", (5, 0, -2), {}), ("linspace_int", "linspace", (0, 10, 4),
                                                {"dtype": "int32"}),
    ("full_int", "full", ((2,), 3), {}), ("zeros_int_shape", "zeros", (3,), {}),
    ("take_neg", "take", (V, np.array([-1, 0], np.int32)), {}),
    ("argsort_int", "argsort", (np.array([3, 1, 2, 1], np.int32),), {}),
    ("sort_int", "sort", (I,), {"axis": 0}), ("count_nonzero_f", "count_nonzero", (A,), {}),
    ("norm_int", "norm", (I,), {}), ("std_int", "std", (I,), {}),
    ("median_int", "median", (I,), {}), ("quantile_int", "quantile", (I, 0.5), {}),
    ("cumsum_int8", "cumsum", (DTYPED["int8"],), {}), ("trace_int", "trace", (I,), {}),
    ("round_half", "round", (np.array([0.5, 1.5, 2.5, -0.5], f32),), {}),
    ("diff_int", "diff", (I,), {}), ("outer_int", "outer", (V[:2].astype(np.int32), V[:3]), {}),
    ("square_bool", "square", (B,), {}), ("negative_int", "negative", (I,), {}),
    ("abs_bool", "abs", (B,), {}), ("sign_bool", "sign", (DTYPED["uint8"],), {}),
]

GRAD += ["cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh",
         "arctanh", "exp2", "expm1", "log10", "log2", "log1p", "rsqrt", "erf", "erfc", "erfinv",
         "deg2rad", "reciprocal", "sinc", "relu6", "sigmoid", "softplus", "softsign", "selu",
         "hard_sigmoid", "leaky_relu", "tanh_shrink", "hard_tanh", "hard_shrink", "soft_shrink",
         "sparse_sigmoid", "threshold", "abs", "square", "negative", "logaddexp2", "i0",
         "sum_axis", "prod_axis", "max_axis", "min", "amax", "ptp_axis", "average", "percentile",
         "trace_offset", "diagonal_offset", "tril_k", "triu_k", "flip_axis", "rot90_k",
         "transpose_axes", "moveaxis", "reshape", "expand_dims_tuple", "squeeze_axis",
         "broadcast_to", "stack", "take_flat", "dot", "vdot", "inner", "outer", "tensordot_axes",
         "cross_2d", "trapezoid", "matmul_vec", "conv2d", "conv1d", "conv_transpose",
         "conv_transpose1d", "max_pool1d", "average_pool1d", "adaptive_max_pool",
         "space_to_depth", "psnr", "dot_product_attention_causal", "layer_normalization",
         "normalize_l1", "binary_crossentropy", "glu_axis", "softmax_tuple",
         "log_softmax_axis0", "rms_normalization_scale", "solve_vec", "solve_triangular",
         "cholesky_inverse", "stft_hamming", "top_k", "extract_sequences",
         "einsum_trace", "kron", "split_at", "unstack_axis", "hstack", "vstack", "dstack",
         "repeat_flat", "pad_symmetric", "roll", "nanquantile", "median", "linspace",
         "clip", "gelu_exact", "elu_alpha", "celu_alpha", "hard_shrink_t",
         "multiply_mixed", "where_scalar", "take_along_axis0", "quantile_lower",
         "image.rgb_to_hsv", "image.extract_patches", "image.pad_images", "image.crop_images"]
GRAD_FLOAT32 |= {"image.rgb_to_hsv", "linspace"}  # floatx results of float64 arguments
GRAD_ARG.update({"multiply_mixed": 1, "where_scalar": 1, "einsum_trace": 1,
                 "binary_crossentropy": 1})
