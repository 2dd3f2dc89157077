"""Claims of Part II, chapter *Dominance* (paper 000: Thm B.3, Lemmas C.2 and C.1, Thm 4.1).

The populations here are finite: atoms with probabilities, a true conditional distribution of
the label on each atom, and predictors defined atom by atom.  Calibrated predictors with
truth != prediction on the atoms come from :func:`calnotes.theory.decisions.garbling_population`:
the Bayes predictor of the atoms is ``f``, and its garbling ``g`` (merge or random Markov
kernel) is calibrated without being the truth atom by atom.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from ...core import scores
from ...theory.decisions import (DEFAULT_LOSSES, DecisionProblem, calibrated_expected_qece, dominates,
                                 garble, garbling_population, iid_expectation,
                                 random_decision_problem, simplex_grid)
from ...core.expectation import expected_qece
from ...core.measures import classwise, l2_qece
from ._registry import Claim, Control, cite, register

CHAPTER = "book/truthfulness/dominance"

_ROUNDING = ("exact arithmetic up to float64 rounding: each expected loss is a sum of at most"
             " five products of numbers in [0, 1], error below 1e-15; 1e-12 leaves a wide margin")
_ENUMERATION = ("exact expectation by enumerating every draw (every multiset of atoms with its"
                " multinomial weight -- the measures average over the orders of ties, so the"
                " order of the samples does not matter -- at most a few thousand terms of"
                " size <= 1, each exact up to float64 rounding): relative error below 1e-12")


# --------------------------------------------------------------------------- Thm B.3

def _sharpen(Q: np.ndarray, power: float = 3.0) -> np.ndarray:
    """q -> q^power / sum q^power: a belief distortion (not the identity unless power = 1)."""
    raised = Q ** power
    return raised / raised.sum(axis=1, keepdims=True)


def _distorted_response(dp: DecisionProblem, power: float = 3.0) -> "scores.ProperLoss":
    """l(q, y) = L(BR_L(sharpen(q)), y): acting on a distorted belief (not a proper loss)."""
    return scores.ProperLoss(f"{dp.name}, distorted", lambda Q: dp.losses[
        dp.best_response(_sharpen(np.asarray(Q, dtype=float), power))], strict=False)


def _induced_is_proper(size: str, distorted: bool = False, power: float = 3.0) -> float:
    """min over random decision problems and beliefs p, q of E_p l(q) - E_p l(p).

    ``distorted=True`` (the controls): the action is the best response to a distorted belief
    q^power / sum q^power, not to q -- a loss built from the same decision problem that is not
    induced (``power=1.1``: the belief 10% sharpened, the hypothesis "best response" at its edge).
    """
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
        loss = _distorted_response(dp, power) if distorted else dp.proper_loss()
        gap = scores.divergence(P, Q, loss)  # E_p l(q) - E_p l(p)
        worst = min(worst, float(gap.min()))
    return worst


register(Claim(
    id="000.thmB.3.induced_is_proper",
    source=cite("000", "Thm B.3", "first part"),
    statement=("For every finite decision problem the induced loss l_L(q, y) = L(BR_L(q), y) is"
               " proper: E_p l_L(q) >= E_p l_L(p) for all beliefs p, q (random loss matrices,"
               " random beliefs, and integer losses with grid beliefs that create exact ties)."),
    quantity=("smallest E_p ℓ(q) − E_p ℓ(p) of an induced loss over the decision problems and "
              "beliefs p, q"),
    check=_induced_is_proper,
    reference=0.0, tolerance=1e-12, comparison="ge",
    tolerance_reason=(_ROUNDING + ". Region: k = 2..5 outcomes, 1..8 actions (a single action"
                      " included), Dirichlet(1/2) beliefs near the faces and, every fourth"
                      " problem, integer losses with beliefs on a grid of quarters (exact ties"
                      " between actions)"),
    chapter=CHAPTER,
    controls=(
        Control("best response to a belief 10% sharpened",
                "The loss L(BR_L(q^1.1 / sum q^1.1), y) of the same decision problems -- act on a"
                " belief sharpened by an exponent 10% above 1 instead of the best response to q"
                " -- is proper too.",
                partial(_induced_is_proper, distorted=True, power=1.1), kind="hypothesis"),
        Control("best response to a distorted belief",
                "The loss L(BR_L(q^3 / sum q^3), y) of the same decision problems -- act on a"
                " distorted belief instead of the best response to q -- is proper too.",
                partial(_induced_is_proper, distorted=True), kind="alternative"),),
))


def _grid_cases(size):
    if size == "smoke":
        return [(2, 40), (3, 15), (4, 8)]
    return [(2, 200), (3, 40), (4, 16), (5, 10)]


def _absolute_loss_matrix(P: np.ndarray) -> np.ndarray:
    """l(q, y) = ||q - e_y||_1 = 2 (1 - q_y): a well-known improper score (it rewards
    reporting the mode with certainty)."""
    return 2.0 * (1.0 - np.asarray(P, dtype=float))


_ABSOLUTE = scores.ProperLoss("absolute (improper)", _absolute_loss_matrix, strict=False)


def _brier_with_absolute_matrix(P: np.ndarray) -> np.ndarray:
    """0.9 Brier + 0.1 absolute loss: improper (it pulls the report towards the mode), but only
    just -- the hypothesis "l proper" dropped at its edge."""
    brier = scores.get_loss("brier").matrix(P)
    return 0.9 * brier + 0.1 * _absolute_loss_matrix(P)


_BRIER_WITH_ABSOLUTE = scores.ProperLoss("0.9 Brier + 0.1 absolute (improper)",
                                         _brier_with_absolute_matrix, strict=False)


def _proper_is_induced(size: str, losses=("log", "brier", "spherical")) -> float:
    """max |l_L(q, y) - l(q, y)| over grid points q, outcomes y, losses and grids (inf when a
    proper loss's best response to a grid point is another point)."""
    worst = 0.0
    for name in losses:
        loss = scores.get_loss(name)
        for k, N in _grid_cases(size):
            grid = simplex_grid(k, N, interior=(loss.name == "log"))
            dp = DecisionProblem.from_proper_loss(loss, grid)
            if loss.strict and np.any(dp.best_response(grid) != np.arange(len(grid))):
                return float("inf")
            worst = max(worst, float(np.abs(dp.loss_matrix(grid) - loss.matrix(grid)).max()))
    return worst


register(Claim(
    id="000.thmB.3.proper_is_induced",
    source=cite("000", "Thm B.3", "second part"),
    statement=("Conversely, a proper loss l is the induced loss of the decision problem whose"
               " actions are distributions and whose losses are l itself. With the actions a grid"
               " of the simplex (step 1/N; interior points for the log loss), the best response to"
               " every grid point is that point and the induced loss equals l there exactly, for"
               " the log, Brier and spherical losses."),
    quantity="largest |induced loss − proper loss| on the grid points, outcomes and losses",
    check=_proper_is_induced,
    reference=0.0, tolerance=0.0,
    tolerance_reason=("identical floats: the best response to a grid point is the point itself"
                      " (strict properness; every other action's risk is larger by a divergence of"
                      " order 1/N^2 >= 1e-4, far above rounding), so l_L(q, .) is the same row of"
                      " the same matrix. Region: k = 2..4 (smoke) or 2..5 (full), grids of step"
                      " 1/40 .. 1/8 (1/200 .. 1/10), vertices and faces included except for log"),
    chapter=CHAPTER,
    controls=(
        Control("10% of the absolute loss mixed in",
                "The same construction reproduces 0.9 Brier + 0.1 ||q - e_y||_1, a loss that is"
                " improper only by its 10% absolute part: its decision problem's induced loss"
                " equals it on the grid.",
                partial(_proper_is_induced, losses=(_BRIER_WITH_ABSOLUTE,)), kind="hypothesis"),
        Control("improper absolute loss",
                "The same construction reproduces the (improper) absolute loss ||q - e_y||_1: its"
                " decision problem's induced loss equals it on the grid.",
                partial(_proper_is_induced, losses=(_ABSOLUTE,)), kind="alternative"),),
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


@lru_cache(maxsize=2)
def _grid_excess(size: str) -> tuple:
    """(k, N^2 max_q [E_q l_L(q) - H(q)]) per case, Brier loss, grid of step 1/N."""
    rng = np.random.default_rng(33)
    cases = ([(2, 5), (3, 5), (3, 10), (4, 6)] if size == "smoke"
             else [(k, N) for k in (2, 3, 4, 5) for N in (5, 10, 20)])
    n_random = 500 if size == "smoke" else 5000
    out = []
    for k, N in cases:
        dp = DecisionProblem.from_proper_loss("brier", simplex_grid(k, N))
        q = np.vstack([rng.dirichlet(np.ones(k), size=n_random), deep_holes(k, N, 50, rng)])
        gap = scores.expected_loss(q, q, dp.proper_loss()) - scores.entropy(q, "brier")
        out.append((k, N ** 2 * float(gap.max())))
    return tuple(out)


def _grid_limit(size: str, radius=covering_radius_sq) -> float:
    """max over (k, N) of |N^2 max_q [E_q l_L(q) - H(q)] - radius(k)| for the Brier loss."""
    return max(abs(excess - radius(k)) for k, excess in _grid_excess(size))


register(Claim(
    id="000.thmB.3.grid_limit",
    source=cite("000", "Thm B.3", "second part, with a finite action set"),
    statement=("With A the grid of step 1/N, the induced loss of the Brier loss exceeds the Brier"
               " loss in expectation, E_q l_L(q) - E_q l(q), by the squared distance from q to the"
               " grid: at most floor(k/2) ceil(k/2) / (k N^2), attained at the deep holes -- the"
               " finite problem reproduces l up to O(1/N^2)."),
    quantity=("largest |N² × (largest excess of the induced Brier loss) − ⌊k/2⌋⌈k/2⌉/k| over the "
              "grids"),
    check=_grid_limit,
    reference=0.0, tolerance=1e-9,
    tolerance_reason=("float64 rounding of gaps of order 1e-2 computed as differences of"
                      " numbers of order 1 (error ~1e-16), multiplied by N^2 <= 400. Region: k ="
                      " 2, 3, 4 (smoke; 5 at full), odd and even k, N = 5..20; random beliefs plus"
                      " the deep holes, where the maximum is attained"),
    chapter=CHAPTER,
    controls=(
        Control("radius 1% smaller",
                "The largest excess is 0.99 floor(k/2) ceil(k/2) / (k N^2).",
                partial(_grid_limit, radius=lambda k: 0.99 * covering_radius_sq(k)),
                kind="scaled", factor=0.99),
        Control("k/4 for every k",
                "The largest excess is k / (4 N^2) for every k (the even-k value; false for odd"
                " k, where it is (k^2 - 1) / (4 k N^2): 9/8 of the truth at k = 3).",
                partial(_grid_limit, radius=lambda k: k / 4), kind="scaled", factor=9 / 8),
        Control("vertex-to-centre (k-1)/k",
                "The largest excess is (k - 1) / (k N^2), the squared distance from a vertex of"
                " a cell to its centre (equal to the truth for k = 2, 3; false from k = 4, where"
                " it is 3/4 of the truth).",
                partial(_grid_limit, radius=lambda k: (k - 1) / k), kind="scaled", factor=0.75),
    ),
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


def _shrink(pred: np.ndarray, factor: float = 0.8) -> np.ndarray:
    """An uncalibrated predictor with the same ties: predictions shrunk towards uniform."""
    k = 2 if pred.ndim == 1 else pred.shape[1]
    return (1 - factor) / k + factor * pred


def _c2_case(w, truth, pred, n, m) -> tuple:
    """(E l2-QECE_m of pred, its MSE / n, E[t (1 - t)] / n, the same two for shrunk pred)."""
    # multisets with multinomial weights: with the measures' tie averaging the statistic does
    # not depend on the order of the samples (checked against all s^n sequences: 4e-15)
    exact = iid_expectation(w, n, lambda i: expected_qece(pred[i], truth[i], m), ordered=False)
    bad = _shrink(pred)
    exact_bad = iid_expectation(w, n, lambda i: expected_qece(bad[i], truth[i], m), ordered=False)
    return (exact, _binary_mse(w, truth, pred) / n, float(w @ (truth * (1 - truth))) / n,
            exact_bad, _binary_mse(w, truth, bad) / n)


@lru_cache(maxsize=2)
def _lemma_c2_cases(size: str) -> tuple:
    rng = np.random.default_rng(2)
    cases = ([(4, 3, True), (5, 2, False), (5, 3, True)] if size == "smoke"
             else [(n, m, merge) for n in (4, 5, 6) for m in range(1, n + 1)
                   for merge in (True, False)] + [(1, 1, True), (2, 1, False), (2, 2, True)])
    out = []
    for n, m, merge in cases:
        w, truth, pred = calibrated_population(rng, 3, 2, 2, merge=merge, binary=True, grid=10)
        out.append(_c2_case(w, truth, pred, n, m))
    # one case from scratch: enumerate the outcomes too and evaluate l2-QECE itself
    w, truth, pred = calibrated_population(rng, 3, 2, 2, merge=True, binary=True, grid=10)
    n, m = (3, 2) if size == "smoke" else (5, 3)
    raw = _raw_binary_expectation(w, truth, pred, n, m)
    out.append((raw, _binary_mse(w, truth, pred) / n, float(w @ (truth * (1 - truth))) / n,
                None, None))
    return tuple(out)


def _lemma_c2_exact(size: str, variant: str = "claim") -> float:
    """max relative error of the enumerated E[l2-QECE_m] against (1/n) E[(f - y)^2].

    ``variant="truth"`` (control): against (1/n) E[t (1 - t)], the truth's own risk;
    ``variant="uncalibrated"`` (control): the predictor shrunk towards 1/2 (not calibrated);
    ``variant="0.99"`` (control): against 0.99 (1/n) E[(f - y)^2].
    """
    worst = 0.0
    for exact, mse, truth_var, exact_bad, mse_bad in _lemma_c2_cases(size):
        if variant == "uncalibrated":
            if exact_bad is not None:
                worst = max(worst, abs(exact_bad - mse_bad) / mse_bad)
            continue
        reference = truth_var if variant == "truth" else mse
        scale = 0.99 if variant == "0.99" else 1.0
        worst = max(worst, abs(exact - scale * reference) / reference)
    return worst


_C2_CONTROLS = (
    Control("constant 1% off", "E[l2-QECE_m] = 0.99 (1/n) E[(f(x) - y)^2] (the constant 1/n"
            " 1% smaller).", partial(_lemma_c2_exact, variant="0.99"), kind="scaled",
            factor=0.99),
    Control("truth's risk", "E[l2-QECE_m] = (1/n) E[t (1 - t)] with t the truth atom by atom"
            " (the formula of a predictor that is the truth; false for a garbling).",
            partial(_lemma_c2_exact, variant="truth"), kind="alternative"),
    Control("not calibrated", "The identity also holds for the same predictor shrunk towards"
            " 1/2, p -> 0.1 + 0.8 p (ties kept, calibration dropped by a 20% shrink).",
            partial(_lemma_c2_exact, variant="uncalibrated"), kind="hypothesis"),
)


register(Claim(
    id="000.lemmaC.2",
    source=cite("000", "Lemma C.2"),
    statement=("For a calibrated binary predictor f and n i.i.d. samples, E[l2-QECE_m] ="
               " (1/n) E[(f(x) - y)^2] for every m (m not dividing n included), also when f is"
               " not the truth atom by atom and tied predictions straddle a bin boundary."),
    quantity="largest relative error of the enumerated E[ℓ2-QECE_m] against (1/n) E[(f − y)²]",
    check=_lemma_c2_exact,
    reference=0.0, tolerance=1e-12,
    tolerance_reason=(_ENUMERATION + ". Region: n = 4, 5 (smoke) and n = 1..6 with every"
                      " m = 1..n (full, one bin and one sample included); three atoms on a grid"
                      " of tenths (ties), merges and random kernels"),
    chapter=CHAPTER, controls=_C2_CONTROLS,
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


def _l2_qece_replicates(y: np.ndarray, p: np.ndarray, m: int, chunk: int = 2000) -> np.ndarray:
    """``l2_qece(y[r], p[r], m)`` for every replicate row ``r``, by the measure's own
    column-batched kernel (the replicates as columns; bit for bit the per-row values)."""
    out = []
    for a in range(0, y.shape[0], chunk):
        rows = range(a, min(a + chunk, y.shape[0]))
        out.append(l2_qece._columns(np.ascontiguousarray(p[a:rows.stop].T),
                                    [np.flatnonzero(y[r]) for r in rows], m))
    return np.concatenate(out)


@lru_cache(maxsize=2)
def _lemma_c2_draws(size: str) -> tuple:
    """Simulated l2-QECE_m values per case, with (1/n) E[(f - y)^2] and (1/n) E[t (1 - t)]."""
    rng = np.random.default_rng(22)
    reps = 2000 if size == "smoke" else 20000
    cases = [(50, 7), (200, 9)] if size == "smoke" else [(50, 7), (200, 9), (500, 10), (1000, 30)]
    w, truth, pred = calibrated_population(rng, 8, 2, 3, merge=False, binary=True)
    out = []
    for n, m in cases:
        idx = rng.choice(w.size, size=(reps, n), p=w)
        y = (rng.uniform(size=(reps, n)) < truth[idx]).astype(np.int64)
        values = _l2_qece_replicates(y, pred[idx], m)
        out.append((values, _binary_mse(w, truth, pred) / n,
                    float(w @ (truth * (1 - truth))) / n))
    return tuple(out)


def _lemma_c2_simulation(size: str, truth_reference: bool = False, factor: float = 1.0) -> float:
    """max |z| of simulated E[l2-QECE_m] (x and y drawn afresh) against (1/n) E[(f - y)^2]
    (``truth_reference``: against (1/n) E[t (1 - t)], a control; ``factor``: the reference times
    this factor, the scaled control)."""
    cases = _lemma_c2_draws(size)
    return _max_z([c[0] for c in cases],
                  [factor * (c[2] if truth_reference else c[1]) for c in cases])


register(Claim(
    id="000.lemmaC.2.simulation",
    source=cite("000", "Lemma C.2"),
    statement=("Lemma C.2 at larger n: the Monte Carlo mean of l2-QECE_m over fresh i.i.d."
               " samples (x, y) agrees with (1/n) E[(f(x) - y)^2]."),
    quantity=("largest |z| of the simulated E[ℓ2-QECE_m] against (1/n) E[(f − y)²] (in standard "
              "errors)"),
    check=_lemma_c2_simulation,
    reference=0.0, tolerance=4.0, comparison="le",
    tolerance_reason=("Monte Carlo: the largest |mean - reference| over the cases, in standard"
                      " errors (sample standard deviation / sqrt(replications)), must be <= 4."
                      " The standard error is 0.5-0.7% of the reference at smoke size (2,000"
                      " replications; 0.2% at full size, 20,000), so the smallest error the check"
                      " detects is about 2.6% (smoke) / 0.8% (full) of the reference; the control"
                      " 5% off lies at |z| >= 7 at smoke size. Region: n = 50..1000, m = 7..30"
                      " (m not dividing n), eight atoms seen through a random kernel"),
    chapter=CHAPTER,
    controls=(Control("reference 5% off", "The Monte Carlo mean agrees with 0.95 (1/n)"
                      " E[(f(x) - y)^2] (the constant 1/n 5% smaller).",
                      partial(_lemma_c2_simulation, factor=0.95), kind="scaled", factor=0.95),
              Control("truth's risk", "The Monte Carlo mean agrees with (1/n) E[t (1 - t)], the"
                      " risk of the truth rather than of the garbled predictor.",
                      partial(_lemma_c2_simulation, truth_reference=True),
                      kind="alternative"),),
))


def _brier_over_kn(weights, truth, pred, n) -> float:
    k = pred.shape[1]
    return float(weights @ scores.expected_loss(truth, pred, "brier")) / (k * n)


def _truth_brier_over_kn(weights, truth, n) -> float:
    k = truth.shape[1]
    return float(weights @ scores.expected_loss(truth, truth, "brier")) / (k * n)


@lru_cache(maxsize=2)
def _lemma_c1_cases(size: str) -> tuple:
    """Per case: (E l2-QECE^cw_m of f, E Brier(f)/(kn), E Brier(truth)/(kn), the first two for
    f shrunk towards uniform)."""
    rng = np.random.default_rng(1)
    cases = ([(3, 4, 3, False), (3, 3, 2, True), (4, 4, 3, True), (2, 3, 2, False)]
             if size == "smoke"
             else [(k, n, m, merge) for k in (3, 4) for n in (3, 4, 5) for m in range(1, n + 1)
                   for merge in (True, False)]
             + [(2, n, m, merge) for n in (2, 4) for m in (1, 2) for merge in (True, False)])
    out = []
    for k, n, m, merge in cases:
        w, truth, pred = calibrated_population(rng, 3, k, 2, merge=merge)
        bad = _shrink(pred)
        exact, exact_bad = (iid_expectation(
            w, n, lambda i: expected_qece(P[i], truth[i], m, aggregation="classwise"),
            ordered=False) for P in (pred, bad))
        out.append((exact, _brier_over_kn(w, truth, pred, n), _truth_brier_over_kn(w, truth, n),
                    exact_bad, _brier_over_kn(w, truth, bad, n)))
    return tuple(out)


def _lemma_c1_exact(size: str, variant: str = "claim") -> float:
    """max relative error of the enumerated E[l2-QECE_m^classwise] against E[Brier] / (k n)
    (``variant``: ``"truth"`` or ``"uncalibrated"``, the controls, as for Lemma C.2)."""
    worst = 0.0
    for exact, brier, truth_brier, exact_bad, brier_bad in _lemma_c1_cases(size):
        if variant == "uncalibrated":
            exact, reference = exact_bad, brier_bad
        else:
            reference = truth_brier if variant == "truth" else brier
        scale = 0.99 if variant == "0.99" else 1.0
        worst = max(worst, abs(exact - scale * reference) / reference)
    return worst


register(Claim(
    id="000.lemmaC.1",
    source=cite("000", "Lemma C.1"),
    statement=("For a calibrated k-class predictor f and n i.i.d. samples,"
               " E[l2-QECE_m^classwise] = E[l_Brier(f(x), y)] / (k n) for every m, with the"
               " multi-class Brier loss ||f(x) - e_y||^2."),
    quantity=("largest relative error of the enumerated class-wise E[ℓ2-QECE_m] against "
              "E[Brier]/(kn)"),
    check=_lemma_c1_exact,
    reference=0.0, tolerance=1e-12,
    tolerance_reason=(_ENUMERATION + ". Region: k = 2, 3, 4 (k = 2 the smallest), n = 2..5 with"
                      " every m = 1..n at full size (one bin included); three atoms, merges and"
                      " random kernels, so f is not the truth atom by atom"),
    chapter=CHAPTER,
    controls=(
        Control("constant 1% off", "E[l2-QECE_m^cw] = 0.99 E[l_Brier(f(x), y)] / (k n) (the"
                " constant 1/(k n) 1% smaller).", partial(_lemma_c1_exact, variant="0.99"),
                kind="scaled", factor=0.99),
        Control("truth's risk", "E[l2-QECE_m^cw] = E[l_Brier(t, y)] / (k n) with t the truth"
                " atom by atom (false for a garbling of the truth).",
                partial(_lemma_c1_exact, variant="truth"), kind="alternative"),
        Control("not calibrated", "The identity also holds for the same predictor shrunk"
                " towards uniform, p -> 0.2/k + 0.8 p (calibration dropped by a 20% shrink).",
                partial(_lemma_c1_exact, variant="uncalibrated"), kind="hypothesis"),
    ),
))


@lru_cache(maxsize=2)
def _lemma_c1_draws(size: str) -> tuple:
    rng = np.random.default_rng(11)
    reps = 1500 if size == "smoke" else 20000
    cases = [(3, 60, 7)] if size == "smoke" else [(3, 60, 7), (4, 200, 9), (10, 500, 15)]
    out = []
    for k, n, m in cases:
        w, truth, pred = calibrated_population(rng, 8, k, 4, merge=False)
        idx = rng.choice(w.size, size=(reps, n), p=w)
        y = _draw_labels(rng, truth[idx])
        values = np.array([classwise(l2_qece, y[r], pred[idx[r]], n_bins=m) for r in range(reps)])
        out.append((values, _brier_over_kn(w, truth, pred, n), _truth_brier_over_kn(w, truth, n)))
    return tuple(out)


def _lemma_c1_simulation(size: str, truth_reference: bool = False, factor: float = 1.0) -> float:
    """max |z| of simulated E[l2-QECE_m^classwise] against E[Brier] / (k n) (``truth_reference``:
    against E[Brier(truth)] / (k n), a control; ``factor``: the reference times this factor)."""
    cases = _lemma_c1_draws(size)
    return _max_z([c[0] for c in cases],
                  [factor * (c[2] if truth_reference else c[1]) for c in cases])


register(Claim(
    id="000.lemmaC.1.simulation",
    source=cite("000", "Lemma C.1"),
    statement=("Lemma C.1 at larger n and k: the Monte Carlo mean of l2-QECE_m^classwise over"
               " fresh i.i.d. samples agrees with E[l_Brier] / (k n)."),
    quantity=("largest |z| of the simulated class-wise E[ℓ2-QECE_m] against E[Brier]/(kn) (in "
              "standard errors)"),
    check=_lemma_c1_simulation,
    reference=0.0, tolerance=4.0, comparison="le",
    tolerance_reason=("Monte Carlo: the largest |mean - reference| over the cases, in standard"
                      " errors, must be <= 4. The standard error is 0.6% of the reference at"
                      " smoke size (1,500 replications; about 0.2% at full size, 20,000), so the"
                      " smallest error the check detects is about 2.5% (smoke) / 0.9% (full) of"
                      " the reference; the control 5% off lies at |z| >= 7 at smoke size. Region:"
                      " k = 3 (smoke; 4 and 10 at full), n = 60..500, m = 7..15, eight atoms seen"
                      " through a random kernel"),
    chapter=CHAPTER,
    controls=(Control("reference 5% off", "The Monte Carlo mean agrees with 0.95"
                      " E[l_Brier(f(x), y)] / (k n) (the constant 1/(k n) 5% smaller).",
                      partial(_lemma_c1_simulation, factor=0.95), kind="scaled", factor=0.95),
              Control("truth's risk", "The Monte Carlo mean agrees with E[l_Brier(t, y)] / (k n),"
                      " the risk of the truth rather than of the garbled predictor.",
                      partial(_lemma_c1_simulation, truth_reference=True),
                      kind="alternative"),),
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


@lru_cache(maxsize=2)
def _blackwell_margins(size: str) -> tuple:
    """Per garbling pair: (max over losses of E l(f) - E l(g), max of E l(g) - E l(f), and the
    first for f shrunk 10% towards uniform, p -> 0.1/k + 0.9 p: f no longer calibrated)."""
    rng = np.random.default_rng(41)
    count, n_problems = (12, 10) if size == "smoke" else (200, 50)
    out = []
    for k in (2, 3, 5):
        for values, mass, kernel in blackwell_pairs(rng, count, k):
            w, f, g = garbling_population(values, mass, kernel)
            problems = [random_decision_problem(int(rng.integers(2, 6)), k, rng)
                        for _ in range(n_problems)]
            losses = [*DEFAULT_LOSSES, *problems]
            result = dominates(f, g, truth=f, losses=losses, sample_weight=w)
            shrunk = dominates(_shrink(f, 0.9), g, truth=f, losses=losses, sample_weight=w)
            out.append((result.margin, float(np.max(result.loss_g - result.loss_f)),
                        shrunk.margin))
    return tuple(out)


def _blackwell(size: str, variant: str = "claim") -> float:
    """max over garbling pairs and losses of E l(f) - E l(g) (f the finer predictor);
    the controls: ``"reversed"``, of E l(g) - E l(f); ``"shrunk"``, of E l(f') - E l(g) with
    f' = 0.1/k + 0.9 f (f's calibration dropped at its edge)."""
    column = {"claim": 0, "reversed": 1, "shrunk": 2}[variant]
    return max(m[column] for m in _blackwell_margins(size))


register(Claim(
    id="000.appB.blackwell",
    source=cite("000", "App. B", "implication for dominance"),
    statement=("A garbling of a calibrated predictor (a merge of its values, or a random Markov"
               " kernel applied to them) is calibrated and dominated by it: no smaller expected"
               " log, Brier, spherical and 0-1 loss, nor loss in random finite decision problems."),
    quantity=("largest E ℓ(f) − E ℓ(g) of a calibrated f over its garbling g, over the pairs and "
              "proper losses"),
    check=_blackwell,
    reference=0.0, tolerance=1e-12, comparison="le",
    tolerance_reason=(_ROUNDING + ". Region: k = 2, 3, 5; four values merged into two, random"
                      " kernels, garblings of garblings, and the identity kernel (f = g, margin"
                      " exactly 0)"),
    chapter=CHAPTER,
    controls=(Control("finer predictor 10% shrunk", "f shrunk 10% towards uniform,"
                      " p -> 0.1/k + 0.9 p (the hypothesis 'f calibrated' dropped at its edge),"
                      " still has no larger expected loss than the garbling g of the calibrated f"
                      " (false where the kernel is the identity, g = f: a strictly proper loss"
                      " penalises the miscalibration).",
                      partial(_blackwell, variant="shrunk"), kind="hypothesis"),
              Control("garbling dominates", "The reverse order: the garbling g is no worse than"
                      " f under every loss (false unless the kernel loses no information).",
                      partial(_blackwell, variant="reversed"), kind="alternative"),),
))


def _conf_reversal_pair():
    """f = (1/2, 1/2, 0) and its rotations, merged into the uniform g: calibrated, g a garbling,
    yet E[l2-QECE^conf] is larger for f (E c (1 - c) / n: 1/4 against 2/9)."""
    values = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])
    return values, np.full(3, 1 / 3), np.ones((3, 1))


@lru_cache(maxsize=4)
def _thm41_gaps(size: str, aggregation: str) -> tuple:
    """(E[l2-QECE_m](f), E[l2-QECE_m](g)) per garbling pair, n and m."""
    rng = np.random.default_rng(410)
    count, ns = (4, (5,)) if size == "smoke" else (12, (5, 7))
    pairs = [p for k in (3, 4, 2) for p in blackwell_pairs(rng, count, k, n_values=3)]
    pairs.append(_conf_reversal_pair())
    gaps = []
    for values, mass, kernel in pairs:
        vg, mg = garble(values, mass, kernel)
        for n in ns:
            for m in sorted({1, 2, 3, n}):
                gaps.append((calibrated_expected_qece(values, mass, n, m, aggregation=aggregation),
                             calibrated_expected_qece(vg, mg, n, m, aggregation=aggregation)))
    return tuple(gaps)


def _thm41(size: str, variant: str = "claim") -> float:
    """max over garbling pairs, n and m of E[l2-QECE_m^cw](f) - E[l2-QECE_m^cw](g).

    Controls: ``"tightened"`` (max of E(f) - 0.99 E(g): f better by at least 1%),
    ``"reversed"`` (max of E(g) - E(f): the garbling no worse) and ``"confidence"`` (the
    non-truthful confidence aggregation in place of class-wise).
    """
    if variant == "reversed":
        return max(eg - ef for ef, eg in _thm41_gaps(size, "classwise"))
    if variant == "tightened":
        return max(ef - 0.99 * eg for ef, eg in _thm41_gaps(size, "classwise"))
    aggregation = "confidence" if variant == "confidence" else "classwise"
    return max(ef - eg for ef, eg in _thm41_gaps(size, aggregation))


register(Claim(
    id="000.thm4.1",
    source=cite("000", "Thm 4.1"),
    statement=("If a calibrated predictor f1 dominates a calibrated f2 (here: f2 a garbling of"
               " f1), then E[l2-QECE_m^classwise](f1) <= E[l2-QECE_m^classwise](f2) for every n and"
               " m, m not dividing n included; exact expectations over all draws."),
    quantity=("largest class-wise E[ℓ2-QECE_m](f) − E[ℓ2-QECE_m](g) of f over its garbling g, "
              "over the pairs, n and m"),
    check=_thm41,
    reference=0.0, tolerance=1e-12, comparison="le",
    tolerance_reason=(_ENUMERATION + ". Region: k = 2, 3, 4, n = 5 (and 7 at full size), m = 1,"
                      " 2, 3 and n; merges, random kernels, garblings of garblings, identity"
                      " kernels, and a three-valued f merged into the uniform prediction"),
    chapter=CHAPTER,
    controls=(
        Control("inequality tightened by 1%", "E[l2-QECE_m^cw](f1) <= 0.99 E[l2-QECE_m^cw](f2)"
                " for every pair: the dominating predictor wins by at least 1% (false at the"
                " identity kernel, f2 = f1, the edge of 'f1 dominates f2', and wherever the"
                " garbling loses little information).",
                partial(_thm41, variant="tightened"), kind="scaled", factor=0.99),
        Control("non-dominating pair", "The order reversed: the garbling g has no larger"
                " E[l2-QECE_m^cw] than f (g does not dominate f).",
                partial(_thm41, variant="reversed"), kind="alternative"),
        Control("confidence aggregation", "Dominance is preserved by l2-QECE_m^conf, the"
                " non-truthful confidence aggregation (Obs 3.2), on the same pairs.",
                partial(_thm41, variant="confidence"), kind="alternative"),
    ),
))
