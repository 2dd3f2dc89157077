"""Claims checked in Part III, chapter *Bregman lower bounds* (paper 004, Sec. 4).

Population claims on random exact finite distributions with forced collisions (20 smoke, 200
full; see :mod:`calnotes.claims.proper`), exactly for the squared norm (Brier), in float64 for
the negative entropy (KL) with strictly positive predictions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import population as pop
from ..scores import NEG_ENTROPY, SQUARED_NORM, bregman_divergence
from ._registry import Claim, register
from .proper import _EXACT, _FLOAT, _COUNT, _family, _random_merge

CHAPTER = "book/proper/bregman_bounds"


def _phi_conditional(d, exact: bool):
    """E[phi(E[pi_{Y|X} | g(X)])] for phi = ||x||^2 (exact) or sum x log x (float)."""
    if exact:
        w = d.exact[0]
        C = pop.conditional_expectation(d, exact=True)
        return sum((wi * sum(c * c for c in row) for wi, row in zip(w, C)), Fraction(0))
    C = pop.conditional_expectation(d)
    return float(d.weights @ NEG_ENTROPY.phi(C))


def _prop42(size: str) -> float:
    """min of E phi(E[pi | g2]) - E phi(E[pi | g1]) for g1 = m o g2 (sigma(g1) in sigma(g2))."""
    rng = np.random.default_rng(421)
    worst = math.inf
    for d in _family(size, 422):
        coarse = _random_merge(d, rng)
        worst = min(worst, float(_phi_conditional(d, True) - _phi_conditional(coarse, True)),
                    _phi_conditional(d, False) - _phi_conditional(coarse, False) + 0.0)
    return worst


register(Claim(
    id="004.prop4.2",
    source="Reassessing calibration (under review), Prop. 4.2",
    statement=("If sigma(g1(X)) is contained in sigma(g2(X)) then E[phi(E[pi_{Y|X} | g1(X)])] <="
               " E[phi(E[pi_{Y|X} | g2(X)])]: coarser predictors have a larger sharpness gap"
               " (g1 = m o g2 for random merging maps m; squared norm exactly, neg. entropy)."),
    check=_prop42, reference=0.0, comparison="ge", tolerance=1e-12, tolerance_reason=_FLOAT,
    chapter=CHAPTER,
))


def _prop43(size: str) -> float:
    """min over calibrated g of E d(pi, pi_Y) - E d(pi, g) (squared norm exact, KL float)."""
    rng = np.random.default_rng(431)
    worst = math.inf
    for d in _family(size, 432, positive=True):
        for g in (d.recalibrated(), _random_merge(d, rng).recalibrated()):
            w, T, G = g.exact
            marg = list(g.label_marginal(exact=True))
            const = pop.FiniteDistribution(w, T, [marg] * g.n_atoms)
            exact = (pop.bregman_decomposition(const, "squared_norm", exact=True)["total"]
                     - pop.bregman_decomposition(g, "squared_norm", exact=True)["total"])
            kl = (float(g.weights @ bregman_divergence(g.truth, const.prediction, NEG_ENTROPY))
                  - float(g.weights @ bregman_divergence(g.truth, g.prediction, NEG_ENTROPY)))
            worst = min(worst, float(exact), kl)
    return worst


register(Claim(
    id="004.prop4.3",
    source="Reassessing calibration (under review), Prop. 4.3",
    statement=("Every calibrated predictor g has E[d_phi(pi_{Y|X}, g(X))] <= E[d_phi(pi_{Y|X},"
               " pi_Y)]: the constant base rate is the worst calibrated predictor (squared norm"
               " exactly, KL)."),
    check=_prop43, reference=0.0, comparison="ge", tolerance=1e-12, tolerance_reason=_FLOAT,
    chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- Prop 4.5

def always_wrong_losses(k: int, eps: float) -> tuple:
    """(confidence loss E[(1{Y=c} - h)^2], full loss E||pi_{Y|X} - g||^2) of Prop 4.5's predictor.

    The truth is a point mass on y*, the predictor puts 1/k + eps on another class and
    1/k - eps/(k-1) on the rest (y* included); a one-atom population says it all.
    """
    g = np.full(k, 1 / k - eps / (k - 1))
    g[1] = 1 / k + eps                    # the wrong class
    truth = np.zeros(k)
    truth[0] = 1.0                        # y* = 0
    d = pop.FiniteDistribution([1.0], truth[None], g[None])
    C = int(np.argmax(g))
    hit = d.truth[0, C]                   # P(Y = c(X)) = 0
    h = g[C]
    confidence = hit * (1 - h) ** 2 + (1 - hit) * h ** 2
    full = pop.bregman_decomposition(d, "squared_norm")["total"]
    return confidence, full


def _prop45_conf(size: str) -> float:
    ks = range(2, 60) if size == "smoke" else [*range(2, 200), 500, 1000, 2000]
    return max(k * always_wrong_losses(k, 1 / (2 * k))[0] for k in ks)


register(Claim(
    id="004.prop4.5.confidence_loss",
    source="Reassessing calibration (under review), Prop. 4.5",
    statement=("The always-wrong predictor (eps = 1/(2k)) has confidence loss E[(1{Y=c(X)} -"
               " h(X))^2] = O(1/k): k times it stays bounded (measured: its maximum over k)."),
    check=_prop45_conf, reference=1.125, comparison="le", tolerance=1e-12,
    tolerance_reason=("the loss is (1/k + eps)^2 = (3/(2k))^2 exactly, so k times it is 9/(4k)"
                      " <= 9/8 (at k = 2); float64 rounding only"),
    chapter=CHAPTER,
))


def _prop45_full(size: str) -> float:
    ks = range(2, 60) if size == "smoke" else [*range(2, 200), 500, 1000, 2000]
    return min(always_wrong_losses(k, 1 / (2 * k))[1] for k in ks)


register(Claim(
    id="004.prop4.5.full_loss",
    source="Reassessing calibration (under review), Prop. 4.5",
    statement=("... while its full loss E[||pi_{Y|X} - g(X)||^2] = Omega(1): at least"
               " (1 - 1/k)^2 >= 1/4 for every k (measured: the minimum over k)."),
    check=_prop45_full, reference=0.25, comparison="ge", tolerance=1e-12,
    tolerance_reason="the true class alone contributes (1 - 1/k + eps/(k-1))^2; rounding only",
    chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- Lemma 4.6

def _lemma46(size: str) -> float:
    """min over distributions and confidence values of full - confidence error."""
    worst = math.inf
    for d in _family(size, 461, positive=True):
        r = pop.confidence_calibration_error(d, "brier", exact=True, per_confidence=True)
        worst = min(worst, float(min(f - c for f, c in zip(r["full"], r["confidence_error"]))))
        r = pop.confidence_calibration_error(d, "log", per_confidence=True)
        worst = min(worst, float(np.min(r["full"] - r["confidence_error"])))
    return worst


register(Claim(
    id="004.lemma4.6",
    source="Reassessing calibration (under review), Lemma 4.6 and Cor. 4.7",
    statement=("E[d_phi(E[pi_{Y|X} | g(X)], g(X)) | h(X)] >= d_varphi(E[1{Y=c(X)} | h(X)], h(X))"
               " at every confidence value, for (||x||^2, x^2) exactly and for (KL, binary KL)"
               " (Cor. 4.7)."),
    check=_lemma46, reference=0.0, comparison="ge", tolerance=1e-12, tolerance_reason=_FLOAT,
    chapter=CHAPTER,
))


def _cor47_integrated(size: str) -> float:
    """min of CE_phi(g) - confidence calibration error (integrated Lemma 4.6)."""
    worst = math.inf
    for d in _family(size, 471, positive=True):
        worst = min(worst,
                    float(pop.calibration_error_proper(d, "squared_norm", exact=True)
                          - pop.confidence_calibration_error(d, "brier", exact=True)),
                    pop.calibration_error_proper(d, "neg_entropy")
                    - pop.confidence_calibration_error(d, "log"))
    return worst


register(Claim(
    id="004.cor4.7.integrated",
    source="Reassessing calibration (under review), Lemma 4.6 / Cor. 4.7 (Sec. 4.1)",
    statement=("Integrated over h(X): the confidence calibration error is at most the full"
               " calibration error, for the Brier and the log-loss pairs."),
    check=_cor47_integrated, reference=0.0, comparison="ge", tolerance=1e-12,
    tolerance_reason=_FLOAT, chapter=CHAPTER,
))


def _scaled_slack(d, a):
    """min over confidence values of full - a (acc - h)^2 (Brier pair, varphi = a x^2)."""
    r = pop.confidence_calibration_error(d, "brier", exact=True, per_confidence=True)
    return min(f - a * c for f, c in zip(r["full"], r["confidence_error"]))


def _sharp_constant_holds(size: str) -> float:
    """With varphi = a_k x^2, a_k = k/(k-1) (the largest a with d_phi >= d_varphi): min slack."""
    worst = math.inf
    for d in _family(size, 472):
        k = d.n_classes
        worst = min(worst, float(_scaled_slack(d, Fraction(k, k - 1))))
    return worst


register(Claim(
    id="004.lemma4.6.sharp_constant",
    source="Reassessing calibration (under review), Lemma 4.6 (condition)",
    statement=("||x - y||^2 >= a (x_i - y_i)^2 holds for every i exactly when a <= k/(k-1); with"
               " varphi = (k/(k-1)) x^2 Lemma 4.6 still holds, exactly."),
    check=_sharp_constant_holds, reference=0.0, comparison="ge", tolerance=0.0,
    tolerance_reason=_EXACT, chapter=CHAPTER,
))


def tight_instance(k: int, t: Fraction = Fraction(1, 8)) -> pop.FiniteDistribution:
    """One atom whose calibration gap E[pi | g] - g = t (e_c - (1 - e_c)/(k-1)) makes the
    condition of Lemma 4.6 tight: d_phi = (k/(k-1)) t^2 and d_varphi = a t^2."""
    g = [Fraction(1, 2)] + [Fraction(1, 2 * (k - 1))] * (k - 1)
    truth = [g[0] + t] + [x - t / (k - 1) for x in g[1:]]
    return pop.FiniteDistribution([Fraction(1)], [truth], [g])


def _condition_matters(size: str) -> float:
    """Violations of (4.6) with varphi = a x^2, a just above k/(k-1): the tight instances, k =
    3..10, and the random family (a = 2, the binary Brier score's constant)."""
    count = 0
    for k in range(3, 11):
        a = Fraction(k, k - 1) * Fraction(101, 100)
        count += _scaled_slack(tight_instance(k), a) < 0
    for d in _family(size, 473, min_classes=3):
        count += _scaled_slack(d, Fraction(2)) < 0
    return float(count)


register(Claim(
    id="004.lemma4.6.condition_matters",
    source="Reassessing calibration (under review), Lemma 4.6 (condition)",
    statement=("The condition matters: for varphi = a x^2 with a > k/(k-1) the inequality fails on"
               " the tight one-atom instances (k = 3..10), and with a = 2 (binary Brier) on"
               " random distributions (measured: the number of violating distributions)."),
    check=_condition_matters, reference=9.0, comparison="ge", tolerance=0.0,
    tolerance_reason=(_COUNT + "; the 8 tight instances violate by construction, so at least one"
                      " random distribution must violate too"),
    chapter=CHAPTER,
))
