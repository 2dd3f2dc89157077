"""Claims of Part II, chapter *Truthful calibration measures* (paper 000: Example 1.1, Thm 2.6, Thm 3.1, Obs 3.2).

Every expectation here is computed exactly with :mod:`calnotes.expectation` (closed form for
l2, Poisson-binomial for l1), so exactness claims have rounding tolerances; the simulation
claims compare :func:`calnotes.expectation.simulate_qece` with the exact values in standard
errors.  The instances are built by the public helpers below, which the chapter uses too.
"""

from __future__ import annotations

import numpy as np

from .. import expectation as ex
from ._registry import Claim, register

CHAPTER = "book/truthfulness/truthfulness"
SOURCE = "Making and Evaluating Calibrated Forecasts (paper 000)"
_Z_REASON = ("4 standard errors of a {} replication mean: a correct exact value fails with"
             " probability about 6e-5 per comparison (seeds are fixed, so the outcome is"
             " deterministic)")
_REL_EXACT = ("exact identity; the only error is float64 rounding in sums of at most a few"
              " thousand terms, bounded by 1e-12 relative")

__all__ = ["example11_truth", "loglog_slope", "example11_curves", "random_binary_instance",
           "random_alternatives", "random_multiclass_instance", "random_multiclass_alternatives",
           "obs32_instance"]


# --------------------------------------------------------------------------- helpers

def example11_truth(n: int) -> np.ndarray:
    """The truth of Example 1.1: ``p*_i = i / n``, ``i = 1..n``."""
    return np.arange(1, n + 1, dtype=np.float64) / n


def loglog_slope(x, y):
    """Least-squares slope of ``log y`` on ``log x`` and its standard error (from the residuals).

    With exact expectations the residuals measure the curvature of the log-log curve (the
    finite-size corrections), not sampling noise.
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    A = np.vstack([lx, np.ones_like(lx)]).T
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    resid = ly - A @ coef
    dof = max(len(lx) - 2, 1)
    se = float(np.sqrt(resid @ resid / dof / np.sum((lx - lx.mean()) ** 2)))
    return float(coef[0]), se


def example11_curves(ns, n_bins: int = 10) -> dict:
    """Exact expected ECEs of Example 1.1 for each ``n`` in ``ns``.

    Returns a dict of arrays: ``truthful`` (unbinned ECE, Def 2.4, of ``p = p*``),
    ``constant`` (unbinned ECE of ``p = 1/2``; one pool, so also its binned ECE for any ``m``),
    ``truthful_binned`` (ECE_1 with ``n_bins`` equal-width bins of ``p = p*``) and
    ``constant_binned``.
    """
    out = {k: [] for k in ("truthful", "constant", "truthful_binned", "constant_binned")}
    for n in ns:
        t = example11_truth(int(n))
        c = np.full(int(n), 0.5)
        out["truthful"].append(ex.expected_unbinned_ece(t, t))
        out["constant"].append(ex.expected_unbinned_ece(c, t))
        out["truthful_binned"].append(ex.expected_binned_ece(t, t, n_bins))
        out["constant_binned"].append(ex.expected_binned_ece(c, t, n_bins))
    return {k: np.array(v) for k, v in out.items()}


def random_binary_instance(rng: np.random.Generator):
    """Random ``(p*, m)``: ``p*`` rounded to tenths (ties, exact 0s and 1s), ``m`` not dividing ``n``."""
    n = int(rng.integers(5, 300))
    p_star = np.round(rng.beta(0.7, 0.7, size=n), 1)
    divisors = {m for m in range(1, n + 1) if n % m == 0}
    candidates = [m for m in range(2, n) if m not in divisors]
    m = int(rng.choice(candidates)) if candidates else 1
    return p_star, m


def random_alternatives(p_star: np.ndarray, rng: np.random.Generator) -> dict:
    """Alternative binary reports: noise, shrinkage, sharpening, coarsening, permutation, constant.

    Reports that happen to equal the truth (a permutation of equal values, say) are left out.
    """
    n = p_star.shape[0]
    logit = np.log(np.clip(p_star, 1e-6, 1 - 1e-6) / np.clip(1 - p_star, 1e-6, 1 - 1e-6))
    sig = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731
    reports = {
        "uniform": rng.uniform(size=n),
        "small noise": np.clip(p_star + rng.normal(0, 0.01, size=n), 0, 1),
        "noise": np.clip(p_star + rng.normal(0, 0.2, size=n), 0, 1),
        "shrunk to 1/2": 0.5 + 0.5 * (p_star - 0.5),
        "sharpened": sig(2.0 * logit),
        "rounded to halves": np.round(p_star * 2) / 2,
        "permuted": rng.permutation(p_star),
        "constant mean": np.full(n, p_star.mean()),
        "shifted by 1e-4": np.clip(p_star + 1e-4, 0, 1),
    }
    # a report equal to the truth is not an alternative (e.g. a permutation of equal values)
    return {name: r for name, r in reports.items() if not np.array_equal(r, p_star)}


def random_multiclass_instance(rng: np.random.Generator):
    """Random ``(P*, m)`` with ``k`` in 3..6: sparse Dirichlet rows rounded to tenths (ties, zeros)."""
    n = int(rng.integers(5, 200))
    k = int(rng.integers(3, 7))
    P = rng.dirichlet(np.full(k, 0.6), size=n)
    P = np.round(P, 1)
    P[:, -1] = 1.0 - P[:, :-1].sum(axis=1)
    bad = P[:, -1] < 0
    P[bad] = rng.dirichlet(np.ones(k), size=int(bad.sum()))
    P = np.clip(P, 0.0, 1.0)
    P /= P.sum(axis=1, keepdims=True)
    m = int(rng.integers(1, n + 1))
    return P, m


def random_multiclass_alternatives(P_star: np.ndarray, rng: np.random.Generator) -> dict:
    """Alternative k-class reports, including the argmax-moving report of Obs 3.2."""
    n, k = P_star.shape
    logp = np.log(np.clip(P_star, 1e-6, 1.0))

    def softmax(z):
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    near_uniform = np.full((n, k), (1.0 - 0.34) / (k - 1))
    near_uniform[np.arange(n), P_star.argmin(axis=1)] = 0.34 if k == 3 else 1.0 / k + 0.01
    near_uniform /= near_uniform.sum(axis=1, keepdims=True)
    mix = 0.5 * P_star + 0.5 * rng.dirichlet(np.ones(k), size=n)
    reports = {
        "dirichlet": rng.dirichlet(np.ones(k), size=n),
        "temperature 2": softmax(logp / 2.0),
        "temperature 1/2": softmax(2.0 * logp),
        "mixed with noise": mix / mix.sum(axis=1, keepdims=True),
        "1% noise": 0.99 * P_star + 0.01 * rng.dirichlet(np.ones(k), size=n),
        "classes rotated": np.roll(P_star, 1, axis=1),
        "uniform": np.full((n, k), 1.0 / k),
        "argmax on the least likely class": near_uniform,
    }
    return {name: r for name, r in reports.items() if not np.array_equal(r, P_star)}


def obs32_instance() -> dict:
    """The exhibited instance of Obs 3.2 (found by the search in the chapter).

    ``k = 3`` classes, ``n = 8`` samples, ``m = 4`` bins.  Sample ``i`` has truth
    ``(1/2 + d_i, 1/2 - d_i, 0)`` with ``d_i = 0.02 i``: a near coin flip between the first two
    classes, and a third class that never occurs.  The report ``(0.33, 0.33, 0.34)`` puts the
    argmax on the impossible class.
    """
    n, k, m = 8, 3, 4
    d = 0.02 * np.arange(n)
    truth = np.column_stack([0.5 + d, 0.5 - d, np.zeros(n)])
    report = np.tile([0.33, 0.33, 0.34], (n, 1))
    return {"k": k, "n": n, "m": m, "truth": truth, "report": report}


# --------------------------------------------------------------------------- Example 1.1

def _ns(size):
    return [100 * 2 ** j for j in range(6)] if size == "smoke" else [100 * 2 ** j for j in range(10)]


def _ex11_truthful_unbinned_exponent(size: str) -> float:
    ns = _ns(size)
    return loglog_slope(ns, example11_curves(ns)["truthful"])[0]


register(Claim(
    id="000.ex1.1.truthful_unbinned",
    source=f"{SOURCE}, Example 1.1",
    statement=("With truth p*_i = i/n, the optimal (truthful) predictor has ECE ~ O(1/n):"
               " the fitted exponent of its exact expected ECE (Def 2.4) in n should be -1."),
    check=_ex11_truthful_unbinned_exponent,
    reference=-1.0, tolerance=0.1, comparison="abs",
    tolerance_reason=("exact expectations (no sampling error); an O(1/n) law gives exponent -1,"
                      " and lower-order terms move a log-log slope over n >= 100 by far less"
                      " than 0.1"),
    expect="disagrees",
    evidence=("All n predictions i/n are distinct, so each conditional frequency is a single"
              " outcome and ECE = (1/n) sum |p_i - y_i|, whose expectation is (2/n) sum"
              " p_i(1-p_i) = (n^2 - 1)/(3 n^2) exactly: 0.33330 at n = 100, 0.333333 at"
              " n = 51200, tending to 1/3. The fitted exponent is 0.0000 (not -1); a 10^5-"
              "replication simulation at n = 1000 (4,000 at smoke size) agrees with"
              " (n^2-1)/(3n^2) within 4 standard errors (claim 000.ex1.1.simulation). Nor does"
              " a population reading rescue the sentence: the population ECE is 0 for the"
              " truthful predictor and |1/2 - mean p*| = 1/(2n) for the constant one, so the"
              " constant's O(1/sqrt(n)) only holds for the empirical ECE, under which the"
              " truthful predictor's ECE is Theta(1), not O(1/n). The example's conclusion (the"
              " constant 1/2 predictor looks better, so ECE is not truthful) holds, more"
              " strongly."),
    chapter=CHAPTER,
))


def _ex11_constant_exponent(size: str) -> float:
    ns = _ns(size)
    curves = example11_curves(ns)
    if np.max(np.abs(curves["constant"] - curves["constant_binned"])) > 1e-12:
        return float("nan")  # one pool: the binned and unbinned ECE must coincide
    return loglog_slope(ns, curves["constant"])[0]


register(Claim(
    id="000.ex1.1.constant",
    source=f"{SOURCE}, Example 1.1",
    statement=("The constant predictor 1/2 has expected ECE of order 1/sqrt(n), binned (one"
               " occupied bin) or not: fitted exponent -1/2."),
    check=_ex11_constant_exponent,
    reference=-0.5, tolerance=0.01, comparison="abs",
    tolerance_reason=("exact expectations; E|n/2 - K| approaches sqrt(2/pi) sd(K) with relative"
                      " error O(1/n) (lattice and the 1/(2n) offset of mean p*), which moves the"
                      " slope over n >= 100 by less than 0.01"),
    chapter=CHAPTER,
))


def _ex11_binned_n_exponent(size: str) -> float:
    ns = [800 * 2 ** j for j in range(4 if size == "smoke" else 8)]
    t = [ex.expected_binned_ece(example11_truth(n), example11_truth(n), 10) for n in ns]
    return loglog_slope(ns, t)[0]


_BINNED_REASON = ("exact expectations (no sampling error): the deviation from the asymptotic"
                  " exponent is finite-size curvature -- the lattice correction O(1/|B_j|) of"
                  " E|S_j| and the O(1/m) Riemann-sum error of sum_j sd(S_j) -- which with at"
                  " least 80 samples per bin and m >= 4 moves the log-log slope by less than"
                  " 0.01 (the regression standard error of the slope, shown in the chapter, is"
                  " below 0.002)")

register(Claim(
    id="000.ex1.1.truthful_binned_n",
    source=f"{SOURCE}, Example 1.1 (binned ECE paragraph)",
    statement=("With m = 10 equal-width bins the truthful predictor's binned ECE is"
               " O(sqrt(m/n)): fitted exponent in n equal to -1/2."),
    check=_ex11_binned_n_exponent,
    reference=-0.5, tolerance=0.01, comparison="abs", tolerance_reason=_BINNED_REASON,
    chapter=CHAPTER,
))


def _ex11_binned_m_exponent(size: str) -> float:
    n, ms = (6400, [4, 8, 16, 32, 64]) if size == "smoke" else (51200, [4, 8, 16, 32, 64, 128, 256, 512])
    t = example11_truth(n)
    return loglog_slope(ms, [ex.expected_binned_ece(t, t, m) for m in ms])[0]


register(Claim(
    id="000.ex1.1.truthful_binned_m",
    source=f"{SOURCE}, Example 1.1 (binned ECE paragraph)",
    statement=("At fixed n the truthful predictor's binned ECE grows like sqrt(m):"
               " fitted exponent in m equal to +1/2."),
    check=_ex11_binned_m_exponent,
    reference=0.5, tolerance=0.01, comparison="abs", tolerance_reason=_BINNED_REASON,
    chapter=CHAPTER,
))


def _ex11_not_truthful(size: str) -> float:
    ns = _ns(size)
    c = example11_curves(ns)
    # the constant must beat the truthful predictor both unbinned and with 10 bins
    return float(max(np.max(c["constant"] - c["truthful"]),
                     np.max(c["constant_binned"] - c["truthful_binned"])))


register(Claim(
    id="000.ex1.1.not_truthful",
    source=f"{SOURCE}, Example 1.1",
    statement=("ECE is not truthful: on Example 1.1 the constant predictor 1/2 has a lower"
               " expected ECE than the truth, unbinned and with 10 equal-width bins, at every n"
               " checked (measured: the largest difference constant - truthful)."),
    check=_ex11_not_truthful,
    reference=0.0, tolerance=0.0, comparison="le",
    tolerance_reason="exact expectations; only the sign of the difference is claimed",
    chapter=CHAPTER,
))


def _ex11_simulation(size: str) -> float:
    n, reps = (1000, 4000) if size == "smoke" else (1000, 100_000)
    t = example11_truth(n)
    rng = np.random.default_rng(11)
    # unbinned ECE = l1-QECE with m = n for distinct predictions, and m = 1 for a constant one
    truthful = ex.simulate_qece(t, t, n, reps, rng, p=1)
    constant = ex.simulate_qece(np.full(n, 0.5), t, 1, reps, rng, p=1)
    z1 = truthful.z_score((n ** 2 - 1) / (3 * n ** 2))
    z2 = constant.z_score(ex.expected_unbinned_ece(np.full(n, 0.5), t))
    return float(max(abs(z1), abs(z2)))


register(Claim(
    id="000.ex1.1.simulation",
    source=f"{SOURCE}, Example 1.1",
    statement=("Simulated unbinned ECEs of the truthful and the constant predictor (n = 1000)"
               " agree with the exact expectations (n^2-1)/(3n^2) and E|1/2 - mean(y)|"
               " (measured: the larger |z|)."),
    check=_ex11_simulation,
    reference=0.0, tolerance=4.0, comparison="le",
    tolerance_reason=_Z_REASON.format("4,000 (smoke) / 100,000 (full)"),
    chapter=CHAPTER,
))


# --------------------------------------------------------------------------- Thm 2.6

def _thm26_exact(size: str) -> float:
    rng = np.random.default_rng(260)
    worst = 0.0
    for _ in range(200 if size == "smoke" else 2000):
        p_star, m = random_binary_instance(rng)
        formula = np.sum(p_star * (1 - p_star)) / p_star.shape[0] ** 2
        if formula == 0:
            continue
        worst = max(worst, abs(ex.expected_qece(p_star, p_star, m) - formula) / formula)
    return worst


register(Claim(
    id="000.thm2.6.exact",
    source=f"{SOURCE}, Thm 2.6 (Hartline et al. 2025)",
    statement=("E[l2-QECE_m(p*; y)] = n^-2 sum p*_i (1 - p*_i) for random instances with tied"
               " predictions, exact 0s and 1s, and m not dividing n (measured: the largest"
               " relative error of the exact expectation against the formula)."),
    check=_thm26_exact,
    reference=0.0, tolerance=1e-12, comparison="abs", tolerance_reason=_REL_EXACT,
    chapter=CHAPTER,
))


def _thm26_truthful(size: str) -> float:
    rng = np.random.default_rng(261)
    worst = np.inf
    for _ in range(100 if size == "smoke" else 1000):
        p_star, m = random_binary_instance(rng)
        honest = ex.expected_qece(p_star, p_star, m)
        if honest == 0:
            continue
        for alt in random_alternatives(p_star, rng).values():
            worst = min(worst, (ex.expected_qece(alt, p_star, m) - honest) / honest)
    return float(worst)


register(Claim(
    id="000.thm2.6.truthful",
    source=f"{SOURCE}, Thm 2.6 (Hartline et al. 2025)",
    statement=("l2-QECE_m is truthful: for random truths and nine kinds of alternative reports"
               " (noise, shrinkage, sharpening, coarsening, permutation, constant, a 1e-4"
               " shift), E[l2-QECE_m(p)] >= E[l2-QECE_m(p*)] (measured: the smallest relative"
               " gap)."),
    check=_thm26_truthful,
    reference=0.0, tolerance=1e-12, comparison="ge", tolerance_reason=_REL_EXACT,
    chapter=CHAPTER,
))


def _thm26_simulation(size: str) -> float:
    reps = 10_000 if size == "smoke" else 100_000
    rng = np.random.default_rng(262)
    worst = 0.0
    for _ in range(3):
        p_star, m = random_binary_instance(rng)
        for report in (p_star, random_alternatives(p_star, rng)["noise"]):
            sim = ex.simulate_qece(report, p_star, m, reps, rng)
            worst = max(worst, abs(sim.z_score(ex.expected_qece(report, p_star, m))))
    return worst


register(Claim(
    id="000.thm2.6.simulation",
    source=f"{SOURCE}, Thm 2.6 (Hartline et al. 2025)",
    statement=("A Monte Carlo estimate of E[l2-QECE_m] (three random instances with ties and m"
               " not dividing n, truthful and noisy reports) agrees with the exact value"
               " (measured: the largest |z|)."),
    check=_thm26_simulation,
    reference=0.0, tolerance=4.0, comparison="le",
    tolerance_reason=_Z_REASON.format("10,000 (smoke) / 100,000 (full)"),
    chapter=CHAPTER,
))


# --------------------------------------------------------------------------- Thm 3.1

def _thm31_truthful(size: str) -> float:
    rng = np.random.default_rng(310)
    worst = np.inf
    for _ in range(60 if size == "smoke" else 600):
        P_star, m = random_multiclass_instance(rng)
        honest = ex.expected_qece(P_star, P_star, m, aggregation="classwise")
        for alt in random_multiclass_alternatives(P_star, rng).values():
            gap = ex.expected_qece(alt, P_star, m, aggregation="classwise") - honest
            worst = min(worst, gap / honest)
    return float(worst)


register(Claim(
    id="000.thm3.1",
    source=f"{SOURCE}, Thm 3.1",
    statement=("Class-wise aggregation keeps l2-QECE_m truthful: for random k-class truths"
               " (k = 3..6, ties, zeros) and eight kinds of alternative reports -- including"
               " the argmax-moving report that beats the truth under confidence aggregation --"
               " E[l2-QECE^classwise(p)] >= E[l2-QECE^classwise(p*)] (measured: the smallest"
               " relative gap)."),
    check=_thm31_truthful,
    reference=0.0, tolerance=1e-12, comparison="ge", tolerance_reason=_REL_EXACT,
    chapter=CHAPTER,
))


# --------------------------------------------------------------------------- Obs 3.2

def _obs32_gap(size: str) -> float:
    inst = obs32_instance()
    honest = ex.expected_qece(inst["truth"], inst["truth"], inst["m"], aggregation="confidence")
    lie = ex.expected_qece(inst["report"], inst["truth"], inst["m"], aggregation="confidence")
    return float((honest - lie) / honest)


register(Claim(
    id="000.obs3.2",
    source=f"{SOURCE}, Obs 3.2",
    statement=("l2-QECE_m^conf is not truthful: on the exhibited instance (k = 3, n = 8, m = 4)"
               " the report (0.33, 0.33, 0.34) has a strictly lower exact expected error than"
               " the truth (measured: (E[truth] - E[report]) / E[truth])."),
    check=_obs32_gap,
    reference=1e-12, tolerance=0.0, comparison="ge",
    tolerance_reason=("exact expectations; the reference 1e-12 demands a gap beyond float64"
                      " rounding, so equality would not count"),
    chapter=CHAPTER,
))
