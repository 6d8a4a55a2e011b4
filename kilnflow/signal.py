"""The kf.signal namespace (tf.signal): re-exports only."""
from kilnflow.ops.signal import fft as fft
from kilnflow.ops.signal import ifft as ifft
from kilnflow.ops.signal import irfft as irfft
from kilnflow.ops.signal import rfft as rfft
from kilnflow.ops.signal_nd import fft2d as fft2d
from kilnflow.ops.signal_nd import fft3d as fft3d
from kilnflow.ops.signal_nd import fftnd as fftnd
from kilnflow.ops.signal_nd import fftshift as fftshift
from kilnflow.ops.signal_nd import ifft2d as ifft2d
from kilnflow.ops.signal_nd import ifft3d as ifft3d
from kilnflow.ops.signal_nd import ifftnd as ifftnd
from kilnflow.ops.signal_nd import ifftshift as ifftshift
from kilnflow.ops.signal_nd import irfft2d as irfft2d
from kilnflow.ops.signal_nd import irfft3d as irfft3d
from kilnflow.ops.signal_nd import irfftnd as irfftnd
from kilnflow.ops.signal_nd import rfft2d as rfft2d
from kilnflow.ops.signal_nd import rfft3d as rfft3d
from kilnflow.ops.signal_nd import rfftnd as rfftnd
from kilnflow.ops.signal_spectral import dct as dct
from kilnflow.ops.signal_spectral import frame as frame
from kilnflow.ops.signal_spectral import hamming_window as hamming_window
from kilnflow.ops.signal_spectral import hann_window as hann_window
from kilnflow.ops.signal_spectral import idct as idct
from kilnflow.ops.signal_spectral import inverse_mdct as inverse_mdct
from kilnflow.ops.signal_spectral import inverse_stft as inverse_stft
from kilnflow.ops.signal_spectral import inverse_stft_window_fn as inverse_stft_window_fn
from kilnflow.ops.signal_spectral import kaiser_bessel_derived_window as kaiser_bessel_derived_window  # noqa: E501
from kilnflow.ops.signal_spectral import kaiser_window as kaiser_window
from kilnflow.ops.signal_spectral import linear_to_mel_weight_matrix as linear_to_mel_weight_matrix  # noqa: E501
from kilnflow.ops.signal_spectral import mdct as mdct
from kilnflow.ops.signal_spectral import mfccs_from_log_mel_spectrograms as mfccs_from_log_mel_spectrograms  # noqa: E501
from kilnflow.ops.signal_spectral import overlap_and_add as overlap_and_add
from kilnflow.ops.signal_spectral import stft as stft
from kilnflow.ops.signal_spectral import vorbis_window as vorbis_window
