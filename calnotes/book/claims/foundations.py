"""Claims checked in Part I (chapters *The measures* and *Proper scores and Bregman divergences*)."""

from __future__ import annotations

import itertools
from functools import lru_cache, partial

import numpy as np

from ...core import scores
from ...core.measures import l2_qece
from ._registry import Claim, Control, cite, register

_EXACT = ("exact identity; the only error is float64 rounding over a few hundred terms"
          " of size <= 10, bounded by 1e-12")


def _random_discrete_population(rng, n_atoms, k, n_values):
    """Atoms with random truths; the predictor takes n_values distinct outputs (pooled atoms)."""
    weights = rng.dirichlet(np.ones(n_atoms))
    truth = rng.dirichlet(np.ones(k), size=n_atoms)
    outputs = rng.dirichlet(np.ones(k), size=n_values)
    predictions = outputs[rng.integers(n_values, size=n_atoms)]
    return weights, predictions, truth


def _populations(seed: int, reps: int, n_atoms: int, n_values: int):
    """Random pooled populations, then the extremes: a constant predictor (one value), a single
    atom, and k = 2 with every atom its own value (no pooling)."""
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        k = int(rng.integers(2, 6))
        yield _random_discrete_population(rng, n_atoms=n_atoms, k=k, n_values=n_values)
    yield _random_discrete_population(rng, n_atoms=n_atoms, k=3, n_values=1)
    yield _random_discrete_population(rng, n_atoms=1, k=4, n_values=1)
    w, _, t = _random_discrete_population(rng, n_atoms=5, k=2, n_values=1)
    yield w, rng.dirichlet(np.ones(2), size=5), t


def _decomposition_residual(size: str, atomwise: bool = False,
                            calibration_factor: float = 1.0) -> float:
    """Largest |score - (entropy - sharpness + calibration)| over random populations and losses.

    ``atomwise=True`` (the control): the calibration term E d(Q, f) against each atom's truth Q
    instead of the pooled C = P(Y | f) -- the grouping term dropped. ``calibration_factor``
    (the scaled control): the calibration term times this factor.
    """
    worst = 0.0
    for w, f, t in _populations(20221, 20 if size == "smoke" else 500, 12, 4):
        for loss in scores.PROPER_LOSSES:
            d = scores.score_decomposition(w, f, t, loss)
            cal = float(w @ scores.divergence(t, f, loss)) if atomwise else d["calibration"]
            cal = calibration_factor * cal
            worst = max(worst, abs(d["score"] - (d["entropy"] - d["sharpness"] + cal)))
    return worst


register(Claim(
    id="003.lemma4.1",
    source=cite("003", "Lemma 4.1"),
    statement=("For a proper score, expected score = generalized entropy of the label marginal"
               " - sharpness + calibration, exactly, for log, Brier, spherical and 0-1 losses."),
    quantity=("largest |expected score − (entropy − sharpness + calibration)| over the "
              "populations and the four losses"),
    check=_decomposition_residual,
    reference=0.0, tolerance=1e-12,
    tolerance_reason=(_EXACT + ". Region: k = 2..5, twelve atoms pooled into four predicted"
                      " values (ties), plus a constant predictor, a single atom, and an unpooled"
                      " binary predictor"),
    chapter="book/foundations/proper_scores",
    controls=(Control("grouping dropped", "The calibration term is E d(Q(X), f(X)) against each"
                      " atom's truth Q rather than the pooled C = P(Y | f(X)).",
                      partial(_decomposition_residual, atomwise=True), kind="reading"),
              Control("calibration term 1% off", "score = entropy - sharpness + 0.99"
                      " calibration (the calibration term's constant 1% smaller).",
                      partial(_decomposition_residual, calibration_factor=0.99),
                      kind="scaled", factor=0.99),),
))


def _symbolic_decomposition(size: str) -> float:
    """Number of losses (log, Brier) for which the symbolic residual does not simplify to 0."""
    from ...theory import symbolic  # sympy is imported only when a symbolic claim runs

    losses = ("brier", "log") if size == "smoke" else ("brier", "log", "spherical")
    return float(sum(symbolic.pooled_decomposition_residual(name)[0] != 0 for name in losses))


def _symbolic_atomwise(size: str) -> float:
    """The control: number of losses whose residual with the calibration term taken atom by atom
    (w1 d(q1, a) + w2 d(q2, a) + w3 d(q3, b), no pooling) is not identically 0 -- shown by its
    value at one rational point (a nonzero value proves a non-identity), 50 digits."""
    import sympy as sp

    from ...theory import symbolic

    losses = ("brier", "log") if size == "smoke" else ("brier", "log", "spherical")
    w1, w2, q1, q2, q3, a, b = sp.symbols("w1 w2 q1 q2 q3 a b", positive=True)
    point = {w1: sp.Rational(1, 4), w2: sp.Rational(1, 3), q1: sp.Rational(1, 5),
             q2: sp.Rational(3, 5), q3: sp.Rational(2, 3), a: sp.Rational(1, 2),
             b: sp.Rational(3, 4)}
    count = 0
    for name in losses:
        _, t = symbolic.pooled_decomposition_residual(name)
        cal = (w1 * symbolic._div(name, q1, a) + w2 * symbolic._div(name, q2, a)
               + (1 - w1 - w2) * symbolic._div(name, q3, b))
        value = (t["score"] - (t["entropy"] - t["sharpness"] + cal)).subs(point).evalf(50)
        count += bool(abs(value) > sp.Float("1e-30"))
    return float(count)


register(Claim(
    id="003.lemma4.1.symbolic",
    source=cite("003", "Lemma 4.1"),
    statement=("The decomposition holds as an algebraic identity (sympy) for a two-valued binary"
               " predictor whose first value pools two atoms with different truths."),
    quantity="number of losses whose symbolic residual does not simplify to 0",
    check=_symbolic_decomposition,
    reference=0.0, tolerance=0.0,
    tolerance_reason=("symbolic: the residual simplifies to 0 or not. Region: binary, the first"
                      " value pooling two atoms with different truths, all weights and truths"
                      " symbolic (log and Brier at smoke size, spherical too at full)"),
    chapter="book/foundations/proper_scores",
    controls=(Control("grouping dropped", "The identity also holds with the calibration term"
                      " taken atom by atom, against each atom's truth instead of the pooled c.",
                      _symbolic_atomwise, kind="reading"),),
))


def _bregman_decomposition_residual(size: str, swapped: bool = False) -> float:
    """Reassessing paper Lemma 4.1: E d(Z, X) = [E phi(Z) - E phi(E[Z|X])] + E d(E[Z|X], X).

    ``swapped=True`` (the control): the calibration term's arguments swapped, E d(X, E[Z|X]).
    """
    worst = 0.0
    for w, x, z in _populations(40041, 20 if size == "smoke" else 500, 10, 3):
        values, mass, cond, _ = scores.pool_by_prediction(w, x, z)
        for gen in (scores.SQUARED_NORM, scores.NEG_ENTROPY):
            lhs = w @ scores.bregman_divergence(z, x, gen)
            gap = w @ gen.phi(z) - mass @ gen.phi(cond)
            cal = mass @ (scores.bregman_divergence(values, cond, gen) if swapped
                          else scores.bregman_divergence(cond, values, gen))
            worst = max(worst, abs(lhs - (gap + cal)))
    return worst


register(Claim(
    id="004.lemma4.1",
    source=cite("004", "Lemma 4.1"),
    statement=("E[d(Z, X)] = sharpness gap E[phi(Z)] - E[phi(E[Z|X])] + calibration error"
               " E[d(E[Z|X], X)] for the squared-norm and negative-entropy generators."),
    quantity=("largest |E d(Z, X) − (sharpness gap + calibration error)| over the populations "
              "and both generators"),
    check=_bregman_decomposition_residual,
    reference=0.0, tolerance=1e-12,
    tolerance_reason=(_EXACT + ". Region: k = 2..5, ten atoms pooled into three values, plus a"
                      " constant predictor, a single atom and an unpooled binary predictor"),
    chapter="book/foundations/proper_scores",
    controls=(Control("arguments swapped", "The decomposition holds with the calibration term"
                      " E d(X, E[Z | X]) (arguments swapped; the same for the symmetric squared"
                      " norm, not for the negative entropy).",
                      partial(_bregman_decomposition_residual, swapped=True), kind="reading"),),
))


def _divergences_are_bregman(size: str, variant: str = "claim") -> float:
    """max |d_loss(q, p) - d_phi(q, p)|: Brier vs squared norm, log vs negative entropy.

    Controls: ``"swapped"`` (KL against d_phi(p, q)), ``"halved"`` (Brier against the Bregman
    divergence of ||x||^2 / 2).
    """
    rng = np.random.default_rng(7)
    n = 200 if size == "smoke" else 20000
    q = rng.dirichlet(np.ones(5), size=n)
    p = rng.dirichlet(np.ones(5), size=n)
    q[0] = np.eye(5)[0]  # a point mass as the first argument
    q[1, :2], q[1, 2:] = 0.5, 0.0  # and a point of a face
    p[2] = q[2]  # equal arguments: both divergences 0
    kl_args = (p, q) if variant == "swapped" else (q, p)
    half = 0.5 if variant == "halved" else 1.0
    brier = np.abs(scores.divergence(q, p, "brier")
                   - half * scores.bregman_divergence(q, p, scores.SQUARED_NORM))
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.abs(scores.divergence(q, p, "log")
                    - scores.bregman_divergence(*kl_args, scores.NEG_ENTROPY))
    if variant == "swapped":  # d_phi(p, q) is infinite where q has a zero: rows without one
        kl = kl[(q > 0).all(axis=1)]
    return float(max(brier.max(), kl.max()))


register(Claim(
    id="004.sec4.bregman_examples",
    source=cite("004", "Sec. 4, eq. (4.1)"),
    statement=("The Brier divergence is the Bregman divergence of phi(x) = ||x||^2 and the"
               " log-loss divergence (KL) that of phi(x) = sum x log x."),
    quantity=("largest |loss divergence − Bregman divergence of its generator| over the pairs "
              "(Brier and log)"),
    check=_divergences_are_bregman,
    reference=0.0, tolerance=1e-12,
    tolerance_reason=(_EXACT + ". Region: k = 5, Dirichlet(1) pairs, a point mass and a face point"
                      " as first argument, and equal arguments"),
    chapter="book/foundations/proper_scores",
    controls=(
        Control("KL arguments swapped", "The log-loss divergence d(q, p) is the Bregman"
                " divergence of sum x log x taken at (p, q).",
                partial(_divergences_are_bregman, variant="swapped"), kind="reading"),
        Control("generator halved", "The Brier divergence is the Bregman divergence of"
                " ||x||^2 / 2.", partial(_divergences_are_bregman, variant="halved"),
                kind="scaled", factor=0.5),
    ),
))


@lru_cache(maxsize=1)
def _lq_exponents():
    from ...theory import symbolic

    return symbolic.lq_bregman_exponents()


def _only_l2(size: str, differentiability: bool = True) -> float:
    """The unique integer q >= 1 for which the L^q ECE can be a Bregman divergence; minus the
    number of exponents found when there is not exactly one (never a valid exponent).
    ``differentiability=False`` (the control): the Hessian test alone."""
    candidates, bregman = _lq_exponents()
    found = bregman if differentiability else candidates
    if len(found) != 1:
        return -float(len(found))
    return float(next(iter(found)))


register(Claim(
    id="004.prop4.4",
    source=cite("004", "Prop 4.4"),
    statement="Among the L^q ECEs (integer q >= 1) only the L^2 ECE is induced by a Bregman divergence.",
    quantity="the one integer q ≥ 1 whose Lq ECE is a Bregman divergence",
    check=_only_l2,
    reference=2.0, tolerance=0.0,
    tolerance_reason=("symbolic: an integer solution set. Region: every integer q >= 1 (sympy"
                      " solves the cross-derivative equation for symbolic q)"),
    chapter="book/foundations/proper_scores",
    controls=(Control("no differentiability test", "The cross-derivative (Hessian) condition"
                      " alone singles out q = 2 (it also admits q = 1, whose |x - y| is not"
                      " differentiable at x = y).",
                      partial(_only_l2, differentiability=False), kind="hypothesis"),),
))


@lru_cache(maxsize=2)
def _thm26_cases(size: str) -> tuple:
    """Per (n, m): (formula, exact E l2-QECE_m(p*), formula and exact for a shrunk report)."""
    rng = np.random.default_rng(26)
    cases = ([(8, 3), (9, 2), (10, 4), (6, 1), (7, 7)] if size == "smoke"
             else [(n, m) for n in (8, 11, 13) for m in (1, 2, 3, 5, 7)] + [(2, 1), (2, 2), (5, 5)])
    out = []
    for n, m in cases:
        p_star = np.round(rng.uniform(size=n), 1)  # rounded to a grid: ties, some straddling bins
        p_star[0] = 1.0  # a point mass
        report = 0.1 + 0.8 * p_star  # not the truth (ties kept)
        formula = np.sum(p_star * (1 - p_star)) / n ** 2
        formula_bad = np.sum(report * (1 - report)) / n ** 2
        exact = exact_bad = 0.0
        for ys in itertools.product((0, 1), repeat=n):
            y = np.array(ys)
            prob = np.prod(np.where(y == 1, p_star, 1 - p_star))
            if prob > 0:
                exact += prob * l2_qece(y, p_star, m)
                exact_bad += prob * l2_qece(y, report, m)
        out.append((formula, exact, formula_bad, exact_bad))
    return tuple(out)


def _thm26_enumeration(size: str, truthful: bool = True, factor: float = 1.0) -> float:
    """max relative error of n^-2 sum p*(1-p*) against E[l2-QECE_m] by full enumeration of outcomes
    (``truthful=False``, the control: report p = 0.1 + 0.8 p*, formula n^-2 sum p (1 - p);
    ``factor``: the formula times this factor, the scaled control)."""
    worst = 0.0
    for formula, exact, formula_bad, exact_bad in _thm26_cases(size):
        f, e = (formula, exact) if truthful else (formula_bad, exact_bad)
        worst = max(worst, abs(e - factor * f) / f)
    return worst


register(Claim(
    id="000.thm2.6.enumeration",
    source=cite("000", "Thm 2.6", "credited there to Hartline et al. 2025"),
    statement=("When y_i ~ Ber(p*_i) independently, E[l2-QECE_m(p*; y)] = n^-2 sum_i p*_i (1 - p*_i)"
               " for every m, including m not dividing n and tied predictions."),
    quantity=("largest relative error of (1/n²)Σp*(1−p*) against E[ℓ2-QECE_m(p*)], all 2ⁿ "
              "outcomes enumerated"),
    check=_thm26_enumeration,
    reference=0.0, tolerance=1e-12,
    tolerance_reason=("exact expectation by enumerating all 2^n outcomes; float64 rounding only."
                      " Region: n = 6..10 (smoke) and 2..13 (full), m = 1 (one bin) up to m = n"
                      " (one sample per bin), m not dividing n, truths on a grid of tenths (ties"
                      " straddling bins) with a point mass p* = 1 in every case"),
    chapter="book/foundations/measures",
    controls=(Control("formula 1% off", "E[l2-QECE_m(p*)] = 0.99 n^-2 sum p*(1-p*) (the"
                      " formula's constant 1% smaller).", partial(_thm26_enumeration, factor=0.99),
                      kind="scaled", factor=0.99),
              Control("report not the truth", "The formula also gives E[l2-QECE_m] of a report"
                      " p = 0.1 + 0.8 p* other than the truth: n^-2 sum p (1 - p) (the hypothesis"
                      " p = p* dropped by a 20% shrink).",
                      partial(_thm26_enumeration, truthful=False), kind="hypothesis"),),
))
