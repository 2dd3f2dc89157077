"""Claims checked in Part III, chapter *Proper calibration errors* (paper 003).

Every population claim is checked on random **exact** finite distributions
(:func:`calnotes.population.random_finite_distribution`, collisions forced: atoms sharing a
prediction, sharing one coordinate, sharing the top value with another predicted class), 20 at
smoke size and 200 at full size, in rational arithmetic wherever the quantity is rational.
Inequalities are measured as the smallest slack ``larger - smaller`` over the family (reference
0, comparison ``ge``); implications as the number of distributions where the premise holds and
the conclusion does not (reference 0).  Where the printed statement fails, the claim is an
erratum (``expect="disagrees"``) and its check measures the counterexample.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import population as pop
from ._registry import Claim, register

CHAPTER = "book/proper/proper_errors"
_EXACT = "exact rational arithmetic: an inequality between Fractions holds or it does not"
_FLOAT = ("float64 sums of at most a few hundred terms of size <= 2: rounding below 1e-12"
          " (the exact rational path agrees)")
_COUNT = "a count of distributions: exact"


def _family(size: str, seed: int, *, positive: bool = False, min_classes: int = 2):
    """Random exact finite distributions with forced collisions (20 smoke, 200 full)."""
    rng = np.random.default_rng(seed)
    count = 20 if size == "smoke" else 200
    for _ in range(count):
        k = int(rng.integers(min_classes, 6))
        n_atoms = int(rng.integers(6, 13))
        grid = int(rng.choice([2 * k, 3 * k, 4 * k])) if not positive else 4 * k
        yield pop.random_finite_distribution(rng, n_atoms=n_atoms, n_classes=k, grid=grid,
                                             positive=positive)


def _brier_exact(dist):
    return pop.expected_score(dist, "brier", exact=True)


# ----------------------------------------------------------------------------- Lemma D.1

def _lemma_d1(size: str) -> float:
    """max |CE_S - (E S(f(X), Y) - E g_S(P_{Y|f(X)}))| for Brier (exact), log, spherical."""
    worst = 0.0
    for d in _family(size, 31, positive=True):
        # E g_S(P_{Y|f(X)}) is the expected score of the recalibrated predictor E[Y | f(X)]
        r = d.recalibrated()
        if (pop.calibration_error_proper(d, "brier", exact=True)
                != _brier_exact(d) - pop.expected_score(r, "brier", exact=True)):
            return math.inf
        for loss in ("log", "spherical"):
            rhs = pop.expected_score(d, loss) - pop.expected_score(r, loss)
            worst = max(worst, abs(pop.calibration_error_proper(d, loss) - rhs))
    return worst


register(Claim(
    id="003.lemmaD.1",
    source="Gruber & Buettner (2022), Lemma D.1",
    statement=("CE_S(f) = E[S(f(X), Y)] - E[g_S(P_{Y|f(X)})] for every proper score: exactly"
               " (Fractions) for Brier, to rounding for log and spherical."),
    check=_lemma_d1, reference=0.0, tolerance=1e-12, tolerance_reason=_FLOAT, chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- Thm 3.1 (6)

def _min_slack(size, seed, slack, **kw) -> float:
    worst = math.inf
    for d in _family(size, seed, **kw):
        worst = min(worst, slack(d))
    return float(worst)


def _ineq(id_, statement, slack, seed, *, exact=True, tolerance=None, **kw):
    register(Claim(
        id=id_, source="Gruber & Buettner (2022), Thm 3.1, eq. (6)", statement=statement,
        check=lambda size: _min_slack(size, seed, slack, **kw),
        reference=0.0, comparison="ge",
        tolerance=0.0 if exact else (1e-12 if tolerance is None else tolerance),
        tolerance_reason=_EXACT if exact else _FLOAT, chapter=CHAPTER,
    ))


_ineq("003.thm3.1.brier_le_2",
      "2 >= BS(f): the Brier score (summed over classes) is at most ||e_1 - e_2||^2 = 2.",
      lambda d: 2 - _brier_exact(d), 311)
_ineq("003.thm3.1.brier_ge_ce2",
      "BS(f) >= CE_2(f)^2 (eq. (12)): the Brier score bounds the squared canonical L2 error.",
      lambda d: _brier_exact(d) - pop.ce_p(d, 2, exact=True, powered=True), 312)


def _norm_order_slack(d) -> float:
    """min over p <= q of n^(1/p - 1/q) CE_q - CE_p (eq. (13)), n = number of classes."""
    n = d.n_classes
    return min(n ** (1 / p - 1 / q) * pop.ce_p(d, q) - pop.ce_p(d, p)
               for p, q in ((1, 2), (1, 3), (2, 3), (1.5, 2), (1, 1.5)))


_ineq("003.thm3.1.ce_norm_order",
      "n^(1/p - 1/q) CE_q(f) >= CE_p(f) for 1 <= p <= q (eq. (13), n classes).",
      _norm_order_slack, 313, exact=False)


def _sqrt_brier_slack(d) -> float:
    n, bs = d.n_classes, float(_brier_exact(d))
    return min(n ** (1 / p - 0.5) * math.sqrt(bs) - pop.ce_p(d, p) for p in (1, 1.5, 2))


_ineq("003.thm3.1.sqrt_brier_ge_ce_p",
      "n^(1/p - 1/2) sqrt(BS(f)) >= CE_p(f) for 1 <= p <= 2: the calibration upper bound.",
      _sqrt_brier_slack, 314, exact=False)
_ineq("003.thm3.1.ce_ge_cwce",
      "CE_p(f) >= CWCE_p(f) (eq. (15)); checked on p-th powers, p = 1, 2, 3, exactly.",
      lambda d: min(pop.ce_p(d, p, exact=True, powered=True)
                    - pop.cwce(d, p, exact=True, powered=True) for p in (1, 2, 3)), 315)
_ineq("003.thm3.1.cwce_le_2",
      "CWCE_p(f) <= 2^(1/p) (App. C, after Def C.1); checked as CWCE_p^p <= 2, p = 1, 2, 3.",
      lambda d: min(2 - pop.cwce(d, p, exact=True, powered=True) for p in (1, 2, 3)), 316)
_ineq("003.thm3.1.cwce_ge_tce.proof_reading",
      ("CWCE_p(f) >= TCE_p(f) when P(Y = C | f_C(X)) is read as the class-wise conditional"
       " P(Y = k | f_k(X)) at k = C, as step (ii) of eq. (16) does; p = 1, 2, 3, exactly."),
      lambda d: min(pop.cwce(d, p, exact=True, powered=True)
                    - pop.tce(d, p, given="classwise", exact=True, powered=True)
                    for p in (1, 2, 3)), 317, min_classes=3)
_ineq("003.thm3.1.tce_p_ge_tce_1",
      "TCE_p(f) >= TCE_1(f) (eq. (17)); checked as TCE_p^p >= TCE_1^p, p = 2, 3, exactly.",
      lambda d: min(pop.tce(d, p, exact=True, powered=True) - pop.tce(d, exact=True) ** p
                    for p in (2, 3)), 318)
_ineq("003.thm3.1.tce_ge_ks",
      ("TCE_1(f) >= KS(f) with KS read as the proof of eq. (18) uses it (the top-label"
       " conditional integrated against P_{f_C(X)|C}); exactly."),
      lambda d: pop.tce(d, exact=True) - pop.ks_error(d, reading="proof", exact=True), 319)
_ineq("003.thm3.1.tce_ge_ece",
      "TCE_1(f) >= ECE(f) (eq. (19)) for equal-width binnings of 1, 2, 3, 5, 10 and 15 bins, exactly.",
      lambda d: min(pop.tce(d, exact=True) - pop.binned_ece(d, m, exact=True)
                    for m in (1, 2, 3, 5, 10, 15)), 320)


def _scaled_laplacian(scale):
    def kernel(A, B):
        return scale * np.exp(-np.abs(A - B) / 0.4)
    return kernel


def _mmce_le_c_tce(d) -> float:
    """min over kernel scales s of c TCE_1 - MMCE, c = sqrt(max k(r, r)) = sqrt(s)."""
    t = float(pop.tce(d, exact=True))
    return min(math.sqrt(s) * t - pop.mmce(d, _scaled_laplacian(s)) for s in (0.25, 1.0, 4.0))


_ineq("003.thm3.1.mmce_le_c_tce",
      ("c TCE_1(f) >= MMCE(f), c = sqrt(max_r k(r, r)) (Kumar et al. 2018, Thm 3): the"
       " direction that holds, for Laplacian kernels scaled by 1/4, 1 and 4."),
      _mmce_le_c_tce, 321, exact=False)


# ----------------------------------------------------------------------------- errata

def _cwce_tce_counterexample():
    """Class-wise calibrated, top-label miscalibrated (k = 4, two atoms of weight 1/2)."""
    F = Fraction
    return pop.FiniteDistribution(
        [F(1, 2), F(1, 2)],
        [[F(4, 8), F(0), F(2, 8), F(2, 8)], [F(2, 8), F(2, 8), F(4, 8), F(0)]],
        [[F(3, 8), F(1, 8), F(2, 8), F(2, 8)], [F(3, 8), F(1, 8), F(4, 8), F(0)]])


def _cwce_ge_tce_printed(size: str) -> float:
    """min of CWCE_1 - TCE_1 (Def C.1) over the random family and the counterexample."""
    worst = pop.cwce(_cwce_tce_counterexample(), exact=True) - pop.tce(
        _cwce_tce_counterexample(), exact=True)
    for d in _family(size, 322, min_classes=3):
        worst = min(worst, pop.cwce(d, exact=True) - pop.tce(d, exact=True))
    return float(worst)


_CWCE_EVIDENCE = (
    "Two atoms of weight 1/2, k = 4: f = (3,1,2,2)/8 with P(Y|X) = (4,0,2,2)/8 and f = (3,1,4,0)/8"
    " with P(Y|X) = (2,2,4,0)/8. Every value f_r(X) is class-wise calibrated (the atoms share"
    " f_0 = 3/8 and f_1 = 1/8 with compensating truths), so CWCE_p = 0; the first atom predicts"
    " class 0 with confidence 3/8, the second class 2 with confidence 1/2, and P(Y = C | f_C(X)"
    " = 3/8) = 1/2, so TCE_1 = 1/16 (exact Fractions). Step (ii) of eq. (16) replaces the"
    " top-label conditional P(Y = C | f_C(X)) by the class-wise conditional P(Y = k | f_k(X))"
    " at k = C; these differ when atoms share a coordinate value. Under that reading the"
    " inequality holds (claim 003.thm3.1.cwce_ge_tce.proof_reading).")

register(Claim(
    id="003.thm3.1.cwce_ge_tce",
    source="Gruber & Buettner (2022), Thm 3.1, eq. (6) and (16)",
    statement="CWCE_p(f) >= TCE_p(f) with TCE_p as defined in Def C.1.",
    check=_cwce_ge_tce_printed, reference=0.0, comparison="ge", tolerance=0.0,
    tolerance_reason=_EXACT, chapter=CHAPTER, expect="disagrees", evidence=_CWCE_EVIDENCE,
))


def _cwce0_tce0(size: str) -> float:
    """TCE_1 of a class-wise calibrated distribution (CWCE_1 = 0 checked exactly)."""
    d = _cwce_tce_counterexample()
    if pop.cwce(d, exact=True) != 0:
        return math.nan
    return float(pop.tce(d, exact=True))


register(Claim(
    id="003.thm3.1.cwce0_implies_tce0",
    source="Gruber & Buettner (2022), Thm 3.1, eqs. (5) and (9)",
    statement="CWCE_p(f) = 0 implies TCE_p(f) = 0 (Def C.1 conditioning on the confidence).",
    check=_cwce0_tce0, reference=0.0, tolerance=0.0, tolerance_reason=_EXACT, chapter=CHAPTER,
    expect="disagrees", evidence=_CWCE_EVIDENCE.replace("Step (ii) of eq. (16)", "Eq. (9)"),
))


def _binary_ks_instance():
    """Binary, TCE_1 = 0, KS (Def C.2 literally) = 1/4."""
    F = Fraction
    return pop.FiniteDistribution([F(1, 2), F(1, 2)], [[F(1), F(0)], [F(1, 2), F(1, 2)]],
                                  [[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]])


def _tce_ge_ks_definition(size: str) -> float:
    d = _binary_ks_instance()
    worst = pop.tce(d, exact=True) - pop.ks_error(d, reading="definition", exact=True)
    for e in _family(size, 323):
        worst = min(worst, pop.tce(e, exact=True) - pop.ks_error(e, reading="definition",
                                                                  exact=True))
    return float(worst)


_KS_EVIDENCE = (
    "Def C.2 integrates the class-wise conditional P(Y = k | f_k(X) = z) against the law of"
    " f_k(X) over the whole population, while the proof of eqs. (10) and (18) integrates the"
    " top-label conditional against P_{f_C(X) | C}. Read literally, take the binary predictor"
    " with two atoms of weight 1/2, f = (3/4, 1/4) with P(Y | X) = (1, 0) and f = (1/4, 3/4)"
    " with P(Y | X) = (1/2, 1/2): both predict with confidence 3/4 and P(Y = C | f_C = 3/4) ="
    " (1 + 1/2)/2 = 3/4, so TCE_1 = 0; but class 0 alone is miscalibrated at both values (gaps"
    " 3/4 - 1 and 1/4 - 1/2, each of weight 1/2), the partial integrals reach -1/4, and KS ="
    " 1/4 (exact Fractions); the random family finds smaller violations too. Under the proof's"
    " reading TCE_1 >= KS holds"
    " (claim 003.thm3.1.tce_ge_ks).")

register(Claim(
    id="003.thm3.1.tce_ge_ks.definition",
    source="Gruber & Buettner (2022), Def C.2 and Thm 3.1, eq. (18)",
    statement="TCE_1(f) >= KS(f) with KS read literally as Def C.2.",
    check=_tce_ge_ks_definition, reference=0.0, comparison="ge", tolerance=0.0,
    tolerance_reason=_EXACT, chapter=CHAPTER, expect="disagrees", evidence=_KS_EVIDENCE,
))


def _tce_ge_c_mmce(size: str) -> float:
    """min of TCE_1 - c MMCE with the Laplacian kernel scaled by 4 (c = 2)."""
    worst = math.inf
    for d in _family(size, 324):
        worst = min(worst, float(pop.tce(d, exact=True)) - 2.0 * pop.mmce(d, _scaled_laplacian(4.0)))
    return worst


register(Claim(
    id="003.thm3.1.tce_ge_c_mmce",
    source="Gruber & Buettner (2022), Thm 3.1, eq. (6)",
    statement="TCE_1(f) >= c MMCE(f) with c = sqrt(max_r k(r, r)), as printed.",
    check=_tce_ge_c_mmce, reference=0.0, comparison="ge", tolerance=1e-12,
    tolerance_reason=_FLOAT, chapter=CHAPTER, expect="disagrees",
    evidence=("MMCE = ||E[delta k(r, .)]||_H <= E|delta| sup_r ||k(r, .)||_H = c TCE_1, since"
              " ||k(r, .)||_H = sqrt(k(r, r)): the constant belongs on the other side. With the"
              " Laplacian kernel 4 exp(-|r - s|/0.4) (c = 2), a single confidence value with gap"
              " delta gives MMCE = 2|delta| = 2 TCE_1, so TCE_1 - c MMCE = -3 TCE_1 < 0; the"
              " random family finds this on every miscalibrated distribution. For"
              " kernels with k(r, r) = 1 (c = 1) the two directions coincide as MMCE <= TCE_1."),
))


# ----------------------------------------------------------------------------- Thm 3.1 (5)

def _one_hot_truth(rng, k, n_atoms):
    F = Fraction
    labels = rng.integers(k, size=n_atoms)
    u = rng.integers(1, 10, size=n_atoms)
    w = [F(int(x), int(u.sum())) for x in u]
    T = [[F(int(j == y)) for j in range(k)] for y in labels]
    return w, T


def _bs0_implies_ce0(size: str) -> float:
    """Distributions with BS = 0 (one-hot truth predicted exactly) whose CE_p, SKCE are not 0."""
    rng = np.random.default_rng(325)
    bad = 0
    for _ in range(20 if size == "smoke" else 200):
        k = int(rng.integers(2, 6))
        w, T = _one_hot_truth(rng, k, int(rng.integers(2, 10)))
        d = pop.FiniteDistribution(w, T, T)
        if _brier_exact(d) != 0:
            return math.nan
        bad += (pop.ce_p(d, 1, exact=True) != 0) + (pop.skce(d) > 1e-15)
    return float(bad)


register(Claim(
    id="003.thm3.1.bs0_implies_ce0",
    source="Gruber & Buettner (2022), Thm 3.1, eqs. (5) and (7)",
    statement="BS(f) = 0 implies CE_p(f) = 0 and KCE(f) = 0.",
    check=_bs0_implies_ce0, reference=0.0, tolerance=0.0, tolerance_reason=_COUNT,
    chapter=CHAPTER,
))


def _ce0_not_bs0(size: str) -> float:
    """Random populations whose constant predictor P_Y has CE_p = 0 but BS > 0 (all of them)."""
    good = 0
    count = 0
    for d in _family(size, 326):
        count += 1
        w, T, _ = d.exact
        marg = d.label_marginal(exact=True)
        c = pop.FiniteDistribution(w, T, [list(marg)] * d.n_atoms)
        good += (pop.ce_p(c, 1, exact=True) == 0) and (_brier_exact(c) > 0)
    return float(count - good)


register(Claim(
    id="003.thm3.1.ce0_not_bs0",
    source="Gruber & Buettner (2022), Thm 3.1, proof of eq. (7)",
    statement=("The converse fails: the constant predictor f = P_Y is calibrated (CE_p = 0) yet"
               " has BS > 0 (measured: populations where this fails)."),
    check=_ce0_not_bs0, reference=0.0, tolerance=0.0, tolerance_reason=_COUNT, chapter=CHAPTER,
))


def _calibrated_equivalences(size: str) -> float:
    """Mismatches between 'E[Y|f] = f', 'CE_2 = 0' and 'SKCE = 0' over random distributions
    and their recalibrations."""
    bad = 0
    for d in _family(size, 327):
        for e in (d, d.recalibrated()):
            calibrated = bool(np.all(pop.conditional_expectation(e, exact=True) == e.exact[2]))
            ce_zero = pop.ce_p(e, 2, exact=True, powered=True) == 0
            kce_zero = pop.skce(e) <= 1e-15
            bad += not (calibrated == ce_zero == kce_zero)
    return float(bad)


register(Claim(
    id="003.thm3.1.calibrated_iff_ce0_iff_kce0",
    source="Gruber & Buettner (2022), Thm 3.1, eqs. (5) and (7)",
    statement=("f is calibrated iff CE_p(f) = 0 iff KCE(f) = 0 (Laplacian kernel, characteristic):"
               " distributions where the three disagree."),
    check=_calibrated_equivalences, reference=0.0, tolerance=0.0,
    tolerance_reason=_COUNT + "; SKCE is zero when below 1e-15 (float64 rounding of zero)",
    chapter=CHAPTER,
))


def _ce0_implies_cwce0(size: str) -> float:
    bad = 0
    for d in _family(size, 328):
        e = d.recalibrated()
        if pop.ce_p(e, 1, exact=True) != 0:
            return math.nan
        bad += pop.cwce(e, exact=True) != 0
    return float(bad)


register(Claim(
    id="003.thm3.1.ce0_implies_cwce0",
    source="Gruber & Buettner (2022), Thm 3.1, eqs. (5) and (8)",
    statement=("CE_p(f) = 0 implies CWCE_p(f) = 0: recalibrated (canonically calibrated) random"
               " distributions with nonzero CWCE."),
    check=_ce0_implies_cwce0, reference=0.0, tolerance=0.0, tolerance_reason=_COUNT,
    chapter=CHAPTER,
))


def _tce_zero_family(size, seed):
    """Random distributions made top-label calibrated by 003 Prop D.2's transform."""
    for d in _family(size, seed):
        t = pop.accuracy_preserving_transform(d)
        if pop.tce(t, exact=True) == 0:
            yield t


def _tce0_iff(size: str) -> float:
    """Mismatches of zero-ness: TCE_1 vs MMCE (Laplacian), vs KS (proof reading), and TCE = 0
    without ECE = 0, over random and top-label-calibrated distributions."""
    bad = 0
    dists = list(_family(size, 329)) + list(_tce_zero_family(size, 330))
    for d in dists:
        tce_zero = pop.tce(d, exact=True) == 0
        bad += tce_zero != (pop.mmce(d) <= 1e-15)
        bad += tce_zero != (pop.ks_error(d, reading="proof", exact=True) == 0)
        if tce_zero:
            bad += any(pop.binned_ece(d, m, exact=True) != 0 for m in (1, 5, 15))
    return float(bad)


register(Claim(
    id="003.thm3.1.tce0_iff_mmce0_iff_ks0",
    source="Gruber & Buettner (2022), Thm 3.1, eqs. (5), (9)-(11)",
    statement=("TCE_p(f) = 0 iff MMCE(f) = 0 iff KS(f) = 0 (proof's reading), and then ECE(f) = 0:"
               " violations over random and top-label-calibrated distributions."),
    check=_tce0_iff, reference=0.0, tolerance=0.0,
    tolerance_reason=_COUNT + "; MMCE is zero when below 1e-15 (float64 rounding of zero)",
    chapter=CHAPTER,
))


def _ece0_not_tce0(size: str) -> float:
    """An instance with ECE = 0 (2 bins) and TCE_1 > 0: returns TCE_1 (0 if ECE != 0)."""
    F = Fraction
    d = pop.FiniteDistribution([F(1, 2)] * 2, [[F(5, 8), F(3, 8)], [F(6, 8), F(2, 8)]],
                               [[F(6, 8), F(2, 8)], [F(5, 8), F(3, 8)]])
    if pop.binned_ece(d, 2, exact=True) != 0:
        return 0.0
    return float(pop.tce(d, exact=True))


register(Claim(
    id="003.thm3.1.ece0_not_tce0",
    source="Gruber & Buettner (2022), Thm 3.1 (after eq. (11))",
    statement="ECE(f) = 0 does not imply TCE_1(f) = 0: an exhibited instance has TCE_1 = 1/8.",
    check=_ece0_not_tce0, reference=0.125, tolerance=0.0,
    tolerance_reason="exact rational value of the two-atom instance", chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- Prop 3.2

def _prop32(size: str) -> float:
    """CE_2 - (1 - 1/k) for the MILP instance, NaN unless every common error is exactly 0."""
    k, grid = (3, 4) if size == "smoke" else (3, 8)
    d = pop.top_label_calibrated_not_calibrated(k, grid)
    zero = Fraction(0)
    errors = [pop.cwce(d, p, exact=True, powered=True) for p in (1, 2)]
    errors += [pop.tce(d, p, exact=True, powered=True) for p in (1, 2)]
    errors += [pop.ks_error(d, reading=r, exact=True) for r in pop.KS_READINGS]
    errors += [pop.binned_ece(d, m, exact=True) for m in (1, 5, 15)]
    if any(e != zero for e in errors) or pop.mmce(d) > 1e-15:
        return math.nan
    return math.sqrt(pop.ce_p(d, 2, exact=True, powered=True)) - (1 - 1 / k)


register(Claim(
    id="003.prop3.2",
    source="Gruber & Buettner (2022), Prop 3.2",
    statement=("There are distributions where CWCE_p, TCE_p, KS, ECE and MMCE are all zero yet"
               " CE_2(f) >= 1 - 1/n: a mixed-integer search over a rational grid finds one, and"
               " exact arithmetic confirms it (measured: CE_2 - (1 - 1/n))."),
    check=_prop32, reference=0.0, comparison="ge", tolerance=0.0,
    tolerance_reason="every error is an exact Fraction; CE_2 is the root of one",
    chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- Thm 4.3

_LOSSES = ("brier", "log", "spherical")


def _upper_bound_slack(d) -> float:
    """min over losses of U_S - CE_S; inf_P g_S(P) = 0 for all three losses (at the vertices)."""
    slack = [_brier_exact(d) - pop.calibration_error_proper(d, "brier", exact=True)]
    slack += [pop.expected_score(d, s) - pop.calibration_error_proper(d, s) for s in _LOSSES[1:]]
    return float(min(slack))


register(Claim(
    id="003.thm4.3.upper_bound",
    source="Gruber & Buettner (2022), Thm 4.3 (App. D.7, eq. (35))",
    statement=("U_S(f) = E[S(f(X), Y)] - inf_P g_S(P) >= CE_S(f) for the Brier (exactly), log"
               " and spherical scores (inf g_S = 0, attained at the vertices)."),
    check=lambda size: _min_slack(size, 331, _upper_bound_slack, positive=True),
    reference=0.0, comparison="ge", tolerance=1e-12, tolerance_reason=_FLOAT, chapter=CHAPTER,
))


def _confident_population(eps: float, k: int) -> pop.FiniteDistribution:
    """Accuracy 1 - eps: atom j predicts class j with 1 - eps, truth equal to the prediction
    on one half of the atoms and shifted towards the next class on the other half."""
    F, T = [], []
    for j in range(k):
        base = np.full(k, eps / (k - 1))
        base[j] = 1 - eps
        F += [base, base]
        shifted = base.copy()
        shifted[j], shifted[(j + 1) % k] = 1 - eps / 2, base[(j + 1) % k] + eps / 2
        shifted /= shifted.sum()
        T += [base, shifted]
    w = np.full(2 * k, 1 / (2 * k))
    return pop.FiniteDistribution(w, np.array(T), np.array(F))


def _accuracy_limit(size: str) -> float:
    """max over losses of (U_S - CE_S) / modulus(1 - ACC) on a population of accuracy ~ 1 - 1e-6."""
    k = 5
    d = _confident_population(1e-6, k)
    e = 1.0 - pop.accuracy(d)
    binary_entropy = -e * math.log(e) - (1 - e) * math.log1p(-e)
    modulus = {"brier": 2 * e, "log": binary_entropy + e * math.log(k - 1), "spherical": e}
    return max((pop.expected_score(d, s) - pop.calibration_error_proper(d, s)) / modulus[s]
               for s in _LOSSES)


register(Claim(
    id="003.thm4.3.accuracy_limit",
    source="Gruber & Buettner (2022), Thm 4.3 (App. D.7, eq. (36))",
    statement=("U_S(f) - CE_S(f) = E[g_S(P_{Y|f(X)})] -> 0 as ACC(f) -> 1: at accuracy about"
               " 1 - 1e-6 the gap is within the modulus of continuity of g_S at the vertices"
               " (measured: gap / modulus at e = 1 - ACC; Brier, log, spherical)."),
    check=_accuracy_limit, reference=1.0, comparison="le", tolerance=1e-9,
    tolerance_reason=("with e = 1 - max q: g_Brier(q) = 1 - ||q||^2 <= 2e, Fano's H(q) <= h(e) +"
                      " e log(k - 1), g_sph(q) = 1 - ||q|| <= e; all are concave and increasing"
                      " in e on [0, 1/2] and E[1 - max P_{Y|f}] <= 1 - ACC, so the ratio is <= 1;"
                      " rounding is below 1e-9 relative"),
    chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- Prop 4.5

def _mix_uniform(d, lam: Fraction) -> pop.FiniteDistribution:
    """h(p) = (1 - lam) p + lam / k: injective on the simplex, rational."""
    w, T, F = d.exact
    k = d.n_classes
    return pop.FiniteDistribution(w, T, (1 - lam) * F + lam / k)


def _bound_minus_ce_change(d, h) -> Fraction:
    """(U(h o f) - U(f)) - (CE(h o f) - CE(f)) for the Brier score, exactly."""
    du = _brier_exact(h) - _brier_exact(d)
    dce = (pop.calibration_error_proper(h, "brier", exact=True)
           - pop.calibration_error_proper(d, "brier", exact=True))
    return du - dce


def _prop45(size: str) -> float:
    """max |(U(h o f) - U(f)) - (CE(h o f) - CE(f))| for injective h (exact for Brier)."""
    return float(max(abs(_bound_minus_ce_change(d, _mix_uniform(d, Fraction(1, 3))))
                     for d in _family(size, 332)))


register(Claim(
    id="003.prop4.5",
    source="Gruber & Buettner (2022), Prop 4.5 (App. D.8)",
    statement=("For an injective recalibration h, U_S(h o f) - U_S(f) = CE_S(h o f) - CE_S(f):"
               " the upper bound measures the change of the calibration error exactly"
               " (h(p) = (2p + 1/k)/3, Brier, exact Fractions)."),
    check=_prop45, reference=0.0, tolerance=0.0, tolerance_reason=_EXACT, chapter=CHAPTER,
))


def _prop45_needs_injective(size: str) -> float:
    """Fraction of distributions where the identity fails for the non-injective t^f of Prop D.2."""
    gaps = [_bound_minus_ce_change(d, pop.accuracy_preserving_transform(d))
            for d in _family(size, 333)]
    return sum(g != 0 for g in gaps) / len(gaps)


register(Claim(
    id="003.prop4.5.injectivity",
    source="Gruber & Buettner (2022), Prop 4.5, step (i) of eq. (38)",
    statement=("Injectivity is needed: for the non-injective accuracy-preserving transform of"
               " Prop D.2 the identity fails (measured: the fraction of random distributions on"
               " which it fails)."),
    check=_prop45_needs_injective, reference=0.5, comparison="ge", tolerance=0.0,
    tolerance_reason=("a fraction of exact comparisons; merging predictions changes"
                      " E[g_S(P_{Y|f(X)})] unless the merged conditionals coincide, which random"
                      " truths make rare, so the identity fails on most (at least half)"),
    chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- Prop E.2, E.1

def _sharpness(d, exact=True):
    """SHARP_S(f) = g(P_Y) - E g(P_{Y|f(X)}) for Brier: E||P_{Y|f}||^2 - ||P_Y||^2 (eq. (44))."""
    w, _, _ = d.exact
    C = pop.conditional_expectation(d, exact=True)
    marg = d.label_marginal(exact=True)
    return sum((wi * sum(c * c for c in row) for wi, row in zip(w, C)), Fraction(0)) - sum(
        m * m for m in marg)


def _random_merge(d, rng) -> pop.FiniteDistribution:
    """m o f for a random map m merging the distinct predictions into fewer values."""
    w, T, F = d.exact
    rows = sorted({tuple(r) for r in F})
    targets = rng.integers(max(1, len(rows) // 2), size=len(rows))
    images = [rows[int(rng.integers(len(rows)))] for _ in range(targets.max() + 1)]
    image_of = {r: images[t] for r, t in zip(rows, targets)}
    return pop.FiniteDistribution(w, T, [list(image_of[tuple(r)]) for r in F])


def _prop_e2(size: str) -> float:
    rng = np.random.default_rng(334)
    worst = math.inf
    for d in _family(size, 335):
        worst = min(worst, _sharpness(d) - _sharpness(_random_merge(d, rng)))
    return float(worst)


register(Claim(
    id="003.propE.2",
    source="Gruber & Buettner (2022), Prop E.2 (eqs. (44)-(45))",
    statement=("SHARP_S(f) >= SHARP_S(m o f) for every map m of the predictions (Brier,"
               " random merging maps, exact): post-processing cannot add information."),
    check=_prop_e2, reference=0.0, comparison="ge", tolerance=0.0, tolerance_reason=_EXACT,
    chapter=CHAPTER,
))


def _top_label_recalibration(d) -> pop.FiniteDistribution:
    """App. E.1.2: t^f(p) = P(Y | r o f(X) = r(p)), r(p) the one-hot of the first argmax."""
    w, T, F = d.exact
    k = d.n_classes
    C = np.argmax(d.prediction, axis=1)
    onehot = [[Fraction(int(j == c)) for j in range(k)] for c in C]
    return pop.FiniteDistribution(w, T, pop.conditional_expectation(
        pop.FiniteDistribution(w, T, onehot), exact=True))


def _app_e1(size: str) -> float:
    """Violations: t^f o f not calibrated; accuracy changed although every predicted label is
    its group's most likely outcome; sharpness increased."""
    bad = 0
    for d in _family(size, 336):
        t = _top_label_recalibration(d)
        bad += pop.ce_p(t, 1, exact=True) != 0
        bad += _sharpness(t) > _sharpness(d)
        C = np.argmax(d.prediction, axis=1)
        cond = pop.conditional_expectation(
            pop.FiniteDistribution(*d.exact[:2], [[Fraction(int(j == c)) for j in
                                                   range(d.n_classes)] for c in C]), exact=True)
        keeps = all(max(row) == row[c] for row, c in zip(cond, C))
        if keeps:
            bad += pop.accuracy(t, exact=True) != pop.accuracy(d, exact=True)
    return float(bad)


register(Claim(
    id="003.appE.1",
    source="Gruber & Buettner (2022), App. E.1.2 (eqs. (42)-(43)) and Prop E.2",
    statement=("The top-label recalibration t^f(p) = P(Y | argmax f(X) = argmax p) makes f"
               " calibrated, keeps the accuracy when every predicted label is its group's most"
               " likely outcome, and does not increase sharpness (violations, exact)."),
    check=_app_e1, reference=0.0, tolerance=0.0, tolerance_reason=_COUNT, chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- Prop 3.3

def _random_bins(rng, m: int = 15):
    """A random population of bin statistics for the equal-width bins of the confidence."""
    p = rng.dirichlet(np.ones(m))
    lo = np.arange(m) / m
    conf = lo + rng.uniform(0.1, 0.9, size=m) / m
    vconf = rng.uniform(0, 1, size=m) * (1 / m) ** 2 / 12        # at most a uniform bin's
    acc = np.clip(conf + rng.normal(0, 0.08, size=m), 0.0, 1.0)
    return p, conf, vconf, acc


def _prop33_derivatives(size: str) -> dict:
    """Smallest normalised -dmu/dn, d2mu/dn2 and d2mu/(dn dmu_j^2) over random bin populations
    and n in [50, 10^5], by central finite differences of the closed form (22)."""
    from ..expectation import folded_normal_ece_bias as mu

    rng = np.random.default_rng(333)
    worst = {"slope": math.inf, "convex": math.inf, "cross": math.inf}
    for _ in range(20 if size == "smoke" else 200):
        p, conf, vconf, acc = _random_bins(rng)
        for n in np.geomspace(50, 1e5, 8):
            h = 1e-3 * n
            f0, fp, fm = mu(p, conf, vconf, acc, [n, n + h, n - h])
            worst["slope"] = min(worst["slope"], -(fp - fm) / (2 * h) * n / f0)
            worst["convex"] = min(worst["convex"], (fp - 2 * f0 + fm) / h ** 2 * n ** 2 / f0)
            j = int(rng.integers(len(p)))
            gap = conf[j] - acc[j]
            if abs(gap) < 1e-3:
                continue
            ni = n * p[j]
            sigma_j = math.sqrt((vconf[j] + acc[j] * (1 - acc[j])) / ni)
            if math.exp(-gap ** 2 / (2 * sigma_j ** 2)) < 1e-2:
                continue                             # bin j no longer moves the slope
            wider = conf.copy()                      # mu_j = conf_j - acc_j up by 10 %, sigma_j
            wider[j] = acc[j] + gap * 1.1            # fixed (it depends on V_conf and acc only)
            dp = mu(p, wider, vconf, acc, [n + h, n - h])
            slope_wider = (dp[0] - dp[1]) / (2 * h)
            slope = (fp - fm) / (2 * h)
            # the slope (negative) moves towards 0 as |mu_j| grows
            worst["cross"] = min(worst["cross"], (slope_wider - slope) / abs(slope))
    return worst


_FD = ("central finite differences of the closed form with step n/1000: truncation"
       " O(1e-6) relative, rounding below 1e-9 relative; a sign is what is checked")

for _key, _what in (("slope", "mu_(n) decreases in n: min over random bin populations of"
                              " -n (d mu/dn) / mu"),
                    ("convex", "mu_(n) is strictly convex in n: min of n^2 (d2 mu/dn2) / mu")):
    register(Claim(
        id=f"003.prop3.3.{'monotone' if _key == 'slope' else 'convex'}",
        source="Gruber & Buettner (2022), Prop 3.3 (App. D.5, eqs. (31)-(32))",
        statement=f"The folded-normal approximation {_what}.",
        check=lambda size, k=_key: _prop33_derivatives(size)[k],
        reference=0.0, comparison="ge", tolerance=0.0, tolerance_reason=_FD, chapter=CHAPTER,
    ))

register(Claim(
    id="003.prop3.3.cross",
    source="Gruber & Buettner (2022), Prop 3.3 (App. D.5, eqs. (33)-(34))",
    statement=("d2 mu_(n) / (dn dECE) > 0: the worse a bin's calibration, the less the expected"
               " estimate depends on n (measured: the change of d mu/dn when one bin's |mu_j|"
               " grows by 10 % with sigma_j fixed, relative to |d mu/dn|, minimised over random"
               " populations and the bins whose factor exp(-mu_j^2 / 2 sigma_j^2) is at least"
               " 0.01, i.e. that still move the slope)."),
    check=lambda size: _prop33_derivatives(size)["cross"],
    reference=0.0, comparison="ge", tolerance=0.0, tolerance_reason=_FD, chapter=CHAPTER,
))


def _prop33_approximation(size: str) -> float:
    """max over n of |simulated E[ECE_hat] - mu_(n)| / SE on the App. G.1 simulator."""
    from ..data import sample_categorical, simulate_logistic_normal
    from ..expectation import folded_normal_ece_bias
    from ..measures import binned_ece, confidence

    rng = np.random.default_rng(3303)
    k, n_pool, m = 10, 200000, 15
    pool = simulate_logistic_normal(n_pool, k, temperatures=(0.5,), rng=rng)
    P = pool.probs(0.5)                                  # over-confident, same argmax
    conf, C = P.max(axis=1), P.argmax(axis=1)
    hit = pool.true_prob[np.arange(n_pool), C]           # P(Y = C | X), exactly
    b = np.clip(np.ceil(conf * m).astype(int) - 1, 0, m - 1)
    count = np.bincount(b, minlength=m)
    p = count / n_pool
    safe = np.maximum(count, 1)
    cm = np.bincount(b, conf, m) / safe
    vc = np.bincount(b, conf ** 2, m) / safe - cm ** 2
    acc = np.bincount(b, hit, m) / safe
    reps = 60 if size == "smoke" else 400
    worst = 0.0
    for n in (2000, 10000):
        values = []
        for _ in range(reps):
            idx = rng.integers(n_pool, size=n)
            y = sample_categorical(pool.true_prob[idx], rng=rng)
            values.append(confidence(binned_ece, y, P[idx], n_bins=m))
        values = np.array(values)
        se = values.std(ddof=1) / math.sqrt(reps)
        predicted = folded_normal_ece_bias(p, cm, np.maximum(vc, 0.0), acc, n)
        worst = max(worst, abs(values.mean() - predicted) / max(se, 1e-12))
    return worst


register(Claim(
    id="003.prop3.3.approximation",
    source="Gruber & Buettner (2022), Prop 3.3 (App. D.5, eqs. (22)-(30))",
    statement=("E[ECE_hat_(n)] ~ mu_(n): on the App. G.1 simulator (10 classes, temperature 0.5,"
               " 15 equal-width bins) the mean binned ECE of test sets of 2,000 and 10,000 agrees"
               " with the folded-normal prediction (measured: the largest |difference| in"
               " standard errors of the simulated mean)."),
    check=_prop33_approximation, reference=0.0, tolerance=4.0,
    tolerance_reason=("4 standard errors of the Monte Carlo mean (two sizes, so a 4-SE"
                      " disagreement has probability below 1e-4 if the approximation were exact);"
                      " the neglected terms (random n_i, the dependence in step (i) of eq. (26))"
                      " are O(1/n) relative and below the SE at these sizes"),
    chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- App. F

def _laplacian_gram(F: np.ndarray, bandwidth: float = 1.0) -> np.ndarray:
    diff = F[:, None, :] - F[None, :, :]
    return np.exp(-np.sqrt((diff * diff).sum(axis=-1)) / bandwidth)


def _u_score_expectation(d, P: np.ndarray) -> float:
    """E S(P(X1), P(X2), Y1, Y2) for X1, X2 iid atoms and Y_i ~ truth(X_i), by enumerating the
    labels: sum_{a,b} w_a w_b sum_{y,y'} q_a(y) q_b(y') kappa(P_a, P_b) (P_a - e_y).(P_b - e_y')."""
    w, Q = d.weights, d.truth
    k = Q.shape[1]
    K = _laplacian_gram(P)
    E = np.eye(k)
    total = 0.0
    for y1 in range(k):
        for y2 in range(k):
            A = w * Q[:, y1]
            B = w * Q[:, y2]
            total += float(A @ (K * ((P - E[y1]) @ (P - E[y2]).T)) @ B)
    return total


def _app_f(size: str) -> dict:
    out = {"calibration_term": 0.0, "proper": math.inf, "not_strict": 0.0, "sharpness": 0.0}
    count = 0
    for d in _family(size, 340):
        skce = pop.skce(d)                                   # population SKCE of f
        s = _u_score_expectation(d, d.prediction)            # E S(f, f, Y, Y'), g_S = 0
        out["calibration_term"] = max(out["calibration_term"], abs(s - skce))
        out["proper"] = min(out["proper"], s)
        r = d.recalibrated()                                 # calibrated, != truth in general
        if not np.allclose(r.prediction, d.truth):
            count += 1
            out["not_strict"] += _u_score_expectation(r, r.prediction) <= 1e-15
        marg = np.tile(d.label_marginal(), (d.n_atoms, 1))   # sharpness term: P = P_Y
        out["sharpness"] = max(out["sharpness"], abs(_u_score_expectation(
            pop.FiniteDistribution(d.weights, pop.conditional_expectation(d), marg), marg)))
    out["not_strict"] = count - out["not_strict"]            # failures to be 0
    return out


register(Claim(
    id="003.appF.calibration_term",
    source="Gruber & Buettner (2022), App. F, eqs. (52)-(55)",
    statement=("The U-score S(P1, P2, y1, y2) = (P1 - e_y1)^T k(P1, P2) (P2 - e_y2) has entropy"
               " g_S = 0 and its expected score E S(f(X1), f(X2), Y1, Y2) is the SKCE of f"
               " (Laplacian kernel; labels enumerated, measured: the largest difference)."),
    check=lambda size: _app_f(size)["calibration_term"], reference=0.0, tolerance=1e-12,
    tolerance_reason=_FLOAT, chapter=CHAPTER,
))
register(Claim(
    id="003.appF.proper",
    source="Gruber & Buettner (2022), App. F, Def F.3 and eq. (55)",
    statement=("The SKCE U-score is proper: its expected U-divergence is >= 0 = g_S (measured:"
               " the smallest expected score over random distributions)."),
    check=lambda size: _app_f(size)["proper"], reference=0.0, comparison="ge", tolerance=1e-15,
    tolerance_reason=("a quadratic form of a positive definite Gram matrix: >= 0 up to float64"
                      " rounding of terms of size <= 4 (1e-15)"),
    chapter=CHAPTER,
))
register(Claim(
    id="003.appF.not_strictly_proper",
    source="Gruber & Buettner (2022), App. F (after eq. (55))",
    statement=("... but not strictly proper: the recalibrated predictor E[Y | f(X)] differs from"
               " P(Y | X) yet has expected U-divergence 0 (measured: distributions where it does"
               " not)."),
    check=lambda size: _app_f(size)["not_strict"], reference=0.0, tolerance=0.0,
    tolerance_reason=_COUNT + "; zero means below 1e-15 (rounding)", chapter=CHAPTER,
))
register(Claim(
    id="003.appF.no_sharpness",
    source="Gruber & Buettner (2022), App. F (after eq. (55))",
    statement=("E d_S(P_Y, P_Y, P_{Y|f(X)}, P_{Y|f(X')}) = 0: the SKCE's score measures"
               " calibration only and ignores sharpness (measured: the largest value)."),
    check=lambda size: _app_f(size)["sharpness"], reference=0.0, tolerance=1e-15,
    tolerance_reason="float64 rounding of a quadratic form that is exactly 0", chapter=CHAPTER,
))


def _u_statistic_unbiased(size: str) -> float:
    """max over estimators of |mean of skce_unbiased over draws - population SKCE| / SE."""
    from ..data import sample_categorical
    from ..skce import skce_unbiased

    rng = np.random.default_rng(341)
    d = pop.random_finite_distribution(rng, n_atoms=8, n_classes=3)
    target = pop.skce(d)
    reps = 200 if size == "smoke" else 2000
    n = 40
    worst = 0.0
    for estimator in ("quadratic", "linear"):
        vals = []
        for _ in range(reps):
            idx = rng.choice(d.n_atoms, size=n, p=d.weights)
            y = sample_categorical(d.truth[idx], rng=rng)
            vals.append(skce_unbiased(y, d.prediction[idx], estimator=estimator))
        vals = np.array(vals)
        worst = max(worst, abs(vals.mean() - target) / (vals.std(ddof=1) / math.sqrt(reps)))
    return worst


register(Claim(
    id="003.appF.u_statistic",
    source="Gruber & Buettner (2022), App. F.1-F.2; Widmann et al. (2019)",
    statement=("The U-statistic of the SKCE U-score (all pairs, and the linear block version) is"
               " an unbiased estimator of the SKCE: on a random finite distribution the mean over"
               " test sets of 40 samples matches the exact population value (measured: the"
               " largest |difference| in standard errors)."),
    check=_u_statistic_unbiased, reference=0.0, tolerance=4.0,
    tolerance_reason=("4 standard errors of a Monte Carlo mean (two estimators: a false alarm"
                      " has probability below 1.3e-4); no approximation is involved"),
    chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- App. G.1

def _g1_accuracy(size: str) -> float:
    """Mean over 8 seeds of the expected accuracy E[max_j p_j] at k = 100, scale 0.01."""
    from ..data import simulate_logistic_normal

    n = 5000 if size == "smoke" else 20000
    return float(np.mean([simulate_logistic_normal(n, 100, rng=s).expected_accuracy
                          for s in range(8)]))


register(Claim(
    id="003.appG.1.accuracy",
    source="Gruber & Buettner (2022), App. G.1",
    statement=("The logistic-normal simulator with 100 classes and inverse-Wishart scale"
               " I_100 / 0.01 gives predictions of about 87.6 % accuracy (measured: the mean"
               " expected accuracy over 8 seeds)."),
    check=_g1_accuracy, reference=0.876, tolerance=0.016,
    tolerance_reason=("the paper reports one draw; the accuracy varies with the random"
                      " covariance matrices with a seed-to-seed SD of 0.0079 (8 seeds, n ="
                      " 20,000), so one draw lies within 2 SD = 0.016 of the mean in about 95 %"
                      " of cases (the sampling error of the mean itself is 0.003)"),
    chapter=CHAPTER,
))


def _g1_calibrated(size: str) -> float:
    """|mean SKCE U-statistic| / SE for the untempered simulator (labels drawn from p)."""
    from ..data import simulate_logistic_normal
    from ..skce import skce_unbiased

    rng = np.random.default_rng(342)
    reps = 30 if size == "smoke" else 200
    vals = [skce_unbiased(sim.labels, sim.true_prob) for sim in
            (simulate_logistic_normal(400, 10, rng=rng) for _ in range(reps))]
    return abs(float(np.mean(vals))) / (float(np.std(vals, ddof=1)) / math.sqrt(reps))


register(Claim(
    id="003.appG.1.calibrated",
    source="Gruber & Buettner (2022), App. G.1",
    statement=("Labels drawn from the simulated predictions make them calibrated: the unbiased"
               " SKCE estimate averages to 0 (measured: |mean| in standard errors over test sets"
               " of 400, 10 classes)."),
    check=_g1_calibrated, reference=0.0, tolerance=4.0,
    tolerance_reason="4 standard errors of a Monte Carlo mean of an unbiased estimator of 0",
    chapter=CHAPTER,
))


# ----------------------------------------------------------------------------- App. G.4

def improvement_study(ns, reps: int, rng, k: int = 10, n_pool: int = 200000):
    """Estimates of the CE_2^2 improvement of an injective recalibration, against the truth.

    The model is the App. G.1 simulator tempered to ``softmax(z / 0.5)`` (over-confident); the
    recalibration is the fixed injective map ``h(p) = softmax((2/3) log p)``, i.e.
    ``softmax(z / 0.75)``.  Because both are injective functions of the truth's logits,
    ``P(Y | f(X)) = P(Y | h(f(X))) = softmax(z)`` and the true improvement is
    ``E||f - p||^2 - E||h(f) - p||^2`` over the pool (no label noise).  Returns the truth and,
    per test-set size, the estimates of each replicate: the Brier-score difference (the squared
    upper bound, 003 Prop 4.5) and the difference of squared 15-bin L2 ECEs.
    """
    from ..data import sample_categorical, simulate_logistic_normal
    from ..measures import binned_ece, confidence
    pool = simulate_logistic_normal(n_pool, k, temperatures=(0.5, 0.75), rng=rng)
    truth = pool.true_prob
    F, H = pool.probs(0.5), pool.probs(0.75)      # h(f) = softmax((2/3) log f) = softmax(z/0.75)
    target = float(np.mean(((F - truth) ** 2).sum(axis=1) - ((H - truth) ** 2).sum(axis=1)))
    out = {}
    for n in ns:
        brier, ece = [], []
        for _ in range(reps):
            idx = rng.integers(n_pool, size=n)
            y = sample_categorical(truth[idx], rng=rng)
            E = np.eye(k)[y]
            brier.append(float(np.mean(((F[idx] - E) ** 2).sum(axis=1)
                                       - ((H[idx] - E) ** 2).sum(axis=1))))
            ece.append(confidence(binned_ece, y, F[idx], n_bins=15, p=2) ** 2
                       - confidence(binned_ece, y, H[idx], n_bins=15, p=2) ** 2)
        out[n] = {"brier": np.array(brier), "binned L2 ECE^2": np.array(ece)}
    return target, out


def _g4(size: str) -> dict:
    reps = 100 if size == "smoke" else 500
    target, out = improvement_study((200, 2000), reps, np.random.default_rng(344))
    z = {}
    for name in ("brier", "binned L2 ECE^2"):
        z[name] = max(abs(v[name].mean() - target) / (v[name].std(ddof=1) / math.sqrt(reps))
                      for v in out.values())
    z["binned_min"] = min(abs(v["binned L2 ECE^2"].mean() - target)
                          / (v["binned L2 ECE^2"].std(ddof=1) / math.sqrt(reps))
                          for v in out.values())
    return z


register(Claim(
    id="003.appG.4.brier_unbiased",
    source="Gruber & Buettner (2022), App. G.4 and Prop 4.5",
    statement=("For an injective recalibration the Brier-score difference is an unbiased"
               " estimator of the CE_2^2 improvement at every test-set size (App. G.1 simulator,"
               " known truth; measured: the largest |mean - truth| in standard errors, n = 200"
               " and 2,000)."),
    check=lambda size: _g4(size)["brier"], reference=0.0, tolerance=4.0,
    tolerance_reason="4 standard errors of a Monte Carlo mean (two sizes)", chapter=CHAPTER,
))
register(Claim(
    id="003.appG.4.binned_biased",
    source="Gruber & Buettner (2022), App. G.4 (Fig. 7, second row)",
    statement=("The difference of squared binned ECEs is not: it misses the CE_2^2 improvement by"
               " many standard errors at both sizes (measured: the smallest |mean - truth| in"
               " standard errors)."),
    check=lambda size: _g4(size)["binned_min"], reference=5.0, comparison="ge", tolerance=0.0,
    tolerance_reason=("a bias of 5 standard errors has probability below 1e-6 under"
                      " unbiasedness; the binned estimator targets the top-label binned error"
                      " and carries the binning bias of Prop 3.3"),
    chapter=CHAPTER,
))
