"""Kernel smoothing on ``[0, 1]``: Nadaraya-Watson regression, kernel density, SmoothECE.

The first piece of Part III.  The reassessing paper (*Reassessing How to Compare and Improve
the Calibration of Machine Learning Models*, "004") estimates every conditional expectation of
its calibration-sharpness diagrams (Sec. 4.2, App. D) with the Nadaraya-Watson estimator
(4.8) and the density of the confidences with the matching kernel density estimate (App. D:
"just the denominator of the kernel regression (4.8)"); the plug-in estimator of Thm C.4
evaluates the regression at the sample points themselves.  SmoothECE (Blasiok & Nakkiran 2023,
*Smooth ECE: Principled reliability diagrams via kernel smoothing*) is the kernel-smoothed
calibration error that 004 reports in Table 1 and compares against in App. G.

**Functions.**

* :func:`nadaraya_watson` -- ``m(t) = sum_i y_i K(t, x_i) / sum_i K(t, x_i)``.
* :func:`kde` -- ``p(t) = (1/n) sum_i K(t, x_i)``.
* :func:`default_bandwidth` -- the default ``sigma_n = 0.1 n^(-1/5)`` of both (a bandwidth that
  shrinks with ``n``, as the consistency of 004's kernel estimate requires; 004 fixes 0.05).
* :func:`smooth_ece` -- ``smECE_sigma = int_0^1 |(1/n) sum_i K_R(t, f_i) (y_i - f_i)| dt``
  with the reflected Gaussian kernel, at a given ``sigma`` or at the fixed point
  ``smECE_sigma* = sigma*``.

**Kernels.**

``K_sigma(u) = K(u / sigma) / sigma`` with ``K(u) = exp(-u^2/2) / sqrt(2 pi)`` (``"gaussian"``)
or ``K(u) = 3 (1 - u^2) / 4`` on ``|u| <= 1`` (``"epanechnikov"``, 004 App. H.2).  Without
reflection ``K(t, x) = K_sigma(t - x)``: near 0 and 1 part of the kernel's mass falls outside
the unit interval and the density estimate is biased down (by half at the boundary).  With
``reflect=True`` the kernel is reflected at 0 and 1 by the method of images,

    K_R(t, x) = sum_{m in Z} [K_sigma(t - x - 2m) + K_sigma(t + x - 2m)],

the kernel of the heat equation on ``[0, 1]`` with reflecting (Neumann) boundaries: for every
``x`` in ``[0, 1]``, ``int_0^1 K_R(t, x) dt = 1``, and ``dK_R/dt = 0`` at ``t = 0, 1``.  All
images that can contribute in floating point are summed (in practice one or two on each side);
for ``x`` at 0 or 1 the two images ``x`` and ``-x`` (or ``2 - x``) coincide and both count.

**Methods and their error.**

``method="exact"`` sums the kernel over all (sample, evaluation point) pairs in blocks of at
most :data:`BLOCK_ENTRIES` entries (never an ``n x n`` matrix): ``O(n m)`` time for ``m``
evaluation points, exact up to rounding.  For the Gaussian regression the exponents are shifted
by the squared distance from ``t`` to its nearest sample, which cancels in the ratio and keeps
``m(t)`` defined (it tends to the nearest sample's ``y``) even where every kernel value would
underflow.

``method="binned"`` is ``O(n + G log G)``: linear binning of the weights onto the grid
``g_j = j delta``, ``delta = 1/G``, ``G`` the smallest power of two with
``delta <= sigma / GRID_PER_BANDWIDTH`` (:func:`grid_size`), an exact discrete convolution with
the kernel sampled at the grid offsets (an FFT of length ``2G``; with reflection a circular one
over the even 2-periodic extension, which realises every image), and linear interpolation back
to the evaluation points.  Its error, derived:

* *Binning.* A sample at ``x = g_j + r delta`` is replaced by weights ``1 - r`` at ``g_j`` and
  ``r`` at ``g_{j+1}``; its contribution at ``t`` becomes the linear interpolant, in ``s``, of
  ``s -> K(t, s)``, whose error is ``r (1 - r) delta^2 / 2 |d^2K/ds^2(xi)| <= delta^2/8 ||K''||``.
* *Interpolation.* The binned sum is exact at the grid nodes; interpolating it linearly to
  ``t`` errs by at most ``delta^2/8`` times its second derivative, again ``<= delta^2/8 ||K''||``
  per unit of weight.

So for a sum ``F(t) = sum_i w_i K(t, x_i)`` (the density has ``w_i = 1/n``)::

    |F_binned(t) - F(t)| <= (delta^2 / 4) ||d^2K/dt^2||_inf sum_i |w_i|,

with ``||K_sigma''||_inf = phi(0)/sigma^3 = 0.399/sigma^3`` for the Gaussian (at most three
images of a point lie within distance 1 of ``t``, so ``3 phi(0)/sigma^3`` with reflection,
``sigma <= 0.1``).  Relative to the natural scale ``||K_sigma||_inf = phi(0)/sigma`` of a
density this is ``(delta/sigma)^2 / 4`` (three times that with reflection): second order in
``delta/sigma``, at most ``4e-6`` (``1.1e-5``) with ``delta <= sigma/256``.  Integrated over
``t`` the bound is ``int |F_binned - F| <= 0.242 (delta/sigma)^2 (1 + 1.1 delta/sigma)
sum |w_i|``, using ``int |phi''| = 4 phi(1) = 0.968``.  The Epanechnikov kernel has a kink at
``|u| = 1`` (slope jump ``J = 3/(2 sigma^2)``); linear interpolation across a kink errs by up
to ``delta J / 4``, so samples whose images lie within ``2 delta`` of ``t +- sigma`` add a term
first order in ``delta`` -- a fraction ``O(delta/sigma)`` of the samples, so the aggregate error
is still ``O((delta/sigma)^2)``.  The binned regression is the ratio of two binned sums;
where the binned denominator falls below ``1e-8`` of its maximum (far from every sample, where
FFT round-off, about ``1e-16`` of the maximum, would dominate) the points are recomputed
exactly.  ``method="auto"`` is exact when ``n m <= AUTO_EXACT_ENTRIES`` or the bandwidth is too
small for the grid cap, binned otherwise.

Validation follows :mod:`calnotes._validate`: samples ``x`` and evaluation points ``grid`` in
``[0, 1]``, finite responses ``y``, a bandwidth in ``(0, 1]``; anything else is a
:class:`ValueError` naming the argument.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validate import check_labels, check_probabilities

# FFTs: numpy.fft (the pocketfft of scipy.fft; on the power-of-two lengths used by the
# reflected sums and SmoothECE both returned identical numbers), so that SmoothECE in a
# report needs no scipy import; the unreflected convolution imports scipy.fft lazily.

__all__ = [
    "nadaraya_watson",
    "kde",
    "default_bandwidth",
    "DEFAULT_BANDWIDTH_COEFFICIENT",
    "smooth_ece",
    "grid_size",
    "GRID_PER_BANDWIDTH",
    "MAX_GRID",
    "BLOCK_ENTRIES",
    "AUTO_EXACT_ENTRIES",
    "SMECE_MIN_BANDWIDTH",
]

#: The binned grid spacing is at most ``bandwidth / GRID_PER_BANDWIDTH``.
GRID_PER_BANDWIDTH = 256
#: Largest binned grid (intervals); bandwidths below ``GRID_PER_BANDWIDTH / MAX_GRID`` (about
#: ``2.4e-4``) cannot be binned at the stated resolution.
MAX_GRID = 2 ** 20
_MIN_GRID = 256
#: The exact method holds at most this many kernel values at a time (8 MB of float64).
BLOCK_ENTRIES = 2 ** 20
#: ``method="auto"`` is exact when (samples x evaluation points) is at most this.
AUTO_EXACT_ENTRIES = 2 ** 22
#: Smallest bandwidth :func:`smooth_ece` accepts, and the floor of its bandwidth search.
SMECE_MIN_BANDWIDTH = 1e-4
#: Width of the final bisection bracket of the SmoothECE bandwidth.
_SMECE_BRACKET = 2.0 ** -20

_KERNELS = ("gaussian", "epanechnikov")
_METHODS = ("auto", "exact", "binned")
_PHI0 = 1.0 / math.sqrt(2.0 * math.pi)
# exp(-x^2 / 2) is exactly 0 in float64 beyond x = 38.6 (the exponent passes -745.1).
_GAUSS_REACH = 38.7
# Binned sums below this fraction of their maximum are recomputed exactly (regression only).
_BINNED_FLOOR = 1e-8


# ----------------------------------------------------------------------------- validation

def _check_kernel(kernel) -> str:
    if not isinstance(kernel, str) or kernel.lower() not in _KERNELS:
        raise ValueError(f"kernel: expected one of {', '.join(map(repr, _KERNELS))},"
                         f" got {kernel!r}")
    return kernel.lower()


def _check_method(method) -> str:
    if not isinstance(method, str) or method.lower() not in _METHODS:
        raise ValueError(f"method: expected one of {', '.join(map(repr, _METHODS))},"
                         f" got {method!r}")
    return method.lower()


def _check_bandwidth(bandwidth, minimum: float = 0.0) -> float:
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real):
        raise ValueError(f"bandwidth: expected a number in (0, 1], got {bandwidth!r}")
    sigma = float(bandwidth)
    if not (np.isfinite(sigma) and 0.0 < sigma <= 1.0):
        raise ValueError(f"bandwidth: expected a number in (0, 1] (a kernel width on the unit"
                         f" interval), got {bandwidth!r}")
    if sigma < minimum:
        raise ValueError(f"bandwidth: {sigma!r} is below {minimum:g}, the finest bandwidth"
                         " resolved here")
    return sigma


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def _check_grid(grid):
    """Evaluation points: any shape, finite, in ``[0, 1]``; returns (flat float64, shape)."""
    try:
        t = np.asarray(grid, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"grid: could not convert to a float array ({exc})") from None
    if t.size == 0:
        raise ValueError("grid: no evaluation points (empty array)")
    flat = t.ravel()
    if not (flat.min() >= 0.0 and flat.max() <= 1.0):      # NaN fails both
        bad = ~np.isfinite(flat) | (flat < 0.0) | (flat > 1.0)
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"grid: value {float(flat[i])!r} at flat index {i} is not in [0, 1];"
                         " the kernel smoothers live on the unit interval")
    return flat, t.shape


def _check_response(y, n: int) -> np.ndarray:
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y: could not convert to a float array ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"y: expected a 1-d array of shape (n,), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"y: has {arr.shape[0]} values but x has {n}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"y: non-finite value {float(arr[i])} at index {i}")
    return arr


def grid_size(bandwidth: float) -> int:
    """Number of intervals ``G`` of the binned grid for a bandwidth.

    The smallest power of two with ``1/G <= bandwidth / GRID_PER_BANDWIDTH``, at least 256 and
    at most :data:`MAX_GRID`.

    Examples
    --------
    >>> grid_size(0.05), grid_size(1.0), grid_size(1e-3)
    (8192, 256, 262144)
    """
    sigma = _check_bandwidth(bandwidth)
    g = 2 ** int(math.ceil(math.log2(GRID_PER_BANDWIDTH / sigma)))
    return int(min(max(g, _MIN_GRID), MAX_GRID))


# ----------------------------------------------------------------------------- kernels

def _profile(u2: np.ndarray, kernel: str) -> np.ndarray:
    """Unnormalised kernel profile of ``u^2`` (in place): ``exp(-u^2/2)`` or ``max(1-u^2, 0)``."""
    if kernel == "gaussian":
        u2 *= -0.5
        return np.exp(u2, out=u2)
    np.subtract(1.0, u2, out=u2)
    return np.maximum(u2, 0.0, out=u2)


def _norm(kernel: str, sigma: float) -> float:
    return (_PHI0 if kernel == "gaussian" else 0.75) / sigma


def _reach(kernel: str, sigma: float) -> float:
    """Distance beyond which the kernel is exactly zero (in float64 for the Gaussian)."""
    return (_GAUSS_REACH if kernel == "gaussian" else 1.0) * sigma


def _image_shifts(lo: float, hi: float, tlo: float, thi: float, reach: float, reflect: bool):
    """``(sign, shift)`` pairs of images ``sign * x + shift`` of samples in ``[lo, hi]`` that
    come within ``reach`` of ``[tlo, thi]``."""
    if not reflect:
        return [(1.0, 0.0)]
    out = []
    kmax = int(math.ceil((reach + 2.0) / 2.0)) + 1
    for m in range(-kmax, kmax + 1):
        for sign in (1.0, -1.0):
            a, b = (lo + 2 * m, hi + 2 * m) if sign > 0 else (2 * m - hi, 2 * m - lo)
            if max(a - thi, tlo - b, 0.0) <= reach:
                out.append((sign, 2.0 * m))
    return out


# ----------------------------------------------------------------------------- exact sums

def _nearest_sq(x_sorted: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Squared distance from each ``t`` to its nearest sample."""
    j = np.searchsorted(x_sorted, t)
    left = x_sorted[np.clip(j - 1, 0, x_sorted.size - 1)]
    right = x_sorted[np.clip(j, 0, x_sorted.size - 1)]
    return np.minimum((t - left) ** 2, (t - right) ** 2)


def _exact_sums(x, W, t, sigma, kernel, reflect, shift=False):
    """``S[k, c] = sum_i W[i, c] K(t_k, x_i)`` (times ``exp(s_k / 2 sigma^2)`` with ``shift``).

    ``K`` is ``K_sigma(t - x)`` or the reflected ``K_R``.  Blocks of at most
    :data:`BLOCK_ENTRIES` kernel values.  With ``shift`` (Gaussian only) every row is scaled by
    ``exp(s_k / (2 sigma^2))``, ``s_k`` the squared distance from ``t_k`` to its nearest
    sample, so the largest term of each row is ``1``: ratios of such sums are unaffected and
    never ``0/0``.
    """
    s = None
    reach = _reach(kernel, sigma)
    if shift and kernel == "gaussian":
        s = _nearest_sq(np.sort(x), t)
        # an image at distance d contributes exp(-(d^2 - s) / 2 sigma^2): zero once
        # d^2 > s + (38.7 sigma)^2
        reach = math.sqrt(float(s.max()) + reach * reach)
    shifts = _image_shifts(float(x.min()), float(x.max()), float(t.min()), float(t.max()),
                           reach, reflect)
    if not shifts:             # no image within the kernel's reach of any point: all sums 0
        return np.zeros((t.size, W.shape[1]))
    X = np.concatenate([sign * x + off for sign, off in shifts])
    WW = np.concatenate([W] * len(shifts), axis=0)
    out = np.zeros((t.size, W.shape[1]))
    inv2 = 1.0 / (sigma * sigma)
    nx = X.size
    xstep = min(nx, BLOCK_ENTRIES)
    tstep = max(1, BLOCK_ENTRIES // xstep)
    for a in range(0, t.size, tstep):
        tb = t[a:a + tstep, None]
        for b in range(0, nx, xstep):
            u2 = tb - X[None, b:b + xstep]
            u2 *= u2
            if s is not None:
                u2 -= s[a:a + tstep, None]
            u2 *= inv2
            out[a:a + tstep] += _profile(u2, kernel) @ WW[b:b + xstep]
    out *= _norm(kernel, sigma)
    return out


# ----------------------------------------------------------------------------- binned sums

def _linear_bin(x: np.ndarray, W: np.ndarray, G: int) -> np.ndarray:
    """Linear binning of the columns of ``W`` at ``x`` onto ``j/G``: shape ``(G + 1, c)``."""
    pos = x * G
    idx = np.minimum(pos.astype(np.intp), G - 1)
    frac = pos - idx
    out = np.empty((G + 1, W.shape[1]))
    for c in range(W.shape[1]):
        w = W[:, c]
        wr = w * frac
        out[:, c] = (np.bincount(idx, weights=w - wr, minlength=G + 1)
                     + np.bincount(idx + 1, weights=wr, minlength=G + 1))
    return out


def _periodic_kernel(sigma: float, kernel: str, G: int) -> np.ndarray:
    """``k[q] = sum_m K_sigma(q/G - 2m)``, ``q = 0..2G-1``: the kernel on the circle of length 2."""
    d = np.arange(2 * G) / G
    reach = _reach(kernel, sigma)
    k = np.zeros(2 * G)
    for sign, off in _image_shifts(0.0, 2.0 - 1.0 / G, 0.0, 0.0, reach, True):
        if sign < 0:
            continue                    # the even kernel needs only the translates
        u2 = (d + off) / sigma
        u2 *= u2
        k += _profile(u2, kernel)
    return k * _norm(kernel, sigma)


def _even_extension(B: np.ndarray, G: int) -> np.ndarray:
    """Even 2-periodic extension (``2G`` rows) of node weights ``B`` (rows ``0..G``).

    A sample at ``x`` has images ``x + 2m`` and ``-x + 2m``; at ``x = 0`` (or 1) the two
    coincide and both count, so the end nodes are doubled."""
    v = np.empty((2 * G, B.shape[1]))
    v[:G + 1] = B
    v[0] *= 2.0
    v[G] *= 2.0
    v[G + 1:] = B[G - 1:0:-1]
    return v


def _gauss_multiplier(sigma: float, G: int, modes: int) -> np.ndarray:
    """DFT (length ``2G``) of the reflected Gaussian sampled at ``q/G``, modes ``0..modes-1``.

    By Poisson summation ``sum_q sum_m phi_sigma(q/G - 2m) e^{-i pi k q / G}
    = G sum_l exp(-pi^2 sigma^2 (k + 2 l G)^2 / 2)``; the aliases ``l != 0`` are below
    ``exp(-pi^2 256^2 / 2) = 0`` in float64 because ``G sigma >= GRID_PER_BANDWIDTH``."""
    k = np.arange(modes)
    return G * np.exp(-0.5 * (math.pi * sigma * k) ** 2)


def _grid_sums(B: np.ndarray, G: int, sigma: float, kernel: str, reflect: bool) -> np.ndarray:
    """``F[k, c] = sum_j B[j, c] K(k/G, j/G)``, ``k = 0..G``, exactly (up to FFT rounding)."""
    if reflect:
        # circular convolution with the kernel on the circle of length 2
        V = np.fft.rfft(_even_extension(B, G), axis=0)
        if kernel == "gaussian" and G * sigma >= GRID_PER_BANDWIDTH:
            kf = _gauss_multiplier(sigma, G, G + 1)
        else:
            kf = np.fft.rfft(_periodic_kernel(sigma, kernel, G))
        return np.fft.irfft(V * kf[:, None], n=2 * G, axis=0)[:G + 1]
    M = min(G, int(math.ceil(_reach(kernel, sigma) * G)))
    u2 = np.arange(-M, M + 1) / (G * sigma)
    u2 *= u2
    kv = _profile(u2, kernel) * _norm(kernel, sigma)
    F = _fftconvolve_columns(B, kv)
    return F[M:M + G + 1]


def _fftconvolve_columns(B: np.ndarray, kv: np.ndarray) -> np.ndarray:
    """Full linear convolution of every column of ``B`` with ``kv``: the steps of
    ``scipy.signal.fftconvolve(B, kv[:, None], mode="full", axes=0)`` (real FFTs of the
    padded length ``next_fast_len(L, real=True)``), the same numbers without importing
    ``scipy.signal`` (about 1 s on a cold start)."""
    from scipy import fft as sp_fft        # lazily: only the unreflected binned sums need it

    L = B.shape[0] + kv.size - 1
    size = sp_fft.next_fast_len(L, True)
    spec = sp_fft.rfft(B, size, axis=0) * sp_fft.rfft(kv, size)[:, None]
    return sp_fft.irfft(spec, size, axis=0)[:L]


def _interp(F: np.ndarray, G: int, t: np.ndarray) -> np.ndarray:
    """Linear interpolation of node values ``F`` (rows ``0..G``) at ``t`` in ``[0, 1]``."""
    pos = t * G
    idx = np.minimum(pos.astype(np.intp), G - 1)
    frac = (pos - idx)[:, None]
    return F[idx] * (1.0 - frac) + F[idx + 1] * frac


def _binned_sums(x, W, t, sigma, kernel, reflect):
    G = grid_size(sigma)
    F = _grid_sums(_linear_bin(x, W, G), G, sigma, kernel, reflect)
    return _interp(F, G, t), F


# ----------------------------------------------------------------------------- public

#: ``c`` of the default bandwidth ``sigma_n = c n^(-1/5)`` (:func:`default_bandwidth`).
DEFAULT_BANDWIDTH_COEFFICIENT = 0.1


def default_bandwidth(n: int) -> float:
    """The default kernel bandwidth for ``n`` samples: ``sigma_n = 0.1 n^(-1/5)``.

    Why this rule and not a fixed width.  A fixed bandwidth is not a consistent choice: the
    kernel estimates then converge to a *smoothed* functional, not to the conditional
    expectation, and the plug-in confidence calibration error (004, eq. (C.3)) keeps a bias that
    does not shrink with ``n`` (004's Thm C.4 needs ``sigma_n -> 0`` and ``n sigma_n^2 / log n ->
    infinity``).  ``n^(-1/5)`` satisfies both and balances the smoothing bias of the regression,
    ``O(sigma^2)``, against its variance, ``O(1/(n sigma))``, for a smooth regression function
    (the classical rate of a second-order kernel); the constant 0.1 makes the plug-in's relative
    bias small over the sample sizes of the book: on the consistency simulator of the
    sharpness-diagram chapter (``h ~ U(1/2, 1)``, ``P(correct | h) = 0.9 h^2 + 0.1 h``) it is
    about -0.4% at ``n = 1,000`` (``sigma = 0.025``), -2% at 5,000 and -1% at 40,000, where 004's
    fixed ``sigma = 0.05`` is 21-25% low (``calnotes.book.claims.sharpness``, claim
    ``004.thmC.4.consistency``).  The value is capped at 1 (the widest bandwidth accepted).

    Parameters
    ----------
    n : int
        Number of samples (at least 1).

    Returns
    -------
    float

    Examples
    --------
    >>> round(default_bandwidth(1000), 4)
    0.0251
    >>> round(default_bandwidth(40000), 4)
    0.012
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n: expected a positive integer, got {n!r}")
    return float(min(1.0, DEFAULT_BANDWIDTH_COEFFICIENT * float(n) ** -0.2))


def _prepare(x, grid, bandwidth, kernel, reflect, method):
    x = check_probabilities(x, name="x", allow_2d=False)
    if bandwidth is None:
        bandwidth = default_bandwidth(max(int(x.size), 1))
    sigma = _check_bandwidth(bandwidth)
    kernel = _check_kernel(kernel)
    reflect = _check_bool(reflect, "reflect")
    method = _check_method(method)
    if grid is None:
        t, shape = x, x.shape
    else:
        t, shape = _check_grid(grid)
    small = sigma < GRID_PER_BANDWIDTH / MAX_GRID
    if method == "binned" and small:
        raise ValueError(f"bandwidth: {sigma!r} is below {GRID_PER_BANDWIDTH / MAX_GRID:.3g},"
                         " too small for the binned grid; use method='exact'")
    if method == "auto":
        method = "exact" if (small or x.size * t.size <= AUTO_EXACT_ENTRIES) else "binned"
    return x, t, shape, sigma, kernel, reflect, method


def nadaraya_watson(x, y, grid=None, *, bandwidth=None, kernel="gaussian", reflect=False,
                    method="auto"):
    """Nadaraya-Watson kernel regression of ``y`` on ``x`` over ``[0, 1]``.

    ``m(t) = sum_i y_i K(t, x_i) / sum_i K(t, x_i)``: 004 eq. (4.8) (Sec. 4.2), the estimator
    of every conditional expectation in the calibration-sharpness diagrams (App. D: with
    ``y_i`` the correctness ``1{y_i = c(x_i)}`` for the calibration curve, and the divergence
    ``d_phi(e_{y_i}, g(x_i))`` for the sharpness band), evaluated at the samples themselves
    in the plug-in estimator of Thm C.4 (eq. (C.3)).  As printed, (4.8) has the same sum in
    numerator and denominator; the numerator carries ``y_i`` (Nadaraya 1964, Watson 1964).

    Parameters
    ----------
    x : array_like, shape (n,)
        Covariates in ``[0, 1]`` (confidences, predicted probabilities).
    y : array_like, shape (n,)
        Finite responses.
    grid : array_like, optional
        Evaluation points in ``[0, 1]`` (any shape); default: the samples ``x``.
    bandwidth : float, optional
        ``sigma`` in ``(0, 1]``; default :func:`default_bandwidth` of the number of samples,
        ``0.1 n^(-1/5)`` (a fixed width is not consistent; see there).  004 uses a fixed 0.05
        (Sec. 5, App. D) and studies 0.01-0.25 (App. H.1).
    kernel : {"gaussian", "epanechnikov"}
        The Gaussian of Sec. 5 or the Epanechnikov kernel of App. H.2.
    reflect : bool
        Reflect the kernel at 0 and 1 (method of images; see the module docstring).
    method : {"auto", "exact", "binned"}
        Exact ``O(n m)`` blocked sums, or linear binning + FFT, ``O(n + G log G)``, with the
        error bound of the module docstring (relative ``O((delta/sigma)^2)``, below ``1e-5``).

    Returns
    -------
    numpy.ndarray
        ``m`` at ``grid`` (same shape), or at ``x`` (shape ``(n,)``).  NaN where no sample lies
        within the kernel's support (Epanechnikov only: the Gaussian estimate is always
        defined and tends to the nearest sample's ``y`` far from the data).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.1, 0.2, 0.8, 0.9]); y = np.array([0.0, 1.0, 1.0, 1.0])
    >>> nadaraya_watson(x, y, [0.15, 0.85], bandwidth=0.05).round(4)
    array([0.5, 1. ])
    >>> m = nadaraya_watson(x, y, bandwidth=0.05)     # at the samples (Thm C.4's plug-in)
    >>> m.round(3)
    array([0.119, 0.881, 1.   , 1.   ])
    >>> np.isnan(nadaraya_watson(x, y, [0.5], bandwidth=0.05, kernel="epanechnikov"))
    array([ True])
    """
    x, t, shape, sigma, kernel, reflect, method = _prepare(x, grid, bandwidth, kernel, reflect,
                                                           method)
    y = _check_response(y, x.size)
    W = np.stack([y, np.ones_like(y)], axis=1)
    if method == "exact":
        S = _exact_sums(x, W, t, sigma, kernel, reflect, shift=True)
    else:
        S, F = _binned_sums(x, W, t, sigma, kernel, reflect)
        far = S[:, 1] <= _BINNED_FLOOR * F[:, 1].max()
        if far.any():
            S[far] = _exact_sums(x, W, t[far], sigma, kernel, reflect, shift=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(S[:, 1] > 0.0, S[:, 0] / np.where(S[:, 1] > 0.0, S[:, 1], 1.0), np.nan)
    return m.reshape(shape)


def kde(x, grid=None, *, bandwidth=None, kernel="gaussian", reflect=False, method="auto"):
    """Kernel density estimate ``p(t) = (1/n) sum_i K(t, x_i)`` on ``[0, 1]``.

    The density ``p_{h(X)}`` of the confidences drawn under 004's calibration-sharpness
    diagrams (Sec. 4.2, App. D; it scales the sharpness band), i.e. the denominator of (4.8)
    divided by ``n``.  With ``reflect=True`` it integrates to one over ``[0, 1]``; without,
    to ``(1/n) sum_i P(x_i + sigma Z in [0, 1])``.

    Parameters
    ----------
    x : array_like, shape (n,)
        Samples in ``[0, 1]``.
    grid : array_like, optional
        Evaluation points in ``[0, 1]`` (any shape); default: the samples.
    bandwidth, kernel, reflect, method
        As :func:`nadaraya_watson`.

    Returns
    -------
    numpy.ndarray
        Density at ``grid`` (same shape) or at ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 1, 2001)
    >>> p = kde([0.0, 0.5, 1.0], t, bandwidth=0.05, reflect=True)
    >>> round(float(np.trapezoid(p, t)), 6)
    1.0
    >>> round(float(np.trapezoid(kde([0.0, 0.5, 1.0], t, bandwidth=0.05), t)), 6)
    0.666667
    """
    x, t, shape, sigma, kernel, reflect, method = _prepare(x, grid, bandwidth, kernel, reflect,
                                                           method)
    W = np.full((x.size, 1), 1.0 / x.size)
    if method == "exact":
        S = _exact_sums(x, W, t, sigma, kernel, reflect)
    else:
        S = np.maximum(_binned_sums(x, W, t, sigma, kernel, reflect)[0], 0.0)
    return S[:, 0].reshape(shape)


# ----------------------------------------------------------------------------- SmoothECE

def _abs_integral(F: np.ndarray, G: int) -> float:
    """``int_0^1 |F|`` for the piecewise-linear interpolant of node values ``F`` (rows ``0..G``),
    exact per cell, including cells where ``F`` changes sign."""
    a, b = np.abs(F[:-1]), np.abs(F[1:])
    s = a + b
    cross = F[:-1] * F[1:] < 0.0
    cell = np.where(cross, (a * a + b * b) / np.where(s > 0.0, s, 1.0), s)
    return float(cell.sum()) / (2.0 * G)


class _SmoothEce:
    """``sigma -> smECE_sigma`` for one sample.

    The residuals are binned once, on ``base`` intervals (or on ``grid_size(sigma)`` when that
    is finer; ``base = 2^16`` for the bandwidth search, the grid of the one bandwidth
    otherwise), and their cosine spectrum (the DFT of the even extension) is kept.  For each
    ``sigma`` the spectrum is damped by the reflected Gaussian's multiplier and transformed
    back onto ``G = grid_size(sigma)`` intervals: the damped modes above ``G`` are exactly zero,
    so this gives the binned sum at every ``base/G``-th node, without rebinning."""

    BASE = 2 ** 16

    def __init__(self, f: np.ndarray, r: np.ndarray, base: int = BASE):
        self.base = base
        self.f = f
        self.w = (r / r.size)[:, None]
        self.spectra = {}

    def spectrum(self, G: int) -> np.ndarray:
        if G not in self.spectra:
            v = _even_extension(_linear_bin(self.f, self.w, G), G)[:, 0]
            self.spectra[G] = np.fft.rfft(v).real      # real: v is even
        return self.spectra[G]

    def profile(self, sigma: float):
        """``(G, F)``: ``F[k]`` = the binned ``(1/n) sum_i K_R(k/G, f_i) (y_i - f_i)``."""
        G = grid_size(sigma)
        V = self.spectrum(max(G, self.base))[:G + 1]
        return G, np.fft.irfft(V * _gauss_multiplier(sigma, G, G + 1), n=2 * G)[:G + 1]

    def __call__(self, sigma: float) -> float:
        G, F = self.profile(sigma)
        return _abs_integral(F, G)


def smooth_ece(y_true, y_prob, *, bandwidth=None, return_bandwidth=False):
    """SmoothECE of binary predictions (Blasiok & Nakkiran 2023).

    ``smECE_sigma = int_0^1 |r(t)| p(t) dt = int_0^1 |(1/n) sum_i K_R(t, f_i) (y_i - f_i)| dt``,
    where ``p(t) = (1/n) sum_i K_R(t, f_i)`` is the reflected kernel density of the predictions
    and ``r(t) = sum_i K_R(t, f_i)(y_i - f_i) / sum_i K_R(t, f_i)`` the Nadaraya-Watson
    smoothed residual, with the reflected Gaussian kernel ``K_R`` of bandwidth ``sigma`` (module
    docstring).  Without ``bandwidth``, ``sigma*`` is the fixed point ``smECE_sigma* = sigma*``,
    found by bisection on ``[SMECE_MIN_BANDWIDTH, 1]`` down to a bracket of ``2^-20``: the
    reflected Gaussian kernels form a semigroup (``K_R`` with ``sigma`` followed by ``K_R`` with
    ``tau`` is ``K_R`` with ``sqrt(sigma^2 + tau^2)``) of ``L1`` contractions, so
    ``smECE_sigma`` is non-increasing in ``sigma`` and the fixed point is unique.  The value
    returned is ``smECE`` at the upper end of the final bracket (where ``smECE_sigma <=
    sigma``), as relplot does with its bracket of ``2^-10``.  If even ``sigma = 1e-4`` has
    ``smECE_sigma <= sigma`` (e.g. every ``y_i = f_i``), that floor is used.

    004 reports SmoothECE next to the binned ECE in Table 1 (Sec. 3) and compares its
    reliability diagram with the calibration-sharpness diagram in App. G.  For multi-class
    predictions, the top-label (confidence) SmoothECE is this function applied to
    ``(P.argmax(axis=1) == y, P.max(axis=1))``, as relplot's
    ``multiclass_logits_to_confidences`` does.

    Computation: the residuals ``y_i - f_i`` are linearly binned once (``O(n)``); each
    ``smECE_sigma`` is then a circular FFT convolution on ``2G`` nodes and the exact integral of
    the absolute value of the piecewise-linear interpolant.  Error (module docstring, with
    ``int |phi''| = 0.968``): binning (possibly via a grid of half the spacing, factor
    ``5/4``) plus integration give
    ``|error| <= 0.28 (delta/sigma)^2 mean|y - f| <= 4.3e-6 mean|y - f|`` for
    ``sigma >= 2.4e-4`` (``delta <= sigma/256``), ``<= 2.6e-5 mean|y - f|`` down to ``1e-4``.

    Accuracy against relplot.  Where the smoothed residual ``F`` has one sign on all of
    ``[0, 1]``, ``smECE_sigma = |int_0^1 F| = |mean(y - f)|`` exactly, because the reflected
    kernel integrates to one in ``t``; this closed form checks both implementations.  On the
    example below (``E[y | f] = f^2 < f``, ``F < 0`` at ``sigma*``) this function returns
    ``0.1661094390953608`` and ``|mean(y - f)| = 0.16610943909536077``, equal to rounding,
    while relplot's ``smECE`` gives ``0.16589`` (and ``smECE_sigma`` at the same ``sigma``
    ``0.165892``): the gap of ``2.2e-4`` is relplot's discretisation error, chiefly its kernel
    window of width one (at ``sigma = 0.166`` the Gaussian mass beyond ``1/2``,
    ``2 Phi(-3.0) = 0.27%``, is dropped) besides its rectangle rule and the rounding of the data
    to a grid.  tests/test_kernel.py derives relplot's error bound, checks the agreement within
    it and that this function is the closer one to an independent quadrature reference.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Labels in ``{0, 1}``.
    y_prob : array_like, shape (n,)
        Predicted ``P(y = 1)``.
    bandwidth : float, optional
        Fixed ``sigma`` in ``[1e-4, 1]`` (relplot's ``smECE_sigma``); default: ``sigma*``.
    return_bandwidth : bool
        Also return the bandwidth used.

    Returns
    -------
    float, or (float, float) with ``return_bandwidth``

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> f = rng.uniform(size=20000)
    >>> y = (rng.uniform(size=f.size) < f ** 2).astype(int)     # over-confident
    >>> value, sigma = smooth_ece(y, f, return_bandwidth=True)
    >>> round(value, 3), round(sigma, 3)
    (0.166, 0.166)
    >>> round(smooth_ece(y, f, bandwidth=0.05), 3)
    0.166
    >>> bool(abs(value - abs(np.mean(y - f))) < 1e-12)      # one-signed residual: closed form
    True
    """
    f = check_probabilities(y_prob, name="y_prob", allow_2d=False)
    y = check_labels(y_true, n_classes=2, n_samples=f.shape[0])
    return_bandwidth = _check_bool(return_bandwidth, "return_bandwidth")
    if bandwidth is not None:
        sigma = _check_bandwidth(bandwidth, minimum=SMECE_MIN_BANDWIDTH)
        value = _SmoothEce(f, y - f, base=grid_size(sigma))(sigma)
        return (value, sigma) if return_bandwidth else value
    g = _SmoothEce(f, y - f)
    lo, hi = SMECE_MIN_BANDWIDTH, 1.0
    g_hi = g(hi)
    if g_hi < hi:
        while hi - lo > _SMECE_BRACKET:
            mid = 0.5 * (lo + hi)
            g_mid = g(mid)
            if g_mid > mid:
                lo = mid
            else:
                hi, g_hi = mid, g_mid
        if lo == SMECE_MIN_BANDWIDTH:
            # never above the fixed point: is it below the floor?  (evaluated only here: the
            # finest grid, 2^20 intervals, is the costliest step)
            g_lo = g(lo)
            if g_lo <= lo:
                hi, g_hi = lo, g_lo
    return (g_hi, hi) if return_bandwidth else g_hi
