"""Calls recorded against TF 2.21 (tests/ops/data/tf_reference_arrays.json) and replayed on
kilnflow by tests/ops/test_tf_reference_arrays.py: issue 12's array, special-function and
linalg names. Each case takes the module (`tf` when recorded in a side venv with
scripts/record_tf_arrays.py, kilnflow in the tests) and the inputs, and returns one tensor."""
import numpy as np


def inputs() -> dict:
    rng = np.random.default_rng(7)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    spd = rng.standard_normal((3, 3))
    return {"x": f32(2, 4, 4, 3), "w": f32(3, 3, 3, 2), "dy": f32(2, 2, 2, 2),
            "v": f32(1, 4, 5, 3, 2), "m": f32(3, 4),
            "ints": np.array([4, 1, 4, 2, 1, 7, 4], np.int32),
            "sx": np.array([-30.0, -2.5, -0.3, 0.0, 0.7, 1.0, 3.3, 7.5, 12.0, 24.0, 30.0, 80.0]),
            "px": np.array([1e-8, 0.05, 0.7, 1.0, 2.0, 3.3, 7.5, 12.0, 24.0, 30.0, 80.0, 700.0]),
            "sq": spd @ spd.T + 3 * np.eye(3), "a": rng.standard_normal((3, 3)) * 0.7}


def _first(f):
    return lambda tf, d: f(tf, d)[0]


def _second(f):
    return lambda tf, d: f(tf, d)[1]


_UNIQUE = lambda tf, d: tf.unique_with_counts(d["ints"])  # noqa: E731
_PARTS = lambda tf, d: tf.dynamic_partition(d["m"], [1, 0, 1], 2)  # noqa: E731
_TOPK = lambda tf, d: tf.approx_top_k(d["m"], 2)  # noqa: E731 - TF's CPU kernel: last dim, max
_SPACE = lambda tf, d: tf.required_space_to_batch_paddings([5, 7], [2, 3],  # noqa: E731
                                                           [[1, 0], [2, 1]])

CASES = {
    "roll": lambda tf, d: tf.roll(d["m"], [1, -2], [0, 1]),
    "repeat_axis": lambda tf, d: tf.repeat(d["m"], [2, 0, 1], axis=0),
    "repeat_flat": lambda tf, d: tf.repeat(d["m"], 2),
    "unique_y": _first(_UNIQUE), "unique_idx": _second(_UNIQUE),
    "unique_count": lambda tf, d: _UNIQUE(tf, d)[2],
    "sequence_mask": lambda tf, d: tf.sequence_mask([[1, 3], [0, 2]], 4, dtype=tf.float32),
    "reverse_sequence": lambda tf, d: tf.reverse_sequence(d["x"], [1, 3], seq_axis=2,
                                                          batch_axis=0),
    "strided_slice_masks": lambda tf, d: tf.strided_slice(
        d["x"], [1, 0, 3, 0], [2, 0, 0, 2], [1, 1, -1, 1], begin_mask=2, end_mask=2,
        shrink_axis_mask=1, new_axis_mask=0),
    "strided_slice_ellipsis": lambda tf, d: tf.strided_slice(
        d["x"], [0, 0, 1], [0, 0, 3], [1, 1, 1], ellipsis_mask=1, new_axis_mask=2),
    "dynamic_partition_0": _first(_PARTS), "dynamic_partition_1": _second(_PARTS),
    "dynamic_stitch": lambda tf, d: tf.dynamic_stitch([[0, 4], [1, 2, 4]],
                                                      [d["m"][:2], d["m"]]),
    "unravel_index": lambda tf, d: tf.unravel_index([0, 5, 11], [3, 4]),
    "bitcast_down": lambda tf, d: tf.bitcast(d["m"][0], tf.uint16),
    "bitcast_up": lambda tf, d: tf.bitcast(np.arange(8, dtype=np.uint8).reshape(2, 4),
                                           tf.int32),
    "broadcast_dynamic_shape": lambda tf, d: tf.broadcast_dynamic_shape([3, 1, 4], [2, 1]),
    "histogram_fixed_width_bins": lambda tf, d: tf.histogram_fixed_width_bins(
        d["m"], [-1.0, 1.0], nbins=7),
    "approx_top_k_values": _first(_TOPK), "approx_top_k_indices": _second(_TOPK),
    "space_paddings": _first(_SPACE), "space_crops": _second(_SPACE),
    "extract_volume_patches_same": lambda tf, d: tf.extract_volume_patches(
        d["v"], [1, 2, 3, 2, 1], [1, 2, 1, 2, 1], "SAME"),
    "extract_volume_patches_valid": lambda tf, d: tf.extract_volume_patches(
        d["v"], [1, 3, 2, 2, 1], [1, 1, 2, 1, 1], "VALID"),
    "conv_2d": lambda tf, d: tf.conv(d["x"], d["w"], [1, 2, 1, 1], "SAME"),
    # TF's CPU has no V2 kernels: TF's answer comes from the V1 ops (sizes, not tensors)
    "conv2d_backprop_filter_v2": lambda tf, d: tf.conv2d_backprop_filter_v2(
        d["x"], d["w"], d["dy"], [1, 2, 2, 1], "SAME") if tf.__name__ == "kilnflow" else
    tf.compat.v1.nn.conv2d_backprop_filter(d["x"], d["w"].shape, d["dy"], [1, 2, 2, 1],
                                           "SAME"),
    "conv2d_backprop_input_v2": lambda tf, d: tf.conv2d_backprop_input_v2(
        d["x"], d["w"], d["dy"], [1, 2, 2, 1], "SAME") if tf.__name__ == "kilnflow" else
    tf.compat.v1.nn.conv2d_backprop_input(d["x"].shape, d["w"], d["dy"], [1, 2, 2, 1],
                                          "SAME"),
}
for _name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
    CASES[_name] = (lambda n: lambda tf, d: getattr(tf.math.special, n)(
        d["sx"] if n.startswith("bessel_j") else d["px"]))(_name)
for _name in ("bessel_k0", "bessel_k0e", "bessel_k1", "bessel_k1e", "spence"):
    CASES[_name] = (lambda n: lambda tf, d: getattr(tf.math.special, n)(d["px"]))(_name)
for _name in ("dawsn", "expint", "fresnel_cos", "fresnel_sin"):
    CASES[_name] = (lambda n: lambda tf, d: getattr(tf.math.special, n)(d["sx"]))(_name)
CASES.update({
    "expm": lambda tf, d: tf.linalg.expm(d["a"]),
    "sqrtm": lambda tf, d: tf.linalg.sqrtm(d["sq"]),
    "logm": lambda tf, d: tf.math.real(tf.linalg.logm(d["sq"].astype(np.complex128))),
    "banded_triangular_solve": lambda tf, d: tf.linalg.banded_triangular_solve(
        d["m"][:2] + np.float32([[3.0], [0.0]]), d["m"].T[:, :2], lower=True),
    "banded_triangular_solve_upper": lambda tf, d: tf.linalg.banded_triangular_solve(
        d["m"][1:] + np.float32([[0.0], [3.0]]), d["m"].T[:, :2], lower=False),
    "eigh_tridiagonal": lambda tf, d: tf.linalg.eigh_tridiagonal(
        d["px"][1:5], d["sx"][4:7]),
})
_LO = lambda tf: tf.linalg  # noqa: E731
CASES.update({
    "circulant_real": lambda tf, d: tf.math.real(_LO(tf).LinearOperatorCirculant(
        d["px"][1:5], input_output_dtype=tf.complex128).to_dense()),
    "circulant_imag": lambda tf, d: tf.math.imag(_LO(tf).LinearOperatorCirculant(
        d["px"][1:5], input_output_dtype=tf.complex128).to_dense()),
    "circulant_det": lambda tf, d: tf.math.real(_LO(tf).LinearOperatorCirculant(
        d["px"][1:5], input_output_dtype=tf.complex128).determinant()),
    "permutation": lambda tf, d: _LO(tf).LinearOperatorPermutation([2, 0, 3, 1]).matmul(
        d["m"].T),
    "toeplitz": lambda tf, d: _LO(tf).LinearOperatorToeplitz(d["m"][0], d["m"][1]).to_dense(),
    "householder": lambda tf, d: _LO(tf).LinearOperatorHouseholder(d["m"][0]).to_dense(),
    "tridiag_compact": lambda tf, d: _LO(tf).LinearOperatorTridiag(d["m"][:, :3]).matmul(
        d["m"][:, :3].T),
    "kronecker": lambda tf, d: _LO(tf).LinearOperatorKronecker(
        [_LO(tf).LinearOperatorFullMatrix(d["a"]),
         _LO(tf).LinearOperatorFullMatrix(d["m"][:2, :2].astype(np.float64))]).to_dense(),
    "low_rank_update": lambda tf, d: _LO(tf).LinearOperatorLowRankUpdate(
        _LO(tf).LinearOperatorDiag(d["px"][2:5]), d["a"][:, :2], np.array([2.0, 3.0])).to_dense(),
    "block_lower_triangular": lambda tf, d: _LO(tf).LinearOperatorBlockLowerTriangular(
        [[_LO(tf).LinearOperatorFullMatrix(d["a"][:2, :2])],
         [_LO(tf).LinearOperatorFullMatrix(d["a"][:, :2]),
          _LO(tf).LinearOperatorFullMatrix(d["sq"])]]).to_dense(),
})
_SPECTRUM_2D = np.array([[6.0, 1.0, 1.0], [2.0, 0.5, 0.5]])  # conjugate-symmetric: real
_SPECTRUM_3D = np.arange(1.0, 9.0).reshape(2, 2, 2)
CASES.update({
    "circulant2d": lambda tf, d: tf.math.real(_LO(tf).LinearOperatorCirculant2D(
        _SPECTRUM_2D, input_output_dtype=tf.complex128).to_dense()),
    "circulant2d_imag": lambda tf, d: tf.math.imag(_LO(tf).LinearOperatorCirculant2D(
        _SPECTRUM_2D + 1j * np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 2.0]]),
        input_output_dtype=tf.complex128).to_dense()),
    "circulant3d": lambda tf, d: tf.math.real(_LO(tf).LinearOperatorCirculant3D(
        _SPECTRUM_3D, input_output_dtype=tf.complex128).matvec(np.arange(8.0) + 0j)),
})
