"""Claims of Part II, chapter *Dominance* (paper 000: Thm B.3, Lemmas C.2 and C.1, Thm 4.1).

The populations here are finite: atoms with probabilities, a true conditional distribution of
the label on each atom, and predictors defined atom by atom.  Calibrated predictors with
truth != prediction on the atoms come from :func:`calnotes.decisions.garbling_population`:
the Bayes predictor of the atoms is ``f``, and its garbling ``g`` (merge or random Markov
kernel) is calibrated without being the truth atom by atom.
"""

from __future__ import annotations

import numpy as np

from .. import scores
from ..decisions import (DEFAULT_LOSSES, DecisionProblem, calibrated_expected_qece, dominates,
                         garble, garbling_population, iid_expectation,
                         random_decision_problem, simplex_grid)
from ..expectation import expected_qece
from ..measures import classwise, l2_qece
from ._registry import Claim, register

CHAPTER = "book/truthfulness/dominance"
SOURCE = "Making and Evaluating Calibrated Forecasts"

_ROUNDING = ("exact arithmetic up to float64 rounding: each expected loss is a sum of at most"
             " five products of numbers in [0, 1], error below 1e-15; 1e-12 leaves a wide margin")
_ENUMERATION = ("exact expectation by enumerating every draw (at most a few thousand terms of"
                " size <= 1, each exact up to float64 rounding): relative error below 1e-12")


# --------------------------------------------------------------------------- Thm B.3

def _induced_is_proper(size: str) -> float:
    """min over random decision problems and beliefs p, q of E_p l(q) - E_p l(p)."""
    rng = np.random.default_rng(30)
    problems, pairs = (100, 200) if size == "smoke" else (2000, 1000)
    worst = np.inf
    for r in range(problems):
        k = int(rng.integers(2, 6))
        if r % 4 == 3:
            # integer losses and beliefs on a grid of quarters: exact ties between actions
            dp = DecisionProblem(rng.integers(0, 4, size=(int(rng.integers(2, 6)), k)))
            grid = simplex_grid(k, 4)
            P, Q = grid[rng.integers(len(grid), size=pairs)], grid[rng.integers(len(grid), size=pairs)]
        else:
            dp = random_decision_problem(int(rng.integers(1, 9)), k, rng)
            P = rng.dirichlet(np.full(k, 0.5), size=pairs)
            Q = rng.dirichlet(np.full(k, 0.5), size=pairs)
        gap = scores.divergence(P, Q, dp.proper_loss())  # E_p l(q) - E_p l(p)
        worst = min(worst, float(gap.min()))
    return worst


register(Claim(
    id="000.thmB.3.induced_is_proper",
    source=f"{SOURCE}, Thm B.3 (first part)",
    statement=("For every finite decision problem the induced loss l_L(q, y) = L(BR_L(q), y) is"
               " proper: E_p l_L(q) >= E_p l_L(p) for all beliefs p, q (random loss matrices,"
               " random beliefs, and integer losses with grid beliefs that create exact ties)."),
    check=_induced_is_proper,
    reference=0.0, tolerance=1e-12, tolerance_reason=_ROUNDING, comparison="ge",
    chapter=CHAPTER,
))


def _grid_cases(size):
    if size == "smoke":
        return [(2, 40), (3, 15), (4, 8)]
    return [(2, 200), (3, 40), (4, 16), (5, 10)]


def _proper_is_induced(size: str) -> float:
    """max |l_L(q, y) - l(q, y)| over grid points q, outcomes y, losses and grids."""
    worst = 0.0
    for name in ("log", "brier", "spherical"):
        loss = scores.get_loss(name)
        for k, N in _grid_cases(size):
            grid = simplex_grid(k, N, interior=(name == "log"))
            dp = DecisionProblem.from_proper_loss(loss, grid)
            if np.any(dp.best_response(grid) != np.arange(len(grid))):
                return float("inf")
            worst = max(worst, float(np.abs(dp.loss_matrix(grid) - loss.matrix(grid)).max()))
    return worst


register(Claim(
    id="000.thmB.3.proper_is_induced",
    source=f"{SOURCE}, Thm B.3 (second part)",
    statement=("Conversely, a proper loss l is the induced loss of the decision problem whose"
               " actions are distributions and whose losses are l itself. With the actions a grid"
               " of the simplex (step 1/N; interior points for the log loss), the best response to"
               " every grid point is that point and the induced loss equals l there exactly, for"
               " the log, Brier and spherical losses."),
    check=_proper_is_induced,
    reference=0.0, tolerance=0.0,
    tolerance_reason=("identical floats: the best response to a grid point is the point itself"
                      " (strict properness; every other action's risk is larger by a divergence of"
                      " order 1/N^2 >= 1e-4, far above rounding), so l_L(q, .) is the same row of"
                      " the same matrix"),
    chapter=CHAPTER,
))


def covering_radius_sq(n_classes: int) -> float:
    """Squared covering radius of the simplex grid of step 1 (the lattice A_{k-1}), in units of
    1/N^2: floor(k/2) ceil(k/2) / k (Conway and Sloane, ch. 4)."""
    a = n_classes // 2
    return a * (n_classes - a) / n_classes


def deep_holes(n_classes: int, resolution: int, count: int, rng) -> np.ndarray:
    """Points of the simplex farthest from the grid of step 1/N: (c + a/k) / N, a = floor(k/2)."""
    k, N = n_classes, resolution
    a = k // 2
    c = rng.multinomial(N - a, np.full(k, 1.0 / k), size=count)
    return (c + a / k) / N


def _grid_limit(size: str) -> float:
    """max over (k, N) of |N^2 max_q [E_q l_L(q) - H(q)] - R_k^2| for the Brier loss."""
    rng = np.random.default_rng(33)
    cases = ([(2, 5), (3, 5), (3, 10), (4, 6)] if size == "smoke"
             else [(k, N) for k in (2, 3, 4, 5) for N in (5, 10, 20)])
    n_random = 500 if size == "smoke" else 5000
    worst = 0.0
    for k, N in cases:
        dp = DecisionProblem.from_proper_loss("brier", simplex_grid(k, N))
        q = np.vstack([rng.dirichlet(np.ones(k), size=n_random), deep_holes(k, N, 50, rng)])
        gap = scores.expected_loss(q, q, dp.proper_loss()) - scores.entropy(q, "brier")
        worst = max(worst, abs(N ** 2 * float(gap.max()) - covering_radius_sq(k)))
    return worst


register(Claim(
    id="000.thmB.3.grid_limit",
    source=f"{SOURCE}, Thm B.3 (second part), with a finite action set",
    statement=("With A the grid of step 1/N, the induced loss of the Brier loss exceeds the Brier"
               " loss in expectation, E_q l_L(q) - E_q l(q), by the squared distance from q to the"
               " grid: at most floor(k/2) ceil(k/2) / (k N^2), attained at the deep holes -- the"
               " finite problem reproduces l up to O(1/N^2)."),
    check=_grid_limit,
    reference=0.0, tolerance=1e-9,
    tolerance_reason=("float64 rounding of gaps of order 1e-2 computed as differences of"
                      " numbers of order 1 (error ~1e-16), multiplied by N^2 <= 400"),
    chapter=CHAPTER,
))


# --------------------------------------------------------------------------- Lemmas C.2, C.1

def calibrated_population(rng, n_atoms: int, n_classes: int, n_signals: int, *,
                          merge: bool, binary: bool = False, grid: int | None = None):
    """A finite population and a calibrated predictor that is not the truth atom by atom.

    Atoms with random truths (Dirichlet, optionally rounded to a grid so that values tie); the
    predictor reports P(Y | signal) for a signal drawn from a merge (``merge=True``) or a random
    Markov kernel.  Returns ``(weights, truth, prediction)`` on the joint atoms.
    """
    if binary:
        truth = rng.uniform(size=n_atoms)
        if grid:
            truth = np.round(truth * grid) / grid
    else:
        truth = rng.dirichlet(np.ones(n_classes), size=n_atoms)
    mass = rng.dirichlet(np.ones(n_atoms))
    if merge:
        groups = rng.integers(n_signals, size=n_atoms)
        groups[:n_signals] = np.arange(n_signals)
        kernel = np.eye(n_signals)[groups]
    else:
        kernel = rng.dirichlet(np.full(n_signals, 0.7), size=n_atoms)
    return garbling_population(truth, mass, kernel)


def _binary_mse(weights, truth, pred) -> float:
    """E_D[(f(x) - y)^2] with y ~ Ber(truth) on each atom."""
    return float(weights @ (truth * (1 - pred) ** 2 + (1 - truth) * pred ** 2))


def _raw_binary_expectation(weights, truth, pred, n, m) -> float:
    """E[l2-QECE_m] by enumerating atoms AND outcomes, with calnotes.l2_qece (no closed form)."""
    ys = np.array(np.meshgrid(*[[0, 1]] * n, indexing="ij")).reshape(n, -1).T

    def stat(idx):
        t = truth[idx]
        probs = np.prod(np.where(ys == 1, t, 1 - t), axis=1)
        return sum(pr * l2_qece(y, pred[idx], m) for pr, y in zip(probs, ys) if pr > 0)

    return iid_expectation(weights, n, stat, ordered=True)


def _lemma_c2_exact(size: str) -> float:
    """max relative error of the enumerated E[l2-QECE_m] against (1/n) E[(f - y)^2]."""
    rng = np.random.default_rng(2)
    cases = ([(4, 3, True), (5, 2, False), (5, 3, True)] if size == "smoke"
             else [(n, m, merge) for n in (4, 5, 6) for m in range(1, n + 1)
                   for merge in (True, False)])
    worst = 0.0
    for n, m, merge in cases:
        w, truth, pred = calibrated_population(rng, 3, 2, 2, merge=merge, binary=True, grid=10)
        reference = _binary_mse(w, truth, pred) / n
        exact = iid_expectation(w, n, lambda i: expected_qece(pred[i], truth[i], m), ordered=True)
        worst = max(worst, abs(exact - reference) / reference)
    # one case from scratch: enumerate the outcomes too and evaluate l2-QECE itself
    w, truth, pred = calibrated_population(rng, 3, 2, 2, merge=True, binary=True, grid=10)
    n, m = (3, 2) if size == "smoke" else (5, 3)
    raw = _raw_binary_expectation(w, truth, pred, n, m)
    return max(worst, abs(raw - _binary_mse(w, truth, pred) / n) / (_binary_mse(w, truth, pred) / n))


register(Claim(
    id="000.lemmaC.2",
    source=f"{SOURCE}, Lemma C.2",
    statement=("For a calibrated binary predictor f and n i.i.d. samples, E[l2-QECE_m] ="
               " (1/n) E[(f(x) - y)^2] for every m (m not dividing n included), also when f is"
               " not the truth atom by atom and tied predictions straddle a bin boundary."),
    check=_lemma_c2_exact,
    reference=0.0, tolerance=1e-12, tolerance_reason=_ENUMERATION,
    chapter=CHAPTER,
))


def _draw_labels(rng, truth_rows: np.ndarray) -> np.ndarray:
    """One categorical label per row of ``truth_rows`` (shape (..., k))."""
    u = rng.uniform(size=truth_rows.shape[:-1] + (1,))
    y = (u > np.cumsum(truth_rows, axis=-1)).sum(axis=-1)
    return np.minimum(y, truth_rows.shape[-1] - 1)


def _max_z(values_by_case, references) -> float:
    worst = 0.0
    for values, ref in zip(values_by_case, references):
        se = values.std(ddof=1) / np.sqrt(values.size)
        worst = max(worst, abs(values.mean() - ref) / se)
    return worst


def _lemma_c2_simulation(size: str) -> float:
    """max |z| of simulated E[l2-QECE_m] (x and y drawn afresh) against (1/n) E[(f - y)^2]."""
    rng = np.random.default_rng(22)
    reps = 2000 if size == "smoke" else 20000
    cases = [(50, 7), (200, 9)] if size == "smoke" else [(50, 7), (200, 9), (500, 10), (1000, 30)]
    w, truth, pred = calibrated_population(rng, 8, 2, 3, merge=False, binary=True)
    values, refs = [], []
    for n, m in cases:
        idx = rng.choice(w.size, size=(reps, n), p=w)
        y = (rng.uniform(size=(reps, n)) < truth[idx]).astype(np.int64)
        values.append(np.array([l2_qece(y[r], pred[idx[r]], m) for r in range(reps)]))
        refs.append(_binary_mse(w, truth, pred) / n)
    return _max_z(values, refs)


register(Claim(
    id="000.lemmaC.2.simulation",
    source=f"{SOURCE}, Lemma C.2",
    statement=("Lemma C.2 at larger n: the Monte Carlo mean of l2-QECE_m over fresh i.i.d."
               " samples (x, y) agrees with (1/n) E[(f(x) - y)^2]."),
    check=_lemma_c2_simulation,
    reference=0.0, tolerance=4.0, comparison="le",
    tolerance_reason=("Monte Carlo: the largest |mean - reference| over the cases, in standard"
                      " errors (sample standard deviation / sqrt(replications)), must be <= 4"),
    chapter=CHAPTER,
))


def _brier_over_kn(weights, truth, pred, n) -> float:
    k = pred.shape[1]
    return float(weights @ scores.expected_loss(truth, pred, "brier")) / (k * n)


def _lemma_c1_exact(size: str) -> float:
    """max relative error of the enumerated E[l2-QECE_m^classwise] against E[Brier] / (k n)."""
    rng = np.random.default_rng(1)
    cases = ([(3, 4, 3, False), (3, 3, 2, True), (4, 4, 3, True)] if size == "smoke"
             else [(k, n, m, merge) for k in (3, 4) for n in (3, 4, 5) for m in range(1, n + 1)
                   for merge in (True, False)])
    worst = 0.0
    for k, n, m, merge in cases:
        w, truth, pred = calibrated_population(rng, 3, k, 2, merge=merge)
        reference = _brier_over_kn(w, truth, pred, n)
        exact = iid_expectation(
            w, n, lambda i: expected_qece(pred[i], truth[i], m, aggregation="classwise"),
            ordered=True)
        worst = max(worst, abs(exact - reference) / reference)
    return worst


register(Claim(
    id="000.lemmaC.1",
    source=f"{SOURCE}, Lemma C.1",
    statement=("For a calibrated k-class predictor f and n i.i.d. samples,"
               " E[l2-QECE_m^classwise] = E[l_Brier(f(x), y)] / (k n) for every m, with the"
               " multi-class Brier loss ||f(x) - e_y||^2."),
    check=_lemma_c1_exact,
    reference=0.0, tolerance=1e-12, tolerance_reason=_ENUMERATION,
    chapter=CHAPTER,
))


def _lemma_c1_simulation(size: str) -> float:
    """max |z| of simulated E[l2-QECE_m^classwise] against E[Brier] / (k n)."""
    rng = np.random.default_rng(11)
    reps = 1500 if size == "smoke" else 20000
    cases = [(3, 60, 7)] if size == "smoke" else [(3, 60, 7), (4, 200, 9), (10, 500, 15)]
    values, refs = [], []
    for k, n, m in cases:
        w, truth, pred = calibrated_population(rng, 8, k, 4, merge=False)
        idx = rng.choice(w.size, size=(reps, n), p=w)
        y = _draw_labels(rng, truth[idx])
        values.append(np.array([classwise(l2_qece, y[r], pred[idx[r]], n_bins=m)
                                for r in range(reps)]))
        refs.append(_brier_over_kn(w, truth, pred, n))
    return _max_z(values, refs)


register(Claim(
    id="000.lemmaC.1.simulation",
    source=f"{SOURCE}, Lemma C.1",
    statement=("Lemma C.1 at larger n and k: the Monte Carlo mean of l2-QECE_m^classwise over"
               " fresh i.i.d. samples agrees with E[l_Brier] / (k n)."),
    check=_lemma_c1_simulation,
    reference=0.0, tolerance=4.0, comparison="le",
    tolerance_reason=("Monte Carlo: the largest |mean - reference| over the cases, in standard"
                      " errors, must be <= 4"),
    chapter=CHAPTER,
))


# --------------------------------------------------------------------------- Blackwell, Thm 4.1

def blackwell_pairs(rng, count: int, n_classes: int, n_values: int = 4):
    """Calibrated predictors f (values, mass) with kernels defining garblings g of f.

    Alternates merges of values, random Markov kernels, a garbling of a garbling (via the
    product of two kernels), and the trivial (identity) kernel, for which f and g coincide.
    """
    out = []
    for r in range(count):
        values = rng.dirichlet(np.ones(n_classes), size=n_values)
        mass = rng.dirichlet(np.ones(n_values))
        kind = r % 4
        if kind == 0:
            groups = rng.integers(2, size=n_values)
            groups[:2] = [0, 1]
            kernel = np.eye(2)[groups]
        elif kind == 1:
            kernel = rng.dirichlet(np.full(3, 0.5), size=n_values)
        elif kind == 2:
            kernel = (rng.dirichlet(np.ones(3), size=n_values)
                      @ rng.dirichlet(np.ones(2), size=3))
        else:
            kernel = np.eye(n_values)
        out.append((values, mass, kernel))
    return out


def _blackwell(size: str) -> float:
    """max over garbling pairs and losses of E l(f) - E l(g) (f the finer predictor)."""
    rng = np.random.default_rng(41)
    count, n_problems = (12, 10) if size == "smoke" else (200, 50)
    worst = -np.inf
    for k in (2, 3, 5):
        for values, mass, kernel in blackwell_pairs(rng, count, k):
            w, f, g = garbling_population(values, mass, kernel)
            problems = [random_decision_problem(int(rng.integers(2, 6)), k, rng)
                        for _ in range(n_problems)]
            result = dominates(f, g, truth=f, losses=[*DEFAULT_LOSSES, *problems],
                               sample_weight=w)
            worst = max(worst, result.margin)
    return worst


register(Claim(
    id="000.appB.blackwell",
    source=f"{SOURCE}, App. B (implication for dominance)",
    statement=("A garbling of a calibrated predictor (a merge of its values, or a random Markov"
               " kernel applied to them) is calibrated and dominated by it: no smaller expected"
               " log, Brier, spherical and 0-1 loss, nor loss in random finite decision problems."),
    check=_blackwell,
    reference=0.0, tolerance=1e-12, comparison="le", tolerance_reason=_ROUNDING,
    chapter=CHAPTER,
))


def _thm41(size: str) -> float:
    """max over garbling pairs, n and m of E[l2-QECE_m^cw](f) - E[l2-QECE_m^cw](g)."""
    rng = np.random.default_rng(410)
    count, ns = (4, (5,)) if size == "smoke" else (12, (5, 7))
    worst = -np.inf
    for k in (3, 4):
        for values, mass, kernel in blackwell_pairs(rng, count, k, n_values=3):
            vg, mg = garble(values, mass, kernel)
            for n in ns:
                for m in sorted({1, 2, 3, n}):
                    ef = calibrated_expected_qece(values, mass, n, m)
                    eg = calibrated_expected_qece(vg, mg, n, m)
                    worst = max(worst, ef - eg)
    return worst


register(Claim(
    id="000.thm4.1",
    source=f"{SOURCE}, Thm 4.1",
    statement=("If a calibrated predictor f1 dominates a calibrated f2 (here: f2 a garbling of"
               " f1), then E[l2-QECE_m^classwise](f1) <= E[l2-QECE_m^classwise](f2) for every n and"
               " m, m not dividing n included; exact expectations over all draws."),
    check=_thm41,
    reference=0.0, tolerance=1e-12, comparison="le", tolerance_reason=_ENUMERATION,
    chapter=CHAPTER,
))
