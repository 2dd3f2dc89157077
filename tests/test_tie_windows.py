"""The windowed tie laws and ``E|S_j|`` of a bin met by straddling tie groups (calnotes._engine.ties).

Under ``ties="average"`` a bin's signed bias is ``S = c - H_1 - H_2`` with independent
hypergeometric parts ``H_i ~ Hyp(N_i, K_i, o_i)`` (:mod:`calnotes._engine.ties`).  The engine keeps
each law only on its *window*, the values within ``e^-TAIL_LOG`` (``e^-56``) of the mode, and
sums ``E|S|`` over the shorter window with the other part's running sums taken about its mean.
Checked here, over the whole range (``N`` from 1, ``K`` from 0 to ``N``, one part or two):

* the window is what it says: with scipy's log-pmf as the reference, every kept end is within
  the tail bound and each left-out neighbour is below it, and the kept entries are the law;
* ``E|S|`` against an independent computation over the full supports: exact rational sums
  for every small case, and ``long double`` sums (64-bit mantissa) for groups of up to 20,000;
* a row's value is a function of its own ``c`` and parts: computed alone, with others, with
  its parts swapped, or in a duplicated row, it is the same to the last bit.

Negative controls: a tail bound of ``e^-20`` fails the window check; running sums about 0
instead of the mean fail the ``long double`` comparison on large groups (cancellation: the
engine before the windows lost up to 4.5e-13 relative there); row sums over the chunk's padded
width fail the row-alone check; every small bin's first part with ``K`` off by one fails the
exact comparison.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from calnotes._engine import ties as _ties

NO_PART = np.zeros(1, dtype=np.int64)


def _moments(c, first, second=None):
    """``abs_first_moments`` of rows ``c`` with parts ``first`` (and ``second``): tuples of
    int arrays ``(N, K, o)``."""
    c = np.asarray(c, dtype=np.float64)
    R = c.shape[0]
    two = np.full(R, second is not None)
    second = first if second is None else second
    return _ties.abs_first_moments(c, *(np.broadcast_to(np.asarray(v, dtype=np.int64), (R,))
                                        for v in (*first, *second)), two)


def _random_laws(rng, count, top):
    """``(N, K, o)`` arrays: group sizes log-uniform up to ``top``, ``K`` and ``o`` anywhere in
    range, a quarter with ``K`` at or next to an end (the skewed laws with the shortest
    windows)."""
    N = np.unique(np.round(np.exp(rng.uniform(0, np.log(top), count))).astype(np.int64))
    N = rng.choice(N, size=count)
    K = rng.integers(0, N + 1)
    edge = rng.random(count) < 0.25
    K[edge] = np.clip(rng.choice([0, 1, 2, -2, -1, 0], size=edge.sum()) % (N[edge] + 1), 0,
                      N[edge])
    o = rng.integers(1, np.maximum(N, 2))
    o = np.minimum(o, N)
    return N, K, o


def _window_report(N, K, o, tail):
    """Per law: the log-ratios (to the mode) of the kept ends and of the left-out neighbours
    inside the support, from scipy's log-pmf, and the largest difference, relative to the
    largest entry, between the kept entries and the ``long double`` law renormalised over the
    window (where ``long double`` is wider than double)."""
    from scipy.stats import hypergeom

    laws = _ties.WindowedLaws(N, K, o)
    w, lo = laws.padded(np.arange(N.shape[0]))
    s_lo, s_hi = np.maximum(0, o - (N - K)), np.minimum(o, K)
    worst_kept, worst_out, worst_value = np.inf, -np.inf, 0.0
    for r in range(N.shape[0]):
        law = hypergeom(N[r], K[r], o[r])
        t = np.arange(s_lo[r], s_hi[r] + 1)
        logp = law.logpmf(t)
        ref = logp.max()
        a, b = lo[r], lo[r] + laws.length[r] - 1
        worst_kept = min(worst_kept, logp[a - s_lo[r]] - ref, logp[b - s_lo[r]] - ref)
        for out in (a - 1, b + 1):
            if s_lo[r] <= out <= s_hi[r]:
                worst_out = max(worst_out, logp[out - s_lo[r]] - ref)
        if np.finfo(np.longdouble).eps < 1e-18:       # values: scipy's log-pmf of large
            full_lo, full = _long_double_law(N[r], K[r], o[r])   # groups is off by 1e-10
            kept = full[a - full_lo:b - full_lo + 1]
            kept = kept / kept.sum()
            got = w[r, :laws.length[r]]
            worst_value = max(worst_value, float(np.abs(got - kept).max() / kept.max()))
    return worst_kept, worst_out, worst_value


def test_windows_keep_the_law_within_the_tail_bound():
    """Laws of groups from 1 to 10^5 members: each kept end is at least ``e^-56`` of the mode,
    each left-out neighbour below it (scipy's log-pmf; slack 1e-6 for its rounding and ours in
    the ratio of two log-pmfs near -56), and the kept entries are the law (in ``long
    double``, renormalised over the window) within 1e-13 of the largest (1.1e-14 observed).
    Tolerance: an entry is a running product of at most ``d`` ratios, ``d`` its distance to
    the mode, each with about 3 roundings, so its relative error is at most about
    ``d x 3 eps`` (a log-ratio's running sum would carry about 60 eps per step); relative to
    the largest entry that is at most ``d e^(-d^2 / 2 s^2) x 3 eps`` for a spread ``s``,
    largest near ``d = s`` -- below ``s x 3 eps x 0.6 = 8e-14`` for ``s`` up to 200 (the
    spread of a group of 10^5 split in half is 112), plus the normalisation's few eps and
    the reference's own rounding (``2^-64`` per step): 1e-13.  Scipy's log-pmf is used for the ends only: for groups of 10^5 it is off by
    about 1e-10, too much for the values.  Control: a tail bound of ``e^-20`` is caught by the
    same check."""
    rng = np.random.default_rng(5)
    N, K, o = _random_laws(rng, 400, 100_000)
    N = np.r_[N, 1, 2, 7, 100_000, 100_000, 100_000]
    K = np.r_[K, 0, 1, 3, 1, 50_000, 99_999]
    o = np.r_[o, 1, 1, 3, 50_000, 50_000, 3]
    kept, out, value = _window_report(N, K, o, _ties.TAIL_LOG)
    assert kept >= -_ties.TAIL_LOG - 1e-6, kept
    assert out < -_ties.TAIL_LOG + 1e-6, out
    assert value <= 1e-13, value


def test_a_narrower_tail_bound_is_caught(monkeypatch):
    """Negative control of the window check: with ``TAIL_LOG = 20`` the left-out neighbours
    are far above ``e^-56``."""
    rng = np.random.default_rng(5)
    N, K, o = _random_laws(rng, 60, 100_000)
    monkeypatch.setattr(_ties, "TAIL_LOG", 20.0)
    _, out, _ = _window_report(N, K, o, 20.0)
    assert out > -56.0 + 1.0, out


def _exact_moment(c, first, second):
    """``E|c - H_1 - H_2|`` as an exact rational sum over the full supports."""
    def law(N, K, o):
        total = comb(N, o)
        return {t: Fraction(comb(K, t) * comb(N - K, o - t), total)
                for t in range(max(0, o - (N - K)), min(o, K) + 1)}

    c = Fraction(c)
    P1 = law(*first)
    P2 = law(*second) if second is not None else {0: Fraction(1)}
    return sum(p * q * abs(c - h1 - h2) for h1, p in P1.items() for h2, q in P2.items())


def _small_bins(rng):
    """Bins with one or two parts of groups of 1 to 9 members (every ``K`` and ``o`` as a
    first part, the second sampled), ``c`` on and between integers and beyond the support."""
    laws = [(n, k, d) for n in range(1, 10) for k in range(n + 1) for d in range(1, n + 1)]
    rows = []
    for first in laws:
        for _ in range(2):
            second = laws[rng.integers(len(laws))] if rng.random() < 0.7 else None
            top = first[2] + (second[2] if second else 0)
            c = float(rng.choice([rng.integers(-1, top + 2), rng.uniform(-1, top + 1)]))
            rows.append((c, first, second))
    return rows


def _small_errors(rows, shift_K=0):
    """``|engine - exact| / (eps (|c| + o_1 + o_2 + 1))`` per row; ``shift_K`` moves every
    first part's ``K`` by one (within range) in the engine's input only (the control)."""
    out = []
    for second_kind in (False, True):
        sel = [r for r in rows if (r[2] is not None) == second_kind]
        c = np.array([r[0] for r in sel])
        f = [np.array([r[1][i] for r in sel]) for i in range(3)]
        if shift_K:
            f[1] = np.where(f[1] < f[0], f[1] + 1, f[1] - 1)
        s = tuple(np.array([r[2][i] for r in sel]) for i in range(3)) if second_kind else None
        got = _moments(c, tuple(f), s)
        for r, g in zip(sel, got.tolist()):
            scale = abs(r[0]) + r[1][2] + (r[2][2] if r[2] else 0) + 1
            err = abs(Fraction(g) - _exact_moment(*r))
            out.append(float(err) / (np.finfo(float).eps * scale))
    return np.array(out)


def test_every_small_bin_is_the_exact_rational_sum():
    """Bins with one or two parts of groups of 1 to 9 members, against the exact rational
    sum: within ``64 eps (|c| + o_1 + o_2 + 1)``.  Tolerance: the windows are whole supports
    here (every entry is at least ``1 / C(9, 4)`` of the mode's); an entry is a product of at
    most 8 ratios (3 roundings each) normalised over at most 10 entries, so within about
    ``30 eps`` relative; every quantity summed -- ``|c - h|``, ``t (2 F - 1)``, ``2 M``,
    ``E H_2`` -- is at most ``|c| + o_1 + o_2`` in size, and the sums add a few eps more:
    ``64 eps`` times that scale covers them (observed: at most 1.1 of those units; 6.3e-16
    relative).  Negative control: every first part's ``K`` off by one is rejected."""
    rows = _small_bins(np.random.default_rng(9))
    assert _small_errors(rows).max() <= 64
    assert _small_errors(rows, shift_K=1).max() > 64


def _long_double_law(N, K, o):
    """``(lo, w)``: the law ``Hyp(N, K, o)`` on its whole support from ``lo``, in ``long
    double``: the ratio recurrence summed from the support's lower end (not from the mode, as
    the engine does), normalised."""
    L = np.longdouble
    N, K, o = int(N), int(K), int(o)
    lo, hi = max(0, o - (N - K)), min(o, K)
    t = np.arange(lo, hi, dtype=L)
    inc = (np.log((L(K) - t) * (L(o) - t)) - np.log((t + 1) * (L(N - K - o) + t + 1)))
    logp = np.concatenate([[L(0)], np.cumsum(inc)])
    w = np.exp(logp - logp.max())
    return lo, w / w.sum()


def _long_double_moment(c, first, second):
    """``E|c - H_1 - H_2|`` in ``long double`` over the full supports
    (:func:`_long_double_law`; the convolution direct)."""
    L = np.longdouble
    lo1, w1 = _long_double_law(*first)
    lo2, w2 = _long_double_law(*second)
    w = np.convolve(w1, w2)
    h = np.arange(w.shape[0], dtype=L) + (lo1 + lo2)
    return float((w * np.abs(L(c) - h)).sum())


def _large_bins(rng, count):
    """Two-part bins of groups of 1,000 to 20,000 members, most of them nearly all positive
    or all negative (as the confident classes of a rounded model), ``c`` near the mean of
    ``H_1 + H_2``: the bins where the running sums are large and E|S| small."""
    N1 = rng.integers(1000, 20_001, count)
    N2 = rng.integers(1000, 20_001, count)
    q1 = np.where(rng.random(count) < 0.7, rng.uniform(0.95, 1.0, count), rng.random(count))
    q2 = np.where(rng.random(count) < 0.7, rng.uniform(0.95, 1.0, count), rng.random(count))
    K1 = np.round(q1 * N1).astype(np.int64)
    K2 = np.round(q2 * N2).astype(np.int64)
    o1 = rng.integers(1, N1)
    o2 = rng.integers(1, N2)
    mean = o1 * K1 / N1 + o2 * K2 / N2
    spread = np.sqrt(o1 * (K1 / N1) * (1 - K1 / N1) + o2 * (K2 / N2) * (1 - K2 / N2)) + 1
    c = mean + rng.normal(0, 2, count) * spread
    return c, (N1, K1, o1), (N2, K2, o2)


needs_long_double = pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18,
                                       reason="long double is no wider than double here")


@needs_long_double
def test_large_groups_against_long_double():
    """Two-part bins of groups up to 20,000 members: within 1e-14 relative of a ``long
    double`` computation over the full supports (its own error is about 2^-64 per term,
    far below).  Tolerance: the windowed sum adds at most ``e^-56 (o_1 + o_2)`` relative from
    the left-out tails (below 2e-20 here); the rest is rounding: an entry at distance ``d``
    from the mode carries at most ``d x 3 eps`` (above); weighted by the law that is about
    ``s x 3 eps`` for a spread ``s``, at most 70 here (2.3e-14), plus the sums over the
    windows and the running sums of the other part, a few tens of eps relative once taken
    about its mean.  Observed 1.5e-15, asserted 6e-14; the control below gives 7.7e-13."""
    rng = np.random.default_rng(12)
    c, first, second = _large_bins(rng, 150)
    got = _moments(c, first, second)
    want = np.array([_long_double_moment(c[r], tuple(v[r] for v in first),
                                         tuple(v[r] for v in second)) for r in range(c.size)])
    err = np.abs(got - want) / want
    assert err.max() <= 6e-14, err.max()


@needs_long_double
def test_running_sums_about_zero_are_caught(monkeypatch):
    """Negative control: the running sums of the second part taken about 0 (as before the
    windows) instead of its mean lose digits to cancellation on large groups; the same
    comparison rejects them."""
    rng = np.random.default_rng(12)
    c, first, second = _large_bins(rng, 150)
    monkeypatch.setattr(_ties, "_centre", lambda N, K, o: np.zeros_like(N))
    got = _moments(c, first, second)
    want = np.array([_long_double_moment(c[r], tuple(v[r] for v in first),
                                         tuple(v[r] for v in second)) for r in range(c.size)])
    assert (np.abs(got - want) / want).max() > 6e-14


def _mixed_rows(rng):
    """Rows of one and two parts, with duplicates, equal windows and swapped parts."""
    c, first, second = _large_bins(rng, 40)
    N, K, o = _random_laws(rng, 40, 3000)
    c = np.r_[c, rng.uniform(0, 1, 40) * o]
    first = tuple(np.r_[a, b] for a, b in zip(first, (N, K, o)))
    second = tuple(np.r_[a, b] for a, b in zip(second, (N[::-1], K[::-1], o[::-1])))
    two = np.r_[np.ones(40, bool), rng.random(40) < 0.5]
    dup = rng.integers(0, 80, 20)                               # repeated rows
    c = np.r_[c, c[dup]]
    first = tuple(np.r_[v, v[dup]] for v in first)
    second = tuple(np.r_[v, v[dup]] for v in second)
    two = np.r_[two, two[dup]]
    return c, first, second, two


def test_each_row_is_a_function_of_its_own_parts(monkeypatch):
    """A row's ``E|S|`` is the same to the last bit computed with all the others, alone, with
    its two parts given the other way round, and in chunks forced small: the windows, the
    choice of the part summed over and each final sum depend on the row alone.  Control:
    each row's sum taken over its chunk's padded width (``sum(axis=1)``, whose pairwise
    blocks run over the zeros) instead of its own entries changes rows' last bits, and the
    same comparison catches it."""
    rng = np.random.default_rng(4)
    c, first, second, two = _mixed_rows(rng)
    together = _ties.abs_first_moments(c, *first, *second, two)
    alone = np.array([_ties.abs_first_moments(c[r:r + 1], *(v[r:r + 1] for v in first),
                                              *(v[r:r + 1] for v in second), two[r:r + 1])[0]
                      for r in range(c.size)])
    assert np.array_equal(together, alone)
    swapped = _ties.abs_first_moments(c, *np.where(two, second, first),
                                      *np.where(two, first, second), two)
    assert np.array_equal(together, swapped)
    monkeypatch.setattr(_ties, "_CHUNK", 300)
    assert np.array_equal(_ties.abs_first_moments(c, *first, *second, two), together)
    monkeypatch.setattr(_ties, "_row_sums", lambda values, length: values.sum(axis=1))
    padded = _ties.abs_first_moments(c, *first, *second, two)
    assert np.allclose(padded, together, rtol=1e-13, atol=0)
    assert not np.array_equal(padded, together)


def test_expected_abs_power_of_order_one_is_the_engine():
    """``expected_abs_power(c, parts, 1)`` (the Monte Carlo engine's bins) gives the numbers
    of ``abs_first_moments`` bit for bit, one part or two; and p = 1 with no part is |c|."""
    rng = np.random.default_rng(8)
    c = rng.uniform(0, 40, 30)
    N1, K1 = rng.integers(40, 400, 30), None
    K1 = rng.integers(0, N1 + 1)
    N2 = rng.integers(40, 400, 30)
    K2 = rng.integers(0, N2 + 1)
    got = _ties.expected_abs_power(c, [(N1, K1, 17), (N2, K2, 31)], 1)
    want = _moments(c, (N1, K1, np.full(30, 17)), (N2, K2, np.full(30, 31)))
    assert np.array_equal(got, want)
    got = _ties.expected_abs_power(c, [(N1, K1, 17)], 1)
    assert np.array_equal(got, _moments(c, (N1, K1, np.full(30, 17))))
    assert np.array_equal(_ties.expected_abs_power(c - 20, [], 1), np.abs(c - 20))
