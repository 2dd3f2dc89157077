"""Claims checked in Part IV (paper 001): chapters *Utility calibration*, *Bounds and
guarantees* and *Patching*.

Every agreeing claim carries negative controls (false neighbours run through the same check on
the same instances): instance sets are cached per size (``functools.lru_cache``) and shared
between a claim and its controls, and include the near-tight instances that make a tightened
constant fail (two atoms straddling a threshold, one atom per bin, point masses, a calibrated
coin for the deviation bounds, samples with certain wrong predictions for the Rademacher
bounds).

Population claims run on random exact finite distributions with forced collisions (so
predicted utilities tie; 20 smoke, 200 full, see :mod:`calnotes.book.claims.proper`), evaluated in
float64 over every kind of utility family.  Sampling claims use simulators whose truth is
known exactly: a calibrated model (``Y ~ f(X)``, so ``UC(f, u) = 0`` for every ``u``) and
samples from a finite population (``UC`` computed exactly on the atoms).
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
from scipy import stats

from ...theory import population as pop
from ...theory import utility as ut
from ...theory.patching import comb_class, patch_population, UtilityPatching
from ._registry import Claim, Control, cite, register
from .proper import _family

CH_UC = "book/utility/utility_calibration"
CH_BOUNDS = "book/utility/bounds"
CH_PATCH = "book/utility/patching"

_FLOAT = ("float64 sums of at most a few hundred terms of size <= 2 over finite populations:"
          " rounding below 1e-12")


# --------------------------------------------------------------------------------------------
# shared constructions
# --------------------------------------------------------------------------------------------
def population_families(n_classes: int, rng) -> list:
    """One family of every kind for ``C`` classes: the utilities the population claims range over.

    Class-wise, top-K, DCG, 4 sampled linear and 4 sampled rank utilities, 3 random decision
    problems with 3 actions, 2 random similarity matrices (symmetric, unit diagonal), and 2
    aligned and 2 misaligned gain matrices (App. C.2).
    """
    rng = np.random.default_rng(rng)
    C = n_classes
    S = rng.uniform(-1, 1, size=(2, C, C))
    S = (S + S.transpose(0, 2, 1)) / 2
    S[:, np.arange(C), np.arange(C)] = 1.0
    return [ut.classwise(C), ut.top_k(C), ut.dcg(C), ut.sample_linear(C, 4, rng=rng),
            ut.sample_rank(C, 4, rng=rng),
            ut.decision(rng.uniform(-1, 1, size=(3, C, 3))), ut.similarity(S),
            ut.sample_gain_matrices(C, 2, rng=rng, kind="aligned"),
            ut.sample_gain_matrices(C, 2, rng=rng, kind="misaligned", n_groups=2)]


def _floats(d):
    return (np.asarray(d.weights, float), np.asarray(d.truth, float),
            np.asarray(d.prediction, float))


def _utility_tables(d, fam):
    """Per utility: predicted ``V`` (M, A), expected realized ``Rexp`` (M, A), ``ubar`` (M, A, C)."""
    w, T, F = _floats(d)
    ubar = fam.per_class(F)
    V = np.einsum("aj,maj->ma", F, ubar)
    Rexp = np.einsum("aj,maj->ma", T, ubar)
    return w, T, F, ubar, V, Rexp


#: Random populations the Prop. 3.2 and 3.3 claims run at smoke size (all 200 at full): their
#: near-tight instances are the constructed ones, which run at both sizes.
SMOKE_POPULATIONS = 10


def _first_at_smoke(family, size: str):
    """The first :data:`SMOKE_POPULATIONS` populations of ``family`` at smoke size, all at full."""
    return itertools.islice(family, SMOKE_POPULATIONS) if size == "smoke" else family


def _group_means(values, keys, w, tol):
    """Weighted means of ``values`` within groups of (nearly) equal ``keys`` (tie-pooled)."""
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    gid = np.concatenate([[0], np.cumsum(np.diff(ks) > tol)])
    wsum = np.bincount(gid, weights=w[order])
    mean = np.bincount(gid, weights=(w * values)[order]) / np.where(wsum > 0, wsum, 1)
    out = np.empty_like(values)
    out[order] = mean[gid]
    return out


# --------------------------------------------------------------------------------------------
# eq. (3.3)
# --------------------------------------------------------------------------------------------
#: The witness classes eq. (3.3) is compared with: the paper's (every interval), and two false
#: neighbours -- half-lines {v <= t} only (the proof class of App. B.8) and no indicator at all.
EQ33_WITNESSES = ("interval", "half-line", "no indicator")


def weighted_calibration_brute(w, T, F, ubar, tol: float, witnesses: str = "interval") -> float:
    """``CE_W(f) = sup_{w in W} E<E[Y | X] - f(X), w(f(X))>`` for ``W = {xi ubar 1{v in I}}``.

    Computed from the residual ``<T - F, ubar>`` alone (no realized utility, no prefix sums):
    every interval ``[a, b]`` with end points among the atoms' forecasts ``v = <F, ubar>`` is
    enumerated (forecasts within ``tol`` count as equal), and ``xi = +-1`` takes the absolute
    value.  ``witnesses="half-line"`` keeps only ``[-1, b]``; ``"no indicator"`` only
    ``[-1, 1]``.
    """
    v = np.einsum("aj,aj->a", F, ubar)
    resid = w * np.einsum("aj,aj->a", T - F, ubar)
    vals = np.unique(v)
    if witnesses == "interval":
        pairs = [(a, b) for a in vals for b in vals if b >= a]
    elif witnesses == "half-line":
        pairs = [(-math.inf, b) for b in vals]
    elif witnesses == "no indicator":
        pairs = [(-math.inf, math.inf)]
    else:
        raise ValueError(f"witnesses: expected one of {EQ33_WITNESSES}, got {witnesses!r}")
    return max(abs(float(resid[(v >= a - tol) & (v <= b + tol)].sum())) for a, b in pairs)


@functools.lru_cache(maxsize=4)
def _eq33_table(size: str) -> dict:
    """Per (population, utility): ``UC`` from realized utilities, ``CE_W`` for each witness
    class of :data:`EQ33_WITNESSES`, and the largest row-by-row gap on samples."""
    rng = np.random.default_rng(331)
    out = {"uc": [], "sample": 0.0, **{k: [] for k in EQ33_WITNESSES}}
    for d in _family(size, 332, min_classes=2):
        w, T, F = _floats(d)
        C = d.n_classes
        tol = ut.utility_tie_tolerance(C)
        for fam in population_families(C, rng):
            # UC from eq. (3.2): realized utility u(f, e_j) of every class, E over T, minus v
            V = fam.predicted(F)
            Rexp = sum(T[:, j] * fam.values(np.full(d.n_atoms, j), F)[1] for j in range(C))
            out["uc"].extend(ut.uc_from_values(V, Rexp, weights=w, tie_tol=tol).values)
            ubar = fam.per_class(F)
            for kind in EQ33_WITNESSES:
                out[kind].extend(weighted_calibration_brute(w, T, F, ubar[m], tol, kind)
                                 for m in range(len(fam)))
            # on a sample: realized - predicted == <e_y - p, ubar(p)> row by row
            idx = rng.choice(d.n_atoms, size=50, p=w)
            y = np.array([rng.choice(C, p=T[i]) for i in idx])
            Vs, Us = fam.values(y, F[idx])
            wit = np.einsum("nj,mnj->mn", np.eye(C)[y] - F[idx], ubar[:, idx, :])
            out["sample"] = max(out["sample"], float(np.max(np.abs((Us - Vs) - wit))))
    return {k: (np.array(v) if isinstance(v, list) else v) for k, v in out.items()}


def _eq33(size: str, witnesses: str = "interval") -> float:
    """max |UC(f, u) - CE_W(f)| over populations and utilities (and the sample identity)."""
    tab = _eq33_table(size)
    gap = float(np.max(np.abs(tab["uc"] - tab[witnesses])))
    return max(gap, tab["sample"]) if witnesses == "interval" else gap


register(Claim(
    id="001.eq3.3",
    source=cite("001", "eq. (3.3)"),
    statement=("UC(f, u) = sup_I |E[<Y - f(X), ubar(X)> 1{v_u(X) in I}]|: utility calibration is"
               " weighted calibration with witnesses xi ubar 1{v_u in I} (every family kind,"
               " populations and samples)."),
    quantity=("largest |UC(f, u) − weighted calibration error with witnesses ξ ū 1{v_u ∈ I}| "
              "over populations, utilities and samples"),
    check=_eq33, reference=0.0, tolerance=1e-12,
    tolerance_reason=(_FLOAT + ". The two sides are computed independently: UC from the"
                      " realized utilities u(f, e_j) by sort and prefix sums, CE_W from the"
                      " residual <E[Y|X] - f, ubar> by enumerating every interval of forecasts."
                      " Instances: 20 (200) random populations with C = 2..5 classes, tied"
                      " forecasts, every utility kind (class-wise, top-K, DCG, linear, rank,"
                      " decision, gain-matrix, similarity)"),
    chapter=CH_UC,
    controls=(
        Control("half-lines only",
                "UC(f, u) equals weighted calibration with the half-line witnesses xi ubar"
                " 1{v_u <= t} (the class of App. B.8's proof)",
                functools.partial(_eq33, witnesses="half-line"), kind="reading"),
        Control("no indicator",
                "UC(f, u) equals |E<Y - f(X), ubar(X)>| (the witness without 1{v_u in I})",
                functools.partial(_eq33, witnesses="no indicator"), kind="alternative"),
    ),
))


# --------------------------------------------------------------------------------------------
# Example 3.5 as printed
# --------------------------------------------------------------------------------------------
def _ex35_printed(size: str) -> float:
    """The printed formula sup_I |E[Y* - p* 1{p* in I}]| on the App. B.2 example."""
    conf = np.array([0.45, 0.55])
    acc = np.array([0.05, 0.95])                     # E[Y* | p*]
    w = np.array([0.5, 0.5])
    # a closed interval contains a contiguous set of the sorted confidences, possibly none
    return max(abs(float(w @ acc - w @ (conf * np.array(inside))))
               for inside in ([0, 0], [1, 0], [0, 1], [1, 1]))


register(Claim(
    id="001.ex3.5.printed",
    source=cite("001", "Example 3.5", "and App. B.2"),
    statement=("Example 3.5 prints UC(f, U_TCE) = sup_I |E[Y* - p* 1{p* in I}]|, which is meant"
               " to be App. B.2's sup_I |E[(Y* - p*) 1{p* in I}]|."),
    quantity="the printed formula sup_I |E[Y* − p* 1{p* ∈ I}]| on the App. B.2 example",
    check=_ex35_printed, reference=0.2, tolerance=1e-12,
    tolerance_reason="float64 arithmetic on two atoms", chapter=CH_UC,
    expect="disagrees",
    evidence=("On App. B.2's example (p* = 0.45 or 0.55 with accuracies 0.05 and 0.95) the"
              " intended quantity is 0.2, but the formula as printed (indicator on p* only) gives"
              " 0.5, attained by an interval containing no atom: |E[Y*] - 0| = 0.5. The"
              " parenthesis belongs around (Y* - p*); the same slip is in the U_CWE line."),
    correction=("UC(f, U_TCE) = sup_I |E[(Y* - p*) 1{p* in I}]| (App. B.2), and likewise"
                " UC(f, U_CWE) = sup_{c, I} |E[(1{Y = e_c} - f_c) 1{f_c in I}]|."),
))


# --------------------------------------------------------------------------------------------
# Prop 3.2 (risk gap) and Prop 3.3 (distance to calibration)
# --------------------------------------------------------------------------------------------
def risk_gap(d, fam, t0: float, directions: str = "both") -> tuple[np.ndarray, np.ndarray]:
    """Prop 3.2 on a population: ``R(v; t0) - inf_h R(h(v); t0)`` per utility, and ``UC``.

    A monotone ``h`` acts (``h(v) >= t0``) on an upper set of predicted utilities when it is
    non-decreasing and on a lower set when it is non-increasing, so the infimum is a minimum
    over the cuts at the distinct values of ``v`` (and "always", "never"); ``R(v)`` itself
    acts on ``{v >= t0}``.  ``directions``: ``"up"`` (non-decreasing ``h`` only), ``"down"``
    (non-increasing only) or ``"both"`` (the statement's "monotone").
    """
    up, down, uc = _risk_gaps(d, fam, t0)
    return {"up": up, "down": down, "both": np.maximum(up, down)}[directions], uc


def _risk_gaps(d, fam, t0: float):
    """``(gap over non-decreasing h, gap over non-increasing h, UC)`` per utility."""
    w, T, F, ubar, V, Rexp = _utility_tables(d, fam)
    tol = ut.utility_tie_tolerance(d.n_classes)
    dev = np.abs(ubar - t0)
    cost1 = np.einsum("aj,maj->ma", T, dev * (ubar < t0)) * w        # act, utility below t0
    cost0 = np.einsum("aj,maj->ma", T, dev * (ubar >= t0)) * w       # wait, utility above t0
    up, down = np.empty(len(fam)), np.empty(len(fam))
    for m in range(len(fam)):
        order = np.argsort(V[m], kind="stable")
        v = V[m][order]
        c1, c0 = cost1[m][order], cost0[m][order]
        # cuts k at every tie-group start and k = A
        starts = np.concatenate([[0], np.flatnonzero(np.diff(v) > tol) + 1, [v.size]])
        pre0 = np.concatenate([[0.0], np.cumsum(c0)])
        pre1 = np.concatenate([[0.0], np.cumsum(c1)])
        suf1 = np.concatenate([np.cumsum(c1[::-1])[::-1], [0.0]])
        suf0 = np.concatenate([np.cumsum(c0[::-1])[::-1], [0.0]])
        r_v = float(np.sum(np.where(V[m] >= t0, cost1[m], cost0[m])))
        up[m] = r_v - (pre0[starts] + suf1[starts]).min()      # act on positions >= k
        down[m] = r_v - (pre1[starts] + suf0[starts]).min()    # act on positions < k
    return up, down, ut.uc_from_values(V, Rexp, weights=w, tie_tol=tol).values


def two_atom_population(v, r, w1: float):
    """A population with ``C = 2`` and two atoms whose forecast and expected realized utility
    under the linear utility ``a = (1, -1)`` are ``v`` and ``r`` (any values in ``[-1, 1]``):
    ``f_1 = (1 + v) / 2``, ``E[Y_1 | X] = (1 + r) / 2``."""
    v, r = np.asarray(v, float), np.asarray(r, float)
    F = np.stack([(1 + v) / 2, (1 - v) / 2], axis=1)
    T = np.stack([(1 + r) / 2, (1 - r) / 2], axis=1)
    return pop.FiniteDistribution(np.array([w1, 1 - w1]), T, F)


def prop32_tight_instances():
    """Two atoms straddling the threshold: ``v = t0 -+ eta`` with realized ``v +- g``.

    The non-increasing ``h`` that acts only on the lower atom gains ``2 w (g - eta)`` while
    ``UC = w g`` (``w = 1/2``): the ratio to the bound is ``1 - eta / g``, so the factor 2 is
    approached as ``eta -> 0``; a non-decreasing ``h`` gains at most ``UC`` here.
    """
    for t0 in (-0.5, 0.0, 0.5):
        for g in (0.2, 0.4):
            for frac in (0.01, 0.1, 0.5):
                eta = frac * g
                d = two_atom_population([t0 - eta, t0 + eta], [t0 - eta + g, t0 + eta - g], 0.5)
                yield d, ut.linear([[1.0, -1.0]]), t0


@functools.lru_cache(maxsize=4)
def _prop32_table(size: str) -> dict:
    """Risk gaps (both directions, non-decreasing only) and UC over every instance."""
    rng = np.random.default_rng(321)
    rows = {"both": [], "up": [], "uc": []}

    def add(d, fam, t0):
        up, down, uc = _risk_gaps(d, fam, float(t0))
        rows["both"].extend(np.maximum(up, down))
        rows["up"].extend(up)
        rows["uc"].extend(uc)

    for d in _first_at_smoke(_family(size, 322, min_classes=2), size):
        for fam in population_families(d.n_classes, rng):
            V = _utility_tables(d, fam)[4]
            for t0 in np.concatenate([np.unique(V), rng.uniform(-1, 1, 5)]):
                if t0 > -1:
                    add(d, fam, t0)
    for d, fam, t0 in prop32_tight_instances():
        add(d, fam, t0)
    return {k: np.array(v) for k, v in rows.items()}


def _prop32(size: str, factor: float = 2.0) -> float:
    """max over populations, utilities and thresholds of gap - factor * UC (both directions)."""
    tab = _prop32_table(size)
    return float(np.max(tab["both"] - factor * tab["uc"]))


register(Claim(
    id="001.prop3.2",
    source=cite("001", "Prop 3.2"),
    statement=("For every utility u and threshold t0, R_util(v_u; t0) - inf_{h monotone}"
               " R_util(h(v_u); t0) <= 2 UC(f, u), h non-decreasing or non-increasing."),
    quantity="largest regret gap − 2·UC(f, u) over the populations, utilities and thresholds",
    check=_prop32, reference=0.0, comparison="le", tolerance=1e-12,
    tolerance_reason=(_FLOAT + ". Exact: the infimum over monotone h is a minimum over the"
                      " upper and lower sets of forecasts. Instances: 10 (200) random"
                      " populations with C = 2..5, ties, every utility kind, every forecast"
                      " value as t0 and 5 random t0; plus 18 two-atom populations (C = 2)"
                      " straddling t0, where a non-increasing h gains 2 UC (1 - eta/g), up to"
                      " 0.99 of the bound"),
    chapter=CH_UC,
    controls=(
        Control("factor 1.9",
                "the risk gap is at most 1.9 UC(f, u) (the factor 2 tightened by 5%)",
                functools.partial(_prop32, factor=1.9), kind="scaled", factor=0.95),
    ),
))


def cutoff_gap(f, r, w, tau: float) -> tuple[float, float]:
    """App. B.1 on a binary population: ``R_bd(f; tau) - inf_h R_bd(h o f; tau)`` and
    ``Delta_Cutoff(f)``.

    ``f``: ``P(Y = 1)`` predicted per atom, ``r``: true ``P(Y = 1 | atom)``, ``w``: weights.
    The binary decision loss ``tau (1 - Y) Yhat + (1 - tau) Y (1 - Yhat)`` costs
    ``tau (1 - r)`` to act and ``(1 - tau) r`` to wait on an atom; a monotone ``h`` acts on an
    upper set (non-decreasing) or a lower set (non-increasing) of the values of ``f``, so the
    infimum is a minimum over those cuts (computed here directly, not through Prop 3.2's code).
    """
    f, r, w = (np.asarray(a, float) for a in (f, r, w))
    act, wait = w * tau * (1 - r), w * (1 - tau) * r
    risk_f = float(np.sum(np.where(f >= tau, act, wait)))
    best = math.inf
    for c in np.concatenate([np.unique(f), [math.inf]]):
        for acting in (f >= c, f < c):                       # upper set, lower set
            best = min(best, float(np.sum(np.where(acting, act, wait))))
    return risk_f - best, float(ut.uc_from_values(f, r, weights=w).values[0])


def _cutoff_instances(size: str):
    """Random binary populations (``f`` on a grid, ties) and two-atom ones straddling ``tau``."""
    rng = np.random.default_rng(111)
    for d in _family(size, 112, min_classes=2):
        w, T, F = _floats(d)
        for j in range(d.n_classes):                   # class j against the rest: binary
            f, r = F[:, j], T[:, j]
            for tau in np.concatenate([np.unique(f), rng.uniform(0, 1, 3)]):
                if 0 < tau <= 1:
                    yield f, r, w, float(tau)
    for tau in (0.25, 0.5, 0.75):
        for g in (0.1, 0.2):
            for frac in (0.01, 0.1, 0.5):
                eta = frac * g
                yield (np.array([tau - eta, tau + eta]), np.array([tau - eta + g, tau + eta - g]),
                       np.array([0.5, 0.5]), tau)


@functools.lru_cache(maxsize=4)
def _cutoff_table(size: str) -> np.ndarray:
    return np.array([cutoff_gap(f, r, w, tau) for f, r, w, tau in _cutoff_instances(size)])


def _appb1(size: str, factor: float = 2.0) -> float:
    gap, delta = _cutoff_table(size).T
    return float(np.max(gap - factor * delta))


register(Claim(
    id="001.appB1.cutoff",
    source=cite("001", "App. B.1, eq. (B.1)", "after Rossellini et al. 2025, Prop 3.2"),
    statement=("For a binary predictor and every tau in (0, 1], R_bd(f; tau) - inf_{h monotone}"
               " R_bd(h o f; tau) <= 2 Delta_Cutoff(f)."),
    quantity="largest R_bd(f; τ) − inf_h R_bd(h∘f; τ) − 2 Δ_Cutoff(f) over the populations and τ",
    check=_appb1, reference=0.0, comparison="le", tolerance=1e-12,
    tolerance_reason=(_FLOAT + ". Exact on finite populations: the infimum over monotone h"
                      " (both directions) is a minimum over the upper and lower sets of values"
                      " of f. Instances: every class against the rest of 20 (200) random"
                      " populations (tied predictions), every value of f and 3 random tau; and"
                      " 18 two-atom populations straddling tau, where the gain reaches 0.99 of"
                      " the bound"),
    chapter=CH_UC,
    controls=(
        Control("factor 1.9",
                "the gain of monotone recalibration is at most 1.9 Delta_Cutoff(f)",
                functools.partial(_appb1, factor=1.9), kind="scaled", factor=0.95),
    ),
))


def _isotonic_fit(v, r, w):
    from sklearn.isotonic import IsotonicRegression

    keep = w > 0
    iso = IsotonicRegression(increasing=True).fit(v[keep], r[keep], sample_weight=w[keep])
    return iso.predict(v)


def dcu_candidates(v, r, w, uc: float, tol: float) -> dict:
    """``E|g(X) - v(X)|`` for calibrated predictors ``g`` of the realized utility.

    ``v``: predicted utility per atom, ``r = E[u_Y | atom]``, ``w`` atom weights.  Each ``g`` is
    constant on unions of level sets of ``v`` and equals ``E[u_Y | g]`` there, so it is
    calibrated; ``DCU`` is at most the smallest value.  ``"binned"`` is the proof's ``g_W`` with
    ``W = sqrt(2 UC)`` (bins of width ``W`` from -1).
    """
    out = {"recalibrated": float(w @ np.abs(_group_means(r, v, w, tol) - v)),
           "isotonic": float(w @ np.abs(_isotonic_fit(v, r, w) - v)),
           "constant": float(w @ np.abs(w @ r - v))}
    if uc > 0:
        W = math.sqrt(2 * uc)
        K = math.ceil(2 / W)
        bins = np.minimum(np.floor((v + 1) / W), K - 1)
        out["binned"] = float(w @ np.abs(_group_means(r, bins, w, 0.5) - v))
    return out


def _dcu_instances(size: str, seed: int):
    rng = np.random.default_rng(seed)
    for d in _first_at_smoke(_family(size, seed + 1, min_classes=2), size):
        for fam in population_families(d.n_classes, rng):
            w, T, F, ubar, V, Rexp = _utility_tables(d, fam)
            tol = ut.utility_tie_tolerance(d.n_classes)
            ucs = ut.uc_from_values(V, Rexp, weights=w, tie_tol=tol).values
            for m in range(len(fam)):
                yield V[m], Rexp[m], w, float(ucs[m]), tol


@functools.lru_cache(maxsize=4)
def _dcu_table(size: str, seed: int) -> dict:
    """Over :func:`_dcu_instances`: ``UC``, the best calibrated candidate and the proof's g_W."""
    rows = {"uc": [], "best": [], "binned": []}
    for v, r, w, uc, tol in _dcu_instances(size, seed):
        cand = dcu_candidates(v, r, w, uc, tol)
        rows["uc"].append(uc)
        rows["best"].append(min(cand.values()))
        rows["binned"].append(cand.get("binned", math.nan))
    return {k: np.array(v) for k, v in rows.items()}


DCU_GRID = np.linspace(-1.0, 1.0, 9)
DCU_WEIGHTS = (0.2, 0.35, 0.5, 0.65, 0.8)


@functools.lru_cache(maxsize=1)
def dcu_exact_grid() -> dict:
    """Exact ``DCU``, ``UC`` and the proof's ``E|g_W - v|`` on every one- and two-atom
    population with ``v, r`` on :data:`DCU_GRID` (two atoms: weights :data:`DCU_WEIGHTS`).

    Realisable with ``C = 2`` and the linear utility ``a = (1, -1)``
    (:func:`two_atom_population`).  A calibrated ``g`` is a function of the atom whose value on
    each of its level sets is the mean of ``r`` there, so ``g`` is one partition of the atoms:
    with two atoms, "separate" (``g = r``) or "merged" (``g = E[r]``) -- ``DCU`` is the smaller.
    """
    g = DCU_GRID
    v1, r1 = (a.ravel() for a in np.meshgrid(g, g, indexing="ij"))
    out = {"uc": [np.abs(r1 - v1)], "dcu": [np.abs(r1 - v1)], "binned": [np.abs(r1 - v1)]}
    VR = np.array(list(itertools.product(g, g, g, g)))
    V, R = VR[:, :2], VR[:, 2:]
    for w1 in DCU_WEIGHTS:
        w = np.array([w1, 1 - w1])
        uc = ut.uc_from_values(V, R, weights=w).values
        separate = np.abs(R - V) @ w
        merged = np.abs((R @ w)[:, None] - V) @ w
        W = np.sqrt(2 * np.maximum(uc, 1e-300))
        K = np.ceil(2 / W)
        bins = np.minimum(np.floor((V + 1) / W[:, None]), (K - 1)[:, None])
        out["uc"].append(uc)
        out["dcu"].append(np.minimum(separate, merged))
        out["binned"].append(np.where(bins[:, 0] == bins[:, 1], merged, separate))
    return {k: np.concatenate(v) for k, v in out.items()}


def _prop33(size: str, bound: str = "paper", factor: float = 1.0) -> float:
    """max of DCU - bound: calibrated candidates on the random populations (an upper bound on
    DCU), exact DCU on :func:`dcu_exact_grid`.  ``bound``: ``"paper"`` is
    ``(sqrt(8 UC) + UC) / factor``, ``"linear"`` is ``UC``."""
    def rhs(uc):
        return (np.sqrt(8 * uc) + uc) / factor if bound == "paper" else uc

    tab = _dcu_table(size, 331)
    worst = float(np.max(tab["best"] - rhs(tab["uc"])))
    grid = dcu_exact_grid()
    return max(worst, float(np.max(grid["dcu"] - rhs(grid["uc"]))))


register(Claim(
    id="001.prop3.3",
    source=cite("001", "Prop 3.3"),
    statement=("DCU(f, u) <= sqrt(8 UC(f, u)) + UC(f, u): the predicted utility is close to a"
               " calibrated predictor of the realized utility (DCU bounded above by calibrated"
               " candidates: recalibrated, isotonic, constant and the proof's binned g_W; exact"
               " on one- and two-atom populations)."),
    quantity=("largest DCU − (√(8 UC) + UC) over the populations and utilities (DCU bounded "
              "above by calibrated candidates)"),
    check=_prop33, reference=0.0, comparison="le", tolerance=1e-12,
    tolerance_reason=(_FLOAT + ". Instances: 10 (200) random populations with C = 2..5 and"
                      " every utility kind, where DCU is bounded above by calibrated"
                      " candidates, and every one- and two-atom population with v, r on a"
                      " 9-point grid (single atoms up to UC = 2, point masses), where DCU is"
                      " exact; there DCU reaches 0.4 of the bound (UC = 0.5, DCU = 1 = 2 UC)"),
    chapter=CH_UC,
    expect="illustrates",
    evidence=("a loose bound: the worst instance found reaches 0.40 of the bound (exhaustive"
              " enumeration of every one- and two-atom population with v, r on a 9-point grid"
              " and 5 weights, where DCU is exact: two atoms with UC = 0.5 and DCU = 1 = 2 UC);"
              " on the random populations the best calibrated candidate reaches about 0.25 of it."
              " The bound divided by 2.6 is the nearest scaled neighbour rejected, so no"
              " constant tightened by 20% or less can be rejected; the controls are far"
              " (evidence only that the check can fail)"),
    controls=(
        Control("no square root",
                "DCU(f, u) <= UC(f, u) (a linear bound, without the sqrt(8 UC) term)",
                functools.partial(_prop33, bound="linear"), kind="alternative"),
        Control("bound / 2.6",
                "DCU(f, u) <= (sqrt(8 UC) + UC) / 2.6 (the constants tightened by 2.6)",
                functools.partial(_prop33, factor=2.6), kind="scaled", factor=1 / 2.6),
    ),
))


def _prop33_proof(size: str, factor: float = 1.0) -> float:
    """max of E|g_W - v| - ((2/W + 1) UC + W) / factor at W = sqrt(2 UC) (the proof's key step),
    on the random populations and the exact grid."""
    worst = -math.inf
    for tab in (_dcu_table(size, 333), dcu_exact_grid()):
        keep = tab["uc"] > 0
        uc, W = tab["uc"][keep], np.sqrt(2 * tab["uc"][keep])
        worst = max(worst, float(np.max(tab["binned"][keep] - ((2 / W + 1) * uc + W) / factor)))
    return worst


register(Claim(
    id="001.prop3.3.proof",
    source=cite("001", "App. B.7", "proof of Prop 3.3"),
    statement=("The proof's binned predictor g_W = E[u_Y | bin of width W] with W = sqrt(2 UC)"
               " is within (2/W + 1) UC + W of v_u."),
    quantity="largest E|g_W − v_u| − ((2/W + 1) UC + W) at W = √(2 UC) over the populations",
    check=_prop33_proof, reference=0.0, comparison="le", tolerance=1e-12,
    tolerance_reason=(_FLOAT + ". Instances: the random populations of 001.prop3.3 and every"
                      " one- and two-atom population on its grid, where E|g_W - v| reaches"
                      " 0.52 of the bound"),
    chapter=CH_UC,
    expect="illustrates",
    evidence=("a loose bound: the worst instance found reaches 0.52 of it (exhaustive"
              " enumeration of the one- and two-atom populations on a 9-point grid of v and r;"
              " the random populations reach about 0.3), so the bound halved is the nearest"
              " rejected neighbour and no constant tightened by 20% or less can be rejected;"
              " the control is far"),
    controls=(
        Control("bound halved",
                "E|g_W - v_u| <= ((2/W + 1) UC + W) / 2",
                functools.partial(_prop33_proof, factor=2.0), kind="scaled", factor=0.5),
    ),
))


# --------------------------------------------------------------------------------------------
# Lemma 3.4: estimator (exact equality with the brute force) and deviation bound
# --------------------------------------------------------------------------------------------
def heavy_tie_inputs(count: int, rng):
    """Random estimator inputs with heavy ties: few distinct predicted values, n in 1..60."""
    rng = np.random.default_rng(rng)
    for t in range(count):
        n = int(rng.integers(1, 61))
        levels = int(rng.integers(1, 9))
        v = rng.integers(0, levels, size=n) / max(levels - 1, 1) * 2 - 1
        u = rng.choice(np.array([-1.0, -0.5, 0.0, 0.5, 1.0]), size=n)
        w = None if t % 2 == 0 else rng.random(n)
        yield v, u, w


def uc_position_rule(v, u, w=None) -> float:
    """The known-biased estimator: max minus min prefix sum over *every* position of the sorted
    order (ties split, as if forecasts were distinct) -- not tie-pooled."""
    v, u = np.asarray(v, float), np.asarray(u, float)
    w = np.full(v.size, 1.0 / v.size) if w is None else np.asarray(w, float) / np.sum(w)
    order = np.argsort(v, kind="stable")
    s = np.concatenate([[0.0], np.cumsum((w * (u - v))[order])])
    return float(s.max() - s.min())


def _lemma34_equal(size: str, estimator: str = "pooled") -> float:
    worst = 0.0
    for v, u, w in heavy_tie_inputs(1000 if size == "smoke" else 5000, 341):
        est = (float(ut.uc_from_values(v, u, weights=w).values[0]) if estimator == "pooled"
               else uc_position_rule(v, u, w))
        worst = max(worst, abs(est - ut.uc_brute_force(v, u, weights=w)))
    return worst


register(Claim(
    id="001.lemma3.4.estimator",
    source=cite("001", "Lemma 3.4 and App. B.8", "run time"),
    statement=("The sorted prefix-sum estimator (max minus min of prefix sums at tie-group"
               " boundaries) equals the supremum over all intervals, also with heavy ties."),
    quantity=("largest |prefix-sum estimate − brute-force supremum over intervals| on inputs "
              "with heavy ties"),
    check=_lemma34_equal, reference=0.0, tolerance=1e-12,
    tolerance_reason=("float64 sums of at most 60 terms of size <= 2: rounding below 1e-13."
                      " Instances: 1,000 (5,000) inputs with n = 1..60 (a single sample"
                      " included), 1 to 8 distinct forecasts (a single value included, so"
                      " heavy ties), five realized values, plain and weighted"),
    chapter=CH_UC,
    controls=(
        Control("position rule",
                "the max minus min prefix sum over every position of the sorted order (ties"
                " split) equals the supremum over intervals (the sort-and-prefix-sum recipe"
                " read without tie pooling)",
                functools.partial(_lemma34_equal, estimator="position"), kind="reading"),
    ),
))


def lemma34_bound(n: int, delta: float) -> float:
    """The printed deviation bound ``16/sqrt(n) + 4 sqrt(log(1/delta) / (2n))`` (App. B.8)."""
    return 16 / math.sqrt(n) + 4 * math.sqrt(math.log(1 / delta) / (2 * n))


def calibrated_sample(n: int, n_classes: int, rng):
    """``P ~ Dirichlet(1)``, ``Y ~ P``: a calibrated model, so ``UC(f, u) = 0`` for every ``u``."""
    P = rng.dirichlet(np.ones(n_classes), size=n)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    y = np.minimum(y, n_classes - 1)
    return P, y


def population_sample(d, n: int, rng):
    """``n`` draws (atom, label) from a finite population: predictions and labels."""
    w, T, F = _floats(d)
    atoms = rng.choice(d.n_atoms, size=n, p=w / w.sum())
    cum = T.cumsum(axis=1)[atoms]
    y = np.minimum((cum > rng.random((n, 1))).argmax(axis=1), d.n_classes - 1)
    return F[atoms], y


@functools.lru_cache(maxsize=4)
def deviation_study(size: str, delta: float = 0.05, seed: int = 342) -> tuple:
    """|UC_hat - UC| against the Lemma 3.4 bound on simulators with known UC.

    Calibrated Dirichlet models (``UC = 0``) for ``(n, C)`` in a grid up to ``C = 1000``, and a
    random finite population (exact ``UC``, ties in ``v``); one random linear, the top-class and
    one DCG utility each.  And the worst case for the deviation: a calibrated *coin* (``C =
    2``, ``f_1`` uniform in ``0.5 +- 0.005``, the utility ``a = (1, -1)``), whose realized
    utility is ``+-1`` with variance near 1 -- the largest a utility in ``[-1, 1]`` allows --
    at distinct forecasts, so ``sqrt(n) UC_hat`` tends to the range of a Brownian motion.
    Returns one row per configuration: the violation frequency of the bound, the
    ``1 - delta`` quantile of the deviation and its ratio to the bound (``"dev"``: the
    deviations themselves).
    """
    rng = np.random.default_rng(seed)
    reps = 20 if size == "smoke" else 400
    grid = [(100, 2), (100, 10), (1000, 10), (1000, 100)]
    if size == "full":
        grid += [(1000, 1000), (10000, 10), (10000, 100), (100, 1000)]
    rows = []
    for n, C in grid:
        fams = [ut.sample_linear(C, 1, rng=rng), ut.top_class(C), ut.dcg(C, [1.0])]
        devs = []
        for _ in range(reps):
            P, y = calibrated_sample(n, C, rng)
            devs.append(ut.utility_calibration(y, P, fams, workers=1).values)
        rows.append(_deviation_row("calibrated Dirichlet", n, C, np.array(devs), 0.0, delta))
    sample_sizes = (100, 1000) if size == "smoke" else (100, 1000, 10000)
    d = pop.random_finite_distribution(rng, n_atoms=12, n_classes=4)
    fams = [ut.sample_linear(4, 1, rng=rng), ut.top_class(4), ut.dcg(4, [1.0])]
    truth = ut.population_uc(d, fams).values
    for n in sample_sizes:
        devs = []
        for _ in range(reps):
            F, y = population_sample(d, n, rng)
            devs.append(ut.utility_calibration(y, F, fams, workers=1).values)
        rows.append(_deviation_row("finite population", n, 4, np.array(devs), truth, delta))
    for n in sample_sizes:
        devs = []
        for _ in range(reps):
            # the utility a = (1, -1): predicted 2 p_1 - 1, realized +1 (Y = 1) or -1
            p1 = 0.5 + rng.uniform(-0.005, 0.005, n)
            y = (rng.random(n) >= p1).astype(int)
            devs.append(ut.uc_from_values(2 * p1 - 1, 1.0 - 2.0 * y,
                                          tie_tol=ut.utility_tie_tolerance(2)).values)
        rows.append(_deviation_row("calibrated coin (worst case)", n, 2, np.array(devs), 0.0,
                                   delta))
    return tuple(rows)


def _deviation_row(sim, n, C, est, truth, delta):
    dev = np.abs(est - truth)                             # (reps, utilities)
    bound = lemma34_bound(n, delta)
    q = float(np.quantile(dev, 1 - delta))
    return {"simulator": sim, "n": n, "C": C, "violations": float(np.mean(dev > bound)),
            "quantile": q, "bound": bound, "ratio": q / bound,
            "sqrt_n_quantile": q * math.sqrt(n), "dev": dev}


#: Factor by which the Lemma 3.4 control divides the printed bound (see its tolerance reason).
LEMMA34_CONTROL_FACTOR = 12


def _lemma34_bound(size: str, factor: float = 1.0, rate: float = 0.5) -> float:
    """Largest violation frequency over the configurations of the bound
    ``(16 + 4 sqrt(log(1/delta)/2)) / (factor n^rate)`` (the printed bound at the defaults)."""
    worst = 0.0
    for r in deviation_study(size):
        bound = lemma34_bound(r["n"], 0.05) * math.sqrt(r["n"]) / (factor * r["n"] ** rate)
        worst = max(worst, float(np.mean(r["dev"] > bound)))
    return worst


register(Claim(
    id="001.lemma3.4.bound",
    source=cite("001", "Lemma 3.4", "eq. (3.4) with the constants of App. B.8"),
    statement=("With probability at least 1 - delta, |UC_hat(f, u; S) - UC(f, u)| <= 16/sqrt(n)"
               " + 4 sqrt(log(1/delta)/(2n)), whatever the number of classes (delta = 0.05)."),
    quantity="largest frequency of samples violating the bound over the configurations",
    check=_lemma34_bound, reference=0.05, comparison="le", tolerance=0.0,
    tolerance_reason=("the measured frequency is 0 in every configuration, so no sampling"
                      " allowance is needed. Instances: calibrated Dirichlet models with C = 2"
                      " to 100 and n = 100 to 1,000 (C = 1000 and n = 10,000 added at full"
                      " size), a finite population with tied forecasts, and the worst case for"
                      " the deviation, a calibrated coin (realized utility +-1 at distinct"
                      " forecasts), n = 100 and 1,000 (and 10,000 at full size); 20 (400)"
                      " samples each"),
    chapter=CH_UC,
    expect="illustrates",
    evidence=("a loose bound: the worst instance found, a calibrated coin (the realized utility"
              " +-1 has variance near 1, the largest a utility in [-1, 1] allows, at distinct"
              " forecasts, so sqrt(n) UC_hat tends to the range of a Brownian bridge), has a 95%"
              " quantile of about 2.2-2.5 / sqrt(n): 0.10-0.12 of the bound; every other"
              " simulator is lower (at most 0.06). The printed constants are about 8 times what the deviation needs, so"
              " the bound divided by 12 is the nearest scaled neighbour rejected and no"
              " constant tightened by 20% or less can be rejected; the controls are far"),
    controls=(
        Control(f"bound / {LEMMA34_CONTROL_FACTOR}",
                f"the deviation is at most the printed bound divided by"
                f" {LEMMA34_CONTROL_FACTOR} with probability 0.95",
                functools.partial(_lemma34_bound, factor=LEMMA34_CONTROL_FACTOR),
                kind="scaled", factor=1 / LEMMA34_CONTROL_FACTOR),
        Control("rate 1/n",
                "the deviation is at most (16 + 4 sqrt(log(1/delta)/2)) / n with probability"
                " 0.95 (a 1/n rate instead of 1/sqrt(n))",
                functools.partial(_lemma34_bound, rate=1.0), kind="alternative"),
    ),
))


# --------------------------------------------------------------------------------------------
# App. B.2: binned bound and counterexample
# --------------------------------------------------------------------------------------------
def binned_top_and_classwise(d, edges):
    """Population ``TCE^bin`` (2.1) and ``CWE^bin`` (2.2, ``w_i = 1/C``) for bin ``edges``.

    Bins ``[e_j, e_{j+1})``, the last closed.  ``Y*`` for a row with several top classes is
    the indicator of a uniformly chosen one (the tie rule of :func:`calnotes.theory.utility.top_class`;
    with the first argmax instead, ``TCE^bin`` and ``UC(f, U_TCE)`` measure different events
    and the bound can fail on such rows).
    """
    w, T, F = _floats(d)
    C = d.n_classes
    p = F.max(axis=1)
    tops = F == p[:, None]                            # classes tied for the top
    acc = (T * tops).sum(axis=1) / tops.sum(axis=1)    # E[Y*], ties broken uniformly
    m = len(edges) - 1

    def binned(conf, hit):
        b = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, m - 1)
        return float(np.sum(np.abs(np.bincount(b, weights=w * (conf - hit), minlength=m))))

    tce_bin = binned(p, acc)
    cwe_bin = sum(binned(F[:, c], T[:, c]) for c in range(C)) / C
    return tce_bin, cwe_bin


def _random_edges(rng, m: int) -> np.ndarray:
    inner = np.sort(rng.uniform(0, 1, m - 1))
    return np.concatenate([[0.0], inner, [1.0]])


def b2_tight_instance(m: int, gap: float = 0.05):
    """A population on which App. B.2's bound is attained, and its ``m`` bins.

    ``m`` equally likely atoms (``C = 4``) whose top-class confidences ``p*_j`` lie one in each
    bin, with accuracies ``p*_j + (-1)^j gap``: each bin contributes ``gap / m`` to
    ``TCE^bin``, and every interval of confidences has ``|E[(Y* - p*) 1{p* in I}]| <= gap / m``
    (alternating signs), so ``TCE^bin = gap = m UC(f, U_TCE)``.
    """
    edges = np.linspace(0.3, 0.9, m + 1)
    conf = (edges[:-1] + edges[1:]) / 2
    acc = conf + gap * (-1.0) ** np.arange(m)
    rest = (1 - conf) / 3
    F = np.column_stack([conf, rest, rest, rest])
    T = np.column_stack([acc, (1 - acc) / 3, (1 - acc) / 3, (1 - acc) / 3])
    full_edges = np.concatenate([[0.0], edges[1:-1], [1.0]])
    return pop.FiniteDistribution(np.full(m, 1.0 / m), T, F), full_edges


@functools.lru_cache(maxsize=4)
def _b2_table(size: str) -> np.ndarray:
    """Rows ``(m, TCE^bin, UC_TCE, CWE^bin, UC_CWE)`` over populations and partitions."""
    rng = np.random.default_rng(221)
    rows = []

    def add(d, m, edges):
        uc_t = ut.population_uc(d, ut.top_class(d.n_classes)).max
        uc_c = ut.population_uc(d, ut.classwise(d.n_classes)).max
        tce_bin, cwe_bin = binned_top_and_classwise(d, edges)
        rows.append((m, tce_bin, uc_t, cwe_bin, uc_c))

    for d in _family(size, 222, min_classes=2):
        for m in (1, 2, 3, 5, 10, 15):
            for edges in (np.linspace(0, 1, m + 1), _random_edges(rng, m)):
                add(d, m, edges)
    for m in (1, 2, 3, 5, 10, 15):
        d, edges = b2_tight_instance(m)
        add(d, m, edges)
    return np.array(rows)


def _b2_bound(size: str, factor: float = 1.0) -> float:
    """max over populations and m-bin partitions of binned - factor m UC (TCE and CWE)."""
    m, tce, uc_t, cwe, uc_c = _b2_table(size).T
    return float(max(np.max(tce - factor * m * uc_t), np.max(cwe - factor * m * uc_c)))


register(Claim(
    id="001.appB2.bound",
    source=cite("001", "App. B.2", "and Example 3.5"),
    statement=("For any partition into m bins, TCE^bin(f) <= m UC(f, U_TCE) and CWE^bin(f) <="
               " m UC(f, U_CWE)."),
    quantity="largest binned error − m·UC over the populations and m-bin partitions (TCE and CWE)",
    check=_b2_bound, reference=0.0, comparison="le", tolerance=1e-12,
    tolerance_reason=(_FLOAT + ". Instances: 20 (200) random populations with C = 2..5 and"
                      " tied predictions, m = 1 (one bin), 2, 3, 5, 10, 15, equal-width and"
                      " random partitions; and for each m a population attaining the bound"
                      " (one atom per bin, alternating signs)"),
    chapter=CH_BOUNDS,
    controls=(
        Control("factor 0.9 m",
                "TCE^bin <= 0.9 m UC(f, U_TCE) and CWE^bin <= 0.9 m UC(f, U_CWE)",
                functools.partial(_b2_bound, factor=0.9), kind="scaled", factor=0.9),
    ),
))


def b2_counterexample() -> dict:
    """App. B.2's numbers on :func:`b2_population`, exactly (Fractions)."""
    F = Fraction
    conf = [F(45, 100), F(55, 100)]
    acc = [F(5, 100), F(95, 100)]
    w = [F(1, 2), F(1, 2)]
    edges = [F(0), F(1, 3), F(2, 3), F(1)]
    tce_bin = F(0)
    for j in range(3):
        inside = [edges[j] <= c < edges[j + 1] or (j == 2 and c == 1) for c in conf]
        tce_bin += abs(sum(wi * (c - a) for wi, c, a, i in zip(w, conf, acc, inside) if i))
    # UC over all intervals: contiguous sets of the sorted confidences
    parts = [wi * (a - c) for wi, c, a in zip(w, conf, acc)]
    uc = max(abs(parts[0]), abs(parts[1]), abs(parts[0] + parts[1]))
    # the binned view: the supremum over the three bins only
    by_bins = max(abs(sum(wi * (a - c) for wi, c, a in zip(w, conf, acc)
                          if edges[j] <= c < edges[j + 1])) for j in range(3))
    return {"tce_bin": tce_bin, "uc": uc, "interval_045": abs(parts[0]), "uc_bins": by_bins}


def _b2_counterexample(size: str, intervals: str = "all") -> float:
    """``UC - 10 TCE^bin`` (exact); ``intervals="bins"``: the supremum over the bins only."""
    ex = b2_counterexample()
    return float((ex["uc"] if intervals == "all" else ex["uc_bins"]) - 10 * ex["tce_bin"])


register(Claim(
    id="001.appB2.counterexample",
    source=cite("001", "App. B.2"),
    statement=("With p* = 0.45 or 0.55 (accuracies 0.05, 0.95) and bins [0,1/3), [1/3,2/3),"
               " [2/3,1]: TCE^bin = 0 while UC(f, U_TCE) >= 0.2 (the interval [0.45, 0.46])."),
    quantity="UC(f, U_TCE) − 10·TCE^bin on the 0.45/0.55 example",
    check=_b2_counterexample, reference=0.2, comparison="ge", tolerance=0.0,
    tolerance_reason="exact rational arithmetic: UC - 10 TCE^bin is 1/5 exactly or it is not",
    chapter=CH_BOUNDS,
    controls=(
        Control("bins as intervals",
                "the supremum over the three bins alone (the binned view) already shows UC >="
                " 0.2, i.e. max over bins |E[(Y* - p*) 1{p* in B_j}]| - 10 TCE^bin >= 0.2",
                functools.partial(_b2_counterexample, intervals="bins"), kind="reading"),
        Control("UC >= 0.22",
                "TCE^bin = 0 while UC(f, U_TCE) >= 0.22 (the printed 0.2 raised by 10%; UC is"
                " 1/5 exactly)", _b2_counterexample, reference=0.22, kind="scaled", factor=1.1),
    ),
))


# --------------------------------------------------------------------------------------------
# Cor 4.3 / B.9: the class supremum grows like sqrt(C / n)
# --------------------------------------------------------------------------------------------
def sup_lower_bound_formula(n: int, C: int) -> float:
    """``E ||ybar - pbar||_1`` for the calibrated Dirichlet(1) model, normal approximation.

    ``Y_c - p_c`` has mean 0 and variance ``E[p_c (1 - p_c)] = (C - 1) / (C (C + 1))``, so
    ``sum_c E|mean| ~ C sqrt(2 / pi) sqrt((C - 1) / (C (C + 1) n))``.
    """
    return math.sqrt(2 / (math.pi * n)) * math.sqrt(C * (C - 1) / (C + 1))


@functools.lru_cache(maxsize=4)
def sup_scaling_study(size: str, n: int = 2000, seed: int = 431) -> tuple:
    """``sup_{u in U_lin} UC_hat >= UC_hat(a*) >= ||ybar - pbar||_1`` with ``a* = sign(ybar - pbar)``.

    For a calibrated model every ``UC(f, u)`` is 0, so the left side is the uniform deviation
    Cor. 4.3 bounds.  Also the median deviation of fixed sampled utilities (Lemma 3.4's
    dimension-free regime).
    """
    rng = np.random.default_rng(seed)
    reps = 30 if size == "smoke" else 300
    rows = []
    for C in (2, 5, 10, 20, 50, 100, 200):
        lower, attained, fixed = [], [], []
        fam = ut.sample_linear(C, 20, rng=rng)
        for _ in range(reps):
            P, y = calibrated_sample(n, C, rng)
            diff = np.eye(C)[y].mean(axis=0) - P.mean(axis=0)
            lower.append(np.abs(diff).sum())
            a_star = ut.linear(np.where(diff >= 0, 1.0, -1.0))
            attained.append(ut.utility_calibration(y, P, a_star).max)
            fixed.append(np.median(ut.utility_calibration(y, P, fam).values))
        lower = np.array(lower)
        rows.append({"C": C, "n": n, "sup_lower": float(lower.mean()),
                     "sup_lower_se": float(lower.std(ddof=1) / math.sqrt(reps)),
                     "attained": float(np.mean(attained)),
                     "formula": sup_lower_bound_formula(n, C),
                     "fixed_median": float(np.mean(fixed))})
    return tuple(rows)


def _slope(rows, key):
    rows = [r for r in rows if r["C"] >= 10]
    return float(np.polyfit(np.log([r["C"] for r in rows]), np.log([r[key] for r in rows]), 1)[0])


#: Slope of the normal-approximation curve sqrt(C(C-1)/(C+1)) over C = 10, 20, 50, 100, 200.
FORMULA_SLOPE = _slope([{"C": C, "f": sup_lower_bound_formula(2000, C)}
                        for C in (10, 20, 50, 100, 200)], "f")


#: Classes over which the Cor. 4.3 and Lemma 3.4 slopes in C are fitted.
SLOPE_CLASSES = (10, 20, 50, 100, 200)
#: Samples of the slope studies (fixed n).
SLOPE_N = 2000


@functools.lru_cache(maxsize=4)
def sup_lower_study(size: str, n: int = SLOPE_N, seed: int = 433) -> tuple:
    """``E ||ybar - pbar||_1`` for the calibrated Dirichlet(1) model, per ``C`` of
    :data:`SLOPE_CLASSES`, by Monte Carlo over one class's marginal.

    The norm is a sum over classes of identically distributed terms, so its expectation is
    exactly ``C E|mean_i (Y_i - p_i)|`` with ``p_i ~ Beta(1, C - 1)`` (the marginal of a
    Dirichlet(1) coordinate) and ``Y_i ~ Bernoulli(p_i)``: a scalar simulation with the same
    expectation as the vector one, ``C`` times cheaper.  1,000 (10,000) replications: a
    relative standard error of 2.4% (0.8%) per mean.
    """
    rng = np.random.default_rng(seed)
    reps = 1000 if size == "smoke" else 10_000
    rows = []
    for C in SLOPE_CLASSES:
        vals = np.empty(reps)
        for a in range(0, reps, 250):
            p = rng.beta(1.0, C - 1.0, size=(min(250, reps - a), n))
            y = rng.random(p.shape) < p
            vals[a:a + p.shape[0]] = C * np.abs((y - p).mean(axis=1))
        rows.append({"C": C, "sup_lower": float(vals.mean()),
                     "se": float(vals.std(ddof=1) / math.sqrt(reps)),
                     "formula": sup_lower_bound_formula(n, C)})
    return tuple(rows)


@functools.lru_cache(maxsize=4)
def fixed_utility_study(size: str, n: int = SLOPE_N, seed: int = 434) -> tuple:
    """Mean over replications of the median ``UC_hat`` of 20 sampled linear utilities of a
    calibrated Dirichlet(1) model (``UC = 0``), per ``C``: ``C = 10, 50, 200`` and 20
    replications at smoke size, every ``C`` of :data:`SLOPE_CLASSES` and 200 at full."""
    rng = np.random.default_rng(seed)
    reps = 20 if size == "smoke" else 200
    classes = (10, 50, 200) if size == "smoke" else SLOPE_CLASSES
    rows = []
    for C in classes:
        fam = ut.sample_linear(C, 20, rng=rng)
        med = np.array([np.median(ut.utility_calibration(*calibrated_sample(n, C, rng)[::-1],
                                                         fam, workers=1).values)
                        for _ in range(reps)])
        rows.append({"C": C, "fixed_median": float(med.mean()),
                     "se": float(med.std(ddof=1) / math.sqrt(reps))})
    return tuple(rows)


#: The exponent of C the Cor. 4.3 near control scales (by 0.9).
RATE_C_CONTROL_FACTOR = 0.9
#: Slope of a 20% growth of the error between C = 10 and C = 200 (the dimension-free control).
GROWTH_20_SLOPE = math.log(1.2) / math.log(20)

register(Claim(
    id="001.cor4.3.rate_in_C",
    source=cite("001", "Cor 4.3 / B.9", "with Prop B.8's lower bound"),
    statement=("The C in Cor. 4.3 cannot be removed: for a calibrated model the uniform"
               " deviation over U_lin is at least ||ybar - pbar||_1, whose expectation grows"
               " like sqrt(C(C-1)/(C+1)) ~ C^(1/2) at fixed n (log-log slope over C = 10..200;"
               " a lower bound on the supremum, so it tests the lower-bound half)."),
    quantity=("fitted log-log slope in C of the mean lower bound ‖ȳ − p̄‖₁ on the supremum over "
              "U_lin"),
    check=lambda size: _slope(sup_lower_study(size), "sup_lower"),
    reference=FORMULA_SLOPE, tolerance=0.04,
    tolerance_reason=("Monte Carlo: each mean has relative SE 2.4% at smoke size (1,000"
                      " replications of one class's marginal, exact in expectation) and 0.8% at"
                      " full (10,000), so the slope fitted over log C in [2.3, 5.3] has SE about"
                      " 0.010 (0.003); 0.04 is 4 smoke SEs, 7.5% of the slope 0.53: the check"
                      " detects an exponent 10% off (the scaled control), not one 5% off. The"
                      " normal approximation behind the formula is off by under 1% at n = 2000"
                      " (its first correction to E|S| vanishes by symmetry; the next is"
                      " O(1/n)). Instances: calibrated Dirichlet(1) models, C = 10..200, n ="
                      " 2000"),
    chapter=CH_BOUNDS,
    controls=(
        Control("exponent x 0.9",
                "the expected deviation grows like C^(0.9 x 0.53): the exponent 10% smaller",
                lambda size: _slope(sup_lower_study(size), "sup_lower"),
                reference=RATE_C_CONTROL_FACTOR * FORMULA_SLOPE, kind="scaled",
                factor=RATE_C_CONTROL_FACTOR),
        Control("dimension-free",
                "the uniform deviation over U_lin does not grow with C (slope 0), as for a"
                " single utility", lambda size: _slope(sup_lower_study(size), "sup_lower"),
                reference=0.0, kind="alternative"),
    ),
))


C2_SIZES = (250, 1000, 4000, 16000)


@functools.lru_cache(maxsize=4)
def sup_exact_c2(size: str, seed: int = 432) -> tuple:
    """The supremum over U_lin of UC_hat, exactly, for a calibrated model with ``C = 2``.

    With ``a = (a_1, a_2)``, ``v = a_2 + (a_1 - a_2) p_1`` is affine in ``p_1`` and ``<Y - p,
    a> = (a_1 - a_2)(Y_1 - p_1)``, so intervals of ``v`` are intervals of ``p_1`` and
    ``sup_a UC_hat(u_a) = 2 UC_hat(u_{e_1})`` (``|a_1 - a_2| <= 2``).  Since ``UC = 0`` for
    every ``u``, this is ``sup_u |UC_hat - UC|``, the left side of Cor. 4.3.  Mean over
    replications at each ``n`` of :data:`C2_SIZES` (``f_1 ~ Unif(0, 1)``, ``Y ~ f``); 120
    (1,200) replications.  ``UC_hat(u_{e_1})`` is the estimator on ``v = f_1`` and the
    realized utility ``1{Y = 1}`` (:func:`calnotes.theory.utility.uc_from_values`).
    """
    rng = np.random.default_rng(seed)
    reps = 120 if size == "smoke" else 1200
    tol = ut.utility_tie_tolerance(2)
    rows = []
    for n in C2_SIZES:
        sups = []
        for _ in range(reps):
            P, y = calibrated_sample(n, 2, rng)
            sups.append(2 * ut.uc_from_values(P[:, 0], (y == 0).astype(float),
                                              tie_tol=tol).values[0])
        sups = np.array(sups)
        rows.append({"n": n, "sup": float(sups.mean()),
                     "se": float(sups.std(ddof=1) / math.sqrt(reps))})
    return tuple(rows)


def _c2_slope(size: str) -> float:
    rows = sup_exact_c2(size)
    return float(np.polyfit(np.log([r["n"] for r in rows]), np.log([r["sup"] for r in rows]),
                            1)[0])


register(Claim(
    id="001.cor4.3.rate_in_n",
    source=cite("001", "Cor 4.3 / B.9", "upper bound"),
    statement=("sup_{u in U_lin} |UC_hat(f, u; S) - UC(f, u)| = O~(sqrt(1/n)) at fixed C,"
               " verified for C = 2 only: for a calibrated model with C = 2, where the supremum"
               " is computed exactly (2 UC_hat of the class-wise utility), its mean decreases"
               " at least like n^(-1/2) (log-log slope over n = 250..16000 at most -1/2 +"
               " 0.05). The C-dependence of the bound is not checked here (001.cor4.3.rate_in_C"
               " checks only that the supremum grows at least like C^(1/2))."),
    quantity="fitted log-log slope in n of the mean supremum (C = 2, computed exactly)",
    check=_c2_slope, reference=-0.5, comparison="le", tolerance=0.05,
    tolerance_reason=("each mean has Monte Carlo relative SE about 3.5% (120 smoke"
                      " replications; 1.1% at 1,200 full), so the slope fitted over log n in"
                      " [5.5, 9.7] has SE about 0.011 (0.004); 0.05 is 4.5 smoke SEs, 10% of"
                      " the exponent: an exponent 20% larger (the scaled control) is rejected."
                      " The log factors of O~ are ignored (they would only raise the slope"
                      " above -1/2 - the side that does not fail). Instances: C = 2 only,"
                      " where the supremum over the infinite class is exact; for C > 2 it is"
                      " not computable here, so the bound's dependence on C is not verified"),
    chapter=CH_BOUNDS,
    controls=(
        Control("rate n^(-0.6)",
                "the uniform deviation decreases like n^(-0.6): the exponent 1/2 scaled by 1.2"
                " (slope at most -0.6 + 0.05)", _c2_slope, reference=-0.6, kind="scaled",
                factor=1.2),
        Control("rate n^(-3/4)",
                "the uniform deviation decreases like n^(-3/4) (slope at most -0.75 + 0.05)",
                _c2_slope, reference=-0.75, kind="alternative"),
    ),
))

register(Claim(
    id="001.lemma3.4.dimension_free",
    source=cite("001", "Lemma 3.4", "constants independent of C"),
    statement=("For a fixed utility the estimation error does not grow with C: the median"
               " UC_hat of 20 sampled linear utilities of a calibrated model is flat in C"
               " (log-log slope over C = 10..200 near 0)."),
    quantity="fitted log-log slope in C of the median UC estimate of 20 fixed linear utilities",
    check=lambda size: _slope(fixed_utility_study(size), "fixed_median"),
    reference=0.0, tolerance=0.04,
    tolerance_reason=("Monte Carlo: each mean of medians has relative SE about 2.5% at smoke"
                      " size (20 replications at C = 10, 50, 200) and 0.7% at full (200"
                      " replications, C = 10, 20, 50, 100, 200), so the slope has SE about"
                      " 0.012 (0.004); 0.04 is about 3 smoke SEs and equals a 13% change of"
                      " the error between C = 10 and 200: a 20% growth (the scaled control) is"
                      " rejected at both sizes, a 5% one is not. Instances: calibrated"
                      " Dirichlet(1) models, n = 2000"),
    chapter=CH_BOUNDS,
    controls=(
        Control("grows by 20%",
                "the error of a fixed utility is 1.2 times larger at C = 200 than at C = 10"
                " (slope log 1.2 / log 20 = 0.061)",
                lambda size: _slope(fixed_utility_study(size), "fixed_median"),
                reference=GROWTH_20_SLOPE, kind="scaled", factor=1.2),
        Control("grows like sqrt(C)",
                "the error of a fixed utility grows like the class supremum, C^(1/2)",
                lambda size: _slope(fixed_utility_study(size), "fixed_median"), reference=0.5,
                kind="alternative"),
    ),
))


# --------------------------------------------------------------------------------------------
# Prop B.8 (shattering construction) and Cor B.10 (rank = linear after sorting)
# --------------------------------------------------------------------------------------------
def shatter_construction(p) -> dict:
    """Prop B.8's lower-bound construction at one prediction ``p`` (exact rationals).

    Points ``((x0, e_j), 0)``, ``j < C``; ``a_C = 0``, ``[s, t] = [-1, 1]``; for each labeling
    ``xi in {-1, 1}^{C-1}``, ``b = delta (I - 1 q^T)^{-1} xi`` with
    ``delta = 1 / ||(I - 1 q^T)^{-1}||_inf``.  Returns the fraction of labelings realised
    (``g(x0, e_j) = delta xi_j``, so ``1{0 <= g} = labeling``) and the largest ``|b_j|``.
    """
    import itertools

    import sympy

    p = [sympy.Rational(x) for x in p]
    C = len(p)
    q = sympy.Matrix(p[:-1])
    A = sympy.eye(C - 1) - sympy.ones(C - 1, 1) * q.T
    inv = A.inv()
    assert inv == sympy.eye(C - 1) + sympy.ones(C - 1, 1) * q.T / p[-1]   # Sherman-Morrison
    norm = max(sum(abs(x) for x in inv.row(i)) for i in range(C - 1))
    delta = 1 / norm
    realised, largest = 0, sympy.Integer(0)
    for xi in itertools.product((-1, 1), repeat=C - 1):
        b = delta * inv * sympy.Matrix(xi)
        a = list(b) + [0]
        vals = [sum(((1 if j == i else 0) - p[j]) * a[j] for j in range(C)) for i in range(C - 1)]
        labels = tuple(1 if v >= 0 else 0 for v in vals)
        realised += labels == tuple(1 if x == 1 else 0 for x in xi)
        largest = max(largest, max(abs(x) for x in b))
    return {"fraction": realised / 2 ** (C - 1), "max_abs_b": largest, "delta": delta}


def shatter_fraction_lp(p, n_points: int) -> float:
    """Fraction of labelings of the points ``((x0, e_j), 0)``, ``j < n_points``, realised by
    *some* ``g_{a,s,t}`` of ``G_lin`` (a linear programme per labeling, not the construction).

    All points share ``x0``, so the interval indicator is on for all or for none (then every
    ``g = 0`` and every label is 1).  With it on, ``g_j = <e_j - p, a>``: a labeling is
    realised iff the LP ``max m`` s.t. ``g_j >= 0`` (label 1), ``g_j <= -m`` (label 0),
    ``a in [-1, 1]^C`` has ``m > 0``.
    """
    from scipy.optimize import linprog

    p = np.asarray(p, float)
    C = p.size
    G = np.eye(C)[:n_points] - p[None, :]                  # g = G a
    realised = 0
    for labels in itertools.product((0, 1), repeat=n_points):
        if all(labels):
            realised += 1
            continue
        # variables (a, m); minimise -m
        A_ub, b_ub = [], []
        for j, lab in enumerate(labels):
            A_ub.append(np.concatenate([-G[j], [0.0]]) if lab else np.concatenate([G[j], [1.0]]))
            b_ub.append(0.0)
        res = linprog(np.concatenate([np.zeros(C), [-1.0]]), A_ub=np.array(A_ub),
                      b_ub=np.array(b_ub), bounds=[(-1, 1)] * C + [(0, 1)], method="highs")
        realised += bool(res.status == 0 and -res.fun > 1e-9)
    return realised / 2 ** n_points


def _propb8_ps(size: str):
    rng = np.random.default_rng(881)
    for C in range(2, 7 if size == "smoke" else 8):
        for _ in range(2 if size == "smoke" else 5):
            k = rng.integers(1, 10, size=C)
            yield [Fraction(int(x), int(k.sum())) for x in k]


def _propb8(size: str) -> float:
    """min over random rational p (C = 2..6, 7 full) of fraction realised, 0 if |b| > 1."""
    worst = 1.0
    for p in _propb8_ps(size):
        res = shatter_construction(p)
        ok = res["fraction"] if res["max_abs_b"] <= 1 else 0
        worst = min(worst, float(ok))
    return worst


def _propb8_c_points(size: str) -> float:
    """min over the same p of the fraction of labelings of all C points realised (LP)."""
    return min(shatter_fraction_lp([float(x) for x in p], len(p)) for p in _propb8_ps(size))


register(Claim(
    id="001.propB.8.shatter",
    source=cite("001", "Prop B.8", "lower bound"),
    statement=("The C - 1 points ((x0, e_j), 0) are shattered by the subgraphs of G_lin: every"
               " labeling is realised by some a in [-1, 1]^C, so Pdim(G_lin) >= C - 1."),
    quantity="smallest fraction of the labelings realised by some a ∈ [−1, 1]^C",
    check=_propb8, reference=1.0, tolerance=0.0,
    tolerance_reason=("exact rational arithmetic (sympy): every labeling realised or not."
                      " Instances: C = 2 (a single point) to 6 (7 full), random rational p"),
    chapter=CH_BOUNDS,
    controls=(
        Control("C points",
                "the C points ((x0, e_j), 0), j <= C, are shattered too (checked by a linear"
                " programme over all of G_lin; false since sum_j p_j g_j = 0 forbids the"
                " all-zero labeling)", _propb8_c_points, kind="boundary"),
    ),
))


def sup_block_sums(v, g, signs, tol: float) -> np.ndarray:
    """``sup_I sum_k sigma_k g_k 1{v_k in I}`` for every row ``sigma`` of ``signs``.

    Intervals of ``v`` are contiguous blocks of the sorted order that keep ties together
    (the empty interval included, so the value is ``>= 0``): the largest rise of the prefix
    sums taken at tie-group boundaries.
    """
    order = np.argsort(v, kind="stable")
    vs = v[order]
    ends = np.concatenate([np.flatnonzero(np.diff(vs) > tol) + 1, [v.size]])
    S = np.cumsum(signs[:, order] * g[order], axis=1)[:, ends - 1]
    S = np.concatenate([np.zeros((signs.shape[0], 1)), S], axis=1)
    return np.max(S - np.minimum.accumulate(S, axis=1), axis=1)


def all_signs(n: int) -> np.ndarray:
    """Every Rademacher vector of length ``n``: ``(2^n, n)``."""
    return np.array(list(itertools.product((-1.0, 1.0), repeat=n)))


def rademacher_gu(fams, P, Y) -> tuple[float, np.ndarray]:
    """Exact empirical Rademacher complexities ``(R_n(G_U | S), [R_n(P_j(U) | S)]_j)``.

    ``G_U = {<Y - f, ubar 1{v_u in I}>}`` and ``P_j(U) = {u(f, e_j) 1{v_u in I}}`` (eqs. B.2,
    B.3) for the finite class ``fams`` on the sample ``(P, Y)`` (``Y`` one-hot), by
    enumerating all ``2^n`` sign vectors (no Monte Carlo error).
    """
    n, C = P.shape
    sig = all_signs(n)
    tol = ut.utility_tie_tolerance(C)
    G, Pj = np.zeros(sig.shape[0]), np.zeros((C, sig.shape[0]))
    for fam in fams:
        ubar = fam.per_class(P)
        V = np.einsum("nj,mnj->mn", P, ubar)
        for m in range(len(fam)):
            G = np.maximum(G, sup_block_sums(V[m], np.einsum("nj,nj->n", Y - P, ubar[m]),
                                             sig, tol))
            for j in range(C):
                Pj[j] = np.maximum(Pj[j], sup_block_sums(V[m], ubar[m][:, j], sig, tol))
    return float(G.mean() / n), Pj.mean(axis=1) / n


def rademacher_tight_instance(n: int):
    """``C = 2``, the class ``{a = (1, -1)}``, predictions nearly certain and always wrong
    (distinct forecasts): ``<Y - f, ubar> = 2 (Y_1 - f_1) ~ 2``, so ``R_n(G_U)`` is about
    ``R_n(P_1) + R_n(P_2)``, half the bound."""
    p0 = np.linspace(0.0, 0.001, n)
    return [ut.linear([[1.0, -1.0]])], np.column_stack([p0, 1 - p0]), np.tile([1.0, 0.0], (n, 1))


@functools.lru_cache(maxsize=4)
def _thmb4_table(size: str) -> np.ndarray:
    """Rows ``(R_n(G_U | S), sum_j R_n(P_j(U) | S))`` over samples and classes."""
    n = 10 if size == "smoke" else 12
    rng = np.random.default_rng(771)
    rows = []
    for d in _family(size, 772, min_classes=2):
        w, T, F = _floats(d)
        C = d.n_classes
        idx = rng.choice(d.n_atoms, size=n, p=w)
        Y = np.eye(C)[[rng.choice(C, p=T[i]) for i in idx]]
        for fams in (comb_class(C), [ut.sample_linear(C, 4, rng=rng)], [ut.top_class(C)]):
            g, pj = rademacher_gu(fams, F[idx], Y)
            rows.append((g, float(pj.sum())))
    g, pj = rademacher_gu(*rademacher_tight_instance(n))
    rows.append((g, float(pj.sum())))
    return np.array(rows)


def _thmb4(size: str, factor: float = 2.0) -> float:
    g, pj = _thmb4_table(size).T
    return float(np.max(g - factor * pj))


register(Claim(
    id="001.thmB.4",
    source=cite("001", "Thm B.4"),
    statement=("R_n(G_U) <= 2 sum_j R_n(P_j(U)) (checked for the empirical complexities given"
               " the sample, which the proof bounds before taking expectations)."),
    quantity="largest R_n(G_U) − 2 Σ_j R_n(P_j(U)) over the classes and samples",
    check=_thmb4, reference=0.0, comparison="le", tolerance=1e-12,
    tolerance_reason=("exact: every one of the 2^n sign vectors is enumerated (n = 10 smoke, 12"
                      " full), so only float64 rounding of sums of n terms. Instances: samples"
                      " from 20 (200) random populations with C = 2..5 and tied predictions, for"
                      " U_comb, 4 sampled linear utilities and U_TCE; and a C = 2 sample with"
                      " certain, wrong predictions where R_n(G_U) reaches 0.9996 sum_j"
                      " R_n(P_j)"),
    chapter=CH_BOUNDS,
    expect="illustrates",
    evidence=("a loose bound: the worst instance found, a C = 2 sample whose predictions are"
              " certain and always wrong (|<Y - f, ubar>| = 2, its largest value), reaches 0.50"
              " of the bound 2 sum_j R_n(P_j); the random samples stay below it. The factor 2"
              " is loose by 2 there, so the nearest rejected neighbour (factor 0.95) is 0.475"
              " times the bound and no factor tightened by 20% or less can be rejected"),
    controls=(
        Control("factor 0.95",
                "R_n(G_U) <= 0.95 sum_j R_n(P_j(U))",
                functools.partial(_thmb4, factor=0.95), kind="scaled", factor=0.475),
    ),
))


def massart_sauer_bound(n: int, d: int) -> float:
    """Result 1: ``sqrt(2 d log(e n / d) / n)``, for ``d <= n``."""
    return math.sqrt(2 * d * math.log(math.e * n / d) / n)


@functools.lru_cache(maxsize=4)
def _result1_table(size: str) -> np.ndarray:
    """Rows ``(R_n(B | S), bound)``: exact empirical Rademacher complexities of thresholds
    (VC 1) and intervals (VC 2) on the line, on samples with and without repeated points, and
    of the class of all subsets of ``d`` points sampled once each (VC ``d = n``)."""
    rng = np.random.default_rng(121)
    rows = []
    for n in range(1, (12 if size == "smoke" else 14) + 1):
        sig = all_signs(n)
        for x in (np.arange(n, dtype=float), rng.integers(0, max(n // 2, 1), n).astype(float)):
            ones = np.ones(n)
            # thresholds 1{x <= t}: prefix blocks only (the empty one included)
            order = np.argsort(x, kind="stable")
            ends = np.concatenate([np.flatnonzero(np.diff(x[order]) > 0) + 1, [n]])
            S = np.cumsum(sig[:, order], axis=1)[:, ends - 1]
            thresholds = np.maximum(S.max(axis=1), 0.0).mean() / n
            rows.append((thresholds, massart_sauer_bound(n, 1)))
            if n >= 2:
                rows.append((sup_block_sums(x, ones, sig, 0.0).mean() / n,
                             massart_sauer_bound(n, 2)))
        rows.append((np.maximum(sig, 0.0).sum(axis=1).mean() / n, massart_sauer_bound(n, n)))
    return np.array(rows)


def _result1(size: str, factor: float = 1.0) -> float:
    r, bound = _result1_table(size).T
    return float(np.max(r - bound / factor))


register(Claim(
    id="001.result1",
    source=cite("001", "Result 1 in App. B.4", "Massart and Sauer; Mohri et al. 2018"),
    statement=("For a Boolean class of VC dimension d <= n, R_n(B) <= sqrt(2 d log(e n / d) /"
               " n) (checked for the empirical complexity given the sample, which Massart's"
               " lemma bounds)."),
    quantity=("largest empirical Rademacher complexity − √(2d log(en/d)/n) over the classes and "
              "samples"),
    check=_result1, reference=0.0, comparison="le", tolerance=1e-12,
    tolerance_reason=("exact: all 2^n sign vectors enumerated, n = 1..12 (14 full). Instances:"
                      " thresholds (d = 1) and intervals (d = 2) on the line at distinct and at"
                      " repeated points, and all subsets of d = n points, a shattered sample,"
                      " where R_n = 1/2 against sqrt(2) (0.35 of the bound)"),
    chapter=CH_BOUNDS,
    expect="illustrates",
    evidence=("a loose bound: enumerating every sign vector for every n = 1..12 (14 full),"
              " the worst instance found is the shattered sample (d = n, also n = 1 with"
              " d = 1): R_n = 1/2 against sqrt(2), 0.35 of the bound; thresholds and intervals"
              " stay below. The bound divided by 3 is the nearest rejected neighbour, so no"
              " constant tightened by 20% or less can be rejected; the control is far"),
    controls=(
        Control("bound / 3",
                "R_n(B) <= sqrt(2 d log(e n / d) / n) / 3",
                functools.partial(_result1, factor=3.0), kind="scaled", factor=1 / 3),
    ),
))


def rademacher_gu_mc(fams, P, Y, n_signs: int, rng) -> float:
    """``R_n(G_U | S)`` by Monte Carlo over ``n_signs`` sign vectors (large ``n``)."""
    n, C = P.shape
    sig = rng.choice((-1.0, 1.0), size=(n_signs, n))
    tol = ut.utility_tie_tolerance(C)
    G = np.zeros(n_signs)
    for fam in fams:
        ubar = fam.per_class(P)
        V = np.einsum("nj,mnj->mn", P, ubar)
        for m in range(len(fam)):
            G = np.maximum(G, sup_block_sums(V[m], np.einsum("nj,nj->n", Y - P, ubar[m]),
                                             sig, tol))
    return float(G.mean() / n)


def corb5_populations():
    """The populations and finite classes of the Cor. B.5 check: a calibrated coin (200 atoms,
    ``f_1 = 0.5 +- 0.005``, ``a = (1, -1)``: realized utility +-1 at distinct forecasts, the
    worst case of 001.lemma3.4.bound) and a random population (100 atoms, ``C = 3``) with
    ``U_comb``."""
    rng = np.random.default_rng(151)
    p1 = 0.5 + rng.uniform(-0.005, 0.005, 200)
    F = np.column_stack([p1, 1 - p1])
    yield "calibrated coin", pop.FiniteDistribution(np.full(200, 1 / 200), F, F), \
        [ut.linear([[1.0, -1.0]])]
    d = pop.random_finite_distribution(rng, n_atoms=100, n_classes=3, collisions=False)
    yield "random population", d, comb_class(3)


COR_B5_N, COR_B5_DELTA = 400, 0.05


@functools.lru_cache(maxsize=4)
def corb5_study(size: str) -> tuple:
    """Per population: the uniform deviations ``sup_u |UC_hat - UC|`` over ``reps`` samples of
    ``n = 400`` and the Cor. B.5 bound ``2 R_n(G_U) + 4 sqrt(log(2/delta)/(2n))``, with
    ``R_n(G_U)`` estimated on 20 samples x 200 sign vectors (Monte Carlo)."""
    rng = np.random.default_rng(152)
    reps = 60 if size == "smoke" else 600
    n = COR_B5_N
    rows = []
    for name, d, fams in corb5_populations():
        truth = ut.population_uc(d, fams).values
        devs = []
        for _ in range(reps):
            F, y = population_sample(d, n, rng)
            devs.append(float(np.max(np.abs(ut.utility_calibration(y, F, fams).values - truth))))
        rad = []
        for _ in range(20):
            F, y = population_sample(d, n, rng)
            rad.append(rademacher_gu_mc(fams, F, np.eye(d.n_classes)[y], 200, rng))
        r_n = float(np.mean(rad))
        bound = 2 * r_n + 4 * math.sqrt(math.log(2 / COR_B5_DELTA) / (2 * n))
        rows.append({"population": name, "n": n, "R_n": r_n,
                     "R_n_se": float(np.std(rad, ddof=1) / math.sqrt(len(rad))),
                     "bound": bound, "dev": np.array(devs)})
    return tuple(rows)


def _corb5(size: str, factor: float = 1.0) -> float:
    """Largest violation frequency of the bound (divided by ``factor``)."""
    return max(float(np.mean(r["dev"] > r["bound"] / factor)) for r in corb5_study(size))


register(Claim(
    id="001.corB.5",
    source=cite("001", "Cor B.5"),
    statement=(f"With probability >= 1 - delta, sup_u |UC_hat(f, u; S) - UC(f, u)| <= 2"
               f" R_n(G_U) + 4 sqrt(log(2/delta)/(2n)) (finite classes, exact UC, n ="
               f" {COR_B5_N}, delta = {COR_B5_DELTA})."),
    quantity="largest frequency of samples violating the bound over the classes",
    check=_corb5, reference=COR_B5_DELTA, comparison="le", tolerance=0.0,
    tolerance_reason=("the measured frequency is 0 (the bound is far from every deviation), so"
                      " no sampling allowance is needed; the Monte Carlo error of R_n (about 1%)"
                      " moves the bound by less than 0.5%. Instances: a calibrated coin"
                      " (realized utility +-1 at 200 distinct forecasts, the worst case of"
                      " Lemma 3.4) and a random population with C = 3 and U_comb, 60 (600)"
                      " samples each"),
    chapter=CH_BOUNDS,
    expect="illustrates",
    evidence=("a loose bound: on the worst instance found for the deviation (the calibrated"
              " coin of 001.lemma3.4.bound: realized utility +-1 at distinct forecasts) the 95%"
              " quantile of the uniform deviation is 0.29 of the bound and its largest value"
              " 0.31 (the random population with U_comb: 0.15); the bound divided by 3 would"
              " still hold, so no constant tightened by 20% or less can be rejected; the"
              " control (the bound / 5) is far"),
    controls=(
        Control("bound / 5",
                "the uniform deviation is at most a fifth of the bound with probability 0.95",
                functools.partial(_corb5, factor=5.0), kind="scaled", factor=0.2),
    ),
))


@functools.lru_cache(maxsize=8)
def _corb10(size: str, relabel: str = "tie-average") -> float:
    """max |UC(rank theta on (p, y)) - UC(linear theta on (sorted p, relabelled y))|.

    Untied predictions (Dirichlet draws) and tied ones (multinomial counts over ``2C``, so many
    classes share a probability).  ``relabel="tie-average"``: ``Y~`` is the uniform mixture of
    the positions of ``y``'s tie group in the sorted row (what a uniformly random tie break
    gives, and the rank utilities' tie rule); ``"position"``: ``Y~ = e_pos``, ``pos`` the
    position of ``y`` in a stable sort (the map ``T`` of Cor. B.10 with ties broken by index).
    """
    rng = np.random.default_rng(1010)
    worst = 0.0
    for C in (2, 3, 10, 50):
        for tied in (False, True):
            for _ in range(5 if size == "smoke" else 25):
                if tied:
                    P = rng.multinomial(2 * C, rng.dirichlet(np.ones(C)), size=500) / (2 * C)
                else:
                    P = rng.dirichlet(np.ones(C), size=500)
                y = rng.integers(0, C, size=500)
                fam = ut.sample_rank(C, 8, rng=rng)
                theta = fam.params                                   # (M, C)
                order = np.argsort(-P, axis=1, kind="stable")
                Ps = np.take_along_axis(P, order, axis=1)
                if relabel == "tie-average":
                    group = Ps == P[np.arange(500), y][:, None]      # y's tie group, sorted
                    U = (theta @ group.T) / group.sum(axis=1)
                else:
                    pos = np.argmax(order == y[:, None], axis=1)
                    U = theta[:, pos]
                a = ut.utility_calibration(y, P, fam).values
                b = ut.uc_from_values(theta @ Ps.T, U,
                                      tie_tol=ut.utility_tie_tolerance(C)).values
                worst = max(worst, float(np.max(np.abs(a - b))))
    return worst


register(Claim(
    id="001.corB.10",
    source=cite("001", "Cor B.10"),
    statement=("A rank utility is the linear utility with payoffs theta after sorting each"
               " prediction in decreasing order and relabelling Y by its position (by the"
               " average over its tie group when probabilities tie): the two UC estimates"
               " coincide."),
    quantity=("largest |UC of the rank utility − UC of the linear utility after sorting and "
              "relabelling|"),
    check=_corb10, reference=0.0, tolerance=1e-12,
    tolerance_reason=("the same sums in a different order of classes: rounding below 1e-14."
                      " Instances: C = 2, 3, 10, 50, 8 sampled rank utilities each, 5 (25)"
                      " untied (Dirichlet) and 5 (25) heavily tied (multinomial over 2C) samples"
                      " of 500"),
    chapter=CH_BOUNDS,
    controls=(
        Control("position relabelling with ties",
                "relabelling Y by its position in a stable sort (ties broken by class index)"
                " gives the same estimates also on tied predictions",
                functools.partial(_corb10, relabel="position"), kind="reading"),
    ),
))


# --------------------------------------------------------------------------------------------
# Thm B.11: the DKW band and the eCDF over a utility class
# --------------------------------------------------------------------------------------------
DKW_DELTA = 0.1
DKW_M = 200
DKW_FALSE_ALARM = 0.001
DKW_POWER = 0.9
DKW_SHORTFALL = 0.02


def dkw_seeds_needed(delta: float = DKW_DELTA, shortfall: float = DKW_SHORTFALL,
                     false_alarm: float = DKW_FALSE_ALARM, power: float = DKW_POWER) -> dict:
    """Seeds ``R`` for the coverage check to catch a coverage ``1 - delta - shortfall``.

    The check fails when the measured coverage is below ``1 - delta - z sqrt(delta (1 - delta)
    / R)`` with ``z = z_{1 - false_alarm}``; ``R`` is the smallest for which a true coverage of
    ``1 - delta - shortfall`` fails with probability at least ``power`` (exact binomial).
    """
    z = stats.norm.ppf(1 - false_alarm)
    p0, p1 = 1 - delta, 1 - delta - shortfall
    for R in range(100, 100_000, 50):
        threshold = p0 - z * math.sqrt(p0 * (1 - p0) / R)
        hits = math.ceil(threshold * R) - 1               # fail iff covered < threshold * R
        if stats.binom.cdf(hits, R, p1) >= power:
            return {"R": R, "threshold": threshold, "tolerance": z * math.sqrt(p0 * (1 - p0) / R),
                    "power": float(stats.binom.cdf(hits, R, p1))}
    raise RuntimeError("no R below 100,000")  # pragma: no cover


def utility_pool(size: str = "smoke", seed: int = 1101, K: int = 20_000):
    """A population and a pool of ``K`` linear utilities with their exact ``UC`` values.

    ``D_U`` is the uniform law on the pool, so ``F_E`` is known exactly: the step CDF of the
    ``K`` values (Thm B.11's truth, without Monte Carlo error).
    """
    rng = np.random.default_rng(seed)
    d = pop.random_finite_distribution(rng, n_atoms=30, n_classes=5, collisions=False)
    fam = ut.sample_linear(5, K, rng=rng)
    return d, fam, ut.population_uc(d, fam).values


def _sup_at_samples(errors_sorted, pool_sorted):
    """sup |F_M - F| for step CDFs, evaluated where it can be attained: at the sample points
    (right values and left limits); between them ``F_M`` is flat and ``F`` monotone."""
    M, K = errors_sorted.size, pool_sorted.size
    right = np.searchsorted(pool_sorted, errors_sorted, side="right") / K
    left = np.searchsorted(pool_sorted, errors_sorted, side="left") / K
    FM_right = np.searchsorted(errors_sorted, errors_sorted, side="right") / M
    FM_left = np.searchsorted(errors_sorted, errors_sorted, side="left") / M
    return float(max(np.max(np.abs(FM_right - right)), np.max(np.abs(FM_left - left))))


@functools.lru_cache(maxsize=8)
def dkw_coverage(size: str = "smoke", delta: float = DKW_DELTA, M: int = DKW_M,
                 constant: str = "massart") -> dict:
    """Frequency with which the DKW band of ``M`` pool utilities covers ``F_E`` (exact ``UC``).

    ``constant="massart"``: half-width ``sqrt(ln(2/delta)/(2M))``; ``"one-sided"``:
    ``sqrt(ln(1/delta)/(2M))``, the one-sided constant (a false neighbour: its two-sided
    coverage tends to ``1 - 2 delta``).
    """
    plan = dkw_seeds_needed(delta)
    d, fam, values = utility_pool(size)
    pool = np.sort(values)
    rng = np.random.default_rng(1102)
    h = (ut.dkw_halfwidth(M, delta) if constant == "massart"
         else math.sqrt(math.log(1 / delta) / (2 * M)))
    covered = 0
    for _ in range(plan["R"]):
        errors = np.sort(pool[rng.integers(0, pool.size, size=M)])
        covered += _sup_at_samples(errors, pool) <= h
    return {**plan, "coverage": covered / plan["R"], "halfwidth": h, "M": M, "delta": delta}


_PLAN = dkw_seeds_needed()

#: The one-sided DKW half-width over the two-sided one, sqrt(ln(1/delta) / ln(2/delta)).
ONE_SIDED_FACTOR = math.sqrt(math.log(1 / DKW_DELTA) / math.log(2 / DKW_DELTA))

register(Claim(
    id="001.thmB.11.dkw_coverage",
    source=cite("001", "Thm B.11", "DKW step"),
    statement=(f"The DKW band F_M +- sqrt(ln(2/delta)/(2M)) covers the CDF of UC over the"
               f" utility class with frequency >= 1 - delta (delta = {DKW_DELTA}, M = {DKW_M},"
               " exact UC on a population)."),
    quantity="frequency with which the DKW band covers the CDF of UC",
    check=lambda size: dkw_coverage(size)["coverage"], reference=1 - DKW_DELTA,
    comparison="ge", tolerance=_PLAN["tolerance"],
    tolerance_reason=(f"binomial: {_PLAN['R']} seeds, one-sided z_0.999 allowance; a true"
                      f" coverage of {1 - DKW_DELTA - DKW_SHORTFALL:.2f} fails with probability"
                      f" {_PLAN['power']:.2f}: the smallest shortfall it detects is"
                      f" {DKW_SHORTFALL} (2% of the nominal coverage), at both sizes (the plan"
                      " does not depend on the size). Instances: a pool of 20,000 linear"
                      " utilities of one population (exact UC, so F_E is known exactly), M ="
                      " 200; the control's half-width is 0.877 of the printed one"),
    chapter=CH_BOUNDS,
    controls=(
        Control("one-sided constant",
                f"the band F_M +- sqrt(ln(1/delta)/(2M)) covers with frequency >= 1 - delta"
                f" (coverage tends to 1 - 2 delta = {1 - 2 * DKW_DELTA:.1f})",
                lambda size: dkw_coverage(size, constant="one-sided")["coverage"],
                kind="scaled", factor=ONE_SIDED_FACTOR),
    ),
))


def _coverage_block(d, fam, values, parent, start, stop, n, M, delta, eps, l2_bound):
    """Seeds ``start .. stop - 1`` of :func:`finite_n_coverage`: ``(stop - start, 3)`` booleans
    (plain band covers, widened band covers, L2 bound holds); seed ``i`` draws its sample and
    its utilities from child ``i`` of ``parent``."""
    from ...core.expectation import _child_seed

    pool = np.sort(values)
    out = np.zeros((stop - start, 3), dtype=bool)
    for row, i in enumerate(range(start, stop)):
        rng = np.random.default_rng(_child_seed(parent, i))
        F, y = population_sample(d, n, rng)
        idx = rng.integers(0, pool.size, size=M)
        est = ut.utility_calibration(y, F, fam.take(idx)).values
        e0 = ut.ecdf_from_errors(est, delta=delta)
        out[row, 0] = _sup_at_samples(e0.errors, pool) <= e0.halfwidth
        out[row, 1] = ut.band_covers(ut.ecdf_from_errors(est, delta=delta / 2, eps_stat=eps),
                                     pool)
        out[row, 2] = ut.step_cdf_distance(est, values, norm="l2") <= l2_bound
    return out


def finite_n_coverage(size: str = "smoke", n: int = 500, delta: float = DKW_DELTA,
                      M: int = DKW_M, seeds: int | None = None, *, seed: int = 1103,
                      executor=None, chunk_seeds: int | None = None) -> dict:
    """Thm B.11 at finite ``n``: the band around estimated errors, with and without ``eps_stat``.

    Each seed draws ``n`` samples from the pool's population and ``M`` pool utilities and
    estimates their errors.  ``eps_stat`` is Lemma 3.4's bound with a union bound over the
    ``K`` pool utilities at level ``delta_S = delta / 2`` (then ``delta_M = delta / 2``), which
    makes the theorem's event hold with probability ``>= 1 - delta``.  Records how often the
    plain DKW band (``eps_stat = 0``) and the widened band cover ``F_E``, and how often the
    L2 bound of Thm B.11 holds.

    Parameters
    ----------
    size : {"smoke", "full"}
        100 or 1000 seeds unless ``seeds`` is given.
    n, delta, M
        Samples per seed, the band's level, utilities per seed.
    seeds : int, optional
        Number of seeds (repetitions).
    seed : int, default 1103
        Seed ``i`` draws from child ``i`` of ``numpy.random.SeedSequence(seed)``, so the
        result depends on ``seed`` and ``seeds`` only -- not on the executor or
        ``chunk_seeds`` -- and a run with more seeds extends one with fewer.
    executor : concurrent.futures.Executor, optional
        Where the seeds run, e.g. a ``ProcessPoolExecutor`` or a Dask
        ``Client.get_executor()``; default in this process, one after another.
    chunk_seeds : int, optional
        Seeds per task (default about ``seeds / 16``); does not change the result.

    Returns
    -------
    dict
        ``n, M, seeds, eps_stat, plain, widened, l2_bound, l2_holds`` (frequencies over seeds).

    Examples
    --------
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     par = finite_n_coverage(n=200, M=50, seeds=4, executor=pool, chunk_seeds=1)
    >>> par == finite_n_coverage(n=200, M=50, seeds=4)
    True
    """
    from ...core.expectation import _check_chunk, _map_ordered

    d, fam, values = utility_pool(size)
    K = values.size
    seeds = seeds or (100 if size == "smoke" else 1000)
    chunk = _check_chunk(chunk_seeds, "chunk_seeds") or max(1, -(-seeds // 16))
    eps = lemma34_bound(n, (delta / 2) / K)
    l2_bound = math.sqrt(2 * eps) + math.sqrt(math.log(2 / (delta / 2)) / M)
    parent = np.random.SeedSequence(seed)
    tasks = [(d, fam, values, parent, start, min(start + chunk, seeds), n, M, delta, eps,
              l2_bound) for start in range(0, seeds, chunk)]
    hits = np.concatenate(_map_ordered(_coverage_block, tasks, executor)).sum(axis=0)
    plain, widened, l2_ok = (int(h) for h in hits)
    return {"n": n, "M": M, "seeds": seeds, "eps_stat": eps, "plain": plain / seeds,
            "widened": widened / seeds, "l2_bound": l2_bound, "l2_holds": l2_ok / seeds}


@functools.lru_cache(maxsize=4)
def _finite_n(size: str) -> dict:
    return finite_n_coverage(size)


register(Claim(
    id="001.thmB.11.l2",
    source=cite("001", "Thm B.11"),
    statement=("With probability >= 1 - delta_S - delta_M, ||F_E - F_hat||_L2[0,2] <="
               " sqrt(2 eps_stat) + sqrt(ln(2/delta_M)/M) (n = 500 samples, M = 200 utilities,"
               " eps_stat from Lemma 3.4 with a union bound over the pool)."),
    quantity="frequency with which the L² bound on ‖F_E − F̂‖ holds over the seeds",
    check=lambda size: _finite_n(size)["l2_holds"], reference=1 - DKW_DELTA,
    comparison="ge", tolerance=0.0,
    tolerance_reason=("the bound holds in every seed, so no binomial allowance is needed."
                      " Instances: the pool of 001.thmB.11.dkw_coverage, n = 500, M = 200"),
    chapter=CH_BOUNDS,
    expect="illustrates",
    evidence=("vacuous at every feasible n: with eps_stat from Lemma 3.4 (a union bound over"
              " the pool), the right side is 1.665 at n = 500, above sqrt(2), the largest L2"
              " distance between two CDFs on [0, 2], and stays above it up to n = 1,024; at"
              " n = 10,000 it is still 0.86 while the measured distance is below 0.07 at n ="
              " 500. Lemma 3.4's constants are about 8x what the deviation needs and the"
              " square root amplifies the slack, so no tightened constant is false at any"
              " feasible n -- nor is dropping the data term (the distance stays below the DKW"
              " term sqrt(ln(2/delta_M)/M) = 0.136)"),
))


register(Claim(
    id="001.thmB.11.eps_stat_needed",
    source=cite("001", "Thm B.11", "role of eps_stat"),
    statement=("The plain DKW band around the eCDF of *estimated* errors (eps_stat = 0) does"
               " not reach its nominal 1 - delta = 0.9 coverage of the true CDF at n = 500: it"
               " covers F_E in fewer than 70% of the seeds, because each UC_hat is off by"
               " O(1/sqrt(n))."),
    quantity="frequency with which the plain DKW band (ε_stat = 0) covers the true CDF at n = 500",
    check=lambda size: _finite_n(size)["plain"], reference=0.7, comparison="le",
    tolerance=0.0,
    tolerance_reason=("binomial SE of the frequency is at most 0.05 at 100 seeds (0.016 at"
                      " 1000); five independent 1000-seed runs gave 0.51 to 0.56, so 0.7 is"
                      " about 3 SE above the true frequency at 100 seeds (a smoke run fails"
                      " with probability below 0.002) and 9 SE above it at 1000. Instances:"
                      " the pool of 001.thmB.11.dkw_coverage, n = 500, M = 200"),
    chapter=CH_BOUNDS,
    controls=(
        Control("widened band",
                "the band widened by eps_stat (Lemma 3.4 with a union over the pool) also"
                " covers F_E in fewer than 70% of the seeds",
                lambda size: _finite_n(size)["widened"], kind="hypothesis"),
    ),
))


# --------------------------------------------------------------------------------------------
# Prop 4.4: patching on finite populations
# --------------------------------------------------------------------------------------------
#: Random populations of the Prop. 4.4 claims at smoke size (a run takes about 100 steps).
PATCH_SMOKE_POPULATIONS = 8


def _patch_family(size: str, seed: int):
    fam = _family(size, seed, min_classes=2)
    return itertools.islice(fam, PATCH_SMOKE_POPULATIONS) if size == "smoke" else fam


@functools.lru_cache(maxsize=8)
def patching_runs(size: str, eps: float = 0.02, step: str = "theory", seed: int = 441):
    """Algorithm 1 with exact expectations on random populations against ``U_comb`` (the
    first :data:`PATCH_SMOKE_POPULATIONS` of the family at smoke size, all 200 at full)."""
    out = []
    for d in _patch_family(size, seed):
        fams = comb_class(d.n_classes)
        patched, trace = patch_population(d, fams, eps=eps, step=step)
        out.append((d, patched, trace, fams))
    return tuple(out)


#: The too-large step of the Prop 4.4 controls, ``eta_t = BIG_STEP err_t / C``, and the
#: tolerance at which it runs (coarse, so that the step bound is a few dozen iterations).
BIG_STEP, BIG_STEP_EPS = 10.0, 0.2


@functools.lru_cache(maxsize=4)
def big_step_runs(size: str, seed: int = 441) -> tuple:
    """Algorithm 1 on the populations of :func:`patching_runs` with ``eta_t = 10 err_t / C``
    (the false neighbour), stopped after ``floor(L(f_0) C / eps^2) + 1`` steps at
    ``eps = 0.2``.  One row per population: ``(bound, [(Brier before, after)], converged)``."""
    from ...theory.patching import _apply, _brier, _witness

    out = []
    for d in _patch_family(size, seed):
        w, T, F = _floats(d)
        C = d.n_classes
        fams = comb_class(C)
        bound = _brier0(d) * C / BIG_STEP_EPS ** 2
        steps, converged = [], False
        while True:
            err, fam, m, lower, upper, sign, _ = _witness(fams, F, T, w)
            if err <= BIG_STEP_EPS:
                converged = True
                break
            if len(steps) > bound:
                break
            before = _brier(F, T, w)
            F = _apply(F, fam, m, lower, upper, sign, BIG_STEP * err / C)
            steps.append((before, _brier(F, T, w)))
        out.append((bound, steps, converged))
    return tuple(out)


def edge_populations():
    """Single atoms on which the step bound of Prop. 4.4 is attained, with their class.

    ``C = 2`` with the linear utility ``a = (1, -1)`` and ``C = 4`` with ``a = (1, -1, 1,
    -1)``: ``||ubar||^2 = C`` and ``sum_j a_j = 0``, so a step moves the prediction along
    ``a`` without leaving the simplex (no projection) and lowers the Brier score by exactly
    ``2 eta err - eta^2 C``: ``err^2 / C`` at ``eta = err / C``, and nothing at ``eta =
    2 err / C`` (the edge of the step-size hypothesis).  Every step of Algorithm 1 on them
    covers the whole population, and one step corrects it.
    """
    out = []
    for f1 in (0.3, 0.5):
        for t1 in (0.4, 0.6):
            F = np.array([[f1, 1 - f1]])
            T = np.array([[t1, 1 - t1]])
            out.append((pop.FiniteDistribution(np.ones(1), T, F), [ut.linear([[1.0, -1.0]])]))
    F = np.full((1, 4), 0.25)
    T = np.array([[0.3, 0.2, 0.3, 0.2]])
    out.append((pop.FiniteDistribution(np.ones(1), T, F), [ut.linear([[1.0, -1.0, 1.0, -1.0]])]))
    return out


@functools.lru_cache(maxsize=4)
def edge_patch_runs(eps: float = 0.02) -> tuple:
    """Algorithm 1 (``eta_t = err_t / C``, the library's) on :func:`edge_populations`."""
    out = []
    for d, fams in edge_populations():
        patched, trace = patch_population(d, fams, eps=eps, step="theory")
        out.append((d, patched, trace, fams))
    return tuple(out)


#: The step of the Prop. 4.4 edge control: ``eta_t = EDGE_STEP err_t / C``, 10% past the edge
#: ``2 err_t / C`` at which the decrease ``2 eta err - eta^2 C`` of a tight step vanishes.
EDGE_STEP = 2.2


def edge_step_increase(factor: float = EDGE_STEP) -> float:
    """Largest Brier increase of one step ``eta = factor err / C`` on :func:`edge_populations`."""
    from ...theory.patching import _apply, _brier, _witness

    worst = -math.inf
    for d, fams in edge_populations():
        w, T, F = _floats(d)
        err, fam, m, lower, upper, sign, _ = _witness(fams, F, T, w)
        after = _apply(F, fam, m, lower, upper, sign, factor * err / d.n_classes)
        worst = max(worst, _brier(after, T, w) - _brier(F, T, w))
    return worst


def _all_patch_runs(size: str):
    return patching_runs(size) + edge_patch_runs()


def _brier0(d) -> float:
    w, T, F = _floats(d)
    return float(w @ (np.sum((T - F) ** 2, axis=1) + 1 - np.sum(T ** 2, axis=1)))


_PATCH_INSTANCES = (" Instances: 8 (200) random populations with C = 2..5 and tied predictions,"
                    " U_comb = U_CWE u U_topK, exact expectations")
_BIG = (f"with eta_t = {BIG_STEP:g} err_t / C (the step-size hypothesis dropped; run at eps ="
        f" {BIG_STEP_EPS})")
_EDGE = (" And 5 single atoms (C = 2 and 4, a linear utility with ||ubar||^2 = C summing to 0)"
         " on which a step lowers the Brier score by exactly err_t^2 / C: the bound's edge")


def _prop44_monotone(size: str, big: bool = False) -> float:
    if big:
        return max(max((b1 - b0 for b0, b1 in steps), default=0.0)
                   for _, steps, _ in big_step_runs(size))
    return max(max((s.brier_after - s.brier_before for s in tr.steps), default=0.0)
               for _, _, tr, _ in _all_patch_runs(size))


register(Claim(
    id="001.prop4.4.brier",
    source=cite("001", "Prop 4.4"),
    statement=("With eta_t = err_t / C, the Brier score E||Y - f_t(X)||^2 is non-increasing at"
               " every step of Algorithm 1."),
    quantity="largest increase of the Brier score in one step of Algorithm 1 over the runs",
    check=_prop44_monotone, reference=0.0, comparison="le", tolerance=1e-12,
    tolerance_reason=_FLOAT + "." + _PATCH_INSTANCES + _EDGE, chapter=CH_PATCH,
    controls=(
        Control("step 2.2 err/C at the edge",
                f"the Brier score is non-increasing also with eta_t = {EDGE_STEP} err_t / C"
                " (the step-size hypothesis dropped 10% past its edge 2 err_t / C), on the"
                " single atoms where a step's decrease is exactly 2 eta err - eta^2 C",
                lambda size: edge_step_increase(), kind="hypothesis"),
        Control("step too large", f"the Brier score is non-increasing also {_BIG}",
                functools.partial(_prop44_monotone, big=True), kind="alternative"),
    ),
))


def _prop44_decrease(size: str, factor: float = 1.0) -> float:
    worst = math.inf
    for d, _, tr, _ in _all_patch_runs(size):
        C = d.n_classes
        for s in tr.steps:
            worst = min(worst, (s.brier_before - s.brier_after) - factor * s.err ** 2 / C)
    return worst


register(Claim(
    id="001.prop4.4.decrease",
    source=cite("001", "App. A", "proof of Prop 4.4"),
    statement="Each step lowers the Brier score by at least err_t^2 / C.",
    quantity="smallest (Brier decrease − err_t²/C) over the steps of the runs",
    check=_prop44_decrease, reference=0.0, comparison="ge", tolerance=1e-12,
    tolerance_reason=_FLOAT + "." + _PATCH_INSTANCES + _EDGE, chapter=CH_PATCH,
    controls=(
        Control("bound x 1.1",
                "each step lowers the Brier score by at least 1.1 err_t^2 / C",
                functools.partial(_prop44_decrease, factor=1.1), kind="scaled", factor=1.1),
        Control("quadratic term dropped",
                "each step lowers the Brier score by at least 2 err_t^2 / C (the first-order"
                " term 2 eta_t err_t alone)", functools.partial(_prop44_decrease, factor=2.0),
                kind="scaled", factor=2.0),
    ),
))


def _prop44_iterations(size: str, big: bool = False) -> float:
    if big:
        return max(len(steps) / bound for bound, steps, _ in big_step_runs(size))
    worst = 0.0
    for eps in (0.02, BIG_STEP_EPS):
        for d, _, tr, _ in patching_runs(size, eps=eps):
            worst = max(worst, tr.n_steps / (_brier0(d) * d.n_classes / eps ** 2))
    return worst


register(Claim(
    id="001.prop4.4.iterations",
    source=cite("001", "Prop 4.4"),
    statement=("Algorithm 1 terminates within L(f_0) C / eps^2 <= 2 C / eps^2 iterations"
               " (measured: steps taken / that bound, eps = 0.02 and 0.2)."),
    quantity="largest steps taken / the bound L(f₀) C / ε² over the runs",
    check=_prop44_iterations, reference=1.0, comparison="le", tolerance=0.0,
    tolerance_reason="a count of iterations against a number: exact." + _PATCH_INSTANCES,
    chapter=CH_PATCH,
    expect="illustrates",
    evidence=("a loose bound: the worst run found takes 0.14 of the bound's iterations (200"
              " populations at full size, eps = 0.2; 0.06 at smoke size). The bound is attained only if every step had"
              " err_t = eps, lowered the Brier score by exactly err_t^2 / C and the Brier"
              " score could reach 0; the single atoms where a step is that tight"
              " (001.prop4.4.decrease) are corrected in one step. So no bound tightened by"
              " 20% or less can be rejected; the control (a step 10 times too large) is far"),
    controls=(
        Control("step too large", f"Algorithm 1 terminates within L(f_0) C / eps^2 iterations"
                f" also {_BIG}", functools.partial(_prop44_iterations, big=True),
                kind="alternative"),
    ),
))


@functools.lru_cache(maxsize=4)
def _prop44_terminal(size: str, other_class: bool = False) -> float:
    """max over runs of UC(f_T, U) / eps; ``other_class``: against 8 sampled linear utilities
    that Algorithm 1 did not patch against."""
    worst = 0.0
    eps = 0.02
    rng = np.random.default_rng(442)
    for _, patched, tr, fams in patching_runs(size):
        if not tr.converged:
            return math.inf
        target = ut.sample_linear(patched.n_classes, 8, rng=rng) if other_class else fams
        worst = max(worst, ut.population_uc(patched, target).max / eps)
    return worst


register(Claim(
    id="001.prop4.4.terminal",
    source=cite("001", "Sec. 4.1"),
    statement=("At termination UC(f_T, U) <= eps (recomputed independently on the patched"
               " population; measured: UC / eps)."),
    quantity="largest UC(f_T, U) / ε at termination over the runs",
    check=_prop44_terminal, reference=1.0, comparison="le", tolerance=1e-9,
    tolerance_reason=("float64 rounding in the witness search and the recomputation."
                      + _PATCH_INSTANCES),
    chapter=CH_PATCH,
    expect="illustrates",
    evidence=("true by construction: Algorithm 1 stops when its witness search finds err_t <="
              " eps, so the statement restates the stopping rule; the check recomputes UC on"
              " the patched population independently (calnotes.theory.utility.population_uc, not the"
              " witness search), and the worst run ends at 0.9996 eps. The control (a class"
              " the algorithm did not patch against) is far"),
    controls=(
        Control("another class",
                "at termination UC(f_T, u) <= eps also for 8 sampled linear utilities (a"
                " class Algorithm 1 did not patch against)",
                functools.partial(_prop44_terminal, other_class=True), kind="alternative"),
    ),
))


def _appc2(size: str, action: str = "bayes", aligned_max: float = 0.1) -> float:
    """max deviation of the gain-matrix utilities from App. C.2's definition.

    For aligned and misaligned samples (``C = 2..12``): the structure of ``R`` (unit diagonal;
    aligned off-diagonals in ``[0, 0.1]``; misaligned off-diagonals 0.2 exactly on the pairs
    of one group of a partition of the classes and 0 elsewhere), and, at random predictions,
    ``u_R(p, e_i) = R[i, j*(p)]`` and ``v = sum_i p_i R[i, j*(p)]`` with ``j*(p) = argmax_j
    sum_i p_i R[i, j]`` computed here by brute force.  ``action="top"``: ``j*`` replaced by the
    top class ``argmax_j p_j`` (the false neighbour); ``aligned_max``: the upper end of the
    aligned off-diagonal range checked.  Structure violations count 1.
    """
    rng = np.random.default_rng(1201)
    worst = 0.0
    for C in range(2, 13):
        P = rng.dirichlet(np.ones(C), size=50 if size == "smoke" else 500)
        for kind in ("aligned", "misaligned"):
            fam = ut.sample_gain_matrices(C, 6, rng=rng, kind=kind, n_groups=min(4, C))
            R = -fam.params                                          # (M, C, C) gains
            off = ~np.eye(C, dtype=bool)
            ok = np.all(R[:, np.arange(C), np.arange(C)] == 1.0)
            if kind == "aligned":
                ok &= bool(np.all((R[:, off] >= 0) & (R[:, off] <= aligned_max)))
            else:
                for Rm in R:
                    block = (Rm == 0.2) & off
                    members = np.flatnonzero(block.any(axis=1))
                    want = np.zeros((C, C), bool)
                    want[np.ix_(members, members)] = True
                    ok &= bool(np.all(np.isin(Rm[off], (0.0, 0.2))) and
                               np.array_equal(block, want & off))
            worst = max(worst, 0.0 if ok else 1.0)
            ubar = fam.per_class(P)                                  # (M, n, C)
            V = fam.predicted(P)
            for m in range(len(fam)):
                j = (np.argmax(P @ R[m], axis=1) if action == "bayes"
                     else np.argmax(P, axis=1))
                u = R[m][:, j].T                                     # (n, C): R[i, j*]
                worst = max(worst, float(np.max(np.abs(ubar[m] - u))),
                            float(np.max(np.abs(V[m] - np.sum(P * u, axis=1)))))
    return worst


register(Claim(
    id="001.appC2.gain_utilities",
    source=cite("001", "App. C.2", "utility model"),
    statement=("The gain-matrix utilities are u_R(p, e_i) = R[i, j*(p)] with j*(p) = argmax_j"
               " sum_i p_i R[i, j], v = sum_i p_i R[i, j*(p)]; aligned users have R_ii = 1 and"
               " off-diagonals in [0, 0.1], misaligned ones 0.2 on the pairs of their own group"
               " of classes and 0 elsewhere."),
    quantity="largest deviation of the gain-matrix utilities from App. C.2's definition",
    check=_appc2, reference=0.0, tolerance=1e-12,
    tolerance_reason=("float64 sums of at most 12 terms of size <= 1. Instances: C = 2..12, 6"
                      " aligned and 6 misaligned matrices each (up to 4 groups), 50 (500)"
                      " Dirichlet predictions; the utilities also enter 001.eq3.3, 001.prop3.2"
                      " and 001.prop3.3"),
    chapter=CH_PATCH,
    controls=(
        Control("aligned range [0, 0.09]",
                "aligned users' off-diagonal gains lie in [0, 0.09] (the printed upper end 0.1"
                " scaled by 0.9)", functools.partial(_appc2, aligned_max=0.09), kind="scaled",
                factor=0.9),
        Control("top-class action",
                "the user's action is the top class argmax_j p_j instead of the Bayes action"
                " j*(p)", functools.partial(_appc2, action="top"), kind="alternative"),
    ),
))


#: App. A runs: tolerance, fresh samples per iteration, iteration cap, number of runs.
APPA_EPS, APPA_N, APPA_MAX_ITER = 0.05, 10_000, 25


def patch_with_fresh_counts(d, fams, *, eps: float, N: int, max_iter: int, rng,
                            step: str = "optimal"):
    """App. A's loop on a finite population: each step draws ``N`` fresh samples.

    The ``N`` samples are drawn as multinomial counts over the population's (atom, label)
    cells -- the same law as ``N`` i.i.d. rows, held as at most ``A C`` weighted cells -- and
    the step is the library's: the witness search, step size and patch of
    :class:`calnotes.theory.patching.UtilityPatching` with ``samples_per_iteration=N``
    (:func:`calnotes.theory.patching._witness`, ``_step_size``, ``_apply``), applied to the atoms'
    predictions.  Stops when ``UC_hat <= eps`` on the step's samples; at most ``max_iter``
    steps, ``max_iter + 1`` checks.  Returns ``(patched predictions, steps, stopped)``.
    """
    from ...theory.patching import _apply, _region, _step_size, _witness

    rng = np.random.default_rng(rng)
    w, T, F = _floats(d)
    A, C = F.shape
    atom = np.repeat(np.arange(A), C)
    label = np.tile(np.arange(C), A)
    prob = (w[:, None] * T).ravel()
    prob = prob / prob.sum()
    cur = F.copy()
    for t in range(max_iter + 1):
        counts = rng.multinomial(N, prob)
        keep = counts > 0
        Fb, Yb, wb = cur[atom[keep]], np.eye(C)[label[keep]], counts[keep] / N
        err, fam, m, lower, upper, sign, _ = _witness(fams, Fb, Yb, wb)
        if err <= eps:
            return cur, t, True
        if t == max_iter:
            break
        eta, _ = _step_size(err, step, wb, *_region(Fb, fam, m, lower, upper))
        cur = _apply(cur, fam, m, lower, upper, sign, eta)
    return cur, max_iter, False


@functools.lru_cache(maxsize=4)
def finite_sample_patching(size: str, eps: float = APPA_EPS, N: int = APPA_N,
                           seed: int = 451) -> tuple:
    """App. A: patching with fresh samples per iteration, evaluated exactly on the population.

    Populations with ``C = 4`` and 10 atoms whose predictions are drawn independently of the
    truth (Dirichlet(0.2): overconfident and miscalibrated, ``UC(f, U_comb)`` about 0.4-0.7);
    8 at smoke size, 40 at full.  The loop is :func:`patch_with_fresh_counts` (the library's
    steps, ``N`` fresh samples per step).  The patched map is a function of ``f``, so it
    applies to the atoms' predictions: its population ``UC`` is exact.  Each row gives the
    population ``UC`` before and after, whether the run stopped (``UC_hat <= eps``) and the
    guarantee ``eps + eps_N``, ``eps_N`` Lemma 3.4's bound at level ``0.05`` with a union
    over the 7 utilities of ``U_comb`` and the ``max_iter + 1`` possible stopping steps.
    """
    rng = np.random.default_rng(seed)
    rows = []
    count = 8 if size == "smoke" else 40
    for _ in range(count):
        d0 = pop.random_finite_distribution(rng, n_atoms=10, n_classes=4)
        w, T, _ = _floats(d0)
        F = rng.dirichlet(np.full(4, 0.2), size=10)
        d = pop.FiniteDistribution(w, T, F)
        fams = comb_class(4)
        patched, steps, stopped = patch_with_fresh_counts(d, fams, eps=eps, N=N,
                                                          max_iter=APPA_MAX_ITER, rng=rng)
        after = pop.FiniteDistribution(w, T, patched)
        n_util = sum(len(f) for f in fams)
        eps_n = lemma34_bound(N, 0.05 / (n_util * (APPA_MAX_ITER + 1)))
        rows.append({"before": ut.population_uc(d, fams).max,
                     "after": ut.population_uc(after, fams).max,
                     "steps": steps, "stopped": stopped, "guarantee": eps + eps_n})
    return tuple(rows)


def _appa(size: str, model: str = "patched") -> float:
    """Patched: the worst ``after / guarantee`` (infinite if a run did not stop).  Unpatched:
    the smallest ``before / guarantee``."""
    rows = finite_sample_patching(size)
    if model == "unpatched":
        return min(r["before"] / r["guarantee"] for r in rows)
    return max((r["after"] / r["guarantee"]) if r["stopped"] else math.inf for r in rows)


register(Claim(
    id="001.appA.finite_sample",
    source=cite("001", "App. A", "empirical implementation"),
    statement=("Patching with fresh samples per iteration stops (UC_hat <= eps) and ends with a"
               " population UC below eps + eps_N, eps_N the uniform estimation error (measured:"
               " worst ratio; infinite if a run does not stop)."),
    quantity="largest UC after patching / (ε + ε_N) over the runs (∞ if a run does not stop)",
    check=_appa, reference=1.0, comparison="le", tolerance=0.0,
    tolerance_reason=("the guarantee holds with probability >= 0.95 per run. Instances: 8 (40)"
                      f" populations with C = 4 and miscalibrated predictions, U_comb, eps ="
                      f" {APPA_EPS}, N = {APPA_N:,} fresh samples per step (multinomial counts"
                      f" over the population's cells), at most {APPA_MAX_ITER} steps; the"
                      " guarantee (about 0.29) is below every unpatched UC (about 0.35-0.7)"),
    chapter=CH_PATCH,
    expect="illustrates",
    evidence=("a loose guarantee: the worst run found ends at 0.18 of eps + eps_N (population UC"
              " about 0.052 against 0.29; 40 runs at full size). A run stops when UC_hat <= eps,"
              " so its population UC exceeds eps only by the estimation error of the stopping"
              " step, whose 95% quantile is about 2.5 / sqrt(N) = 0.025 on the worst instance"
              " found for Lemma 3.4 (001.lemma3.4.bound): no run can be expected above about"
              " 0.26 of the guarantee, whose eps_N carries Lemma 3.4's 8-fold slack. So no"
              " guarantee tightened by 20% or less can be rejected; the control is far"),
    controls=(
        Control("unpatched model",
                "the unpatched predictions already meet the guarantee eps + eps_N",
                functools.partial(_appa, model="unpatched"), kind="alternative"),
    ),
))
