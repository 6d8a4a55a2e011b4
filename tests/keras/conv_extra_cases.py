"""Layer cases shared by scripts/record_keras_reference.py (run under TF 2.21 + Keras 3 in a
side venv) and tests/keras/test_conv_extra.py: each case builds a layer from its config,
feeds a fixed input and gives every weight fixed values, so the outputs Keras recorded in
tests/keras/data/keras_conv_extra.json can be compared with kilnflow's."""
import numpy as np

CASES = {
    "conv3d_valid": ("Conv3D", dict(filters=2, kernel_size=2), [2, 4, 5, 3, 2]),
    "conv3d_same_strided": ("Conv3D", dict(filters=3, kernel_size=(3, 2, 2), strides=2,
                                           padding="same", activation="relu"), [1, 5, 4, 4, 2]),
    "conv3d_dilated_nobias": ("Conv3D", dict(filters=2, kernel_size=2, dilation_rate=2,
                                             use_bias=False), [1, 5, 5, 5, 1]),
    # channels_first cases without bias: TF 2.21's Keras 3.15 on CPU adds the bias of
    # channels_first Conv3D/DepthwiseConv2D along the last axis (seen when the last axis
    # happens to have `filters` entries); kilnflow adds it per channel, as Keras documents
    "conv3d_channels_first": ("Conv3D", dict(filters=2, kernel_size=2, use_bias=False,
                                             data_format="channels_first"), [1, 2, 3, 4, 3]),
    "conv1dt_valid": ("Conv1DTranspose", dict(filters=2, kernel_size=3, strides=2),
                      [2, 5, 3]),
    "conv1dt_same": ("Conv1DTranspose", dict(filters=3, kernel_size=4, strides=2,
                                             padding="same"), [1, 6, 2]),
    "conv1dt_dilated": ("Conv1DTranspose", dict(filters=2, kernel_size=3, dilation_rate=2),
                        [1, 5, 2]),
    "conv2dt_valid": ("Conv2DTranspose", dict(filters=2, kernel_size=3, strides=2),
                      [2, 3, 4, 3]),
    "conv2dt_same": ("Conv2DTranspose", dict(filters=3, kernel_size=(3, 2), strides=(2, 1),
                                             padding="same", activation="tanh"), [1, 4, 3, 2]),
    "conv2dt_output_padding": ("Conv2DTranspose", dict(filters=2, kernel_size=3, strides=2,
                                                       output_padding=1), [1, 3, 3, 2]),
    "conv2dt_channels_first": ("Conv2DTranspose", dict(filters=2, kernel_size=2, strides=2,
                                                       data_format="channels_first"),
                               [1, 3, 2, 3]),
    "conv3dt_valid": ("Conv3DTranspose", dict(filters=2, kernel_size=2, strides=2),
                      [1, 2, 3, 2, 3]),
    "conv3dt_same": ("Conv3DTranspose", dict(filters=2, kernel_size=3, strides=(1, 2, 2),
                                             padding="same"), [2, 2, 3, 2, 2]),
    "dw1d_valid": ("DepthwiseConv1D", dict(kernel_size=3, depth_multiplier=2), [2, 6, 3]),
    "dw1d_same_strided": ("DepthwiseConv1D", dict(kernel_size=2, strides=2, padding="same"),
                          [1, 7, 2]),
    "dw2d_valid": ("DepthwiseConv2D", dict(kernel_size=3, depth_multiplier=2), [2, 5, 4, 3]),
    "dw2d_same": ("DepthwiseConv2D", dict(kernel_size=(2, 3), strides=2, padding="same",
                                          activation="relu"), [1, 5, 6, 2]),
    "dw2d_dilated": ("DepthwiseConv2D", dict(kernel_size=2, dilation_rate=2, use_bias=False),
                     [1, 5, 5, 2]),
    "dw2d_channels_first": ("DepthwiseConv2D", dict(kernel_size=2, use_bias=False,
                                                    data_format="channels_first"),
                            [1, 2, 4, 3]),
    "sep1d_valid": ("SeparableConv1D", dict(filters=4, kernel_size=3, depth_multiplier=2),
                    [2, 6, 3]),
    "sep1d_same": ("SeparableConv1D", dict(filters=2, kernel_size=2, strides=2,
                                           padding="same"), [1, 7, 2]),
    "sep2d_valid": ("SeparableConv2D", dict(filters=4, kernel_size=3), [2, 5, 5, 3]),
    "sep2d_same_mult": ("SeparableConv2D", dict(filters=3, kernel_size=2, depth_multiplier=2,
                                                padding="same", activation="sigmoid"),
                        [1, 4, 5, 2]),
    "sep2d_dilated": ("SeparableConv2D", dict(filters=2, kernel_size=2, dilation_rate=2,
                                              use_bias=False), [1, 6, 6, 2]),
    "maxpool3d": ("MaxPooling3D", dict(pool_size=2), [2, 4, 5, 4, 2]),
    "avgpool3d_same": ("AveragePooling3D", dict(pool_size=(2, 3, 2), strides=(1, 2, 2),
                                                padding="same"), [1, 3, 5, 4, 2]),
    "avgpool3d_channels_first": ("AveragePooling3D", dict(pool_size=2,
                                                          data_format="channels_first"),
                                 [1, 2, 4, 4, 4]),
    "gmaxpool3d": ("GlobalMaxPooling3D", dict(), [2, 3, 2, 4, 3]),
    "gavgpool3d_keepdims": ("GlobalAveragePooling3D", dict(keepdims=True,
                                                           data_format="channels_first"),
                            [2, 3, 2, 4, 3]),
    "einsum_dense_2d": ("EinsumDense", dict(equation="ab,bc->ac", output_shape=4,
                                            bias_axes="c"), [3, 5]),
    "einsum_dense_heads": ("EinsumDense", dict(equation="abc,cde->abde",
                                               output_shape=(None, 2, 3), bias_axes="de",
                                               activation="relu"), [2, 4, 5]),
    "einsum_dense_ellipsis": ("EinsumDense", dict(equation="...b,bc->...c", output_shape=3,
                                                  bias_axes="c"), [2, 3, 4]),
    "rms_norm": ("RMSNormalization", dict(), [3, 5]),
    "rms_norm_axes": ("RMSNormalization", dict(axis=(1, 2), epsilon=1e-3), [2, 3, 4]),
    "thresholded_relu": ("ThresholdedReLU", dict(theta=0.5), [3, 4]),
    "adaptive_avg1d": ("AdaptiveAveragePooling1D", dict(output_size=3), [2, 7, 2]),
    "adaptive_max1d": ("AdaptiveMaxPooling1D", dict(output_size=4), [2, 10, 3]),
    "adaptive_avg2d": ("AdaptiveAveragePooling2D", dict(output_size=(2, 3)), [1, 5, 7, 2]),
    "adaptive_max2d_cf": ("AdaptiveMaxPooling2D", dict(output_size=3,
                                                       data_format="channels_first"),
                          [1, 2, 7, 8]),
    "adaptive_avg3d": ("AdaptiveAveragePooling3D", dict(output_size=2), [1, 5, 4, 3, 2]),
    "adaptive_max3d": ("AdaptiveMaxPooling3D", dict(output_size=(1, 2, 3)), [1, 3, 5, 7, 1]),
}


def case_input(shape: list) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + 0.3) * 1.5).reshape(shape).astype(np.float32)


def weight_values(shape: list, index: int) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.cos(np.arange(n) * 0.41 + index) * 0.6).reshape(shape).astype(np.float32)
