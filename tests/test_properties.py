"""Property tests (hypothesis): invariances, ranges and inequalities, zero at calibration.

Tolerance: ``TOL`` = 1e-12.  Values compared here are sums of at most ~40 float64 terms
of size <= 1, evaluated in different orders (a permutation changes the summation order),
so they can differ by ~40 * 2^-53 ~ 5e-15; 1e-12 leaves room and is still far below any
change a wrong bin assignment would cause (>= 1/n^2 >= 6e-4 for n <= 40).
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

import brute
import calnotes as cn

TOL = 1e-12

# ----------------------------------------------------------------------------- strategies

# Predictions: continuous values, decimal grids (ties; edges of m = 2, 4, 5, 10, 20), the
# exact edges j/m of small m and their float neighbours (where floor(v m) can be off by one).
_EDGES = sorted({j / m for m in range(1, 13) for j in range(m + 1)})
_NEAR_EDGES = [math.nextafter(e, d) for e in _EDGES for d in (0.0, 1.0) if 0 < e < 1]
prediction = st.one_of(
    st.floats(0.0, 1.0, allow_nan=False),
    st.sampled_from([round(0.05 * i, 2) for i in range(21)]),
    st.sampled_from(_EDGES),
    st.sampled_from(_NEAR_EDGES),
)


@st.composite
def binary_data(draw, min_n=1, max_n=30, distinct=False):
    n = draw(st.integers(min_n, max_n))
    p = draw(st.lists(prediction, min_size=n, max_size=n, unique=distinct))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return np.array(y), np.array(p, dtype=float)


@st.composite
def binary_with_m(draw, **kw):
    y, p = draw(binary_data(**kw))
    m = draw(st.integers(1, len(p)))
    return y, p, m


def width_measures(y, p, m):
    return {
        "ece1": cn.binned_ece(y, p, n_bins=m),
        "ece2": cn.binned_ece(y, p, n_bins=m, p=2),
        "mce": cn.max_calibration_error(y, p, n_bins=m),
    }


def mass_measures(y, p, m, ties="average"):
    s = cn.reliability_stats(y, p, n_bins=m, binning="mass", ties=ties)
    return {
        "ece1": cn.binned_ece(y, p, n_bins=m, binning="mass", ties=ties),
        "ece2": cn.binned_ece(y, p, n_bins=m, p=2, binning="mass", ties=ties),
        "ece1.5": cn.binned_ece(y, p, n_bins=m, p=1.5, binning="mass", ties=ties),
        "mce": cn.max_calibration_error(y, p, n_bins=m, binning="mass", ties=ties),
        "l1": cn.l1_qece(y, p, n_bins=m, ties=ties),
        "l2": cn.l2_qece(y, p, n_bins=m, ties=ties),
        **{f"mean_outcome{j}": v for j, v in enumerate(s["mean_outcome"])},
    }


def binless(y, p):
    return {"ks": cn.ks_calibration_error(y, p), "unbinned": cn.unbinned_ece(y, p)}


def assert_same(a, b):
    for key in a:
        assert abs(a[key] - b[key]) <= TOL, (key, a[key], b[key])


# ----------------------------------------------------------------------------- invariance


@given(binary_with_m(), st.randoms(use_true_random=False))
def test_width_ks_unbinned_invariant_under_sample_permutation(data, rnd):
    y, p, m = data
    perm = list(range(len(p)))
    rnd.shuffle(perm)
    yp, pp = y[perm], p[perm]
    assert_same(width_measures(y, p, m), width_measures(yp, pp, m))
    assert_same(binless(y, p), binless(yp, pp))
    s, sp = cn.reliability_stats(y, p, n_bins=m), cn.reliability_stats(yp, pp, n_bins=m)
    assert np.array_equal(s["count"], sp["count"])


@given(binary_with_m(distinct=True), st.randoms(use_true_random=False))
def test_mass_invariant_under_permutation_when_predictions_distinct(data, rnd):
    y, p, m = data
    perm = list(range(len(p)))
    rnd.shuffle(perm)
    assert_same(mass_measures(y, p, m, "position"), mass_measures(y[perm], p[perm], m, "position"))
    assert_same(mass_measures(y, p, m), mass_measures(y, p, m, "position"))


@given(binary_with_m(), st.randoms(use_true_random=False))
def test_mass_invariant_under_any_row_permutation_with_ties_averaged(data, rnd):
    """With the default ties="average" no equal-mass measure depends on the
    order of the rows, ties or not."""
    y, p, m = data
    perm = list(range(len(p)))
    rnd.shuffle(perm)
    assert_same(mass_measures(y, p, m), mass_measures(y[perm], p[perm], m))


@st.composite
def multiclass_with_m(draw, max_n=12, max_k=4):
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(2, max_k))
    grid = draw(st.sampled_from([2, 4, 10]))
    counts = draw(st.lists(st.lists(st.integers(0, grid), min_size=k, max_size=k)
                           .filter(lambda row: sum(row) > 0), min_size=n, max_size=n))
    P = np.array(counts, dtype=float)
    P /= P.sum(axis=1, keepdims=True)
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    m = draw(st.integers(1, n))
    return y, P, m


@given(multiclass_with_m(), st.randoms(use_true_random=False))
def test_aggregated_measures_and_exact_references_invariant_under_row_permutation(data, rnd):
    """Every equal-mass measure, class-wise and confidence, and every exact reference
    (expected_qece with p = 1, 2; expected_binned_ece and the folded-normal approximation
    with equal-mass bins), under a row permutation, with the truth a perturbation of the
    predictions (unequal truths inside tie groups take the general path)."""
    y, P, m = data
    n, k = P.shape
    perm = list(range(n))
    rnd.shuffle(perm)
    T = 0.5 * P + 0.5 * np.roll(P, 1, axis=1)          # rows still sum to one

    def values(y, P, T):
        out = {}
        for name, lift in (("cw", cn.classwise), ("conf", cn.confidence)):
            out[f"{name}.l1"] = lift(cn.l1_qece, y, P, n_bins=m)
            out[f"{name}.l2"] = lift(cn.l2_qece, y, P, n_bins=m)
            out[f"{name}.ece"] = lift(cn.binned_ece, y, P, n_bins=m, binning="mass")
            out[f"{name}.ece2"] = lift(cn.binned_ece, y, P, n_bins=m, p=2, binning="mass")
        out["cwce"] = cn.cwce(y, P, n_bins=m, binning="mass")
        out["tce"] = cn.tce(y, P, n_bins=m, binning="mass")
        for agg in ("classwise", "confidence"):
            for truth_name, truth in (("self", P), ("other", T)):
                for p in (1, 2):
                    out[f"E.{agg}.{truth_name}.{p}"] = cn.expected_qece(
                        P, truth, m, p=p, aggregation=agg)
                out[f"Eece.{agg}.{truth_name}"] = cn.expected_binned_ece(
                    P, truth, m, binning="mass", aggregation=agg)
                out[f"fn.{agg}.{truth_name}"] = cn.folded_normal_l1_approximation(
                    P, truth, m, aggregation=agg)
        return out

    assert_same(values(y, P, T), values(y[perm], P[perm], T[perm]))


def _tie_order_preserving(p, perm):
    """Modify ``perm`` so that equal predictions keep their original relative order.

    The slots that ``perm`` gives to a tie group are refilled with the group's members in
    increasing original index.
    """
    perm = list(perm)
    groups = {}
    for slot, idx in enumerate(perm):
        groups.setdefault(p[idx], []).append(slot)
    for value, slots in groups.items():
        members = sorted(perm[s] for s in slots)
        for s, idx in zip(slots, members):
            perm[s] = idx
    return perm


@given(binary_with_m(), st.randoms(use_true_random=False))
def test_mass_invariant_under_tie_order_preserving_permutation(data, rnd):
    # Eq. (1) with ties="position" depends on the sample order only through the order of
    # tied predictions: keep that and the bins (as sets of samples) are the same.
    y, p, m = data
    perm = list(range(len(p)))
    rnd.shuffle(perm)
    perm = _tie_order_preserving(p, perm)
    assert_same(mass_measures(y, p, m, "position"), mass_measures(y[perm], p[perm], m, "position"))
    # The bin of each sample moves with the sample.
    assert np.array_equal(cn.equal_mass_bins(p, m)[perm], cn.equal_mass_bins(p[perm], m))


def test_mass_value_can_change_when_straddling_ties_are_reordered_with_ties_position():
    # The price of eq. (1) taken literally (ties="position").  p = [0.2, 0.5, 0.5, 0.8], m = 2 (sizes 2, 2):
    # the tie 0.5 straddles the boundary.  y = [0, 1, 0, 1]:
    #   B1 = {0.2/0, 0.5/1}: -0.3 ; B2 = {0.5/0, 0.8/1}: 0.3    -> l2 = 0.18/16
    # Swap the two tied samples (a permutation of the data set!):
    #   B1 = {0.2/0, 0.5/0}: 0.7 ; B2 = {0.5/1, 0.8/1}: -0.7    -> l2 = 0.98/16
    p = np.array([0.2, 0.5, 0.5, 0.8])
    y = np.array([0, 1, 0, 1])
    perm = [0, 2, 1, 3]
    a = cn.l2_qece(y, p, n_bins=2, ties="position")
    b = cn.l2_qece(y[perm], p[perm], n_bins=2, ties="position")
    assert abs(a - 0.18 / 16) <= TOL and abs(b - 0.98 / 16) <= TOL
    # ties="average": both orders give their mean, (0.18 + 0.98) / 32
    for yy, pp in ((y, p), (y[perm], p[perm])):
        assert abs(cn.l2_qece(yy, pp, n_bins=2) - 1.16 / 32) <= TOL
    # ... while width bins, KS and the unbinned ECE do not see the reordering.
    assert cn.binned_ece(y, p, n_bins=2) == cn.binned_ece(y[perm], p[perm], n_bins=2)
    assert cn.ks_calibration_error(y, p) == cn.ks_calibration_error(y[perm], p[perm])


# ----------------------------------------------------------------------------- ranges


@given(binary_with_m())
def test_ranges_and_orderings(data):
    y, p, m = data
    for binning in ("width", "mass"):
        e = {q: cn.binned_ece(y, p, n_bins=m, p=q, binning=binning) for q in (1, 1.5, 2, 3)}
        mce = cn.max_calibration_error(y, p, n_bins=m, binning=binning)
        assert all(-TOL <= v <= 1 + TOL for v in e.values())
        assert -TOL <= mce <= 1 + TOL
        # Power-mean inequality on the same bins and weights: ECE_p nondecreasing in p,
        # and every ECE_p <= MCE (a weighted power mean is at most the maximum).
        assert e[1] <= e[1.5] + TOL <= e[2] + 2 * TOL <= e[3] + 3 * TOL
        assert e[3] <= mce + TOL
    ks, ub = cn.ks_calibration_error(y, p), cn.unbinned_ece(y, p)
    assert -TOL <= ks <= 1 + TOL and -TOL <= ub <= 1 + TOL
    # KS: a partial sum over tie groups <= the sum of the groups' absolute bias sums.
    assert ks <= ub + TOL


@given(binary_with_m())
def test_qece_bounds(data):
    y, p, m = data
    n = len(p)
    l1, l2 = cn.l1_qece(y, p, n_bins=m), cn.l2_qece(y, p, n_bins=m)
    sizes = brute.equal_mass_bin_sizes(n, m)
    # |b_j| = |sum_{B_j} (p_i - y_i)| <= |B_j|, hence
    #   0 <= l1 = sum |b_j| / n <= 1   and   0 <= l2 = sum b_j^2 / n^2 <= sum |B_j|^2 / n^2.
    # sum |B_j|^2 / n^2 <= max|B_j| / n = ceil(n/m) / n, which is 1/m only when m | n.
    assert -TOL <= l1 <= 1 + TOL
    assert 0 <= l2 <= sum(s * s for s in sizes) / n**2 + TOL
    assert l2 <= math.ceil(n / m) / n + TOL
    if n % m == 0:
        assert l2 <= 1 / m + TOL
    # Cauchy-Schwarz over m bins: l1^2 <= m * l2 ; and l2 <= max_j|b_j|/n * l1 <= max|B_j|/n * l1
    assert l1 * l1 <= m * l2 + TOL
    assert l2 <= max(sizes) / n * l1 + TOL
    # Def 2.5's two forms: l1-QECE = sum |B_j|/n |pbar - ybar| = ECE_1 with mass bins.
    assert abs(l1 - cn.binned_ece(y, p, n_bins=m, binning="mass")) <= TOL
    # With equal bin sizes n/m: l2 = sum (n/m)^2/n^2 gap^2 = ECE_2(mass)^2 / m.
    if n % m == 0:
        assert abs(l2 - cn.binned_ece(y, p, n_bins=m, p=2, binning="mass") ** 2 / m) <= TOL


def test_l2_qece_can_exceed_one_over_m_when_m_does_not_divide_n():
    # All p = 0, y = 1: b_j = -|B_j|.  n = 3, m = 2: sizes 1, 2 -> l2 = (1 + 4)/9 = 5/9 > 1/2.
    assert abs(cn.l2_qece([1, 1, 1], [0.0, 0.0, 0.0], n_bins=2) - 5 / 9) <= TOL
    # n = 4, m = 2: sizes 2, 2 -> l2 = 8/16 = 1/2 = 1/m, the maximum when m | n.
    assert abs(cn.l2_qece([1, 1, 1, 1], [0.0] * 4, n_bins=2) - 0.5) <= TOL


@given(binary_with_m(distinct=True))
def test_binned_ece1_at_most_unbinned_when_distinct(data):
    # With distinct predictions the unbinned ECE is (1/n) sum |p_i - y_i|; any partition
    # into bins can only cancel terms (triangle inequality).
    y, p, m = data
    ub = cn.unbinned_ece(y, p)
    assert abs(ub - float(np.mean(np.abs(p - y)))) <= TOL
    for binning in ("width", "mass"):
        assert cn.binned_ece(y, p, n_bins=m, binning=binning) <= ub + TOL


# ----------------------------------------------------------------------------- brute force


@given(binary_with_m(max_n=25))
def test_edge_heavy_inputs_match_brute(data):
    # Same comparison as test_measures.py, on hypothesis' edge-heavy inputs
    # (values exactly on j/m and one ulp either side, 0, 1, subnormals, ties).
    y, p, m = data
    for binning in ("width", "mass"):
        for q in (1, 2):
            assert abs(cn.binned_ece(y, p, n_bins=m, p=q, binning=binning)
                       - brute.binned_ece(y, p, m, q, binning)) <= TOL
        assert abs(cn.max_calibration_error(y, p, n_bins=m, binning=binning)
                   - brute.max_calibration_error(y, p, m, binning)) <= TOL
    assert cn.equal_width_bins(p, m).tolist() == brute.equal_width_bins(p, m)
    assert cn.equal_mass_bins(p, m).tolist() == brute.equal_mass_bins(p, m)
    assert abs(cn.l1_qece(y, p, n_bins=m) - brute.l1_qece(y, p, m)) <= TOL
    assert abs(cn.l2_qece(y, p, n_bins=m) - brute.l2_qece(y, p, m)) <= TOL
    assert abs(cn.ks_calibration_error(y, p) - brute.ks_calibration_error(y, p)) <= TOL
    assert abs(cn.unbinned_ece(y, p) - brute.unbinned_ece(y, p)) <= TOL


# ----------------------------------------------------------------------------- calibrated data


@st.composite
def calibrated_groups(draw):
    """A perfectly calibrated discrete data set, in population-limit form.

    g groups with distinct values a/20 (0 and 1 allowed), each of the same size
    s = 20 r, holding exactly s a / 20 positives: the empirical frequency of y = 1 given
    the prediction equals the prediction.  Samples are shuffled.
    """
    values = draw(st.lists(st.integers(0, 20), min_size=1, max_size=5, unique=True))
    r = draw(st.integers(1, 2))
    s = 20 * r
    p, y = [], []
    for a in values:
        p += [a / 20] * s
        y += [1] * (s * a // 20) + [0] * (s - s * a // 20)
    order = draw(st.permutations(range(len(p))))
    return np.array(y)[order], np.array(p)[order], len(values)


@given(calibrated_groups(), st.data())
def test_zero_for_perfectly_calibrated_predictor(groups, data):
    y, p, g = groups
    n = len(p)
    # Width bins never split a group of equal predictions; merging whole groups adds
    # zero bias sums: every equal-width measure is 0, for any m.
    m = data.draw(st.integers(1, min(n, 25)), label="m (width)")
    for value in width_measures(y, p, m).values():
        assert abs(value) <= TOL
    # Mass bins with m | g: every bin is g/m whole groups (equal group sizes).
    m_mass = data.draw(st.sampled_from([d for d in range(1, g + 1) if g % d == 0]),
                       label="m (mass)")
    note(f"n={n}, g={g}, m_mass={m_mass}")
    for key, value in mass_measures(y, p, m_mass).items():
        if not key.startswith("mean_outcome"):
            assert abs(value) <= TOL, key
    for value in binless(y, p).values():
        assert abs(value) <= TOL


def test_zero_for_calibrated_multiclass_predictor():
    # k = 3, N = 2.  Rows of two kinds, tie groups in input order:
    #   4N rows [0.25, 0.25, 0.5] with labels cycling 0, 1, 2, 2  (class freqs 1/4, 1/4, 1/2)
    #   2N rows [0.5, 0.5, 0.0]   with labels cycling 0, 1        (class freqs 1/2, 1/2, 0)
    # Every column is calibrated: c0 has 0.25 (4N rows, N positives), 0.5 (2N, N); c1 the
    # same; c2 has 0.5 (4N, 2N) and 0.0 (2N, 0).  Confidence: every top probability is 0.5
    # (argmax class 2, resp. class 0 by the first-index rule) and right half of the time.
    # Mass bins with m = 3 cut at multiples of 2N = 4 rows, which keep every chunk balanced
    # (the label cycles have length 4 and 2) -- in this input order, so with ties="position";
    # m = 1 trivially.  With ties="average" the tie groups that straddle a boundary are split
    # at random, a random share of a balanced group is not balanced, and the measures are
    # positive: m = 3 there gives the mean over orders, not the luck of one order.
    N = 2
    P = [[0.25, 0.25, 0.5]] * (4 * N) + [[0.5, 0.5, 0.0]] * (2 * N)
    y = [0, 1, 2, 2] * N + [0, 1] * N
    for m in range(1, 13):
        assert abs(cn.classwise(cn.binned_ece, y, P, n_bins=m)) <= TOL
        assert abs(cn.classwise(cn.max_calibration_error, y, P, n_bins=m)) <= TOL
        assert abs(cn.tce(y, P, n_bins=m, p=2)) <= TOL
        assert abs(cn.cwce(y, P, n_bins=m)) <= TOL
    for m in (1, 3):
        ties = "average" if m == 1 else "position"
        for measure in (cn.l1_qece, cn.l2_qece):
            assert abs(cn.classwise(measure, y, P, n_bins=m, ties=ties)) <= TOL
            assert abs(cn.confidence(measure, y, P, n_bins=m, ties=ties)) <= TOL
        assert abs(cn.cwce(y, P, n_bins=m, binning="mass", ties=ties)) <= TOL
    for measure in (cn.l1_qece, cn.l2_qece):
        assert cn.classwise(measure, y, P, n_bins=3) > 1e-3
    for measure in (cn.ks_calibration_error, cn.unbinned_ece):
        assert abs(cn.classwise(measure, y, P)) <= TOL
        assert abs(cn.confidence(measure, y, P)) <= TOL


@given(st.integers(2, 7), st.lists(st.integers(0, 6), min_size=1, max_size=30), st.data())
def test_one_hot_perfect_predictor_is_zero_everywhere(k, labels, data):
    y = np.array([v % k for v in labels])
    P = np.eye(k)[y]
    n = len(y)
    m = data.draw(st.integers(1, n), label="m")
    for binning in ("width", "mass"):
        assert cn.classwise(cn.binned_ece, y, P, n_bins=m, binning=binning) == 0.0
        assert cn.tce(y, P, n_bins=m, binning=binning) == 0.0
        assert cn.cwce(y, P, n_bins=m, binning=binning) == 0.0
    for measure in (cn.l1_qece, cn.l2_qece):
        assert cn.classwise(measure, y, P, n_bins=m) == 0.0
        assert cn.confidence(measure, y, P, n_bins=m) == 0.0
    for measure in (cn.ks_calibration_error, cn.unbinned_ece):
        assert cn.classwise(measure, y, P) == 0.0
        assert cn.confidence(measure, y, P) == 0.0


# ----------------------------------------------------------------------------- multi-class


@st.composite
def multiclass_data(draw, max_n=20):
    k = draw(st.integers(2, 5))
    n = draw(st.integers(1, max_n))
    counts = draw(st.lists(st.lists(st.integers(0, 4), min_size=k, max_size=k)
                           .filter(lambda row: sum(row) > 0), min_size=n, max_size=n))
    P = np.array([[c / sum(row) for c in row] for row in counts])
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    m = draw(st.integers(1, n))
    return y, P, m


@given(multiclass_data(), st.randoms(use_true_random=False))
def test_classwise_invariant_under_class_relabelling(data, rnd):
    # Def 2.7 averages over classes: renaming the classes (columns and labels together)
    # cannot change it; nor CWCE (a sum over classes).
    y, P, m = data
    k = P.shape[1]
    sigma = list(range(k))
    rnd.shuffle(sigma)
    inv = np.argsort(sigma)
    P2, y2 = P[:, sigma], inv[y]  # new column c is old class sigma[c]
    for binning in ("width", "mass"):
        a = cn.classwise(cn.binned_ece, y, P, n_bins=m, binning=binning)
        b = cn.classwise(cn.binned_ece, y2, P2, n_bins=m, binning=binning)
        assert abs(a - b) <= TOL
        assert abs(cn.cwce(y, P, n_bins=m, binning=binning)
                   - cn.cwce(y2, P2, n_bins=m, binning=binning)) <= TOL
    assert abs(cn.classwise(cn.ks_calibration_error, y, P)
               - cn.classwise(cn.ks_calibration_error, y2, P2)) <= TOL


@given(multiclass_data())
def test_multiclass_matches_brute(data):
    y, P, m = data
    Pl = P.tolist()
    for binning in ("width", "mass"):
        assert abs(cn.classwise(cn.binned_ece, y, P, n_bins=m, binning=binning)
                   - brute.classwise(brute.binned_ece, y, Pl, m=m, binning=binning)) <= TOL
        assert abs(cn.tce(y, P, n_bins=m, binning=binning)
                   - brute.tce(y, Pl, m, binning=binning)) <= TOL
        assert abs(cn.cwce(y, P, n_bins=m, p=2, binning=binning)
                   - brute.cwce(y, Pl, m, power=2, binning=binning)) <= TOL
    assert abs(cn.classwise(cn.l2_qece, y, P, n_bins=m)
               - brute.classwise(brute.l2_qece, y, Pl, m=m)) <= TOL
    assert abs(cn.confidence(cn.l1_qece, y, P, n_bins=m)
               - brute.confidence(brute.l1_qece, y, Pl, m=m)) <= TOL
    assert abs(cn.confidence(cn.ks_calibration_error, y, P)
               - brute.confidence(brute.ks_calibration_error, y, Pl)) <= TOL


@given(multiclass_data())
def test_cwce_relations(data):
    # CWCE_p^p = sum_r ECE_p(class r)^p = k * mean_r ECE_p(class r)^p; for p = 1 this is
    # k times the class-wise ECE_1; and CWCE_p <= 2^(1/p) (paper 003, after Def C.1).
    y, P, m = data
    k = P.shape[1]
    for binning in ("width", "mass"):
        c1 = cn.cwce(y, P, n_bins=m, binning=binning)
        cw = cn.classwise(cn.binned_ece, y, P, n_bins=m, binning=binning)
        assert abs(c1 - k * cw) <= TOL * k
        assert c1 <= 2 + TOL
        c2 = cn.cwce(y, P, n_bins=m, p=2, binning=binning)
        assert c2 <= math.sqrt(2) + TOL
