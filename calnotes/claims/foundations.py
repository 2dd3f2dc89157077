"""Claims checked in Part I (chapters *The measures* and *Proper scores and Bregman divergences*)."""

from __future__ import annotations

import itertools

import numpy as np

from .. import scores
from ..measures import l2_qece
from ._registry import Claim, register

_EXACT = ("exact identity; the only error is float64 rounding over a few hundred terms"
          " of size <= 10, bounded by 1e-12")


def _random_discrete_population(rng, n_atoms, k, n_values):
    """Atoms with random truths; the predictor takes n_values distinct outputs (pooled atoms)."""
    weights = rng.dirichlet(np.ones(n_atoms))
    truth = rng.dirichlet(np.ones(k), size=n_atoms)
    outputs = rng.dirichlet(np.ones(k), size=n_values)
    predictions = outputs[rng.integers(n_values, size=n_atoms)]
    return weights, predictions, truth


def _decomposition_residual(size: str) -> float:
    """Largest |score - (entropy - sharpness + calibration)| over random populations and losses."""
    rng = np.random.default_rng(20221)
    reps = 20 if size == "smoke" else 500
    worst = 0.0
    for _ in range(reps):
        k = int(rng.integers(2, 6))
        w, f, t = _random_discrete_population(rng, n_atoms=12, k=k, n_values=4)
        for loss in scores.PROPER_LOSSES:
            d = scores.score_decomposition(w, f, t, loss)
            worst = max(worst, abs(d["score"] - (d["entropy"] - d["sharpness"] + d["calibration"])))
    return worst


register(Claim(
    id="003.lemma4.1",
    source="Gruber & Buettner (2022), Lemma 4.1",
    statement=("For a proper score, expected score = generalized entropy of the label marginal"
               " - sharpness + calibration, exactly, for log, Brier, spherical and 0-1 losses."),
    check=_decomposition_residual,
    reference=0.0, tolerance=1e-12, tolerance_reason=_EXACT,
    chapter="book/foundations/proper_scores",
))


def _symbolic_decomposition(size: str) -> float:
    """Number of losses (log, Brier) for which the symbolic residual does not simplify to 0."""
    from .. import symbolic  # sympy is imported only when a symbolic claim runs

    losses = ("brier", "log") if size == "smoke" else ("brier", "log", "spherical")
    return float(sum(symbolic.pooled_decomposition_residual(name)[0] != 0 for name in losses))


register(Claim(
    id="003.lemma4.1.symbolic",
    source="Gruber & Buettner (2022), Lemma 4.1",
    statement=("The decomposition holds as an algebraic identity (sympy) for a two-valued binary"
               " predictor whose first value pools two atoms with different truths."),
    check=_symbolic_decomposition,
    reference=0.0, tolerance=0.0, tolerance_reason="symbolic: the residual simplifies to 0 or not",
    chapter="book/foundations/proper_scores",
))


def _bregman_decomposition_residual(size: str) -> float:
    """Reassessing paper Lemma 4.1: E d(Z, X) = [E phi(Z) - E phi(E[Z|X])] + E d(E[Z|X], X)."""
    rng = np.random.default_rng(40041)
    reps = 20 if size == "smoke" else 500
    worst = 0.0
    for _ in range(reps):
        k = int(rng.integers(2, 6))
        w, x, z = _random_discrete_population(rng, n_atoms=10, k=k, n_values=3)
        values, mass, cond, _ = scores.pool_by_prediction(w, x, z)
        for gen in (scores.SQUARED_NORM, scores.NEG_ENTROPY):
            lhs = w @ scores.bregman_divergence(z, x, gen)
            gap = w @ gen.phi(z) - mass @ gen.phi(cond)
            cal = mass @ scores.bregman_divergence(cond, values, gen)
            worst = max(worst, abs(lhs - (gap + cal)))
    return worst


register(Claim(
    id="004.lemma4.1",
    source="Reassessing calibration (under review), Lemma 4.1",
    statement=("E[d(Z, X)] = sharpness gap E[phi(Z)] - E[phi(E[Z|X])] + calibration error"
               " E[d(E[Z|X], X)] for the squared-norm and negative-entropy generators."),
    check=_bregman_decomposition_residual,
    reference=0.0, tolerance=1e-12, tolerance_reason=_EXACT,
    chapter="book/foundations/proper_scores",
))


def _divergences_are_bregman(size: str) -> float:
    """max |d_loss(q, p) - d_phi(q, p)|: Brier vs squared norm, log vs negative entropy."""
    rng = np.random.default_rng(7)
    n = 200 if size == "smoke" else 20000
    q = rng.dirichlet(np.ones(5), size=n)
    p = rng.dirichlet(np.ones(5), size=n)
    brier = np.abs(scores.divergence(q, p, "brier") - scores.bregman_divergence(q, p, scores.SQUARED_NORM))
    kl = np.abs(scores.divergence(q, p, "log") - scores.bregman_divergence(q, p, scores.NEG_ENTROPY))
    return float(max(brier.max(), kl.max()))


register(Claim(
    id="004.sec4.bregman_examples",
    source="Reassessing calibration (under review), Sec. 4, eq. (4.1)",
    statement=("The Brier divergence is the Bregman divergence of phi(x) = ||x||^2 and the"
               " log-loss divergence (KL) that of phi(x) = sum x log x."),
    check=_divergences_are_bregman,
    reference=0.0, tolerance=1e-12, tolerance_reason=_EXACT,
    chapter="book/foundations/proper_scores",
))


def _only_l2(size: str) -> float:
    """The unique integer q >= 1 for which the L^q ECE can be a Bregman divergence."""
    from .. import symbolic

    _, bregman = symbolic.lq_bregman_exponents()
    if len(bregman) != 1:
        return float("nan")
    return float(next(iter(bregman)))


register(Claim(
    id="004.prop4.4",
    source="Reassessing calibration (under review), Prop. 4.4",
    statement="Among the L^q ECEs (integer q >= 1) only the L^2 ECE is induced by a Bregman divergence.",
    check=_only_l2,
    reference=2.0, tolerance=0.0, tolerance_reason="symbolic: an integer solution set",
    chapter="book/foundations/proper_scores",
))


def _thm26_enumeration(size: str) -> float:
    """max relative error of n^-2 sum p*(1-p*) against E[l2-QECE_m] by full enumeration of outcomes."""
    rng = np.random.default_rng(26)
    cases = [(8, 3), (9, 2), (10, 4)] if size == "smoke" else [(n, m) for n in (8, 11, 13) for m in (1, 2, 3, 5, 7)]
    worst = 0.0
    for n, m in cases:
        p_star = np.round(rng.uniform(size=n), 1)  # rounded to a grid: ties, some straddling bins
        formula = np.sum(p_star * (1 - p_star)) / n ** 2
        exact = 0.0
        for ys in itertools.product((0, 1), repeat=n):
            y = np.array(ys)
            prob = np.prod(np.where(y == 1, p_star, 1 - p_star))
            exact += prob * l2_qece(y, p_star, m)
        worst = max(worst, abs(exact - formula) / formula)
    return worst


register(Claim(
    id="000.thm2.6.enumeration",
    source="Making and Evaluating Calibrated Forecasts, Thm 2.6 (Hartline et al. 2025)",
    statement=("When y_i ~ Ber(p*_i) independently, E[l2-QECE_m(p*; y)] = n^-2 sum_i p*_i (1 - p*_i)"
               " for every m, including m not dividing n and tied predictions."),
    check=_thm26_enumeration,
    reference=0.0, tolerance=1e-12,
    tolerance_reason="exact expectation by enumerating all 2^n outcomes; float64 rounding only",
    chapter="book/foundations/measures",
))
