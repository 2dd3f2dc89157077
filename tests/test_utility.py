"""calnotes.theory.utility: utility calibration (paper 001, Hegazy, Jordan & Dieuleveut).

Every expected value is computed here, independently of the code under test: definitional
brute-force suprema over all intervals (plain loops, :func:`math.fsum` or exact
:class:`fractions.Fraction` sums), utilities written straight from the paper's formulas
(Examples 3.5-3.8, App. C.2/C.4), tie rules by enumerating every tie-breaking permutation,
and Monte Carlo checks with tolerances derived from standard errors (stated where used).
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from calnotes.theory import population as pop
from calnotes.theory.utility import (DCG_GAMMAS, UCResult, UtilityFamily, band_covers, classwise, dcg,
                                     decision, dkw_halfwidth, ecdf_from_errors, gain_matrix, linear,
                                     population_uc, rank, rank_positions, sample_gain_matrices,
                                     sample_linear, sample_rank, similarity, step_cdf_distance,
                                     top_class, top_k, uc_brute_force, uc_class, uc_from_values,
                                     utility_calibration, utility_ecdf, utility_tie_tolerance)

# --------------------------------------------------------------------------- references


def brute_sup(v, u, w=None):
    """Definition of the Lemma 3.4 estimator: for every pair of predicted values a <= b that
    occur in the data, the weighted sum of (u - v) over the samples with a <= v <= b (fsum,
    so exact up to one rounding); the largest absolute sum (0 for the empty interval)."""
    v = np.asarray(v, dtype=float)
    u = np.asarray(u, dtype=float)
    n = v.size
    if w is None:
        wt = [1.0 / n] * n
    else:
        total = math.fsum(float(x) for x in w)
        wt = [float(x) / total for x in w]
    r = np.array([(float(u[i]) - float(v[i])) * wt[i] for i in range(n)])
    vals = sorted(set(v.tolist()))
    best = 0.0
    for i, a in enumerate(vals):
        for b in vals[i:]:
            inside = (v >= a) & (v <= b)
            best = max(best, abs(math.fsum(r[inside].tolist())))
    return best


def position_based(v, u, w=None):
    """The WRONG estimator that does not pool ties: max minus min of the prefix sums over
    every position of the sorted order (a tie group can then be split)."""
    v = np.asarray(v, dtype=float)
    u = np.asarray(u, dtype=float)
    wt = np.full(v.size, 1.0 / v.size) if w is None else np.asarray(w) / np.sum(w)
    order = np.argsort(v, kind="stable")
    S = np.concatenate([[0.0], np.cumsum(((u - v) * wt)[order])])
    return float(S.max() - S.min())


def block_sup(keys, residuals):
    """sup over intervals when every key is a distinct value: the largest |sum| of residuals
    over contiguous blocks of the keys in increasing order (double loop over blocks)."""
    order = np.argsort(keys)
    r = [float(x) for x in np.asarray(residuals)[order]]
    best = 0.0
    for a in range(len(r)):
        for b in range(a, len(r)):
            best = max(best, abs(math.fsum(r[a:b + 1])))
    return best


def tie_broken_mean(p, theta):
    """E over a uniformly random tie-breaking of theta at the class's position: averages over
    ALL C! priority orders sigma (class j before class i when p_j > p_i, or p_j == p_i and
    sigma_j < sigma_i).  Exact (Fractions); one value per class."""
    C = len(p)
    acc = [Fraction(0)] * C
    perms = list(itertools.permutations(range(C)))
    for sigma in perms:
        order = sorted(range(C), key=lambda j: (-p[j], sigma[j]))
        for pos, j in enumerate(order):
            acc[j] += Fraction(float(theta[pos]))
    return [a / len(perms) for a in acc]


def paper_rank(p, j):
    """rank(p, j) = #{i : p_j <= p_i} (Example 3.7), 1-based."""
    return sum(1 for x in p if p[j] <= x)


def grid_rows(rng, n, C, grid=8):
    """Probability rows that are multiples of 1/grid (exact in binary floats): heavy ties."""
    out = []
    for _ in range(n):
        cuts = np.sort(rng.integers(0, grid + 1, size=C - 1))
        parts = np.diff(np.concatenate([[0], cuts, [grid]]))
        out.append(parts / grid)
    return np.array(out, dtype=float)


def untied(P, gap=1e-9):
    """Precondition helper: no two entries of a row within gap."""
    S = np.sort(P, axis=1)
    return bool(np.all(np.diff(S, axis=1) > gap))


# =========================================================================== Lemma 3.4


def _tied_inputs(rng, count):
    for _ in range(count):
        n = int(rng.integers(1, 61))
        d = int(rng.integers(1, 7))
        support = np.round(rng.uniform(-1, 1, size=d), 3)
        v = rng.choice(support, size=n)
        u = rng.choice(np.array([-1.0, -0.5, 0.0, 0.5, 1.0]), size=n)
        w = rng.integers(0, 5, size=n).astype(float)
        if w.sum() == 0:
            w[0] = 1.0
        yield v, u, w


def test_estimator_equals_definitional_brute_force_with_heavy_ties():
    """1200 random inputs, few distinct predicted values (1..6), n in 1..60, realized values in
    {-1, -1/2, 0, 1/2, 1}, unweighted and with integer weights (some zero): uc_from_values and
    the library's uc_brute_force both equal the sup over ALL intervals to 1e-12."""
    rng = np.random.default_rng(0)
    for v, u, w in _tied_inputs(rng, 1200):
        for weights in (None, w):
            ref = brute_sup(v, u, weights)
            got = uc_from_values(v, u, weights=weights)
            assert got.values.shape == (1,)
            assert abs(float(got.values[0]) - ref) <= 1e-12, (v, u, weights)
            assert abs(uc_brute_force(v, u, weights=weights) - ref) <= 1e-12


def test_estimator_equals_brute_force_without_ties():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        v = rng.uniform(-1, 1, size=n)
        u = rng.uniform(-1, 1, size=n)
        w = rng.uniform(0, 1, size=n)
        for weights in (None, w):
            ref = brute_sup(v, u, weights)
            assert abs(float(uc_from_values(v, u, weights=weights).values[0]) - ref) <= 1e-12


def test_vectorised_rows_equal_row_by_row_calls():
    rng = np.random.default_rng(2)
    for n in (1, 2, 7, 40):
        M = 25
        V = rng.choice(np.round(rng.uniform(-1, 1, size=4), 2), size=(M, n))
        U = rng.choice(np.array([-1.0, 0.0, 1.0]), size=(M, n))
        w = rng.uniform(0.1, 1.0, size=n)
        for weights in (None, w):
            res = uc_from_values(V, U, weights=weights)
            assert len(res) == M
            for m in range(M):
                one = uc_from_values(V[m], U[m], weights=weights)
                for attr in ("values", "lower", "upper", "sign", "mass"):
                    np.testing.assert_allclose(getattr(res, attr)[m], getattr(one, attr)[0],
                                               rtol=0, atol=1e-15, equal_nan=True)


def test_worst_interval_attains_the_value_and_reports_mass_and_sign():
    """The reported [lower, upper] contains samples whose weighted residual sum has absolute
    value equal to the estimate (recomputed with fsum), sign equal to its sign, and mass the
    weight inside; lower/upper are predicted values of the data; no deviation -> NaN, sign 0."""
    rng = np.random.default_rng(3)
    n_positive = 0
    for v, u, w in _tied_inputs(rng, 600):
        for weights in (None, w):
            res = uc_from_values(v, u, weights=weights)
            value = float(res.values[0])
            wt = np.full(v.size, 1.0 / v.size) if weights is None else weights / weights.sum()
            if value == 0.0:
                assert np.isnan(res.lower[0]) and np.isnan(res.upper[0])
                assert res.sign[0] == 0 and res.mass[0] == 0
                continue
            n_positive += 1
            lo, hi = float(res.lower[0]), float(res.upper[0])
            assert lo in set(v.tolist()) and hi in set(v.tolist()) and lo <= hi
            inside = (v >= lo) & (v <= hi)
            s = math.fsum(((u - v) * wt)[inside].tolist())
            assert abs(abs(s) - value) <= 1e-12
            if abs(s) > 1e-12:
                assert int(res.sign[0]) == (1 if s > 0 else -1)
            assert abs(float(res.mass[0]) - math.fsum(wt[inside].tolist())) <= 1e-12
    assert n_positive > 500                      # the checks above were exercised


def test_pooling_ties_matters():
    """Not pooling ties (max-minus-min over every sorted position) over-estimates: on [0.5, 0.5]
    with realized [1, 0] the true value is 0 (no interval separates the two samples) but the
    position-based value is 1/4; on random tied inputs it is never smaller and often larger."""
    assert float(uc_from_values([0.5, 0.5], [1.0, 0.0]).values[0]) == 0.0
    assert position_based([0.5, 0.5], [1.0, 0.0]) == 0.25
    rng = np.random.default_rng(4)
    larger = 0
    for v, u, w in _tied_inputs(rng, 300):
        right = float(uc_from_values(v, u).values[0])
        wrong = position_based(v, u)
        assert wrong >= right - 1e-12
        larger += wrong > right + 1e-3
    assert larger > 100


def test_tie_tol_merges_near_values_like_a_chain():
    """tie_tol: values within tol of their sorted neighbour are one value.  [0, 1e-13] with
    realized [1, -1]: separable without tolerance (UC 1/2... = |1-0|/2), pooled with tol 1e-12."""
    v = [0.0, 1e-13]
    u = [1.0, -1.0]
    assert abs(float(uc_from_values(v, u).values[0]) - brute_sup(v, u)) <= 1e-12
    assert brute_sup(v, u) > 0.4
    pooled = brute_sup([0.0, 0.0], [1.0, -1.0 - 1e-13])
    assert abs(float(uc_from_values(v, u, tie_tol=1e-12).values[0]) - pooled) <= 1e-12
    assert abs(uc_brute_force(v, u, tie_tol=1e-12) - pooled) <= 1e-12


def test_paper_appendix_b2_example():
    """App. B.2: predictions 0.45 / 0.55 with accuracies 0.05 / 0.95, equal mass: the interval
    {0.45} deviates by 0.5 * 0.4 = 0.2 (too optimistic), {0.55} by +0.2, both together 0."""
    res = uc_from_values([0.45, 0.55], [0.05, 0.95], weights=[0.5, 0.5])
    assert abs(float(res.values[0]) - 0.2) <= 1e-15
    assert abs(float(res.mass[0]) - 0.5) <= 1e-15


# =========================================================================== duplicated rows


def _duplicated_setup(C, seed):
    rng = np.random.default_rng(seed)
    rows = rng.dirichlet(np.ones(C), size=50)
    idx = np.concatenate([np.arange(50), rng.integers(0, 50, size=5000 - 50)])
    rng.shuffle(idx)
    P = rows[idx]
    y = np.array([rng.choice(C, p=rows[i]) for i in idx]) if C <= 10 else rng.integers(0, C, 5000)
    return rng, rows, idx, P, y


def _exact_on_distinct_rows(rows, idx, y, predicted_of_row, realized_of):
    """UC from the 50 distinct rows with multiplicity weights: residual of row r is
    sum_j count(r, j) / n * (u(r, j) - v_r), then sup over blocks of distinct v_r."""
    n = idx.size
    C = rows.shape[1]
    counts = np.zeros((rows.shape[0], C))
    np.add.at(counts, (idx, y), 1.0)
    V = np.array([predicted_of_row(r) for r in range(rows.shape[0])])
    assert np.min(np.diff(np.sort(V))) > 1e-9            # the 50 values are distinct
    R = []
    for r in range(rows.shape[0]):
        js = np.flatnonzero(counts[r])
        R.append(math.fsum(counts[r, j] / n * (realized_of(r, j) - V[r]) for j in js))
    return block_sup(V, R)


@pytest.mark.parametrize("C", [3, 10, 100, 1000])
def test_duplicated_rows_equal_the_weighted_computation_on_distinct_rows(C):
    """50 distinct rows repeated to n = 5000: identical rows must form one tie group even if the
    BLAS dot products round differently for them (tolerance 4 C eps), so UC equals the exact
    weighted computation on the distinct rows, to 1e-12, for linear and rank families."""
    rng, rows, idx, P, y = _duplicated_setup(C, seed=10 + C)
    assert untied(rows, gap=0.0)               # ranks are exact comparisons: no exact ties
    lin = sample_linear(C, 12, rng=rng)
    rk = sample_rank(C, 12, rng=rng)
    res_lin = utility_calibration(y, P, lin)
    res_rk = utility_calibration(y, P, rk)
    # paper rank #{i : p_j <= p_i} of every class of every distinct row, by counting
    ranks = (rows[:, None, :] >= rows[:, :, None]).sum(axis=2)
    for m in range(12):
        a = lin.params[m]
        ref = _exact_on_distinct_rows(rows, idx, y, lambda r: math.fsum(a * rows[r]),
                                      lambda r, j: a[j])
        assert abs(float(res_lin.values[m]) - ref) <= 1e-12
        th = rk.params[m]
        ref = _exact_on_distinct_rows(
            rows, idx, y, lambda r: math.fsum(th * -np.sort(-rows[r])),
            lambda r, j: th[ranks[r, j] - 1])
        assert abs(float(res_rk.values[m]) - ref) <= 1e-12
    # the order of the samples does not matter
    perm = rng.permutation(P.shape[0])
    for fam, res in ((lin, res_lin), (rk, res_rk)):
        again = utility_calibration(y[perm], P[perm], fam)
        np.testing.assert_allclose(again.values, res.values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(again.mass, res.mass, rtol=0, atol=1e-12)
        np.testing.assert_allclose(again.lower, res.lower, rtol=0, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(again.upper, res.upper, rtol=0, atol=1e-12, equal_nan=True)


def test_predicted_utilities_within_the_tie_tolerance_are_pooled():
    """The documented tie rule of utility_calibration: predicted utilities within 4 C eps are
    one value.  Rows [0.3, 0.7] (label 0) and [0.3 + 1 ulp, 0.7] (label 1): classwise v = p_0
    differ by 1 ulp, so the two samples are pooled: |(1 - 0.3) + (0 - 0.3)| / 2 = 0.2, not the
    separated 0.35."""
    p0 = np.nextafter(0.3, 1.0)
    P = np.array([[0.3, 0.7], [p0, 0.7]])
    assert 0 < p0 - 0.3 < utility_tie_tolerance(2)
    res = utility_calibration([0, 1], P, classwise(2).take(0))
    assert abs(float(res.values[0]) - 0.2) <= 1e-12
    assert res.mass[0] == 1.0
    assert abs(brute_sup([0.3, p0], [1.0, 0.0]) - 0.35) <= 1e-12      # what no pooling gives


def test_utility_calibration_worst_intervals_on_tied_data():
    """classwise (v = p_c, u = 1{y = c}) and top-class (v = max p, u = 1/t for a t-way top tie
    containing y) utilities on grid rows: the value is the brute-force sup, and the reported
    interval attains it with the reported sign and mass (all recomputed here)."""
    rng = np.random.default_rng(21)
    C, n = 4, 300
    P = grid_rows(rng, n, C)
    y = rng.integers(0, C, size=n)
    res = utility_calibration(y, P, [classwise(C), top_class(C)])
    cases = [(P[:, c], (y == c).astype(float)) for c in range(C)]
    top_u = np.array([(1.0 / np.sum(P[i] == P[i].max())) if P[i, y[i]] == P[i].max() else 0.0
                      for i in range(n)])
    cases.append((P.max(axis=1), top_u))
    for k, (v, u) in enumerate(cases):
        assert abs(float(res.values[k]) - brute_sup(v, u)) <= 1e-12
        inside = (v >= res.lower[k]) & (v <= res.upper[k])
        s = math.fsum(((u - v) / n)[inside].tolist())
        assert abs(abs(s) - float(res.values[k])) <= 1e-12
        assert int(res.sign[k]) == (1 if s > 0 else -1)
        assert float(res.mass[k]) == inside.mean()
    assert res.names == tuple(f"class {c}" for c in range(C)) + ("top class",)


def test_binary_vector_predictions_mean_two_columns():
    rng = np.random.default_rng(22)
    p = np.round(rng.uniform(size=200), 1)
    y = (rng.uniform(size=200) < p).astype(int)
    a = utility_calibration(y, p, [classwise(2), top_k(2)])
    b = utility_calibration(y, np.column_stack([1 - p, p]), [classwise(2), top_k(2)])
    np.testing.assert_array_equal(a.values, b.values)
    assert abs(float(a.values[1]) - brute_sup(p, y.astype(float))) <= 1e-12


def test_chunking_and_union_of_families_do_not_change_results():
    rng = np.random.default_rng(20)
    P = rng.dirichlet(np.ones(5), size=400)
    y = rng.integers(0, 5, size=400)
    fams = [classwise(5), top_k(5), sample_linear(5, 30, rng=rng)]
    a = utility_calibration(y, P, fams)
    b = utility_calibration(y, P, fams, chunk=7)
    assert len(a) == 5 + 4 + 30
    np.testing.assert_array_equal(a.values, b.values)
    assert a.names == b.names == fams[0].names + fams[1].names + fams[2].names
    separate = np.concatenate([utility_calibration(y, P, f).values for f in fams])
    np.testing.assert_array_equal(a.values, separate)
    assert uc_class(y, P, fams) == float(separate.max())
    top = a.worst(3)
    assert [d["uc"] for d in top] == sorted(separate, reverse=True)[:3]


# =========================================================================== rank utilities


@pytest.mark.parametrize("C", [3, 4, 5])
def test_rank_tie_rule_is_the_average_over_all_tie_breakings(C):
    """Rows on the 1/8 grid (many ties): per_class and the realized utility equal the average of
    theta at the broken rank over all C! tie-breaking orders (exact Fractions); the predicted
    utility is <sort_desc(p), theta>."""
    rng = np.random.default_rng(30 + C)
    P = grid_rows(rng, 40, C, grid=6)
    y = rng.integers(0, C, size=40)
    fam = sample_rank(C, 3, rng=rng)
    V, U = fam.values(y, P)
    ubar = fam.per_class(P)
    n_tied = 0
    for i in range(40):
        p = P[i].tolist()
        n_tied += len(set(p)) < C
        for m in range(3):
            ref = tie_broken_mean(p, fam.params[m])
            for j in range(C):
                assert abs(ubar[m, i, j] - float(ref[j])) <= 1e-15
            assert abs(U[m, i] - float(ref[y[i]])) <= 1e-15
            assert abs(V[m, i] - math.fsum(fam.params[m] * sorted(p, reverse=True))) <= 1e-15
    assert n_tied > 15


def test_rank_utilities_are_invariant_under_permuting_the_classes():
    rng = np.random.default_rng(40)
    C = 5
    P = np.vstack([grid_rows(rng, 30, C), rng.dirichlet(np.ones(C), size=30)])
    y = rng.integers(0, C, size=60)
    fam = sample_rank(C, 4, rng=rng)
    V, U = fam.values(y, P)
    ubar = fam.per_class(P)
    for _ in range(10):
        pi = rng.permutation(C)
        inv = np.argsort(pi)
        P2 = P[:, pi]                       # new class k is old class pi[k]
        V2, U2 = fam.values(inv[y], P2)
        np.testing.assert_array_equal(V2, V)
        np.testing.assert_array_equal(U2, U)
        np.testing.assert_array_equal(fam.per_class(P2), ubar[:, :, pi])


def test_rank_untied_rows_use_the_paper_rank():
    """rank(p, j) = #{i : p_j <= p_i}: realized utility theta_{rank(p, y)}, exactly."""
    rng = np.random.default_rng(41)
    C = 7
    P = rng.dirichlet(np.ones(C), size=200)
    assert untied(P)
    y = rng.integers(0, C, size=200)
    fam = sample_rank(C, 5, rng=rng)
    V, U = fam.values(y, P)
    for i in range(200):
        r = paper_rank(P[i].tolist(), int(y[i]))
        for m in range(5):
            # the tie mean (cum[hi] - cum[lo]) / 1 may round: |cum| <= C, so C eps
            assert abs(U[m, i] - fam.params[m, r - 1]) <= C * np.finfo(float).eps
    lo, hi = rank_positions(P)
    for i in range(200):
        for j in range(C):
            assert hi[i, j] == paper_rank(P[i].tolist(), j) and lo[i, j] == hi[i, j] - 1


def test_rank_positions_with_ties_by_counting():
    rng = np.random.default_rng(42)
    P = grid_rows(rng, 100, 6, grid=6)
    lo, hi = rank_positions(P)
    for i in range(100):
        for j in range(6):
            assert lo[i, j] == sum(1 for x in P[i] if x > P[i, j])
            assert hi[i, j] == sum(1 for x in P[i] if x >= P[i, j])


def test_top_class_top_k_and_dcg_match_their_formulas():
    """Example 3.5/3.7, App. C.4: top-class v = max p, realized 1{y = argmax} (1/t for a t-way
    tie at the top containing y); top-K theta_r = 1{r <= K}; DCG theta_r = log2(1+r)^-gamma."""
    rng = np.random.default_rng(43)
    C = 5
    P = np.vstack([rng.dirichlet(np.ones(C), size=100), grid_rows(rng, 100, C)])
    y = rng.integers(0, C, size=200)
    V, U = top_class(C).values(y, P)
    for i in range(200):
        top = [j for j in range(C) if P[i, j] == P[i].max()]
        assert V[0, i] == P[i].max()
        assert U[0, i] == pytest.approx((1.0 / len(top)) if y[i] in top else 0.0, abs=1e-15)
    tk = top_k(C)
    assert tk.names == tuple(f"top-{k}" for k in range(1, C))
    assert tk.params.tolist() == [[1.0 if r <= k else 0.0 for r in range(1, C + 1)]
                                  for k in range(1, C)]
    assert top_k(C, [2]).params.tolist() == [[1.0, 1.0, 0.0, 0.0, 0.0]]
    d = dcg(C)
    for m, g in enumerate(DCG_GAMMAS):
        for r in range(1, C + 1):
            assert d.params[m, r - 1] == pytest.approx(math.log2(1 + r) ** (-g), rel=1e-14)
    Pu = P[:100]
    Vd, Ud = d.values(y[:100], Pu)
    for i in range(100):
        s = sorted(Pu[i].tolist(), reverse=True)
        r = paper_rank(Pu[i].tolist(), int(y[i]))
        for m, g in enumerate(DCG_GAMMAS):
            assert Vd[m, i] == pytest.approx(
                math.fsum(s[k] * math.log2(2 + k) ** (-g) for k in range(C)), abs=1e-14)
            assert Ud[m, i] == pytest.approx(math.log2(1 + r) ** (-g), rel=1e-14)
    # top-K expected realized utility = P(y among top K) -- the ties: group average
    Vk, Uk = tk.values(y, P)
    for i in range(100, 200):
        p = P[i].tolist()
        for m, K in enumerate(range(1, C)):
            ref = tie_broken_mean(p, [1.0 if r < K else 0.0 for r in range(C)])
            assert Uk[m, i] == pytest.approx(float(ref[y[i]]), abs=1e-15)
            assert Vk[m, i] == pytest.approx(math.fsum(sorted(p, reverse=True)[:K]), abs=1e-15)


# =========================================================================== decision, similarity


def test_decision_utilities_untied():
    """v = -min_a sum_y p_y l(y, a); realized -l(y, argmin), for M = 3 random loss matrices with
    C = 4 classes and K = 5 actions (continuous predictions: Bayes action unique, gap > 1e-9)."""
    rng = np.random.default_rng(50)
    L = rng.uniform(-1, 1, size=(3, 4, 5))
    P = rng.dirichlet(np.ones(4), size=150)
    y = rng.integers(0, 4, size=150)
    fam = decision(L)
    assert fam.n_classes == 4
    V, U = fam.values(y, P)
    for m in range(3):
        for i in range(150):
            E = [math.fsum(P[i, c] * L[m, c, a] for c in range(4)) for a in range(5)]
            best = int(np.argmin(E))
            assert sorted(E)[1] - E[best] > 1e-9
            assert V[m, i] == pytest.approx(-E[best], abs=1e-14)
            assert U[m, i] == -L[m, y[i], best]


def test_decision_ties_average_the_tied_bayes_actions():
    """0-1 loss on grid rows (exact ties, exact floats) and at p = (1/3, 1/3, 1/3), where the
    three expected losses 2/3 may round differently: the realized utility is minus the mean loss
    over the tied Bayes actions (tie set computed with Fractions)."""
    rng = np.random.default_rng(51)
    C = 4
    L01 = 1.0 - np.eye(C)
    P = np.vstack([grid_rows(rng, 80, C), np.full((1, C), 1.0 / C)])
    third = np.array([[1 / 3, 1 / 3, 1 - 2 / 3]])
    y = rng.integers(0, C, size=P.shape[0])
    fam = decision(L01)
    V, U = fam.values(y, P)
    n_tied = 0
    for i in range(P.shape[0]):
        E = [sum(Fraction(P[i, c]) * Fraction(L01[c, a]) for c in range(C)) for a in range(C)]
        tied = [a for a in range(C) if E[a] == min(E)]
        n_tied += len(tied) > 1
        ref = -sum(Fraction(L01[y[i], a]) for a in tied) / len(tied)
        assert U[0, i] == pytest.approx(float(ref), abs=1e-15)
        assert V[0, i] == pytest.approx(-float(min(E)), abs=1e-15)
    assert n_tied > 10
    V3, U3 = decision(1.0 - np.eye(3)).values([0, 1, 2], np.repeat(third, 3, axis=0))
    np.testing.assert_allclose(U3, -2 / 3, rtol=0, atol=1e-15)
    np.testing.assert_allclose(V3, -2 / 3, rtol=0, atol=1e-15)


def test_gain_matrix_is_the_decision_utility_of_minus_the_gains():
    """App. C.2: j* = argmax_j sum_i p_i R[i, j], u = R[y, j*], v = max_j sum_i p_i R[i, j]."""
    rng = np.random.default_rng(52)
    R = rng.uniform(0, 1, size=(2, 4, 4))
    P = rng.dirichlet(np.ones(4), size=100)
    y = rng.integers(0, 4, size=100)
    V, U = gain_matrix(R).values(y, P)
    for m in range(2):
        for i in range(100):
            G = [math.fsum(P[i, c] * R[m, c, j] for c in range(4)) for j in range(4)]
            j = int(np.argmax(G))
            assert V[m, i] == pytest.approx(G[j], abs=1e-14)
            assert U[m, i] == R[m, y[i], j]
    Ra = -sample_gain_matrices(5, 20, rng=0, kind="aligned").params
    assert np.all(Ra[:, np.arange(5), np.arange(5)] == 1.0)
    off = Ra[:, ~np.eye(5, dtype=bool)]
    assert off.min() >= 0.0 and off.max() <= 0.1
    Rm = -sample_gain_matrices(6, 10, rng=1, kind="misaligned", n_groups=3).params
    for R_ in Rm:
        assert set(np.unique(R_).tolist()) <= {0.0, 0.2, 1.0}
        assert np.all(np.diag(R_) == 1.0) and np.all(R_ == R_.T)


def test_similarity_utilities():
    """App. C.4: u(p, e_j) = sum_i p_i S[i, j] and v = p^T S p."""
    rng = np.random.default_rng(53)
    A = rng.uniform(-1, 1, size=(2, 4, 4))
    S = np.clip((A + A.transpose(0, 2, 1)) / 2, -1, 1)
    S[:, np.arange(4), np.arange(4)] = 1.0
    P = np.vstack([rng.dirichlet(np.ones(4), size=50), grid_rows(rng, 20, 4)])
    y = rng.integers(0, 4, size=70)
    fam = similarity(S)
    V, U = fam.values(y, P)
    for m in range(2):
        for i in range(70):
            p = P[i]
            assert V[m, i] == pytest.approx(
                math.fsum(p[a] * S[m, a, b] * p[b] for a in range(4) for b in range(4)),
                abs=1e-14)
            assert U[m, i] == pytest.approx(math.fsum(p[a] * S[m, a, y[i]] for a in range(4)),
                                            abs=1e-14)


def test_linear_and_classwise():
    rng = np.random.default_rng(54)
    P = rng.dirichlet(np.ones(3), size=30)
    y = rng.integers(0, 3, size=30)
    V, U = classwise(3).values(y, P)
    np.testing.assert_array_equal(V, P.T)
    np.testing.assert_array_equal(U, np.eye(3)[y].T)
    A = rng.uniform(-1, 1, size=(4, 3))
    V, U = linear(A).values(y, P)
    for m in range(4):
        for i in range(30):
            assert V[m, i] == pytest.approx(math.fsum(A[m] * P[i]), abs=1e-15)
            assert U[m, i] == A[m, y[i]]


def _all_kinds(rng, C):
    A = rng.uniform(-1, 1, size=(C, C))
    return [sample_linear(C, 3, rng=rng), sample_rank(C, 3, rng=rng), dcg(C), top_k(C),
            decision(rng.uniform(-1, 1, size=(2, C, C + 1))), decision(1.0 - np.eye(C)),
            similarity(np.clip((A + A.T) / 2, -1, 1))]


def test_eq_3_3_realized_minus_predicted_is_the_witness_inner_product():
    """Eq. (3.3): u(f, Y) - v_u = <e_Y - f, ubar(f)> per sample, for every kind, tied rows
    included."""
    rng = np.random.default_rng(60)
    C = 4
    P = np.vstack([rng.dirichlet(np.ones(C), size=60), grid_rows(rng, 60, C)])
    y = rng.integers(0, C, size=120)
    for fam in _all_kinds(rng, C):
        V, U = fam.values(y, P)
        ubar = fam.per_class(P)
        assert ubar.shape == (len(fam), 120, C)
        for m in range(len(fam)):
            for i in range(120):
                e = np.eye(C)[y[i]]
                assert U[m, i] - V[m, i] == pytest.approx(
                    math.fsum((e - P[i]) * ubar[m, i]), abs=1e-14)
                # and realized is ubar at the label, predicted is <p, ubar>
                assert U[m, i] == pytest.approx(ubar[m, i, y[i]], abs=1e-15)
        np.testing.assert_allclose(fam.predicted(P), V, rtol=0, atol=1e-14)


def test_cor_b10_rank_utility_is_linear_on_sorted_predictions():
    """Cor. B.10: for untied P, UC of rank theta equals UC of the linear payoff theta on the
    row-sorted predictions with the label moved to its sorted position."""
    rng = np.random.default_rng(61)
    C = 6
    P = rng.dirichlet(np.full(C, 0.7), size=800)
    assert untied(P)
    y = np.array([rng.choice(C, p=p) for p in P])
    order = np.argsort(-P, axis=1)
    Ps = np.take_along_axis(P, order, axis=1)
    ys = np.argmax(order == y[:, None], axis=1)
    fam = sample_rank(C, 20, rng=rng)
    a = utility_calibration(y, P, fam)
    b = utility_calibration(ys, Ps, linear(fam.params))
    np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-12)
    assert a.max > 0.005                            # not a vacuous comparison of zeros


# =========================================================================== population


def _exact_ubar(fam, m, p):
    """ubar of utility m at the exact (Fraction) prediction p, from the paper's formulas."""
    C = len(p)
    prm = fam.params[m]
    if fam.kind == "linear":
        return [Fraction(float(x)) for x in prm]
    if fam.kind == "rank":
        return tie_broken_mean(p, prm)
    if fam.kind == "similarity":
        return [sum(p[i] * Fraction(float(prm[i, j])) for i in range(C)) for j in range(C)]
    K = prm.shape[1]
    E = [sum(p[c] * Fraction(float(prm[c, a])) for c in range(C)) for a in range(K)]
    tied = [a for a in range(K) if E[a] == min(E)]
    return [-sum(Fraction(float(prm[j, a])) for a in tied) / len(tied) for j in range(C)]


def exact_population_uc(dist, fam):
    """sup_I |sum_a w_a <T_a - F_a, ubar_a> 1{v_a in I}| with exact rationals, I over all
    intervals between distinct predicted utilities v_a = <F_a, ubar_a>."""
    w, T, F = dist.exact
    out = []
    for m in range(len(fam)):
        V, R = [], []
        for a in range(len(w)):
            ub = _exact_ubar(fam, m, list(F[a]))
            V.append(sum(f * u for f, u in zip(F[a], ub)))
            R.append(w[a] * sum((t - f) * u for t, f, u in zip(T[a], F[a], ub)))
        vals = sorted(set(V))
        best = Fraction(0)
        for i, lo in enumerate(vals):
            for hi in vals[i:]:
                best = max(best, abs(sum(r for v, r in zip(V, R) if lo <= v <= hi)))
        out.append(float(best))
    return np.array(out)


@pytest.mark.parametrize("C", [2, 3, 4])
def test_population_uc_equals_the_exact_supremum(C):
    """Random exact populations (forced collisions: equal, permuted and coordinate-sharing
    prediction rows, hence exact ties of predicted utility), every family kind."""
    rng = np.random.default_rng(70 + C)
    checked = 0
    for _ in range(4):
        d = pop.random_finite_distribution(rng, n_atoms=int(rng.integers(6, 10)), n_classes=C)
        fams = [classwise(C), top_k(C), dcg(C, [1.0]), sample_linear(C, 3, rng=rng),
                sample_rank(C, 2, rng=rng), decision(rng.uniform(-1, 1, size=(2, C, 3))),
                decision(1.0 - np.eye(C)), gain_matrix(np.eye(C) * 0.5 + 0.5 / C)]
        res = population_uc(d, fams)
        ref = np.concatenate([exact_population_uc(d, f) for f in fams])
        np.testing.assert_allclose(res.values, ref, rtol=0, atol=1e-12)
        checked += int(np.sum(ref > 1e-3))
        # the data set whose empirical law IS d (atom a, label y repeated N w_a T_ay times)
        w, T, _ = d.exact
        N = math.lcm(*[(wi * t).denominator for wi, row in zip(w, T) for t in row])
        counts = np.array([[int(wi * t * N) for t in row] for wi, row in zip(w, T)])
        atom = np.repeat(np.repeat(np.arange(d.n_atoms), C), counts.ravel())
        label = np.repeat(np.tile(np.arange(C), d.n_atoms), counts.ravel())
        emp = utility_calibration(label, d.prediction[atom], fams)
        np.testing.assert_allclose(emp.values, ref, rtol=0, atol=1e-12)
    assert checked > 20


def test_estimator_converges_to_population_uc():
    """n = 200,000 draws from a 6-atom population.  For each interval I (at most 21 distinct
    ones for 6 atoms) the estimator's term is a mean of Z = (u - v) 1{v in I} whose standard
    deviation is at most s = sqrt(E (u - v)^2) (computed exactly below), and
    |UC_hat - UC| <= max_I |mean_I - E_I|; by the CLT and a union bound over 21 intervals x
    7 utilities, |UC_hat - UC| <= 6 s / sqrt(n) fails with probability < 147 * 2e-9."""
    rng = np.random.default_rng(80)
    d = pop.random_finite_distribution(rng, n_atoms=6, n_classes=3)
    fams = [classwise(3), top_k(3), linear([[1.0, -0.5, 0.2], [-1.0, 0.3, 0.9]])]
    exact = population_uc(d, fams).values
    n = 200_000
    atoms = rng.choice(d.n_atoms, size=n, p=d.weights / d.weights.sum())
    cum = np.cumsum(d.truth[atoms], axis=1)
    y = np.minimum((cum < rng.random((n, 1))).sum(axis=1), 2)
    est = utility_calibration(y, d.prediction[atoms], fams).values
    w, T, F = d.weights, d.truth, d.prediction
    k = 0
    for fam in fams:
        ubar = fam.per_class(F)
        for m in range(len(fam)):
            v = np.sum(F * ubar[m], axis=1)
            s = math.sqrt(float(np.sum(w[:, None] * T * (ubar[m] - v[:, None]) ** 2)))
            assert abs(est[k] - exact[k]) <= 6 * s / math.sqrt(n)
            k += 1
    assert exact.max() > 0.05                  # the comparison is not between two zeros


# =========================================================================== samplers


def test_sample_linear_is_uniform_on_the_cube_surface():
    """M = 60,000 draws for C = 4: every row has max |a_j| = 1; the facet (argmax |a_j|, sign)
    is uniform over the 2C facets (chi-square, p > 1e-4); the other coordinates are U[-1, 1]
    (Kolmogorov-Smirnov, p > 1e-4).  A correct sampler fails either with probability < 2e-4."""
    C, M = 4, 60_000
    A = sample_linear(C, M, rng=123).params
    assert A.shape == (M, C)
    np.testing.assert_array_equal(np.abs(A).max(axis=1), 1.0)
    j = np.abs(A).argmax(axis=1)
    assert np.all((np.abs(A) == 1.0).sum(axis=1) == 1)
    facet = 2 * j + (A[np.arange(M), j] > 0)
    counts = np.bincount(facet, minlength=2 * C)
    assert stats.chisquare(counts).pvalue > 1e-4
    others = A[np.abs(A) < 1.0]
    assert others.size == M * (C - 1)
    assert stats.kstest(others, stats.uniform(loc=-1, scale=2).cdf).pvalue > 1e-4
    # the coordinates other than the facet's are uncorrelated with it (sign symmetric)
    assert abs(np.mean(others)) < 5 * math.sqrt(1 / 3 / others.size)


def test_sample_linear_sparsity_and_sample_rank():
    C, M = 8, 20_000
    for k in (1, 3, 8):
        A = sample_linear(C, M, rng=k, sparsity=k).params
        assert np.all((A != 0).sum(axis=1) == k)
        np.testing.assert_allclose(np.abs(A).max(axis=1), 1.0, rtol=0, atol=1e-15)
        if k < C:       # the active classes are uniform: chi-square p > 1e-4
            assert stats.chisquare((A != 0).sum(axis=0)).pvalue > 1e-4
    T = sample_rank(C, M, rng=5).params
    assert np.all(np.diff(T, axis=1) <= 0)
    np.testing.assert_array_equal(np.abs(T).max(axis=1), 1.0)
    # sorted draw: ||theta||_inf = 1 is attained at theta_1 = 1 or theta_C = -1, each with
    # probability 1/2 (binomial: 5 standard errors)
    top = np.mean(T[:, 0] == 1.0)
    assert abs(top - 0.5) < 5 * math.sqrt(0.25 / M)
    assert np.all((T[:, 0] == 1.0) | (T[:, -1] == -1.0))


def test_samplers_are_reproducible():
    for f in (lambda r: sample_linear(5, 10, rng=r).params,
              lambda r: sample_linear(5, 10, rng=r, sparsity=2).params,
              lambda r: sample_rank(5, 10, rng=r).params,
              lambda r: sample_gain_matrices(5, 10, rng=r).params):
        np.testing.assert_array_equal(f(7), f(7))
        np.testing.assert_array_equal(f(np.random.default_rng(7)), f(7))
        assert not np.array_equal(f(7), f(8))


# =========================================================================== eCDF helpers


def test_dkw_halfwidth_formula():
    for M in (1, 10, 1500):
        for delta in (0.01, 0.05, 0.5):
            assert dkw_halfwidth(M, delta) == pytest.approx(
                math.sqrt(math.log(2 / delta) / (2 * M)), rel=1e-15)


def test_ecdf_call_lower_upper_against_direct_counts():
    rng = np.random.default_rng(90)
    E = np.round(rng.uniform(0, 1, size=57), 2)              # ties included
    F = ecdf_from_errors(E, delta=0.1, eps_stat=0.05)
    h = math.sqrt(math.log(2 / 0.1) / (2 * 57))
    assert F.halfwidth == pytest.approx(h, rel=1e-15)
    for e in np.concatenate([np.linspace(-0.2, 1.2, 281), E]):
        cnt = sum(1 for x in E if x <= e) / 57
        assert F(e) == cnt
        cm = sum(1 for x in E if x <= e - 0.05) / 57
        cp = sum(1 for x in E if x <= e + 0.05) / 57
        assert F.lower(e) == pytest.approx(max(cm - h, 0.0), abs=1e-15)
        assert F.upper(e) == pytest.approx(min(cp + h, 1.0), abs=1e-15)
    assert F.quantile(0.5) == sorted(E)[math.ceil(0.5 * 57) - 1]


def _grid_cdf(values, weights, x):
    """sum of the (normalised) weights of the values <= t, for every t in x."""
    values = np.asarray(values, dtype=float)
    w = np.full(values.size, 1 / values.size) if weights is None else \
        np.asarray(weights, dtype=float) / np.sum(weights)
    return (values[None, :] <= np.asarray(x, dtype=float)[:, None]).astype(float) @ w


def test_step_cdf_distance_on_a_grid_exactly():
    """Dyadic data (multiples of 1/64) and a grid of every multiple of 1/2048 in [-1/4, 9/4]:
    the step functions are constant between multiples of 1/64, so the grid sees every piece and
    the grid sup / Riemann sum (left end points) are exact up to summation rounding."""
    rng = np.random.default_rng(91)
    x = np.arange(-512, 4608 + 1) / 2048
    for _ in range(30):
        a = rng.integers(0, 129, size=int(rng.integers(1, 15))) / 64
        b = rng.integers(0, 129, size=int(rng.integers(1, 15))) / 64
        wb = rng.integers(1, 5, size=b.size).astype(float)
        for weights in (None, wb):
            diff = _grid_cdf(a, None, x) - _grid_cdf(b, weights, x)
            sup = np.abs(diff).max()
            assert step_cdf_distance(a, b, reference_weights=weights) == pytest.approx(
                sup, abs=1e-14)
            inside = (x >= 0) & (x < 2)
            l2 = math.sqrt(math.fsum((diff[inside] ** 2 / 2048).tolist()))
            assert step_cdf_distance(a, b, reference_weights=weights, norm="l2") == \
                pytest.approx(l2, abs=1e-12)


def test_step_cdf_distance_continuous_with_grid_tolerance():
    """Continuous data: a Riemann sum with spacing h differs from the exact integral of the
    squared difference (values in [0, 1]) by at most J h with J the number of jumps, so the
    L2 distances differ by at most sqrt(J h); the grid sup never exceeds the exact sup."""
    rng = np.random.default_rng(92)
    h = 1 / 20_000
    x = np.arange(0, 2, h)
    for _ in range(10):
        a = rng.uniform(0, 2, size=12)
        b = rng.uniform(0, 2, size=9)
        diff = _grid_cdf(a, None, x) - _grid_cdf(b, None, x)
        l2 = math.sqrt(float(np.sum(diff ** 2) * h))
        assert abs(step_cdf_distance(a, b, norm="l2") - l2) <= math.sqrt(21 * h)
        assert step_cdf_distance(a, b) >= np.abs(diff).max() - 1e-15
    # support restricts the integral: distance of {0.5} to {1.0} on [0, 0.75] is sqrt(0.25)
    assert step_cdf_distance([0.5], [1.0], norm="l2", support=(0.0, 0.75)) == \
        pytest.approx(0.5, abs=1e-15)


def test_band_covers_against_a_dense_grid():
    """Dyadic errors / references / eps_stat (multiples of 1/64; the band and the reference
    jump only there): checking every multiple of 1/2048 is an exact coverage test."""
    rng = np.random.default_rng(93)
    x = np.arange(-1024, 5120 + 1) / 2048
    seen = {True: 0, False: 0}
    for _ in range(150):
        E = rng.integers(0, 129, size=int(rng.integers(5, 40))) / 64
        ref = np.clip(E[rng.integers(0, E.size, size=int(rng.integers(3, 40)))]
                      + rng.integers(-6, 7, size=1) / 64, 0, None)
        eps = float(rng.choice([0.0, 1 / 64, 4 / 64]))
        wr = rng.integers(1, 4, size=ref.size).astype(float)
        for weights in (None, wr):
            F = ecdf_from_errors(E, delta=float(rng.choice([0.05, 0.3, 0.9])), eps_stat=eps)
            G = _grid_cdf(ref, weights, x)
            h = math.sqrt(math.log(2 / F.delta) / (2 * E.size))
            lo = np.clip(_grid_cdf(E, None, x - eps) - h, 0, 1)
            hi = np.clip(_grid_cdf(E, None, x + eps) + h, 0, 1)
            expected = bool(np.all(G >= lo - 1e-12) and np.all(G <= hi + 1e-12))
            assert band_covers(F, ref, reference_weights=weights) == expected
            seen[expected] += 1
    assert seen[True] > 30 and seen[False] > 30


def test_utility_ecdf_wraps_the_estimates():
    rng = np.random.default_rng(94)
    P = rng.dirichlet(np.ones(4), size=300)
    y = rng.integers(0, 4, size=300)
    fam = sample_linear(4, 50, rng=rng)
    F = utility_ecdf(y, P, fam, delta=0.2, eps_stat=0.01)
    np.testing.assert_array_equal(F.errors, np.sort(utility_calibration(y, P, fam).values))
    assert F.eps_stat == 0.01 and F.halfwidth == pytest.approx(
        math.sqrt(math.log(10) / 100), rel=1e-15)
    assert F.label == "U_lin"


# =========================================================================== bad input


def test_bad_predictions_and_labels_name_the_argument():
    P = np.array([[0.2, 0.8], [0.6, 0.4]])
    y = np.array([1, 0])
    fam = classwise(2)
    with pytest.raises(ValueError, match="y_prob|predictions"):
        utility_calibration(y, np.array([[np.nan, 1.0], [0.6, 0.4]]), fam)
    with pytest.raises(ValueError, match=r"(y_prob|predictions).*sums to"):
        utility_calibration(y, np.array([[0.3, 0.8], [0.6, 0.4]]), fam)
    with pytest.raises(ValueError, match=r"(y_true|labels).*out of range"):
        utility_calibration(np.array([1, 2]), P, fam)
    with pytest.raises(ValueError, match="y_true|labels"):
        utility_calibration(np.array([1, 0, 1]), P, fam)
    with pytest.raises(ValueError, match="empty"):
        utility_calibration(np.array([], dtype=int), np.zeros((0, 2)), fam)
    with pytest.raises(ValueError, match=r"predictions: have 2 classes.*3"):
        utility_calibration(y, P, classwise(3))
    with pytest.raises(ValueError, match="predictions: have 2 classes"):
        classwise(3).values(y, P)
    d = pop.FiniteDistribution([0.5, 0.5], [[1.0, 0.0], [0.0, 1.0]], P)
    with pytest.raises(ValueError, match="predictions: have 2 classes"):
        population_uc(d, top_k(3))
    with pytest.raises(TypeError, match="utilities"):
        utility_calibration(y, P, [np.eye(2)])
    with pytest.raises(TypeError, match="utilities"):
        utility_calibration(y, P, [])
    with pytest.raises(ValueError, match="chunk"):
        utility_calibration(y, P, fam, chunk=0)


def test_bad_utility_parameters():
    with pytest.raises(ValueError, match=r"params.*\[-1, 1\]"):
        linear([[1.5, 0.0]])
    with pytest.raises(ValueError, match="params"):
        rank([[1.0, np.nan]])
    with pytest.raises(ValueError, match=r"params.*\[-1, 1\]"):
        decision(np.full((2, 2), -2.0))
    with pytest.raises(ValueError, match="params"):
        gain_matrix(np.full((2, 2), 1.01))
    with pytest.raises(ValueError, match="params.*square"):
        similarity(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="kind"):
        UtilityFamily("quadratic", np.zeros((1, 2)), ("q",))
    with pytest.raises(ValueError, match="names"):
        UtilityFamily("linear", np.zeros((2, 2)), ("only one",))
    with pytest.raises(ValueError, match="params.*empty"):
        linear(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="ks"):
        top_k(3, [0])
    with pytest.raises(ValueError, match="ks"):
        top_k(3, [4])
    with pytest.raises(ValueError, match="gammas"):
        dcg(3, [-1.0])
    with pytest.raises(ValueError, match="n_classes"):
        classwise(1)


def test_bad_sampler_arguments():
    with pytest.raises(ValueError, match="sparsity"):
        sample_linear(3, 5, rng=0, sparsity=4)
    with pytest.raises(ValueError, match="sparsity"):
        sample_linear(3, 5, rng=0, sparsity=0)
    with pytest.raises(ValueError, match="sparsity"):
        sample_linear(3, 5, rng=0, sparsity=1.5)
    with pytest.raises(ValueError, match="n_classes"):
        sample_linear(1, 5, rng=0)
    with pytest.raises(ValueError, match="n_utilities"):
        sample_rank(3, 0, rng=0)
    with pytest.raises(TypeError, match="rng"):
        sample_linear(3, 5, rng=None)
    with pytest.raises(ValueError, match="kind"):
        sample_gain_matrices(3, 5, rng=0, kind="random")


def test_bad_estimator_and_ecdf_arguments():
    with pytest.raises(ValueError, match="realized"):
        uc_from_values([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="predicted"):
        uc_from_values([np.nan, 0.2], [0.1, 0.2])
    with pytest.raises(ValueError, match="predicted.*empty"):
        uc_from_values([], [])
    with pytest.raises(ValueError, match="weights"):
        uc_from_values([0.1, 0.2], [0.1, 0.2], weights=[1.0])
    with pytest.raises(ValueError, match="weights"):
        uc_from_values([0.1, 0.2], [0.1, 0.2], weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="tie_tol"):
        uc_from_values([0.1, 0.2], [0.1, 0.2], tie_tol=-1e-9)
    with pytest.raises(ValueError, match="predicted"):
        uc_brute_force([[0.1, 0.2]] * 2, [[0.1, 0.2]] * 2)
    for bad in (0, 1, 1.5, -0.1, True, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            dkw_halfwidth(10, bad)
        with pytest.raises(ValueError, match="delta"):
            ecdf_from_errors([0.1, 0.2], delta=bad)
    with pytest.raises(ValueError, match="n_utilities"):
        dkw_halfwidth(0, 0.05)
    with pytest.raises(ValueError, match="eps_stat"):
        ecdf_from_errors([0.1], eps_stat=-0.1)
    with pytest.raises(ValueError, match="errors.*empty"):
        ecdf_from_errors([])
    with pytest.raises(ValueError, match="errors"):
        ecdf_from_errors([0.1, np.inf])
    with pytest.raises(ValueError, match="norm"):
        step_cdf_distance([0.1], [0.2], norm="l1")


def test_result_container():
    res = UCResult.concatenate([uc_from_values([0.45, 0.55], [0.05, 0.95]),
                                uc_from_values([0.5, 0.5], [1.0, 0.0])])
    assert len(res) == 2 and res.max == pytest.approx(0.2, abs=1e-15)
    assert utility_tie_tolerance(10) == 40 * np.finfo(float).eps


def test_worker_threads_do_not_change_the_result():
    from calnotes.theory import utility as ut
    """Chunks are computed independently, so the thread count cannot change any number."""
    rng = np.random.default_rng(11)
    P = rng.dirichlet(np.ones(7), size=900)
    y = rng.integers(0, 7, size=900)
    fams = [ut.sample_linear(7, 150, rng=1), ut.sample_rank(7, 150, rng=2), ut.top_k(7)]
    one = ut.utility_calibration(y, P, fams, chunk=16, workers=1)
    many = ut.utility_calibration(y, P, fams, chunk=16, workers=3)
    for attr in ("values", "lower", "upper", "sign", "mass"):
        np.testing.assert_array_equal(getattr(one, attr), getattr(many, attr))
    assert one.names == many.names
    with pytest.raises(ValueError, match="workers"):
        ut.utility_calibration(y, P, fams, workers=0)
