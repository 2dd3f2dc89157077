"""Claims checked in Part III, chapter *Bregman lower bounds* (paper 004, Sec. 4).

Population claims on random exact finite distributions with forced collisions (20 smoke, 200
full; see :mod:`calnotes.book.claims.proper`), exactly for the squared norm (Brier), in float64 for
the negative entropy (KL) with strictly positive predictions, plus the edge cases where the
statements are tight or break (:func:`edge_cases`: k = 2, a single atom, point-mass labels, tied
confidences of different predicted classes, and the one-atom instances that make Lemma 4.6's
condition tight).  Every claim carries negative controls (:class:`~calnotes.book.claims.Control`):
false neighbours of its statement measured by the same check on the same instances.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from ...theory import population as pop
from ...core.scores import NEG_ENTROPY, bregman_divergence
from ._registry import Claim, Control, cite, register
from .proper import _EXACT, _FLOAT, _COUNT, _family, _random_merge

CHAPTER = "book/proper/bregman_bounds"

_F = Fraction
_REGION = (" Instances: the random family (k = 2..5, 6-12 atoms, forced collisions) plus the edge"
           " cases of edge_cases(): k = 2 with one atom, point-mass labels, a tie of the top value"
           " between two predicted classes, and the one-atom instances tight for Lemma 4.6's"
           " condition at k = 3..10.")


def tight_instance(k: int, t: Fraction = Fraction(1, 8)) -> pop.FiniteDistribution:
    """One atom whose calibration gap E[pi | g] - g = t (e_c - (1 - e_c)/(k-1)) makes the
    condition of Lemma 4.6 tight: d_phi = (k/(k-1)) t^2 and d_varphi = a t^2."""
    g = [Fraction(1, 2)] + [Fraction(1, 2 * (k - 1))] * (k - 1)
    truth = [g[0] + t] + [x - t / (k - 1) for x in g[1:]]
    return pop.FiniteDistribution([Fraction(1)], [truth], [g])


@functools.lru_cache(maxsize=None)
def edge_cases() -> tuple:
    """Exact populations (strictly positive predictions) at the edges of Sec. 4's statements.

    k = 2 with a single atom (where the log-loss pair of Cor 4.7 is an equality), a point-mass
    label (truth e_0) at k = 2 and k = 3, two atoms with the same confidence for different
    predicted classes (the pooling that conditioning on h(X) does), a two-atom population with a
    tied top value, and :func:`tight_instance` for k = 3..10.
    """
    out = [
        pop.FiniteDistribution([_F(1)], [[_F(1, 5), _F(4, 5)]], [[_F(3, 5), _F(2, 5)]]),
        pop.FiniteDistribution([_F(1)], [[_F(1), _F(0)]], [[_F(1, 4), _F(3, 4)]]),
        pop.FiniteDistribution([_F(1, 3), _F(2, 3)], [[_F(1), _F(0), _F(0)], [_F(0), _F(0), _F(1)]],
                               [[_F(1, 6), _F(2, 3), _F(1, 6)], [_F(1, 2), _F(1, 4), _F(1, 4)]]),
        pop.FiniteDistribution([_F(1, 2), _F(1, 2)],
                               [[_F(9, 10), _F(1, 10)], [_F(9, 10), _F(1, 10)]],
                               [[_F(3, 4), _F(1, 4)], [_F(1, 4), _F(3, 4)]]),
        pop.FiniteDistribution([_F(1, 4), _F(3, 4)],
                               [[_F(1, 2), _F(1, 4), _F(1, 4)], [_F(1, 5), _F(3, 5), _F(1, 5)]],
                               [[_F(2, 5), _F(2, 5), _F(1, 5)], [_F(1, 3), _F(1, 2), _F(1, 6)]]),
    ]
    return tuple(out) + tuple(tight_instance(k) for k in range(3, 11))


@functools.lru_cache(maxsize=None)
def _instances(size: str, seed: int, min_classes: int = 2) -> tuple:
    """The random family (positive predictions) plus :func:`edge_cases`, shared by a claim and
    its controls."""
    edges = tuple(d for d in edge_cases() if d.n_classes >= min_classes)
    return tuple(_family(size, seed, positive=True, min_classes=min_classes)) + edges


# ----------------------------------------------------------------------------- Props 4.2, 4.3

def _phi_conditional(d, exact: bool):
    """E[phi(E[pi_{Y|X} | g(X)])] for phi = ||x||^2 (exact) or sum x log x (float)."""
    if exact:
        w = d.exact[0]
        C = pop.conditional_expectation(d, exact=True)
        return sum((wi * sum(c * c for c in row) for wi, row in zip(w, C)), Fraction(0))
    C = pop.conditional_expectation(d)
    return float(d.weights @ NEG_ENTROPY.phi(C))


def _merge_two(d) -> pop.FiniteDistribution:
    """The deterministic coarsening sending the second distinct prediction onto the first."""
    w, T, F = d.exact
    rows = sorted({tuple(r) for r in F})
    if len(rows) < 2:
        return d
    return pop.FiniteDistribution(w, T, [list(rows[0]) if tuple(r) == rows[1] else list(r)
                                         for r in F])


@functools.lru_cache(maxsize=None)
def _prop42_pairs(size: str) -> tuple:
    """(fine, coarse) pairs: a random merge and a two-value merge of every instance."""
    rng = np.random.default_rng(421)
    out = []
    for d in _instances(size, 422):
        out += [(d, _random_merge(d, rng)), (d, _merge_two(d))]
    return tuple(out)


def _prop42(size: str, reverse: bool = False, factor: Fraction = Fraction(1)) -> float:
    """min of E phi(E[pi | g2]) - E phi(E[pi | g1]) for g1 = m o g2 (sigma(g1) in sigma(g2));
    ``reverse``: the roles swapped (the finer predictor claimed to have the larger gap);
    ``factor`` (the scaled control, squared norm only): min of factor E phi(E[pi | g2]) -
    E phi(E[pi | g1]), i.e. the coarser predictor's E phi at most ``factor`` times the finer's."""
    worst = math.inf
    for fine, coarse in _prop42_pairs(size):
        a, b = (coarse, fine) if reverse else (fine, coarse)
        if factor != 1:
            worst = min(worst, float(factor * _phi_conditional(a, True)
                                     - _phi_conditional(b, True)))
            continue
        worst = min(worst, float(_phi_conditional(a, True) - _phi_conditional(b, True)),
                    _phi_conditional(a, False) - _phi_conditional(b, False))
    return worst


register(Claim(
    id="004.prop4.2",
    source=cite("004", "Prop 4.2"),
    statement=("If sigma(g1(X)) is contained in sigma(g2(X)) then E[phi(E[pi_{Y|X} | g1(X)])] <="
               " E[phi(E[pi_{Y|X} | g2(X)])]: coarser predictors have a larger sharpness gap"
               " (g1 = m o g2 for random merging maps m and a two-value merge; squared norm"
               " exactly, neg. entropy)."),
    quantity="smallest E φ(E[π | g₂]) − E φ(E[π | g₁]) over the instances and merges g₁ = m∘g₂",
    check=_prop42, reference=0.0, comparison="ge", tolerance=1e-12,
    tolerance_reason=_FLOAT + "." + _REGION + " Single atoms make the inequality an equality.",
    chapter=CHAPTER,
    controls=(Control("right side 1% smaller",
                      "E[phi(E[pi | g1])] <= 0.99 E[phi(E[pi | g2])] (squared norm): coarsening"
                      " lowers E phi by at least 1% (false where the coarsening merges nothing or"
                      " merges atoms with equal conditionals: equality)",
                      functools.partial(_prop42, factor=Fraction(99, 100)),
                      kind="scaled", factor=0.99),
              Control("inclusion reversed",
                      "sigma(g2) in sigma(g1) implies the same inequality: the finer predictor"
                      " would have the larger sharpness gap (g1, g2 swapped in every pair)",
                      functools.partial(_prop42, reverse=True), kind="alternative"),),
))


def _prop43(size: str, calibrated: bool = True, factor: Fraction = Fraction(1)) -> float:
    """min over g of E d(pi, pi_Y) - E d(pi, g) (squared norm exact, KL float); g calibrated
    (recalibrated instances, recalibrated coarsenings, and the constant pi_Y itself, the
    equality case) or, for the control, the same predictors before recalibration.

    ``factor`` (the scaled control, squared norm only): min of factor E d(pi, pi_Y) -
    E d(pi, g)."""
    rng = np.random.default_rng(431)
    worst = math.inf
    for d in _instances(size, 432):
        merged = _random_merge(d, rng)
        w, T, _ = d.exact
        base_rate = pop.FiniteDistribution(w, T, [list(d.label_marginal(exact=True))]
                                           * d.n_atoms)
        for g in ((d.recalibrated(), merged.recalibrated(), base_rate) if calibrated
                  else (d, merged)):
            w, T, G = g.exact
            marg = list(g.label_marginal(exact=True))
            const = pop.FiniteDistribution(w, T, [marg] * g.n_atoms)
            bound = pop.bregman_decomposition(const, "squared_norm", exact=True)["total"]
            if g is base_rate:            # g = pi_Y: the equality case, (factor - 1) * bound
                worst = min(worst, float((factor - 1) * bound))
                continue
            exact = factor * bound - pop.bregman_decomposition(g, "squared_norm",
                                                               exact=True)["total"]
            if factor != 1:
                worst = min(worst, float(exact))
                continue
            kl = (float(g.weights @ bregman_divergence(g.truth, const.prediction, NEG_ENTROPY))
                  - float(g.weights @ bregman_divergence(g.truth, g.prediction, NEG_ENTROPY)))
            worst = min(worst, float(exact), kl)
    return worst


register(Claim(
    id="004.prop4.3",
    source=cite("004", "Prop 4.3"),
    statement=("Every calibrated predictor g has E[d_phi(pi_{Y|X}, g(X))] <= E[d_phi(pi_{Y|X},"
               " pi_Y)]: the constant base rate is the worst calibrated predictor (squared norm"
               " exactly, KL)."),
    quantity="smallest E d_φ(π, π_Y) − E d_φ(π, g) over the calibrated predictors g",
    check=_prop43, reference=0.0, comparison="ge", tolerance=1e-12,
    tolerance_reason=_FLOAT + "." + _REGION + " A single atom makes it an equality.",
    chapter=CHAPTER,
    controls=(Control("bound 1% smaller",
                      "every calibrated g has E d(pi, g) <= 0.99 E d(pi, pi_Y) (squared norm;"
                      " false at the constant g = pi_Y, calibrated, where it is an equality)",
                      functools.partial(_prop43, factor=Fraction(99, 100)),
                      kind="scaled", factor=0.99),
              Control("calibration dropped",
                      "every predictor, calibrated or not, does at least as well as pi_Y (the"
                      " same predictors before recalibration)",
                      functools.partial(_prop43, calibrated=False), kind="alternative"),),
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


def _ks(size: str):
    return range(2, 60) if size == "smoke" else [*range(2, 200), 500, 1000, 2000]


def _prop45_conf(size: str, eps=None) -> float:
    """max over k of k times the confidence loss; eps = 1/(2k), or a fixed ``eps``."""
    return max(k * always_wrong_losses(k, 1 / (2 * k) if eps is None else eps)[0]
               for k in _ks(size))


register(Claim(
    id="004.prop4.5.confidence_loss",
    source=cite("004", "Prop 4.5"),
    statement=("The always-wrong predictor (eps = 1/(2k)) has confidence loss E[(1{Y=c(X)} -"
               " h(X))^2] = O(1/k): k times it stays bounded, by 9/8 (measured: its maximum over"
               " k)."),
    quantity="largest k × confidence loss of the always-wrong predictor over k",
    check=_prop45_conf, reference=1.125, comparison="le", tolerance=1e-12,
    tolerance_reason=("the loss is (1/k + eps)^2 = (3/(2k))^2 exactly, so k times it is 9/(4k)"
                      " <= 9/8, attained at k = 2 (k = 2..59 smoke, up to 2000 full); float64"
                      " rounding only"),
    chapter=CHAPTER,
    controls=(
        Control("constant 1% smaller",
                "k times the confidence loss stays below 9/8 / 1.01 (the bound tightened)",
                _prop45_conf, reference=1.125 / 1.01, kind="scaled", factor=1 / 1.01),
        Control("eps = O(1/k) dropped",
                "the same O(1/k) bound with a fixed eps = 1/4 (the hypothesis eps = O(1/k)"
                " dropped): k (1/k + 1/4)^2 grows with k",
                functools.partial(_prop45_conf, eps=0.25), kind="alternative"),
    ),
))


def _prop45_full(size: str) -> float:
    """min over k and eps = c/k (c = 1/1000, 1/2, 1) of the full loss."""
    return min(always_wrong_losses(k, c / k)[1] for k in _ks(size) for c in (1e-3, 0.5, 1.0))


register(Claim(
    id="004.prop4.5.full_loss",
    source=cite("004", "Prop 4.5"),
    statement=("... while its full loss E[||pi_{Y|X} - g(X)||^2] = Omega(1): at least"
               " 1 - 1/k >= 1/2 for every k and eps >= 0, the constant 1/2 being sharp (k = 2, eps"
               " -> 0; measured: the minimum over k and eps = c/k, c in {0.001, 1/2, 1})."),
    quantity="smallest full loss of the always-wrong predictor over k and ε",
    check=_prop45_full, reference=0.5, comparison="ge", tolerance=1e-12,
    tolerance_reason=("the full loss (1 - g_0)^2 + g_1^2 + (k - 2) g_0^2 increases with eps from"
                      " 1 - 1/k at eps = 0; k = 2..59 (smoke) or up to 2000 (full) and eps down"
                      " to 0.001/k reach the infimum 1/2 within 0.0011; rounding only"),
    chapter=CHAPTER,
    controls=(Control("constant 1% larger",
                      "the full loss is at least 0.505 for every k and eps = O(1/k) (the sharp"
                      " constant 1/2 raised by 1%)", _prop45_full, reference=0.505,
                      kind="scaled", factor=1.01),),
))


# ----------------------------------------------------------------------------- Lemma 4.6

def _pair_slacks(d, a_brier, a_log, integrated=False):
    """min slack of full - a * confidence error for the Brier pair (exact; a may depend on k)
    and the log pair (float; a = a_log); per confidence value or integrated."""
    k = d.n_classes
    ab = a_brier(k) if callable(a_brier) else a_brier
    if integrated:
        b = (pop.calibration_error_proper(d, "squared_norm", exact=True)
             - ab * pop.confidence_calibration_error(d, "brier", exact=True))
        lg = (pop.calibration_error_proper(d, "neg_entropy")
              - a_log * pop.confidence_calibration_error(d, "log"))
        return min(float(b), float(lg))
    r = pop.confidence_calibration_error(d, "brier", exact=True, per_confidence=True)
    b = min(f - ab * c for f, c in zip(r["full"], r["confidence_error"]))
    r = pop.confidence_calibration_error(d, "log", per_confidence=True)
    lg = np.min(r["full"] - a_log * r["confidence_error"])
    return min(float(b), float(lg))


def _beyond_sharp(k):
    return Fraction(k, k - 1) * Fraction(101, 100)


def _lemma46(size: str, a_brier=1, a_log=1.0, integrated=False, seed=461) -> float:
    """min over instances (and confidence values) of full - a * confidence error."""
    return min(_pair_slacks(d, a_brier, a_log, integrated) for d in _instances(size, seed))


_CONTROLS_46 = (
    Control("Brier constant beyond k/(k-1)",
            "the inequality with varphi = 1.01 k/(k-1) x^2 (the sharp constant of the condition"
            " exceeded by 1%: Lemma 4.6's condition dropped at its edge)",
            functools.partial(_lemma46, a_brier=_beyond_sharp), kind="hypothesis"),
    Control("log pair scaled by 1.01",
            "the inequality with varphi = 1.01 times the binary negative entropy (tight at k ="
            " 2, where KL of the pair is an equality)",
            functools.partial(_lemma46, a_log=1.01), kind="scaled", factor=1.01),
)

register(Claim(
    id="004.lemma4.6",
    source=cite("004", "Lemma 4.6 and Cor 4.7"),
    statement=("E[d_phi(E[pi_{Y|X} | g(X)], g(X)) | h(X)] >= d_varphi(E[1{Y=c(X)} | h(X)], h(X))"
               " at every confidence value, for (||x||^2, x^2) exactly and for (KL, binary KL)"
               " (Cor. 4.7)."),
    quantity=("smallest E[d_φ(E[π_{Y|X} | g(X)], g(X)) | h(X)] − d_φ̃(E[1{Y = c(X)} | h(X)], "
              "h(X)) over the instances, confidence values and both pairs"),
    check=_lemma46, reference=0.0, comparison="ge", tolerance=1e-12,
    tolerance_reason=_FLOAT + "." + _REGION, chapter=CHAPTER, controls=_CONTROLS_46,
))

_CONTROLS_47 = tuple(
    Control(c.name, c.statement + ", integrated over h(X)",
            functools.partial(c.check.func, integrated=True, seed=471, **c.check.keywords),
            kind=c.kind, factor=c.factor)
    for c in _CONTROLS_46)

register(Claim(
    id="004.cor4.7.integrated",
    source=cite("004", "Lemma 4.6 / Cor 4.7", "Sec. 4.1"),
    statement=("Integrated over h(X): the confidence calibration error is at most the full"
               " calibration error, for the Brier and the log-loss pairs."),
    quantity=("smallest full calibration error − confidence calibration error (integrated over "
              "h(X)) over the instances and both pairs"),
    check=functools.partial(_lemma46, integrated=True, seed=471), reference=0.0,
    comparison="ge", tolerance=1e-12, tolerance_reason=_FLOAT + "." + _REGION, chapter=CHAPTER,
    controls=_CONTROLS_47,
))


def _scaled_slack(d, a):
    """min over confidence values of full - a (acc - h)^2 (Brier pair, varphi = a x^2)."""
    r = pop.confidence_calibration_error(d, "brier", exact=True, per_confidence=True)
    return min(f - a * c for f, c in zip(r["full"], r["confidence_error"]))


def _sharp_constant_holds(size: str, factor: Fraction = Fraction(1)) -> float:
    """With varphi = a_k x^2, a_k = factor * k/(k-1) (the largest a with d_phi >= d_varphi at
    factor 1): min slack over the random family and the edge cases."""
    worst = math.inf
    for d in _instances(size, 472):
        k = d.n_classes
        worst = min(worst, float(_scaled_slack(d, factor * Fraction(k, k - 1))))
    return worst


register(Claim(
    id="004.lemma4.6.sharp_constant",
    source=cite("004", "Lemma 4.6", "condition"),
    statement=("||x - y||^2 >= a (x_i - y_i)^2 holds for every i exactly when a <= k/(k-1); with"
               " varphi = (k/(k-1)) x^2 Lemma 4.6 still holds, exactly."),
    quantity="smallest slack of the inequality with φ̃ = (k/(k−1)) x² over the instances",
    check=_sharp_constant_holds, reference=0.0, comparison="ge", tolerance=0.0,
    tolerance_reason=_EXACT + "." + _REGION, chapter=CHAPTER,
    controls=(Control("constant 1% above k/(k-1)",
                      "Lemma 4.6 with varphi = 1.01 k/(k-1) x^2",
                      functools.partial(_sharp_constant_holds, factor=Fraction(101, 100)),
                      kind="scaled", factor=1.01),),
))


def _condition_matters(size: str, factor: Fraction = Fraction(101, 100),
                       binary: Fraction | None = Fraction(2)) -> float:
    """Violations of (4.6) with varphi = a x^2: a = factor k/(k-1) on the tight instances, k =
    3..10, and a = ``binary`` (2, the binary Brier score's constant; ``None``: k/(k-1)) on the
    random family."""
    count = 0
    for k in range(3, 11):
        a = Fraction(k, k - 1) * factor
        count += _scaled_slack(tight_instance(k), a) < 0
    for d in _family(size, 473, min_classes=3):
        a = Fraction(d.n_classes, d.n_classes - 1) if binary is None else binary
        count += _scaled_slack(d, a) < 0
    return float(count)


register(Claim(
    id="004.lemma4.6.condition_matters",
    source=cite("004", "Lemma 4.6", "condition"),
    statement=("The condition matters: for varphi = a x^2 with a > k/(k-1) the inequality fails on"
               " the tight one-atom instances (k = 3..10), and with a = 2 (binary Brier) on"
               " random distributions (measured: the number of violating distributions)."),
    quantity="number of distributions violating the inequality with φ̃ = a x², a beyond k/(k−1)",
    check=_condition_matters, reference=9.0, comparison="ge", tolerance=0.0,
    tolerance_reason=(_COUNT + "; the 8 tight instances violate by construction, so at least one"
                      " random distribution (k = 3..5) must violate too"),
    chapter=CHAPTER,
    controls=(Control("condition restored",
                      "the same violations with a = k/(k-1) (the condition holds, so none can"
                      " occur)",
                      functools.partial(_condition_matters, factor=Fraction(1), binary=None),
                      kind="boundary"),),
))
