"""np.fft as library calls (NumPy's pocketfft inside the compiled program).

fft / ifft / rfft / irfft / hfft / ihfft and their 2-D and n-D forms run NumPy's own
function, so dtypes (float32 in, complex64 out, as NumPy 2) and values are NumPy's.  `n`,
`s`, `axis`, `axes` and `norm` are static params.  fftshift / ifftshift are rolls (fused
index arithmetic), fftfreq / rfftfreq take no array and are constants when traced.
fft and ifft have VJPs (autodiff/library_rules.py).
"""
from __future__ import annotations

import operator

import numpy as np

from . import implements, unsupported_option
from .library import call, implements_library, node_of, numpy_check, static_param
from .promote import normalize_axis

_NORMS = (None, "backward", "ortho", "forward")


def _norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         '"forward".')
    return norm


def _one_dimensional(name: str):
    def rule(a, n=None, axis=-1, norm=None, out=None):
        if out is not None:
            raise unsupported_option(name, "out=", "assign the result instead")
        x = node_of(a)
        if x.ndim == 0:                                  # NumPy's IndexError
            numpy_check(getattr(np.fft, name), np.ones((), x.dtype))
        axis = normalize_axis(operator.index(axis), x.ndim)
        n = None if n is None else operator.index(static_param(n, "n"))
        if n is not None and n < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
        if n is None and x.shape[axis] < 1:
            raise ValueError(f"Invalid number of FFT data points ({x.shape[axis]}) "
                             "specified.")
        return call(f"np.fft.{name}", [x], n=n, axis=axis, norm=_norm(norm))
    return rule


def _n_dimensional(name: str):
    # fft2 & co. transform the last two axes by default; fftn & co. every axis
    default_axes = (-2, -1) if name.endswith("2") else None

    def rule(a, s=None, axes=default_axes, norm=None, out=None):
        if out is not None:
            raise unsupported_option(name, "out=", "assign the result instead")
        x = node_of(a)
        s = static_param(s, "s")
        s = None if s is None else tuple(operator.index(v) for v in s)
        numpy_check(getattr(np.fft, name), np.ones((2,) * x.ndim, x.dtype), s=s,
                    axes=axes)                           # NumPy's errors for s / axes
        if axes is not None:
            axes = tuple(normalize_axis(operator.index(v), x.ndim) for v in axes)
        return call(f"np.fft.{name}", [x], s=s, axes=axes, norm=_norm(norm))
    return rule


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    implements_library(getattr(np.fft, _name))(_one_dimensional(_name))
for _name in ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"):
    implements_library(getattr(np.fft, _name))(_n_dimensional(_name))


def _shift(sign: int):
    def rule(x, axes=None):
        shape = np.shape(x) if not hasattr(x, "shape") else x.shape
        if axes is None:
            axes = tuple(range(len(shape)))
            shifts = [sign * (dim // 2) for dim in shape]
        elif isinstance(axes, (int, np.integer)):
            shifts = sign * (shape[axes] // 2)
        else:
            shifts = [sign * (shape[ax] // 2) for ax in axes]
        return np.roll(x, shifts, axes)
    return rule


implements(np.fft.fftshift)(_shift(1))
implements(np.fft.ifftshift)(_shift(-1))
