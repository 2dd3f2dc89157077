"""The fast utility calibration engine (calnotes.theory.utility._uc_families, calnotes._engine.row_sort) and
the report's import costs.

Every expected value comes from a plain loop over the definition, independent of the engine:
predicted and realized utilities straight from the utility's formula (class-wise ``p_c``,
top-``K`` sums of the sorted row with ties averaged, ``<p, a>`` and ``a_y``, rank valuations
by enumerating the tie group), then the Lemma 3.4 supremum by enumerating every interval of
tie groups (``math.fsum``).  Orders are checked against ``np.argsort(kind="stable")``.

Tolerance for the estimator, derived: the engine's prefix sums add ``n`` residuals
``r_i = (u_i - v_i) / n`` with ``|r_i| <= 2 / n`` left to right; the error of a running sum of
``n`` terms is at most ``(n - 1) eps sum |r_i| <= 2 (n - 1) eps`` (the reference, ``fsum``, is
exact to one rounding), and the predicted utilities themselves carry at most ``C eps`` of
rounding per sample (a length-``C`` dot product of terms bounded by ``p_j``), which moves a
sum of ``n`` residuals by at most ``C eps``.  So ``|engine - reference| <= (2 n + C) eps``,
checked with a factor 2 of room: ``TOL = 2 (2 n + C) eps``.
"""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from calnotes._engine import row_sort as _rowsort
from calnotes.theory import utility as ut
from calnotes.theory.utility import (classwise, decision, linear, rank, sample_linear, sample_rank,
                                     similarity, top_class, top_k)

EPS = float(np.finfo(np.float64).eps)


def tol(n, C):
    return 2.0 * (2 * n + C) * EPS


# --------------------------------------------------------------------------- references

def groups_by_value(v, tie_tol):
    """Indices grouped by predicted value (consecutive values within ``tie_tol`` are one),
    by a plain loop over the values in increasing order."""
    order = sorted(range(len(v)), key=lambda i: (v[i], i))
    groups, last = [], None
    for i in order:
        if last is None or v[i] - last > tie_tol:
            groups.append([])
        groups[-1].append(i)
        last = v[i]
    return groups


def sup_over_intervals(v, u, tie_tol):
    """Lemma 3.4 by definition: the largest |mean((u - v) 1{v in I})| over intervals of tie
    groups, each sum taken exactly (fsum)."""
    n = len(v)
    groups = groups_by_value(v, tie_tol)
    best = 0.0
    for a in range(len(groups)):
        for b in range(a, len(groups)):
            members = [i for g in groups[a:b + 1] for i in g]
            best = max(best, abs(math.fsum((u[i] - v[i]) / n for i in members)))
    return best


def tie_group(p, j):
    """0-based positions ``lo .. hi - 1`` of class ``j`` in the descending order of ``p``."""
    lo = sum(1 for x in p if x > p[j])
    hi = sum(1 for x in p if x >= p[j])
    return lo, hi


def definition_values(fam, y, P):
    """Predicted and realized utilities of every utility of ``fam``, by loops over the
    formulas (module docstring of calnotes.theory.utility), shape (M, n)."""
    n, C = P.shape
    prm = fam.params
    V = np.zeros((len(fam), n))
    U = np.zeros((len(fam), n))
    for m in range(len(fam)):
        for i in range(n):
            p = [float(x) for x in P[i]]
            if fam.kind == "linear":
                V[m, i] = math.fsum(p[j] * prm[m, j] for j in range(C))
                U[m, i] = prm[m, y[i]]
            elif fam.kind == "rank":
                def ubar(j):
                    lo, hi = tie_group(p, j)
                    return math.fsum(prm[m, lo:hi]) / (hi - lo)
                V[m, i] = math.fsum(p[j] * ubar(j) for j in range(C))
                U[m, i] = ubar(y[i])
            else:
                raise AssertionError("reference written for linear and rank utilities")
    return V, U


def reference_uc(fam, y, P):
    V, U = definition_values(fam, y, P)
    tt = ut.utility_tie_tolerance(P.shape[1])
    return np.array([sup_over_intervals(V[m], U[m], tt) for m in range(len(fam))])


def problem(n, C, seed, decimals=None):
    rng = np.random.default_rng(seed)
    z = 2.0 * rng.standard_normal((n, C))
    P = np.exp(z - z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    if decimals is not None:                       # ties: rows of a few distinct values
        P = np.round(P, decimals)
        P[:, -1] = 1.0 - P[:, :-1].sum(axis=1)
        P = np.clip(P, 0.0, 1.0)
        P /= P.sum(axis=1, keepdims=True)
    y = np.minimum((P.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1), C - 1)
    return y, P


def families(C, rng):
    return [top_class(C), classwise(C), top_k(C), sample_linear(C, 5, rng=rng),
            sample_rank(C, 5, rng=rng), linear(np.eye(C)[[C - 1]], label="one class")]


# --------------------------------------------------------------------------- row orders

def _row_cases():
    rng = np.random.default_rng(3)
    yield rng.uniform(-1, 1, (3, 500))
    yield np.round(rng.uniform(-1, 1, (3, 500)), 1)                       # many exact ties
    V = rng.uniform(0, 1, (3, 500))
    yield V + rng.integers(-3, 4, V.shape) * np.spacing(V)                # values 1 ulp apart
    yield rng.choice([0.0, -0.0, 5e-324, -5e-324, 1e-300, 1.0, -1.0], (3, 64))
    yield np.array([[0.25]])                                              # n = 1
    yield np.array([[0.5, 0.5], [0.75, -0.75]])                           # n = 2


@pytest.mark.parametrize("V", list(_row_cases()))
def test_stable_row_order_is_the_stable_argsort(V):
    idx, Vs = _rowsort.stable_row_order(V)
    ref = np.argsort(V, axis=1, kind="stable")
    assert np.array_equal(idx, ref)
    assert np.array_equal(Vs, np.take_along_axis(V, ref, axis=1))


def test_row_order_check_can_fail():
    """Negative control: the integer keys alone (without the final check and repair) misorder
    values that differ only in the dropped low bits; the test above would catch that."""
    V = np.array([[0.5 + 3 * np.spacing(0.5), 0.5 + np.spacing(0.5), 0.5]])
    n = V.shape[1]
    bits = max(1, (n - 1).bit_length())
    key = V.view(np.int64) & np.int64(~((1 << bits) - 1))
    key |= np.arange(n)
    broken = np.sort(key, axis=1) & ((1 << bits) - 1)
    assert not np.array_equal(broken, np.argsort(V, axis=1, kind="stable"))
    assert np.array_equal(_rowsort.stable_row_order(V)[0], np.argsort(V, axis=1, kind="stable"))


def _start_orders(row, rng):
    """Starting orders: ``row``'s stable order with a tenth of its neighbours swapped (almost
    sorted), its reverse, a random permutation, and the sorted order with every tie run in
    reverse input order."""
    ref = np.argsort(row, kind="stable")
    near = ref.copy()
    swap = rng.choice(max(1, row.size - 1), size=max(1, row.size // 10), replace=False)
    for i in swap[swap < row.size - 1]:
        near[[i, i + 1]] = near[[i + 1, i]]
    yield near
    yield ref[::-1].copy()
    yield rng.permutation(row.size)
    yield np.argsort(-row, kind="stable")[::-1].copy()          # ties in reverse input order


@pytest.mark.parametrize("V", list(_row_cases()))
def test_finishing_an_almost_sorted_order_is_the_stable_argsort(V):
    """finish_stable_order (the two-class utilities' rows that the probability's order leaves
    out of order) gives np.argsort(row, kind="stable") and the row's own values (signs of
    zero included) from any starting order.  Control: the stable sort of the gathered values
    alone orders ties by their place in the starting order and is caught."""
    rng = np.random.default_rng(V.size)
    caught = 0
    for row in V:
        ref = np.argsort(row, kind="stable")
        for order in _start_orders(row, rng):
            idx, Vs = _rowsort.finish_stable_order(row[order], order, row)
            assert np.array_equal(idx, ref)
            assert np.array_equal(Vs, row[ref]) and np.array_equal(np.signbit(Vs),
                                                                  np.signbit(row[ref]))
            naive = order[np.argsort(row[order], kind="stable")]
            caught += not np.array_equal(naive, ref)
    has_ties = any(np.unique(row).size < row.size for row in V)
    assert caught > 0 or not has_ties


# --------------------------------------------------------------------------- the engine

CASES = [(2, 40, None), (2, 40, 1), (3, 30, None), (3, 30, 1), (5, 25, 2), (2, 1, None),
         (3, 2, None), (2, 2, 1)]


@pytest.mark.parametrize("C, n, decimals", CASES)
def test_engine_matches_the_definition(C, n, decimals):
    y, P = problem(n, C, seed=C * 100 + n, decimals=decimals)
    fams = families(C, np.random.default_rng(C))
    got = ut._uc_families(y, P, fams, chunk=2, workers=2)
    for fam, res in zip(fams, got):
        ref = reference_uc(fam, y, P)
        np.testing.assert_allclose(res.values, ref, rtol=0, atol=tol(n, C),
                                   err_msg=f"{fam.label}, C={C}, n={n}, decimals={decimals}")


@pytest.mark.parametrize("C, n, decimals", CASES)
def test_worst_interval_is_attained(C, n, decimals):
    """The reported interval [lower, upper] holds a deviation equal to the value, over
    ``mass * n`` samples, recomputed by a loop over the samples (definition values)."""
    y, P = problem(n, C, seed=C + n, decimals=decimals)
    fams = families(C, np.random.default_rng(C + 1))
    tt = ut.utility_tie_tolerance(C)
    for fam, res in zip(fams, ut._uc_families(y, P, fams, chunk=3, workers=1)):
        V, U = definition_values(fam, y, P)
        for m in range(len(fam)):
            if res.values[m] == 0.0:
                assert np.isnan(res.lower[m]) and res.sign[m] == 0
                continue
            inside = [i for i in range(n)
                      if res.lower[m] - tt <= V[m, i] <= res.upper[m] + tt]
            dev = math.fsum((U[m, i] - V[m, i]) / n for i in inside)
            assert abs(abs(dev) - res.values[m]) <= tol(n, C) + 2 * tt
            assert np.sign(dev) == res.sign[m]
            assert abs(len(inside) / n - res.mass[m]) < 1e-12


def test_engine_independent_of_threads_and_presorting():
    """Same chunk: identical numbers whatever the threads (each chunk is computed the same
    way) and with presorted columns; another chunk: equal up to the matrix product's rounding
    (BLAS may sum a product of another number of rows in another order)."""
    y, P = problem(300, 4, seed=5, decimals=2)
    fams = families(4, np.random.default_rng(9))
    presorted = np.sort(P.T, axis=1)
    for chunk in (2, 7, 64):
        base = ut._uc_families(y, P, fams, chunk=chunk, workers=1)
        for workers, pre in ((3, None), (4, presorted), (1, presorted)):
            other = ut._uc_families(y, P, fams, chunk=chunk, workers=workers, presorted=pre)
            for a, b in zip(base, other):
                for name in ("values", "lower", "upper", "sign", "mass"):
                    np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        if chunk != 64:
            wide = ut._uc_families(y, P, fams, chunk=64, workers=2)
            for a, b in zip(base, wide):
                np.testing.assert_allclose(a.values, b.values, rtol=0, atol=tol(300, 4))


def test_binary_hint_gives_the_sorted_result():
    """For two classes the engine takes the order of p_1 (linear) or max p (rank) where it
    sorts a utility's predicted values; the result equals the plain sort's to rounding."""
    y, P = problem(2000, 2, seed=11)
    fams = [sample_linear(2, 20, rng=1), sample_rank(2, 20, rng=2), linear([[0.3, 0.3]])]
    tt = ut.utility_tie_tolerance(2)
    for fam, res in zip(fams, ut._uc_families(y, P, fams, chunk=8, workers=2)):
        V, U = fam.values(y, P)
        plain = ut._scan(V, (U - V) / y.size, tt)[0]
        np.testing.assert_allclose(res.values, plain, rtol=0, atol=tol(2000, 2))


def test_engine_check_can_fail():
    """Negative control: the comparison above detects a residual off by one sample."""
    y, P = problem(40, 3, seed=1)
    fam = sample_linear(3, 3, rng=0)
    V, U = fam.values(y, P)
    broken = U.copy()
    broken[:, 0] += 1.0                             # one sample's realized utility wrong
    tt = ut.utility_tie_tolerance(3)
    wrong = ut._scan(V, (broken - V) / 40, tt)[0]
    assert np.abs(wrong - reference_uc(fam, y, P)).max() > 100 * tol(40, 3)


def test_top_k_running_sums_match_the_product():
    """top-K predicted utilities as running sums of the sorted row agree with the matrix
    product of UtilityFamily.values to the product's rounding (C eps)."""
    y, P = problem(500, 30, seed=2)
    fam = top_k(30)
    calc = ut._Calibration(y, P, [fam], 5)
    V_prod = fam.values(y, P)[0]
    Ks = (fam.params == 1.0).sum(axis=1)
    np.testing.assert_allclose(calc.CT[Ks - 1], V_prod, rtol=0, atol=30 * EPS)


def test_other_families_and_public_function():
    """decision and similarity utilities take the general path; utility_calibration returns
    one result in family order."""
    y, P = problem(60, 3, seed=4)
    fams = [decision(-np.eye(3)), similarity(np.full((3, 3), 0.5) + 0.5 * np.eye(3)),
            rank([[1.0, 0.5, 0.0]])]
    res = ut.utility_calibration(y, P, fams, chunk=2, workers=2)
    tt = ut.utility_tie_tolerance(3)
    expected = []
    for fam in fams:
        V, U = fam.values(y, P)
        expected += [sup_over_intervals(V[m], U[m], tt) for m in range(len(fam))]
    np.testing.assert_allclose(res.values, expected, rtol=0, atol=tol(60, 3))


def test_workers_use_every_available_cpu():
    from calnotes import evaluation

    if hasattr(os, "sched_getaffinity") and not os.environ.get("CALNOTES_THREADS"):
        assert evaluation.utility_part._UC_WORKERS == len(os.sched_getaffinity(0))
        assert ut._default_workers() == len(os.sched_getaffinity(0))


# --------------------------------------------------------------------------- import costs

def test_import_calnotes_loads_no_scipy():
    code = ("import sys, calnotes; import numpy as np; from calnotes.core.kernel import smooth_ece;"
            "smooth_ece(np.array([0, 1, 1]), np.array([0.2, 0.6, 0.9]));"
            "print(sorted(m for m in sys.modules if m.startswith('scipy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_unreflected_convolution_matches_direct_sum():
    """kernel._fftconvolve_columns (the steps of scipy.signal.fftconvolve) against the direct
    convolution sum np.convolve; FFT rounding is about eps log2(L) times the largest partial
    sum, bounded here by 1e-12 for values in [0, 1] and L < 3000."""
    from calnotes.core.kernel import _fftconvolve_columns

    rng = np.random.default_rng(0)
    B = rng.random((1025, 2))
    kv = rng.random(301)
    got = _fftconvolve_columns(B, kv)
    for c in range(2):
        np.testing.assert_allclose(got[:, c], np.convolve(B[:, c], kv), rtol=0, atol=1e-12)


def test_epanechnikov_reflected_far_points_are_nan():
    """Regression: a reflected Epanechnikov regression on a binned grid recomputed the points
    far from every sample exactly and failed ("need at least one array to concatenate");
    those points have no sample within the kernel's reach, so the estimate is NaN."""
    from calnotes.core.kernel import nadaraya_watson

    x = np.array([0.1, 0.12, 0.15, 0.2] * 500)
    y = np.array([0.0, 1.0, 1.0, 0.0] * 500)
    t = np.linspace(0, 1, 3001)
    m = nadaraya_watson(x, y, t, bandwidth=0.05, kernel="epanechnikov", reflect=True,
                        method="binned")
    far = (t > 0.2 + 0.05 + 1e-3) | (t < 0.1 - 0.05 - 1e-3)      # no sample within 0.05
    assert np.all(np.isnan(m[far]))
    assert np.all(np.isfinite(m[(t >= 0.1) & (t <= 0.2)]))
