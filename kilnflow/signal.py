"""The kf.signal namespace (tf.signal): re-exports only."""
from kilnflow.ops.signal import fft as fft
from kilnflow.ops.signal import ifft as ifft
from kilnflow.ops.signal import irfft as irfft
from kilnflow.ops.signal import rfft as rfft
