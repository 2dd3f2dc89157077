"""Patching for utility calibration: Algorithm 1 and Prop 4.4 of paper 001.

Each iteration finds the witness ``w_t = xi ubar_u 1{v_u in I}`` (over the utilities ``u`` of
the class and all intervals ``I``) with the largest ``err_t = E[<f(X) - Y, w_t(f(X))>]`` --
that is ``UC(f_t, U)`` with the sign that makes it positive -- stops when ``err_t <= eps``, and
otherwise moves the predictions inside the interval against the witness and projects them
back onto the simplex:

    f_{t+1}(X) = proj_simplex(f_t(X) - eta_t w_t(f_t(X))).

With ``eta_t = err_t / C`` the Brier score drops by at least ``err_t^2 / C`` per step
(``||w||^2 <= C``), so at most ``L(f_0) C / eps^2 <= 2 C / eps^2`` steps are taken (Prop 4.4).
``step="optimal"`` uses ``eta_t = err_t / E||w_t||^2``, the minimiser of the same quadratic
upper bound: a decrease of at least ``err_t^2 / E||w_t||^2 >= err_t^2 / C``, the same guarantee
with fewer steps.

:func:`patch_population` runs the algorithm with exact expectations on a finite population;
:class:`UtilityPatching` is the finite-sample version of App. A, a recalibrator with
``fit``/``transform`` beside those of :mod:`calnotes.recalibrate` (chapter *Patching*).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._validate import check_rng
from ..recalibrate import DegenerateFitWarning, Recalibrator
from .utility import (UtilityFamily, _check_families, _scan, classwise, top_k,
                      utility_tie_tolerance)

__all__ = ["project_simplex", "PatchStep", "PatchingTrace", "patch_population",
           "UtilityPatching", "comb_class"]

_STEPS = ("theory", "optimal")


def project_simplex(V) -> np.ndarray:
    """Euclidean projection of each row onto the probability simplex.

    The sort-based algorithm (Held, Wolfe & Crowder 1974; Duchi et al. 2008): with ``u`` the
    row sorted in decreasing order, ``rho = max{j : u_j - (sum_{i<=j} u_i - 1)/j > 0}`` and
    ``tau = (sum_{i<=rho} u_i - 1)/rho``, the projection is ``max(v - tau, 0)``.

    Examples
    --------
    >>> project_simplex([[0.5, 0.5], [1.2, -0.1], [0.3, 0.3]]).round(12).tolist()
    [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5]]
    """
    V = np.atleast_2d(np.asarray(V, dtype=np.float64))
    n, C = V.shape
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    j = np.arange(1, C + 1)
    cond = U - css / j > 0
    rho = C - np.argmax(cond[:, ::-1], axis=1)          # last True (1-based)
    tau = css[np.arange(n), rho - 1] / rho
    return np.maximum(V - tau[:, None], 0.0)


def comb_class(n_classes: int) -> list:
    """``U_comb = U_CWE u U_topK`` (Sec. 5), the class the paper patches against.

    Examples
    --------
    >>> [len(f) for f in comb_class(4)]
    [4, 3]
    """
    return [classwise(n_classes), top_k(n_classes)]


@dataclass(frozen=True)
class PatchStep:
    """One iteration of Algorithm 1."""

    utility: str
    lower: float
    upper: float
    sign: int
    err: float
    eta: float
    witness_sq: float     # E ||w_t||^2
    brier_before: float
    brier_after: float
    mass: float


@dataclass
class PatchingTrace:
    """The iterations of :func:`patch_population` (or of a fit), and whether it converged."""

    steps: list = field(default_factory=list)
    converged: bool = False
    final_err: float = float("nan")
    final_brier: float = float("nan")

    @property
    def n_steps(self) -> int:
        return len(self.steps)


def _check_eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < eps < 2:
        raise ValueError(f"eps: expected a number in (0, 2), got {eps!r}")
    return float(eps)


def _check_step(step) -> str:
    if step not in _STEPS:
        raise ValueError(f"step: expected one of {_STEPS}, got {step!r}")
    return step


def _witness(fams, F, T, w):
    """The worst witness on a weighted sample: ``(err, family, index, lower, upper, sign, mass)``.

    ``T`` holds ``E[Y | atom]`` (one-hot labels for a sample), ``w`` the weights.
    """
    best = None
    tol = utility_tie_tolerance(F.shape[1])
    for fam in fams:
        ubar = fam.per_class(F)                                   # (M, n, C)
        V = np.einsum("nj,mnj->mn", F, ubar)
        R = np.einsum("nj,mnj->mn", T - F, ubar) * w              # <Y - f, ubar> weighted
        values, lower, upper, sign, lo, hi = _scan(V, R, tol)
        m = int(np.argmax(values))
        if best is None or values[m] > best[0]:
            inside = (V[m] >= lower[m] - tol) & (V[m] <= upper[m] + tol)
            best = (float(values[m]), fam, m, float(lower[m]), float(upper[m]), int(sign[m]),
                    float(w[inside].sum()))
    return best


def _region(F, fam, m, lower, upper):
    """Rows whose forecast of utility ``m`` lies in ``[lower, upper]`` (tie tolerance), and
    ``ubar`` of that utility at every row."""
    tol = utility_tie_tolerance(F.shape[1])
    ubar = fam.take(m).per_class(F)[0]
    v = np.einsum("nj,nj->n", F, ubar)
    return (v >= lower - tol) & (v <= upper + tol), ubar


def _step_size(err, step, w, inside, ubar):
    """``(eta_t, E||w_t||^2)``: ``err / C`` (``"theory"``) or ``err / E||w_t||^2``."""
    wsq = float(w[inside] @ np.sum(ubar[inside] ** 2, axis=1))
    return (err / ubar.shape[1] if step == "theory" else err / wsq), wsq


def _apply(F, fam, m, lower, upper, sign, eta):
    """``proj(F + eta * sign * ubar 1{v in [lower, upper]})`` (``sign = -xi``)."""
    inside, ubar = _region(F, fam, m, lower, upper)
    out = F.copy()
    if inside.any():
        out[inside] = project_simplex(F[inside] + eta * sign * ubar[inside])
    return out


def _brier(F, T, w) -> float:
    """``E ||Y - f||^2`` with ``E[Y | atom] = T``: ``||T - f||^2 + 1 - ||T||^2`` per atom."""
    return float(w @ (np.sum((T - F) ** 2, axis=1) + 1.0 - np.sum(T ** 2, axis=1)))


def _run(F, T, w, fams, eps, step, max_iter):
    trace = PatchingTrace()
    for _ in range(max_iter + 1):
        err, fam, m, lower, upper, sign, mass = _witness(fams, F, T, w)
        trace.final_err, trace.final_brier = err, _brier(F, T, w)
        if err <= eps:
            trace.converged = True
            break
        if len(trace.steps) == max_iter:
            break
        eta, wsq = _step_size(err, step, w, *_region(F, fam, m, lower, upper))
        before = trace.final_brier
        F = _apply(F, fam, m, lower, upper, sign, eta)
        trace.steps.append(PatchStep(fam.names[m], lower, upper, sign, err, eta, wsq, before,
                                     _brier(F, T, w), mass))
    return F, trace


def patch_population(dist, utilities, *, eps: float = 0.01, step: str = "theory",
                     max_iter: int = 100_000):
    """Algorithm 1 with exact expectations on a finite population.

    Parameters
    ----------
    dist : calnotes.theory.population.FiniteDistribution
        Atoms with weights, true conditionals ``E[Y | X]`` and predictions ``f_0``.
    utilities : UtilityFamily or sequence of UtilityFamily
        The class ``U`` (the witnesses are ``xi ubar_u 1{v_u in I}``).
    eps : float
        Stop when ``UC(f_t, U) <= eps``.
    step : {"theory", "optimal"}
        ``eta_t = err_t / C`` (Prop 4.4) or ``err_t / E||w_t||^2``.
    max_iter : int
        Safety cap (Prop 4.4 bounds the steps by ``L(f_0) C / eps^2``).

    Returns
    -------
    (FiniteDistribution, PatchingTrace)
        The patched population (same atoms and truths) and the iterations.

    Examples
    --------
    >>> from calnotes.theory.population import FiniteDistribution
    >>> d = FiniteDistribution([0.5, 0.5], [[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.5, 0.5]])
    >>> patched, trace = patch_population(d, comb_class(2), eps=0.05)
    >>> trace.converged, all(s.brier_after <= s.brier_before for s in trace.steps)
    (True, True)
    """
    from .population import FiniteDistribution

    eps = _check_eps(eps)
    step = _check_step(step)
    fams = _check_families(utilities)
    F0 = np.array(dist.prediction, dtype=np.float64)
    T = np.asarray(dist.truth, dtype=np.float64)
    w = np.asarray(dist.weights, dtype=np.float64)
    F, trace = _run(F0, T, w, fams, eps, step, int(max_iter))
    return FiniteDistribution(w, T, F), trace


class UtilityPatching(Recalibrator):
    """Algorithm 1 on data (App. A): patch the predictions until ``UC_hat(f, U) <= eps``.

    Parameters
    ----------
    utilities : "comb", "cwe", "topk", UtilityFamily or list of UtilityFamily
        The class to patch against; ``"comb"`` is ``U_CWE u U_topK`` (the paper's choice).
    eps : float, default 0.01
        Stopping tolerance on the estimated ``UC``.
    step : {"optimal", "theory"}, default "optimal"
        Step size (module docstring); ``"theory"`` is ``err_t / C`` exactly as Prop 4.4.
    max_iter : int, default 200
        Cap on the iterations.
    samples_per_iteration : int or None, default None
        ``None``: every iteration uses the whole calibration set (as practitioners do).  An
        integer ``N``: the rows are shuffled with ``rng`` and iteration ``t`` uses the ``t``-th
        disjoint block of ``N`` rows (fresh samples, App. A); fitting stops when the blocks
        run out.
    rng : int or numpy.random.Generator, default 0
        Shuffles the rows for ``samples_per_iteration``.
    inputs : {"probs", "logits"}

    Attributes
    ----------
    patches_ : list of tuple
        ``(family, index, lower, upper, sign, eta)`` in the order applied.
    trace_ : PatchingTrace

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=3000)
    >>> y = (P.cumsum(axis=1) > rng.random((3000, 1))).argmax(axis=1)
    >>> Q = P ** 2 / (P ** 2).sum(axis=1, keepdims=True)          # overconfident
    >>> from calnotes.theory.utility import uc_class
    >>> pat = UtilityPatching(eps=0.01).fit(Q, y)
    >>> uc_class(y, pat.transform(Q), comb_class(3)) <= 0.01 < uc_class(y, Q, comb_class(3))
    True
    """

    _space = "probs"

    def __init__(self, utilities="comb", *, eps: float = 0.01, step: str = "optimal",
                 max_iter: int = 200, samples_per_iteration=None, rng=0,
                 inputs: str = "probs"):
        super().__init__(inputs=inputs)
        if not (isinstance(utilities, (str, UtilityFamily)) or isinstance(utilities, (list, tuple))):
            raise TypeError("utilities: expected 'comb', 'cwe', 'topk', a UtilityFamily or a list")
        if isinstance(utilities, str) and utilities not in ("comb", "cwe", "topk"):
            raise ValueError(f"utilities: expected 'comb', 'cwe' or 'topk', got {utilities!r}")
        self.utilities = utilities
        self.eps = _check_eps(eps)
        self.step = _check_step(step)
        if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 0:
            raise ValueError(f"max_iter: expected a non-negative integer, got {max_iter!r}")
        self.max_iter = int(max_iter)
        if samples_per_iteration is not None and (
                isinstance(samples_per_iteration, bool)
                or not isinstance(samples_per_iteration, numbers.Integral)
                or samples_per_iteration < 1):
            raise ValueError("samples_per_iteration: expected None or a positive integer, got"
                             f" {samples_per_iteration!r}")
        self.samples_per_iteration = samples_per_iteration
        self.rng = rng

    def _families(self, C: int) -> list:
        u = self.utilities
        if isinstance(u, str):
            return {"comb": comb_class, "cwe": lambda k: [classwise(k)],
                    "topk": lambda k: [top_k(k)]}[u](C)
        fams = _check_families(u)
        for f in fams:
            if f.n_classes != C:
                raise ValueError(f"utilities: {f!r} is for {f.n_classes} classes, the data have {C}")
        return fams

    def _fit(self, F, y):
        n, C = F.shape
        fams = self._families(C)
        Y = np.eye(C)[y]
        if self.samples_per_iteration is None:
            blocks = None
        else:
            N = int(self.samples_per_iteration)
            order = check_rng(self.rng).permutation(n)
            blocks = [order[i:i + N] for i in range(0, n - N + 1, N)]
            if not blocks:
                raise ValueError(f"samples_per_iteration: {N} exceeds the {n} fit samples")
        patches, trace = [], PatchingTrace()
        cur = F.copy()
        t = 0
        while True:
            if blocks is None:
                idx = slice(None)
            elif t < len(blocks):
                idx = blocks[t]
            else:
                break
            Fb, Yb = cur[idx], Y[idx]
            w = np.full(Fb.shape[0], 1.0 / Fb.shape[0])
            err, fam, m, lower, upper, sign, mass = _witness(fams, Fb, Yb, w)
            trace.final_err, trace.final_brier = err, _brier(Fb, Yb, w)
            if err <= self.eps:
                trace.converged = True
                break
            if t == self.max_iter:
                break
            eta, wsq = _step_size(err, self.step, w, *_region(Fb, fam, m, lower, upper))
            before = trace.final_brier
            cur = _apply(cur, fam, m, lower, upper, sign, eta)
            trace.steps.append(PatchStep(fam.names[m], lower, upper, sign, err, eta, wsq,
                                         before, _brier(cur[idx], Yb, w), mass))
            patches.append((fam, m, lower, upper, sign, eta))
            t += 1
        if not trace.converged:
            warnings.warn(f"UtilityPatching: stopped after {len(patches)} patches with"
                          f" UC_hat = {trace.final_err:.4g} > eps = {self.eps}"
                          " (max_iter reached or fresh samples exhausted)",
                          DegenerateFitWarning, stacklevel=3)
        self.patches_ = patches
        self.trace_ = trace

    def _transform(self, F):
        out = F.copy()
        for fam, m, lower, upper, sign, eta in self.patches_:
            out = _apply(out, fam, m, lower, upper, sign, eta)
        return out
