"""The Poisson-binomial engine (calnotes._engine.poisson_binomial) against independent exact laws.

Tolerances come from the engine's stated error bound (module docstring): an entry of a pmf
computed by the engine differs from the exact value by at most

    2 L eps pmf[s]                      (the recursion's relative rounding, through the tree)
    + ABS_ERROR_FACTOR eps log2(2 L)^2  (the FFT convolutions, absolute)

and the references below are exact (rational arithmetic, mpmath at 40 digits) or carry their
own stated bound (the direct recursion: relative 2 L eps).  Each comparison is shown to reject
a pmf with one probability left out (the negative controls).
"""

from fractions import Fraction

import numpy as np
import pytest

from calnotes._engine import poisson_binomial as pb
from calnotes.core.expectation import poisson_binomial_pmf
from calnotes._engine.significance import exact_tail_bounds

EPS = np.finfo(np.float64).eps


def _bound(L: int, exact: np.ndarray) -> np.ndarray:
    """The engine's stated error bound for each entry of a sum of ``L`` terms."""
    return 2 * L * EPS * exact + pb.ABS_ERROR_FACTOR * EPS * np.log2(2 * max(L, 1)) ** 2


def _rational_pmf(q) -> list:
    """Exact pmf (Fractions of the exact binary values of ``q``)."""
    pmf = [Fraction(1)]
    for x in q:
        f = Fraction(float(x))
        nxt = [Fraction(0)] * (len(pmf) + 1)
        for s, v in enumerate(pmf):
            nxt[s] += v * (1 - f)
            nxt[s + 1] += v * f
        pmf = nxt
    return pmf


def _awkward(L: int, rng) -> np.ndarray:
    """``L`` probabilities with exact 0s and 1s, tiny values and values near 1."""
    q = rng.uniform(size=L)
    kinds = rng.integers(0, 6, size=L)
    q[kinds == 0] = 0.0
    q[kinds == 1] = 1.0
    q[kinds == 2] = 10.0 ** rng.uniform(-300, -8, size=(kinds == 2).sum())
    q[kinds == 3] = 1.0 - 10.0 ** rng.uniform(-15, -8, size=(kinds == 3).sum())
    return q


def _within(got, exact, L) -> bool:
    return bool(np.all(np.abs(np.asarray(got) - exact) <= _bound(L, exact)))


def test_short_and_crossing_sums_match_rational_arithmetic():
    """Lengths 1 to 72 (the recursion up to 64 random terms, the FFT tree beyond), with exact
    0s and 1s, tiny probabilities and probabilities next to 1, all in one batch."""
    rng = np.random.default_rng(0)
    qs = [_awkward(L, rng) for L in (1, 2, 3, 4, 5, 8, 13, 21, 34, 55, 64, 72)]
    qs += [rng.uniform(0.2, 0.8, size=L) for L in (63, 64, 65, 66, 72)]   # no 0s or 1s
    got = pb.pmfs(qs)
    for q, pmf in zip(qs, got):
        exact = np.array([float(v) for v in _rational_pmf(q)])
        assert pmf.shape == exact.shape
        assert _within(pmf, exact, q.size), q.size
        assert _within(poisson_binomial_pmf(q), exact, q.size)    # the reference recursion
    # negative control: the same comparison rejects the law with one term left out
    q = qs[-1]
    exact = np.array([float(v) for v in _rational_pmf(q)])
    dropped = np.r_[pb.pmfs([q[:-1]])[0], 0.0]
    assert not _within(dropped, exact, q.size)


@pytest.mark.parametrize("L, p", [(65, 0.5), (1000, 0.03), (20_000, 0.9), (100_000, 0.03),
                                  (100_000, 0.5)])
def test_long_binomial_sums_match_mpmath(L, p):
    """All terms equal: the law is Bin(L, p), evaluated by mpmath at 40 digits on the entries
    within 8 standard deviations of the mean and a few far out."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    got = pb.pmfs([np.full(L, p)])[0]
    mean, sd = L * p, np.sqrt(L * p * (1 - p))
    ks = np.unique(np.r_[np.arange(max(0, int(mean - 8 * sd)), min(L, int(mean + 8 * sd)) + 1,
                                   max(1, int(sd) // 25)), 0, L, min(L, int(mean + 20 * sd))])
    P = mpmath.mpf(float(p))
    logs = [mpmath.log(P) * k + mpmath.log1p(-P) * (L - k) + mpmath.loggamma(L + 1)
            - mpmath.loggamma(k + 1) - mpmath.loggamma(L - k + 1) for k in ks.tolist()]
    exact = np.array([float(mpmath.exp(v)) for v in logs])
    assert _within(got[ks], exact, L)
    # negative control: L - 1 terms
    assert not _within(pb.pmfs([np.full(L - 1, p)])[0][np.minimum(ks, L - 1)], exact, L)


def test_distinct_probabilities_against_the_direct_recursion():
    """Long sums of distinct probabilities (with 0s, 1s and tiny values): the direct
    recursion is exact up to relative 2 L eps, so the two differ by at most both bounds."""
    rng = np.random.default_rng(1)
    for L in (129, 1000, 4000):
        q = _awkward(L, rng)
        ref = poisson_binomial_pmf(q)
        got = pb.pmfs([q])[0]
        assert np.all(np.abs(got - ref) <= 2 * _bound(L, ref))
        one = int(np.flatnonzero((q > 0.2) & (q < 0.8))[0])
        dropped = np.r_[pb.pmfs([np.delete(q, one)])[0], 0.0]
        assert not np.all(np.abs(dropped - ref) <= 2 * _bound(L, ref))


def test_batch_is_the_one_at_a_time_result_bit_for_bit():
    rng = np.random.default_rng(2)
    qs = [_awkward(int(L), rng) for L in rng.integers(0, 600, size=40)] + [[], [1.0], [0.0]]
    batch = pb.pmfs(qs)
    for q, pmf in zip(qs, batch):
        assert np.array_equal(pmf, pb.pmfs([q])[0])
        assert pmf.shape == (len(q) + 1,)


def test_expected_abs_deviation_against_direct_sums():
    """E|a - K| for a ragged batch (empty sums, all-0/all-1 sums, binomial sums, short and
    long ones) equals sum_s pmf[s] |a - s| with the direct recursion's pmf; the error bound of
    the pmfs gives |error| <= sum_s bound[s] |a - s|."""
    rng = np.random.default_rng(3)
    qs = [_awkward(int(L), rng) for L in rng.integers(0, 300, size=60)]
    qs += [np.zeros(5), np.ones(7), np.full(90, 0.25), np.r_[np.full(80, 0.4), 1.0, 0.0], []]
    qs += [rng.uniform(size=3000)]
    lengths = np.array([len(q) for q in qs])
    a = rng.uniform(0, 1, size=len(qs)) * np.maximum(lengths, 1)
    got = pb.expected_abs_deviation(a, np.concatenate(qs), lengths)
    for b, q in enumerate(qs):
        pmf = poisson_binomial_pmf(np.asarray(q, dtype=float)) if len(q) else np.ones(1)
        dist = np.abs(a[b] - np.arange(pmf.size))
        want = float((pmf * dist).sum())
        tol = 2 * float((_bound(len(q), pmf) * dist).sum()) + 1e-15 * want
        assert abs(got[b] - want) <= tol, b
    # negative control: E|a - K| with one more success is off by far more than the tolerance
    assert abs(pb.expected_abs_deviation(a[-1:], np.r_[qs[-1], 1.0], [3001])[0]
               - got[-1]) > 1e-3


@pytest.mark.parametrize("kind", ["plain", "tiny", "on-grid"])
@pytest.mark.parametrize("sparse_points", [0, 10 ** 6])
def test_tail_bracket_contains_the_brute_force_tail_on_both_paths(monkeypatch, sparse_points,
                                                                   kind):
    """exact_tail_bounds by FFT convolutions only (0) and by shifted adds only (10^6): the
    exact tail of T = sum_j |a_j - K_j|^p / n^p, enumerated over the 9^4 grid of the K_j,
    lies in [lo, hi] for l1 and l2.  "tiny": one bin's probabilities are about 1e-6, so its
    pmf has entries far below TAIL_DROP that are left out and counted on the safe side;
    "on-grid": one bin of 0.5s sums to exactly 4, so T has terms equal to 0, on a grid point,
    and the two roundings need their own chains (otherwise one chain and a shift by m)."""
    from calnotes._engine import significance

    monkeypatch.setattr(significance, "SPARSE_POINTS", sparse_points)
    rng = np.random.default_rng(4)
    p = np.sort(rng.uniform(size=32))
    if kind == "tiny":
        p[:8] = rng.uniform(0.5e-6, 2e-6, size=8)
    if kind == "on-grid":
        p[8:16] = 0.5
    bins = p.reshape(4, 8)
    a = bins.sum(axis=1)
    pmfs = pb.pmfs(list(bins))
    grids = np.meshgrid(*[np.arange(9)] * 4, indexing="ij")
    prob = np.prod([pmfs[j][grids[j]] for j in range(4)], axis=0)
    assert kind != "tiny" or pmfs[0].min() < significance.TAIL_DROP
    for power in (1, 2):
        T = sum(np.abs(a[j] - grids[j]) ** power for j in range(4)) / 32 ** power
        tails = []
        for t in np.quantile(T, [0.3, 0.9, 0.999]):
            _, _, idx, _ = significance._grid_terms(a, pmfs, t, power, 32, 1 << 14)
            one_chain = np.array_equal(idx[1], np.minimum(idx[0] + 1, 1 << 14))
            assert one_chain == (kind != "on-grid")
            exact = prob[T >= t * (1 - 1e-12)].sum()
            lo, hi = exact_tail_bounds(a, pmfs, t, power, 32)
            assert lo - 1e-12 <= exact <= hi + 1e-12
            assert hi - lo < 0.05
            tails.append((t, exact))
        # negative control: the bracket of a smaller observed value misses the tail at t
        t, exact = max(tails, key=lambda pair: pair[1])
        lo, hi = exact_tail_bounds(a, pmfs, 0.5 * t, power, 32)
        assert not lo - 1e-12 <= exact <= hi + 1e-12


def test_work_units_and_the_budget_rule_on_the_grid():
    """work() is its stated formula, and EXACT_L1_BUDGET sends the equal-mass class-wise plans
    of the benchmark grid where its docstring says (E exact, F folded-normal)."""
    from calnotes._engine.rows import EXACT_L1_BUDGET

    assert pb.work([10, 100]) == 10 * (90 + 16) + 100 * (90 + 160)
    assert pb.work([1000]) == 1000 * (200 + 20 * 4)          # leaves of 64: 4 tree levels

    def exact(n, columns, m):
        return pb.work(np.full(columns * m, n // m)) <= EXACT_L1_BUDGET

    assert exact(500, 1000, 15) and exact(10_000, 10, 15) and exact(100_000, 2, 15)
    assert exact(10_000, 100, 15) and exact(100_000, 10, 100)
    assert not exact(10_000, 1000, 15) and not exact(100_000, 10, 15)
    assert not exact(1_000_000, 1, 15)


def test_bad_input_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match="qs: expected success probabilities in"):
        pb.pmfs([[0.5, 1.5]])
    with pytest.raises(ValueError, match="q: expected success probabilities in"):
        pb.expected_abs_deviation([1.0], [np.nan, 0.5], [2])
    with pytest.raises(ValueError, match="q: expected sum"):
        pb.expected_abs_deviation([1.0], [0.5, 0.5, 0.5], [2])
    with pytest.raises(ValueError, match="a: expected shape"):
        pb.expected_abs_deviation([1.0, 2.0], [0.5, 0.5], [2])


def _rounded(rng, L: int, d: int) -> np.ndarray:
    """``L`` probabilities taking ``d`` distinct values (rounded to two decimals), with a few
    exact 0s and 1s, sorted: a bin of exported predictions."""
    values = rng.choice(np.arange(1, 100) / 100, size=d, replace=False)
    q = rng.choice(values, size=L)
    q[rng.integers(0, L, size=3)] = rng.choice([0.0, 1.0], size=3)
    return np.sort(q)


def test_sums_of_few_values_take_the_binomial_path_and_match_rational_arithmetic(monkeypatch):
    """Sums of more than LEAF random terms whose values change at most RUN_DISTINCT - 1 times
    in their order (once per RUN_SHARE terms at most: sorted bins of rounded predictions) are
    convolved binomials (pb._run_pmfs): lengths 65 to 160, 1 to 16 values, against exact
    rational arithmetic, within the engine's stated bound.  The path is checked to be taken
    for them, and not for 17 values, sums of at most LEAF terms, or few values in an order
    that changes value often (those go to the tree, also within the bound).  Negative
    control: one term left out is rejected."""
    rng = np.random.default_rng(7)
    qs = [_rounded(rng, L, d) for L, d in ((68, 1), (70, 2), (90, 5), (140, 16), (160, 9))]
    taken = []
    original = pb._run_pmfs

    def counted(values, mults, L, N):
        taken.extend(int(v.shape[0]) for v in values)
        return original(values, mults, L, N)

    monkeypatch.setattr(pb, "_run_pmfs", counted)
    got = pb.pmfs(qs)
    assert sorted(taken) == sorted(len(np.unique(q[(q > 0) & (q < 1)])) for q in qs)
    for q, pmf in zip(qs, got):
        exact = np.array([float(v) for v in _rational_pmf(q)])
        assert _within(pmf, exact, q.size), q.size
    taken.clear()
    shuffled = rng.permutation(qs[2])
    got = pb.pmfs([_rounded(rng, 200, 17), _rounded(rng, 60, 3), shuffled])
    assert taken == []                     # 17 values; LEAF terms or fewer; unsorted
    exact = np.array([float(v) for v in _rational_pmf(shuffled)])
    assert _within(got[2], exact, shuffled.size)
    q = qs[-1]
    exact = np.array([float(v) for v in _rational_pmf(q)])
    one = int(np.flatnonzero((q > 0) & (q < 1))[0])
    assert not _within(np.r_[pb.pmfs([np.delete(q, one)])[0], 0.0], exact, q.size)


def test_long_sums_of_few_values_against_the_direct_recursion_and_the_tree(monkeypatch):
    """Sums of 1,000 to 6,000 terms with 2 to 16 values: the binomial path is within the
    engine's bound of the direct recursion (exact up to relative 2 L eps, so the two differ by
    at most both bounds), as is the FFT tree on the same sums (the path switched off)."""
    rng = np.random.default_rng(8)
    qs = [_rounded(rng, L, d) for L, d in ((1000, 2), (2500, 7), (6000, 16))]
    got = pb.pmfs(qs)
    monkeypatch.setattr(pb, "RUN_DISTINCT", 0)
    tree = pb.pmfs(qs)
    for q, pmf, other in zip(qs, got, tree):
        ref = poisson_binomial_pmf(q)
        assert np.all(np.abs(pmf - ref) <= 2 * _bound(q.size, ref))
        assert np.all(np.abs(other - ref) <= 2 * _bound(q.size, ref))
        one = int(np.flatnonzero((q > 0) & (q < 1))[0])
        monkeypatch.setattr(pb, "RUN_DISTINCT", 16)
        dropped = np.r_[pb.pmfs([np.delete(q, one)])[0], 0.0]
        assert not np.all(np.abs(dropped - ref) <= 2 * _bound(q.size, ref))
        monkeypatch.setattr(pb, "RUN_DISTINCT", 0)


def test_sums_of_few_values_in_a_batch_are_the_one_at_a_time_result_bit_for_bit():
    """Run sums of different lengths sharing a DFT size, of different sizes, with the other
    kinds of sums in one batch: each the one-at-a-time result, bit for bit."""
    rng = np.random.default_rng(9)
    qs = [_rounded(rng, int(L), int(rng.integers(2, 17))) for L in rng.integers(130, 900, 30)]
    qs += [_awkward(300, rng), rng.uniform(size=70), []]
    batch = pb.pmfs(qs)
    for q, pmf in zip(qs, batch):
        assert np.array_equal(pmf, pb.pmfs([q])[0])


def test_binomial_path_in_small_blocks_is_the_same_bit_for_bit(monkeypatch):
    """The binomials' transforms computed a few values at a time (a block budget that holds
    one to three sums' values) multiply into the same pmfs, bit for bit, as all at once.
    Control: the same binomials multiplied in the reverse order of their values round
    differently, and the comparison tells them apart."""
    rng = np.random.default_rng(12)
    qs = [_rounded(rng, int(L), int(rng.integers(2, 17))) for L in rng.integers(400, 900, 12)]
    whole = pb.pmfs(qs)
    for block in (1, 1 << 14, 1 << 16):         # one value, a few, many per transform batch
        monkeypatch.setattr(pb, "_BLOCK", block)
        assert all(np.array_equal(a, b) for a, b in zip(pb.pmfs(qs), whole)), block
    monkeypatch.undo()
    runs, values, mults = pb._split_runs(np.concatenate(qs), np.array([q.size for q in qs]),
                                         pb.LEAF)
    L, N = np.array([q.size for q in qs])[runs], 2048
    forward = pb._run_pmfs(values, mults, L, N)
    backward = pb._run_pmfs([v[::-1] for v in values], [m[::-1] for m in mults], L, N)
    assert runs.size >= len(qs) // 2 and not np.array_equal(forward, backward)  # control


def test_recursion_is_the_direct_reference_bit_for_bit():
    """pmf_recursion (computed transposed, for speed) gives exactly the numbers of the row
    layout of calnotes.core.expectation.poisson_binomial_pmf (the same two operations per entry
    and step), with and without per-row lengths (a row stops at its length: its padded zeros
    would change nothing either), from one term up.  Control: the step's two operations in
    the other order (add the moved mass, then scale) give other numbers."""
    from calnotes.core.expectation import poisson_binomial_pmf
    from calnotes._engine.poisson_binomial import pmf_recursion

    rng = np.random.default_rng(8)
    for B, L in ((1, 1), (3, 2), (7, 64), (50, 128)):
        q = rng.random((B, L))
        assert np.array_equal(pmf_recursion(q), poisson_binomial_pmf(q)), (B, L)
        lengths = np.sort(rng.integers(1, L + 1, size=B))[::-1]
        padded = np.where(np.arange(L)[None, :] < lengths[:, None], q, 0.0)
        assert np.array_equal(pmf_recursion(padded, lengths), poisson_binomial_pmf(padded))
    q = rng.random((5, 64))
    other = np.zeros((5, 65))
    other[:, 0] = 1.0
    for t in range(64):
        moved = other[:, :t + 1] * q[:, t:t + 1]
        other[:, 1:t + 2] += moved
        other[:, :t + 1] -= moved                 # p (1 - q) written as p - p q
    assert not np.array_equal(other, pmf_recursion(q))
    assert np.allclose(other, pmf_recursion(q), rtol=1e-12, atol=1e-300)
