"""Calls recorded against TF 2.21 (tests/ops/data/tf_reference_nn_math.json) and replayed on
kilnflow by tests/ops/test_tf_reference.py. Each case takes the module (`tf` when recorded in
a side venv with scripts/record_tf_reference.py, kilnflow in the tests) and the inputs."""
import numpy as np


def inputs() -> dict:
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {"x": f32(2, 4, 4, 3), "dw": f32(3, 3, 3, 2), "pw": f32(1, 1, 6, 4),
            "tw": f32(3, 3, 5, 3), "dy": f32(2, 2, 2, 3), "w1": f32(3, 3, 4), "x1": f32(2, 6, 3),
            "x3": f32(1, 3, 4, 4, 2), "w3": f32(2, 3, 3, 2, 3)}


CASES = {
    "depthwise_conv2d": lambda tf, d: tf.nn.depthwise_conv2d(d["x"], d["dw"], [1, 1, 1, 1],
                                                             "SAME"),
    "separable_conv2d": lambda tf, d: tf.nn.separable_conv2d(d["x"], d["dw"], d["pw"],
                                                             [1, 2, 2, 1], "SAME"),
    "conv2d_transpose_same": lambda tf, d: tf.nn.conv2d_transpose(d["dy"], d["tw"],
                                                                  [2, 4, 4, 5], 2, "SAME"),
    "conv2d_transpose_valid": lambda tf, d: tf.nn.conv2d_transpose(d["dy"], d["tw"],
                                                                   [2, 5, 5, 5], 2, "VALID"),
    "space_to_depth": lambda tf, d: tf.nn.space_to_depth(d["x"], 2),
    "depth_to_space": lambda tf, d: tf.nn.depth_to_space(d["x"][:, :2, :2, :].repeat(4, -1),
                                                         2),
    "lrn": lambda tf, d: tf.nn.lrn(d["x"], 1, 0.5, 0.3, 0.7),
    "conv1d": lambda tf, d: tf.nn.conv1d(d["x1"], d["w1"], 2, "SAME"),
    "conv1d_transpose": lambda tf, d: tf.nn.conv1d_transpose(
        d["x1"][:, :3], d["w1"][:, :, :3].transpose(0, 2, 1), [2, 6, 3], 2),
    "crelu": lambda tf, d: tf.nn.crelu(d["x1"]),
    "weighted_cross_entropy": lambda tf, d: tf.nn.weighted_cross_entropy_with_logits(
        np.abs(d["x1"]) / 3, d["x1"], 1.7),
    "log_poisson_loss_full": lambda tf, d: tf.nn.log_poisson_loss(np.abs(d["x1"]) * 3, d["x1"],
                                                                  True),
    "max_pool1d": lambda tf, d: tf.nn.max_pool1d(d["x1"], 2, 2, "SAME"),
    "avg_pool1d": lambda tf, d: tf.nn.avg_pool1d(d["x1"], 3, 1, "SAME"),
    "atrous_conv2d": lambda tf, d: tf.nn.atrous_conv2d(d["x"], d["dw"][..., :1], 2, "SAME"),
    "weighted_moments_variance": lambda tf, d: tf.nn.weighted_moments(d["x1"], [1],
                                                                      np.abs(d["x1"]))[1],
    "batch_normalization": lambda tf, d: tf.nn.batch_normalization(d["x1"], 0.3, 2.0, 0.1,
                                                                   1.5, 1e-3),
    "cumulative_logsumexp_exclusive": lambda tf, d: tf.math.cumulative_logsumexp(
        d["x1"], axis=1, exclusive=True),
    "cumprod_exclusive_reverse": lambda tf, d: tf.math.cumprod(d["x1"], axis=1, exclusive=True,
                                                               reverse=True),
    "bincount_rows": lambda tf, d: tf.math.bincount(np.array([[1, 2, 2], [0, 5, 1]]), axis=-1,
                                                    minlength=4),
    "in_top_k_ties": lambda tf, d: tf.math.in_top_k(
        np.array([1, 0]), np.array([[1.0, 2.0, 2.0], [3.0, 3.0, 3.0]], np.float32), 1),
    "log_sigmoid": lambda tf, d: tf.math.log_sigmoid(d["x1"] * 30),
    "reduce_std": lambda tf, d: tf.math.reduce_std(d["x1"], 1),
    "unsorted_segment_sqrt_n": lambda tf, d: tf.math.unsorted_segment_sqrt_n(
        d["x1"][0], [0, 0, 2, 1, 1, 1], 4),
    "confusion_matrix": lambda tf, d: tf.math.confusion_matrix([0, 1, 2, 1], [0, 2, 2, 1]),
    "xlogy": lambda tf, d: tf.math.xlogy(np.array([0.0, 1.0, 2.0], np.float32),
                                         np.array([0.0, 0.5, 3.0], np.float32)),
    "atan2": lambda tf, d: tf.math.atan2(d["x1"][0], d["x1"][1]),
    "erfc": lambda tf, d: tf.math.erfc(d["x1"] * 2),
    "rint": lambda tf, d: tf.math.rint(np.array([0.5, 1.5, 2.5, -0.5, -2.5], np.float32)),
    "divide_no_nan": lambda tf, d: tf.math.divide_no_nan(d["x1"][0], np.where(
        d["x1"][1] > 0, d["x1"][1], 0).astype(np.float32)),
    "max_pool_with_argmax_values": lambda tf, d: tf.nn.max_pool_with_argmax(
        d["x"][:, :, :3], 2, 2, "SAME")[0],
    "max_pool_with_argmax_index": lambda tf, d: tf.nn.max_pool_with_argmax(
        d["x"][:, :, :3], 2, 2, "SAME", include_batch_in_index=True)[1],
    "dilation2d": lambda tf, d: tf.nn.dilation2d(d["x"], d["dw"][..., 0], [1, 1, 1, 1],
                                                 "SAME", "NHWC", [1, 2, 1, 1]),
    "erosion2d": lambda tf, d: tf.nn.erosion2d(d["x"], d["dw"][:2, :, :, 0], [1, 1, 1, 1],
                                               "VALID", "NHWC", [1, 1, 1, 1]),
    "conv3d_same": lambda tf, d: tf.nn.conv3d(d["x3"], d["w3"], [1, 2, 1, 1, 1], "SAME"),
    "conv3d_valid": lambda tf, d: tf.nn.conv3d(d["x3"], d["w3"], [1, 1, 1, 1, 1], "VALID"),
    "depthwise_backprop_input": lambda tf, d: tf.nn.depthwise_conv2d_backprop_input(
        [2, 4, 4, 3], d["dw"], d["x"].repeat(2, -1), [1, 1, 1, 1], "SAME"),
    "depthwise_backprop_filter": lambda tf, d: tf.nn.depthwise_conv2d_backprop_filter(
        d["x"], [3, 3, 3, 2], d["x"].repeat(2, -1), [1, 1, 1, 1], "SAME"),
    "space_to_batch": lambda tf, d: tf.nn.space_to_batch(d["x"][:, :3], [2, 2],
                                                         [[1, 0], [0, 0]]),
    "collapse_repeated_labels": lambda tf, d: tf.nn.collapse_repeated(
        np.array([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0]], np.int32), [5, 3])[0],
    "collapse_repeated_lengths": lambda tf, d: tf.nn.collapse_repeated(
        np.array([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0]], np.int32), [5, 3])[1],
    "saturate_cast": lambda tf, d: tf.saturate_cast(np.array([1e10, -1e10, 3.7, -300.0],
                                                             np.float32), tf.int32),
    "saturate_cast_uint8": lambda tf, d: tf.saturate_cast(np.array([-5, 300, 7]), tf.uint8),
    "truncatemod": lambda tf, d: tf.truncatemod(d["x1"][0] * 5, d["x1"][1]),
    "truncatediv": lambda tf, d: tf.truncatediv(np.array([-7, 7, 9], np.int32),
                                                np.array([2, -2, 4], np.int32)),
    "batch_to_space": lambda tf, d: tf.batch_to_space(d["x"].repeat(2, 0)[:, :2], [2, 2],
                                                      [[1, 0], [0, 1]]),
    "space_to_batch_nd": lambda tf, d: tf.space_to_batch_nd(d["x"], [2, 1], [[0, 0], [1, 0]]),
    "max_pool3d_same": lambda tf, d: tf.nn.max_pool3d(d["x3"], [1, 2, 3, 2, 1],
                                                      [1, 2, 2, 1, 1], "SAME"),
    "avg_pool3d_same": lambda tf, d: tf.nn.avg_pool3d(d["x3"], [1, 2, 3, 2, 1],
                                                      [1, 2, 2, 1, 1], "SAME"),
    "avg_pool3d_valid": lambda tf, d: tf.nn.avg_pool3d(d["x3"], 2, 1, "VALID"),
}


def recorded_value(entry: dict):
    """A recorded TF result ({value, shape, dtype}) as the NumPy array TF returned."""
    import numpy as np
    values = np.array([float(v) for v in entry["value"]]).reshape(entry["shape"])
    return values.astype(entry["dtype"]) if entry["dtype"] != "bool" else values.astype(bool)
