"""Samples of the ops in kilnflow/ops/signal.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from tests.ops.samples import add, rand


def _complex(*shape):
    return rand(*shape) + 1j * rand(*shape)


add("FFT", kf.signal.fft, (_complex(2, 8),), lambda x: np.fft.fft(x), differentiable=True,
    rtol=1e-10)
add("IFFT", kf.signal.ifft, (_complex(3, 5),), lambda x: np.fft.ifft(x), differentiable=True,
    rtol=1e-10)
add("IRFFT", kf.signal.irfft, (_complex(2, 5),), lambda x: np.fft.irfft(x), rtol=1e-10,
    differentiable=True)


def _re_im(f):
    return lambda x: kf.math.real(f(x)) + 2 * kf.math.imag(f(x))


def _np_re_im(f):
    return lambda x: np.real(f(x)) + 2 * np.imag(f(x))


add("RFFT", _re_im(lambda x: kf.signal.rfft(x, [6])), (rand(2, 8),),
    _np_re_im(lambda x: np.fft.rfft(x, 6)), rtol=1e-10, differentiable=True, name="grad_crop")
add("RFFT", _re_im(lambda x: kf.signal.rfft(x, [9])), (rand(7),),
    _np_re_im(lambda x: np.fft.rfft(x, 9)), rtol=1e-10, differentiable=True, name="grad_pad")
add("RFFT", _re_im(kf.signal.rfft), (rand(2, 8),), _np_re_im(np.fft.rfft), rtol=1e-10,
    differentiable=True)
add("IRFFT", lambda x: kf.signal.irfft(kf.complex(x, x[::-1])), (rand(2, 5),),
    lambda x: np.fft.irfft(x + 1j * x[::-1]), rtol=1e-10, differentiable=True, name="grad")
add("IRFFT", lambda x: kf.signal.irfft(kf.complex(x, 0.5 * x), [7]), (rand(5),),
    lambda x: np.fft.irfft(x + 0.5j * x, 7), rtol=1e-10, differentiable=True, name="grad_odd")

# multi-dimensional transforms: complex ones in both directions, real ones with gradients
# (reached through a real-valued function of a real input)
_nd = {"FFT2D": (kf.signal.fft2d, np.fft.fft2), "IFFT2D": (kf.signal.ifft2d, np.fft.ifft2),
       "FFT3D": (kf.signal.fft3d, lambda x: np.fft.fftn(x, axes=(-3, -2, -1))),
       "IFFT3D": (kf.signal.ifft3d, lambda x: np.fft.ifftn(x, axes=(-3, -2, -1))),
       "FFTND": (lambda x: kf.signal.fftnd(x, [3, 8], axes=[0, 2]),
                 lambda x: np.fft.fftn(x, [3, 8], axes=(0, 2))),
       "IFFTND": (lambda x: kf.signal.ifftnd(x, axes=[-1, 1]),
                  lambda x: np.fft.ifftn(x, axes=(-1, 1)))}
for _op, (_fn, _ref) in _nd.items():
    add(_op, _fn, (_complex(2, 3, 4, 5),), _ref, rtol=1e-10, differentiable=True)
    add(_op, lambda x, f=_fn: kf.math.real(f(kf.complex(x, x * x))), (rand(2, 3, 4),),
        lambda x, r=_ref: np.real(r(x + 1j * x * x)), rtol=1e-10, differentiable=True,
        name="real_path")
_real_nd = {"RFFT2D": (lambda x: kf.signal.rfft2d(x, [3, 6]),
                       lambda x: np.fft.rfft2(x, [3, 6])),
            "RFFT3D": (kf.signal.rfft3d, lambda x: np.fft.rfftn(x, axes=(-3, -2, -1))),
            "RFFTND": (lambda x: kf.signal.rfftnd(x, [5, 4], axes=[0, 1]),
                       lambda x: np.fft.rfftn(x, [5, 4], axes=(0, 1)))}
for _op, (_fn, _ref) in _real_nd.items():
    add(_op, _re_im(_fn), (rand(2, 4, 5),), _np_re_im(_ref), rtol=1e-10, differentiable=True)
_inverse_nd = {"IRFFT2D": (lambda x: kf.signal.irfft2d(x, [4, 6]),
                           lambda x: np.fft.irfft2(x, [4, 6])),
               "IRFFT3D": (kf.signal.irfft3d, lambda x: np.fft.irfftn(x, axes=(-3, -2, -1))),
               "IRFFTND": (lambda x: kf.signal.irfftnd(x, [3, 7], axes=[0, 2]),
                           lambda x: np.fft.irfftn(x, [3, 7], axes=(0, 2)))}
for _op, (_fn, _ref) in _inverse_nd.items():
    add(_op, lambda x, f=_fn: f(kf.complex(x, 0.3 * x * x)), (rand(2, 4, 4),),
        lambda x, r=_ref: r(x + 0.3j * x * x), rtol=1e-10, differentiable=True)
