"""The vectorised binned rows: resamples, draws and columns in one pass.

The bootstrap evaluates a block of resamples as the columns of one presorted matrix
(``_evalrows.Resampler.values_block``), the class-wise null searches all its entries at once
and the equal-width and equal-mass plans are built for every column together
(``_sorted.searchsorted_rows``, ``_sorted.straddling_groups_rows``).  Checked here:

* against plain loops written from the definitions: every resample rebuilt as its rows
  repeated by their multiplicities (in each column's stable sorted order, the order the
  ``ties="position"`` rule sees) and measured by the brute-force references of
  ``tests/brute.py`` (exact rational sums), from ``n = 2``, ``k = 2`` and one bin up, with
  tie groups straddling bin edges;
* that a block gives each resample's values to the last bit whatever the block size and the
  thread count (each value is computed on its own column's entries);
* the batched searches and tie groups against ``np.searchsorted`` and
  ``_ties.straddling_groups`` row by row;
* one-column resamples are computed from the multiplicities themselves
  (``Resampler.weighted_values_block``: no resampled rows), checked against the same exact
  references (the binary cases, both tie rules; ``ties="position"`` with tied predictions);
* a negative control: an off-by-one equal-mass bin edge is caught by the same comparison,
  on both paths.

Tolerance against the brute references: they are exact up to one final rounding; calnotes
sums at most ``n <= 40`` terms of size at most 1 per bin in float64, so each bin sum is off
by at most ``n^2 eps ~ 3.6e-13`` and a measure (a mean of ``|S_j|/n`` or ``S_j^2/n^2`` over
bins and columns) by less than ``1e-12``.  The off-by-one control moves one row across a bin
edge, which changes a value by at least ``|p - y| / n`` for that row, far above it.
"""

from __future__ import annotations

import numpy as np
import pytest

import brute
from calnotes._engine import rows as _evalrows, sorted_columns as _sorted, ties as _ties
from calnotes._engine.bin_stats import BinStats, TieParts
from calnotes._engine.sorted_columns import SortedColumns, searchsorted_rows, straddling_groups_rows

ATOL = 1e-12
SPECS = [(1, "l1-QECE"), (1, "ECE"), (2, "l1-QECE"), (2, "l2-QECE"), (3, "ECE"),
         (3, "l1-QECE"), (3, "l2-QECE")]
BRUTE = {"ECE": lambda y, p, m, ties: brute.binned_ece(y, p, m),
         "l1-QECE": brute.l1_qece, "l2-QECE": brute.l2_qece}


def _problem(rng, n, k, decimals=None):
    """Predictions on a coarse grid (ties that straddle bin edges) and labels."""
    P = rng.dirichlet(np.ones(k), size=n)
    if decimals is not None:        # multiples of 10^-decimals summing to one
        D = 10 ** decimals
        P = np.stack([rng.multinomial(D, row) for row in P]) / D
    y = rng.integers(0, k, size=n)
    return P, y


def _prob(P, y, aggregation):
    if aggregation == "classwise":
        prob = _evalrows.problems(y, P, None, None, None, ("classwise",))[0]
    else:
        prob = _evalrows.Problem("binary", np.ascontiguousarray(P[:, 1:2]),
                                 [np.flatnonzero(y == 1)])
    prob.prepare(1)
    return prob


def _plain_values(prob, W, specs, ties, bin_of=None):
    """Each resample from the definition: per column, the rows repeated ``W[b]`` times in
    the column's stable sorted order, measured by tests/brute.py; the mean over columns."""
    X = prob.X
    n, c = X.shape
    out = np.empty((len(specs), W.shape[0]))
    for b in range(W.shape[0]):
        per_spec = [[] for _ in specs]
        for col in range(c):
            outcome = np.zeros(n, dtype=int)
            outcome[prob.positives[col]] = 1
            order = np.argsort(X[:, col], kind="stable")
            idx = np.repeat(order, W[b][order])
            yy, pp = outcome[idx].tolist(), X[idx, col].tolist()
            for i, (m, name) in enumerate(specs):
                per_spec[i].append(BRUTE[name](yy, pp, m, ties=ties) if bin_of is None
                                   else bin_of(name, yy, pp, m, ties))
        out[:, b] = [float(np.mean(v)) for v in per_spec]
    return out


def _multiplicities(rng, B, n):
    draws = rng.integers(0, n, size=(B, n))
    return np.stack([np.bincount(d, minlength=n) for d in draws])


CASES = [(2, 2, None), (3, 2, 1), (6, 2, 1), (12, 3, 1), (20, 2, 1), (30, 4, 2), (40, 2, None)]


@pytest.mark.parametrize("ties", ["average", "position"])
@pytest.mark.parametrize("aggregation", ["binary", "classwise"])
@pytest.mark.parametrize("n,k,decimals", CASES)
def test_resample_block_is_the_measure_on_each_resample(n, k, decimals, aggregation, ties):
    k = 2 if aggregation == "binary" else k
    rng = np.random.default_rng(n * 100 + k)
    P, y = _problem(rng, n, k, decimals)
    prob = _prob(P, y, aggregation)
    W = _multiplicities(rng, 6, n)
    specs = [s for s in SPECS if s[0] <= n]
    got = _evalrows.Resampler(prob).values_block(W, specs, ties)
    want = _plain_values(prob, W, specs, ties)
    assert np.allclose(got, want, rtol=0, atol=ATOL), np.abs(got - want).max()


def test_tie_groups_of_one_outcome_are_computed_from_multiplicities():
    """ties="average" on one column whose tie groups each hold one outcome (predictions on a
    coarse grid, outcome a function of the prediction): the resamples are computed from their
    rows' multiplicities and equal the definition (tie groups straddle the edges in the
    resamples); with a group holding both outcomes, from its tie groups' multiplicities, and
    equal to the definition too."""
    rng = np.random.default_rng(21)
    n = 30
    p = rng.integers(1, 6, size=n) / 6.0
    y = (p > 0.5).astype(int)                               # one outcome per tie group
    P = np.stack([1 - p, p], axis=1)
    prob = _prob(P, y, "binary")
    resampler = _evalrows.Resampler(prob)
    assert resampler.weighted and resampler.ties_agree
    W = _multiplicities(rng, 8, n)
    specs = [(1, "l1-QECE"), (2, "ECE"), (3, "l1-QECE"), (4, "l2-QECE"), (7, "l1-QECE")]
    got = resampler.values_block(W, specs, "average")
    want = _plain_values(prob, W, specs, "average")
    assert np.allclose(got, want, rtol=0, atol=ATOL), np.abs(got - want).max()
    y2 = y.copy()
    y2[np.flatnonzero(p == p[0])[0]] ^= 1                   # one group with both outcomes
    mixed = _evalrows.Resampler(_prob(P, y2, "binary"))
    assert mixed.weighted and not mixed.ties_agree
    want2 = _plain_values(_prob(P, y2, "binary"), W, specs, "average")
    assert np.allclose(mixed.values_block(W, specs, "average"), want2, rtol=0, atol=ATOL)
    # control: with the rows as units, the mixed group's positives sit at their positions
    mixed.ties_agree = True
    forced = mixed.values_block(W, specs, "average")
    assert np.abs(forced - want2).max() > 100 * ATOL


def _tie_group_cases():
    """One column on a grid of ``levels`` values (tie groups of both outcomes) from ``n = 2``
    up, every bin count from one to ``n``, and resamples."""
    for n, levels, seed in [(2, 1, 0), (3, 2, 1), (5, 2, 2), (8, 3, 3), (13, 2, 4),
                            (17, 4, 5), (24, 3, 6)]:
        rng = np.random.default_rng(seed)
        p = rng.integers(1, levels + 1, size=n) / (levels + 1)
        y = rng.integers(0, 2, size=n)
        y[0], y[-1] = 0, 1                                  # both outcomes occur
        W = _multiplicities(rng, 10, n)
        W[0] = 1                                            # the sample itself
        yield n, np.stack([1 - p, p], axis=1), y, W


def test_tie_groups_of_both_outcomes_are_computed_from_multiplicities():
    """ties="average", one column, predictions on a grid of one to four values: the values
    from the tie groups' multiplicities (a group cut by an edge is a hypergeometric part of
    each bin it meets) equal the definition (exact rational means over the tie orders) at
    every equal-mass bin count ``m = 1 .. n`` and for the equal-width bins; the cases are not
    vacuous (groups across several edges, bins meeting two random parts, groups missing
    from a resample)."""
    seen = {"several edges": False, "two parts": False, "missing": False}
    for n, P, y, W in _tie_group_cases():
        prob = _prob(P, y, "binary")
        resampler = _evalrows.Resampler(prob)
        assert resampler.weighted and not resampler.ties_agree
        specs = ([(m, name) for m in range(1, n + 1) for name in ("l1-QECE", "l2-QECE")]
                 + [(m, "ECE") for m in (1, 2, 5)])
        got = resampler.values_block(W, specs, "average")
        want = _plain_values(prob, W, specs, "average")
        assert np.allclose(got, want, rtol=0, atol=ATOL), (n, np.abs(got - want).max())
        ws = W[:, resampler.order[0]]
        v = prob.sc.values[0]
        bounds = np.r_[0, np.flatnonzero(v[1:] != v[:-1]) + 1, n]
        N = np.add.reduceat(ws, bounds[:-1], axis=1)
        seen["missing"] |= bool((N == 0).any())
        for m in range(2, n + 1):
            edges = _sorted.mass_edges(n, m)[1:-1]
            S = np.concatenate([np.zeros((W.shape[0], 1), dtype=int), np.cumsum(N, axis=1)],
                               axis=1)
            inside = (S[:, :-1, None] < edges) & (edges < S[:, 1:, None])   # (B, G, edges)
            seen["several edges"] |= bool((inside.sum(axis=2) >= 2).any())
            cuts = inside.any(axis=1)                                        # (B, edges)
            # a bin with a cut group at each end (edges j and j + 1 cut different groups)
            g = np.argmax(inside, axis=1)
            seen["two parts"] |= bool((cuts[:, 1:] & cuts[:, :-1] & (g[:, 1:] != g[:, :-1])
                                       ).any())
    assert all(seen.values()), seen


def test_tie_group_parts_replaced_by_their_means_are_caught(monkeypatch):
    """Negative control: the cut tie groups' positives taken at their means (``o K / N`` in
    a bin, no hypergeometric law: ``|E S_j|`` for ``E|S_j|``) fail the same comparison with
    the definition on the l1 rows."""
    def plug_in(self, *args):
        stats = original(self, *args)
        return BinStats(count=stats.count, sum_prob=stats.sum_prob,
                        sum_outcome=stats.sum_outcome, n=stats.n)

    original = _evalrows.Resampler._split_tie_groups
    monkeypatch.setattr(_evalrows.Resampler, "_split_tie_groups", plug_in)
    worst = 0.0
    for n, P, y, W in _tie_group_cases():
        prob = _prob(P, y, "binary")
        specs = [(m, "l1-QECE") for m in range(2, n + 1)]
        if not specs:
            continue
        got = _evalrows.Resampler(prob).values_block(W, specs, "average")
        worst = max(worst, float(np.abs(got - _plain_values(prob, W, specs, "average")).max()))
    assert worst > 100 * ATOL, worst


def test_the_cases_have_ties_straddling_edges_in_resamples():
    """The cases above are not vacuous: resamples of the rounded problems have tie groups
    across equal-mass edges (the hypergeometric parts) and groups spanning several bins."""
    rng = np.random.default_rng(12 * 100 + 3)
    P, y = _problem(rng, 12, 3, 1)
    prob = _prob(P, y, "classwise")
    W = _multiplicities(rng, 6, 12)
    resampler = _evalrows.Resampler(prob)
    ws = W[:, resampler.order].reshape(-1)
    values = np.repeat(np.tile(prob.sc.values.reshape(-1), 6), ws).reshape(18, 12)
    plan = SortedColumns.presorted(values, group=3).plan(3, "mass")
    g_key, g_col, g_N, q_g, q_j, q_o = plan._flat_groups()
    assert plan.has_groups and g_col.shape[0] >= 5
    assert np.bincount(q_g).max() >= 2                   # a group meets two bins or more


@pytest.mark.parametrize("aggregation", ["binary", "classwise"])
def test_off_by_one_bin_edge_is_caught(aggregation, monkeypatch):
    """Negative control: equal-mass bins whose edges are moved by one sorted position (the
    last row of each bin counted in the next) fail the comparison with the definition --
    for one column (the resamples computed from their multiplicities: the edges of
    ``mass_edges`` moved; rows, and tie groups of both outcomes under ``ties="average"``) and
    for two (the resampled rows: ``quantile_bin_of_position``)."""
    rng = np.random.default_rng(5)
    P, y = _problem(rng, 20, 2, None)
    prob = _prob(P, y, aggregation)
    W = _multiplicities(rng, 6, 20)
    specs = [(3, "l1-QECE"), (3, "l2-QECE")]
    want = _plain_values(prob, W, specs, "position")
    good = _evalrows.Resampler(prob).values_block(W, specs, "position")
    assert np.allclose(good, want, rtol=0, atol=ATOL)
    assert _evalrows.Resampler(prob).weighted == (aggregation == "binary")

    def shifted(positions, n_samples, n_bins):
        pos = np.asarray(positions, dtype=np.int64)
        return np.minimum(((pos + 2) * n_bins + n_samples - 1) // n_samples - 1, n_bins - 1)

    def shifted_edges(n, m):
        edges = _sorted.mass_edges(n, m)
        edges[1:m] -= 1
        return edges

    # one column under ties="average" with tie groups of both outcomes: the tie groups'
    # multiplicities
    Pt, yt = _problem(rng, 20, 2, 1)
    tied = _prob(Pt, yt, aggregation)
    want_tied = _plain_values(tied, W, specs, "average")
    assert np.allclose(_evalrows.Resampler(tied).values_block(W, specs, "average"), want_tied,
                       rtol=0, atol=ATOL)

    monkeypatch.setattr(_sorted, "quantile_bin_of_position", shifted)
    monkeypatch.setattr(_evalrows, "mass_edges", shifted_edges)
    bad = _evalrows.Resampler(prob).values_block(W, specs, "position")
    assert not np.allclose(bad, want, rtol=0, atol=ATOL)
    # and the error it makes is of the size a row moved across an edge makes
    assert np.abs(bad - want).max() > 100 * ATOL
    bad_tied = _evalrows.Resampler(tied).values_block(W, specs, "average")
    assert np.abs(bad_tied - want_tied).max() > 100 * ATOL


@pytest.mark.parametrize("aggregation", ["binary", "classwise"])
@pytest.mark.parametrize("ties", ["average", "position"])
def test_block_size_and_threads_do_not_change_a_bit(ties, aggregation, monkeypatch):
    """One resample at a time, blocks of 4, one block; one thread or three with the thread
    threshold lowered so that the small problem is split: the same values, bit for bit
    (one column: from the multiplicities where :attr:`Resampler.weighted` says so)."""
    rng = np.random.default_rng(3)
    P, y = _problem(rng, 60, 4, 2 if aggregation == "classwise" else None)
    prob = _prob(P, y, aggregation)
    W = _multiplicities(rng, 9, 60)
    # ECE with 10 and 60 bins: the resamples keep different numbers of bins (7 or 8; 22 to
    # 28), on both sides of a multiple of 8, where NumPy's pairwise sum groups the terms
    # differently: padding a resample's bins with zeros to the block's width changes bits
    specs = [(3, "ECE"), (10, "ECE"), (60, "ECE"), (4, "l1-QECE"), (4, "l2-QECE"),
             (7, "l1-QECE"), (20, "l2-QECE")]
    resampler = _evalrows.Resampler(prob)
    one = np.concatenate([resampler.values_block(W[b:b + 1], specs, ties)
                          for b in range(9)], axis=1)
    fours = np.concatenate([resampler.values_block(W[b:b + 4], specs, ties)
                            for b in range(0, 9, 4)], axis=1)
    monkeypatch.setattr(_sorted, "_MIN_CHUNK", 1)
    monkeypatch.setattr(_sorted, "SORT_WORKERS", 3)
    whole = resampler.values_block(W, specs, ties)
    assert np.array_equal(one, fours) and np.array_equal(one, whole)
    assert not np.allclose(one[0], one[0, 0])          # resamples do differ


def test_padding_a_block_to_one_width_is_caught(monkeypatch):
    """Negative control of the test above: without the per-resample widths (every column
    of the block summed over the block's widest bin count) the values are not bit-equal."""
    rng = np.random.default_rng(3)
    P, y = _problem(rng, 60, 4, 2)
    prob = _prob(P, y, "classwise")
    W = _multiplicities(rng, 9, 60)
    specs = [(10, "ECE"), (60, "ECE")]
    resampler = _evalrows.Resampler(prob)
    one = np.concatenate([resampler.values_block(W[b:b + 1], specs, "average")
                          for b in range(9)], axis=1)
    presorted = SortedColumns.presorted.__func__
    monkeypatch.setattr(SortedColumns, "presorted", classmethod(
        lambda cls, values, group=1: presorted(cls, values, values.shape[0])))
    padded = resampler.values_block(W, specs, "average")
    assert np.allclose(padded, one, rtol=1e-14, atol=0)     # rounding only
    assert not np.array_equal(padded, one)


def test_rows_do_not_depend_on_the_thread_count(monkeypatch):
    """binned_rows (values, references, Monte Carlo p-values, intervals) with one worker
    and with three, every parallel part split (thread threshold lowered): identical rows."""
    rng = np.random.default_rng(4)
    P, y = _problem(rng, 80, 20, 2)
    from calnotes.core.measures import confidence_scores
    conf, top, correct = confidence_scores(y, P)

    def rows(workers):
        probs = _evalrows.problems(y, P, top, correct, conf, ("confidence", "classwise"))
        for prob in probs:
            prob.prepare(workers)
        out, _ = _evalrows.binned_rows(y, P, probs, [2, 5], "average", draws=19,
                                       bootstrap=19, rng=np.random.default_rng(9),
                                       workers=workers)
        return out

    first = rows(1)
    monkeypatch.setattr(_sorted, "_MIN_CHUNK", 1)
    monkeypatch.setattr(_evalrows, "_MIN_THREAD_WORK", 1)
    monkeypatch.setattr(_evalrows, "_EXACT_THREAD_ROWS", 1)
    monkeypatch.setattr(_evalrows, "_PLAN_THREAD_ROWS", 1)
    pools = _spy_pools(monkeypatch)
    assert rows(3) == first
    assert any("ci_lower" in r for r in first) and any("p_value" in r for r in first)
    # not vacuous: the null's draws, the resamples, the exact brackets and the plans' exact
    # laws and references did run on threads
    assert {"_monte_carlo", "_bootstrap", "_exact_p_values", "_map_plans"} <= \
        {f for f, w in pools if w > 1}


def _spy_pools(monkeypatch) -> list:
    """Record ``(function, max_workers)`` of every thread pool that ``_evalrows`` starts."""
    import sys

    from calnotes._engine.pool import worker_pool

    pools = []

    def pool(max_workers):
        pools.append((sys._getframe(1).f_code.co_name, max_workers))
        return worker_pool(max_workers)

    monkeypatch.setattr(_evalrows, "worker_pool", pool)
    return pools


@pytest.mark.parametrize("workers", [1, 2, 16])
def test_threads_for_gives_one_thread_per_unit_of_work(workers):
    """At least one thread, one per whole unit of work, never more than the workers: from
    no work and one unit up to far more work than the workers can take."""
    unit = 1000
    for work in (0, 1, unit - 1, unit, 2 * unit - 1, 2 * unit, 15 * unit, 10 ** 9):
        got = _sorted.threads_for(work, unit, workers)
        assert got == max(1, min(workers, work // unit)), (work, workers)
    assert _sorted.threads_for(10 ** 9, 1, workers) == workers
    want = {1: [1, 1, 1, 1], 2: [1, 1, 2, 2], 16: [1, 1, 2, 15]}[workers]
    assert [_sorted.threads_for(w, unit, workers) for w in (0, 1999, 2000, 15999)] == want


def test_small_report_starts_no_threads_on_many_cores(monkeypatch):
    """With 16 workers, the binned rows of 500 binary predictions (their draws, resamples and
    exact brackets are each a few milliseconds of work) start no thread pool; control: with
    the units of work set to one element the same call does start pools of 16 threads (the
    behaviour that made the small report slower on 16 cores than on 2)."""
    rng = np.random.default_rng(5)
    P, y = _problem(rng, 500, 2, None)
    from calnotes.core.measures import confidence_scores
    conf, top, correct = confidence_scores(y, P)

    def rows():
        probs = _evalrows.problems(y, P, top, correct, conf, ("binary", "classwise"))
        for prob in probs:
            prob.prepare(16)
        _evalrows.binned_rows(y, P, probs, [15, 20, 100], "average", draws=200,
                              bootstrap=200, rng=np.random.default_rng(9), workers=16)

    pools = _spy_pools(monkeypatch)
    rows()
    assert pools == []
    monkeypatch.setattr(_evalrows, "_MIN_THREAD_WORK", 1)
    monkeypatch.setattr(_evalrows, "_EXACT_THREAD_ROWS", 1)
    monkeypatch.setattr(_evalrows, "_PLAN_THREAD_ROWS", 1)
    rows()
    assert {w for _, w in pools} >= {_evalrows.NULL_THREAD_CAP, 16}


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("per_row", [1, 3, 200])
def test_searchsorted_rows_is_numpy_row_by_row(side, per_row, monkeypatch):
    """Both strategies (bisection: few queries per row; one np.searchsorted per row: many),
    with queries on, between and outside the values, rows of length 1 to 33."""
    rng = np.random.default_rng(per_row)
    monkeypatch.setattr(_sorted, "_MIN_CHUNK", 1)              # threads on small inputs
    for n in (1, 2, 5, 33):
        values = np.sort(np.round(rng.random((7, n)), 1), axis=1)
        rows = np.sort(rng.integers(0, 7, size=7 * per_row))
        queries = np.concatenate([values[rows[:len(rows) // 2], 0],
                                  rng.random(len(rows) - len(rows) // 2) * 1.2 - 0.1])
        got = searchsorted_rows(values, rows, queries, side, workers=3)
        want = [np.searchsorted(values[r], q, side) for r, q in zip(rows, queries)]
        assert got.tolist() == want
        shuffled = rng.permutation(len(rows))                  # not grouped: bisection
        got = searchsorted_rows(values, rows[shuffled], queries[shuffled], side, workers=2)
        assert got.tolist() == [want[i] for i in shuffled]


def test_straddling_groups_rows_is_ties_straddling_groups_row_by_row():
    rng = np.random.default_rng(2)
    for n in (2, 3, 7, 10, 31):
        values = np.sort(np.round(rng.random((9, n)), 1), axis=1)
        values[0] = 0.5                                      # one group over every bin
        for m in range(1, n + 1):
            bounds = (np.arange(m + 1) * n) // m
            g_col, g_a, g_e, q_g, q_j, q_o = straddling_groups_rows(values, bounds)
            got: dict = {}
            for g, (col, a, e) in enumerate(zip(g_col.tolist(), g_a.tolist(), g_e.tolist())):
                got.setdefault(col, []).append(
                    (a, e, [(j, o) for j, o in zip(q_j[q_g == g].tolist(),
                                                   q_o[q_g == g].tolist())]))
            want = {col: _ties.straddling_groups(values[col], bounds) for col in range(9)}
            assert got == {col: v for col, v in want.items() if v}, (n, m)


def test_width_plan_is_the_per_column_search():
    """Equal-width plans of many columns: the kept bins' starts and sums are those of one
    np.searchsorted of the edges and one reduceat per column."""
    rng = np.random.default_rng(6)
    X = np.round(rng.random((50, 11)) ** 3, 2)
    X[:, 3] = 0.5
    sc = SortedColumns(X, workers=1)
    for m in (1, 2, 3, 10, 100, 1000):
        plan = sc.plan(m, "width")
        edges = np.arange(m + 1) / m
        for col in range(11):
            s = np.concatenate([[0], np.searchsorted(sc.values[col], edges[1:m], "left"), [50]])
            filled = np.flatnonzero(np.diff(s) > 0)
            kept = plan.starts[col][:filled.shape[0]]
            assert kept.tolist() == s[filled].tolist(), (m, col)
            assert (plan.starts[col][filled.shape[0]:] == 50).all()
            sums = np.add.reduceat(sc.values[col], s[filled])
            assert np.array_equal(plan.sum_prob[col][:filled.shape[0]], sums)


def _tie_stats(rng, c, m, top):
    """BinStats with one or two tie parts in random bins, groups of 2 .. ``top`` members."""
    cols, bins, Ns, Ks, os_ = [], [], [], [], []
    for col in range(c):
        for j in rng.choice(m, size=rng.integers(1, m + 1), replace=False).tolist():
            for _ in range(rng.integers(1, 3)):
                N = int(rng.integers(2, top + 1))
                cols.append(col)
                bins.append(j)
                Ns.append(N)
                Ks.append(int(rng.integers(0, N + 1)))
                os_.append(int(rng.integers(1, N)))
    parts = TieParts(*(np.array(v, dtype=np.int64) for v in (cols, bins, Ns, Ks, os_)))
    fixed = rng.integers(0, 5, size=(c, m)).astype(float)
    return BinStats(count=np.full((c, m), 10.0), sum_prob=rng.random((c, m)) * top,
                    sum_outcome=fixed + 0.5, n=100, parts=parts, fixed_outcome=fixed)


def _loop_over_bins(stats, p):
    return stats._abs_moment_loop(np.abs(stats.bias_sum) ** p, p)


def test_abs_moment_by_shape_is_the_loop_over_bins():
    """The tie parts grouped by shape in one pass give each bin the value of the loop that
    groups bins one at a time (bit for bit; p = 1 and 2), for bins with one or two parts."""
    stats = _tie_stats(np.random.default_rng(8), 40, 4, 8)
    for p in (1, 2):
        assert np.array_equal(stats.abs_moment(p), _loop_over_bins(stats, p)), p


def test_padded_hypergeometric_laws_are_scipys():
    """hypergeom_pmf_padded (rows of different draw counts in one call, zero-padded) against
    scipy.stats.hypergeom row by row, groups up to 2,000 members: within 1e-12 of the largest
    entry, exactly 0 beyond each row's o.  Control: the laws of o + 1 draws are caught."""
    from scipy.stats import hypergeom

    rng = np.random.default_rng(21)
    N = rng.integers(1, 2001, size=60)
    K = np.array([rng.integers(0, v + 1) for v in N])
    o = np.array([rng.integers(0, v + 1) for v in N])
    W = _ties.hypergeom_pmf_padded(N, K, o)
    shifted = _ties.hypergeom_pmf_padded(N, K, np.minimum(o + 1, N))
    caught = 0
    for r in range(N.size):
        want = hypergeom.pmf(np.arange(o[r] + 1), N[r], K[r], o[r])
        assert np.abs(W[r, :o[r] + 1] - want).max() <= 1e-12 * want.max(), r
        assert not W[r, o[r] + 1:].any()
        caught += np.abs(shifted[r, :o[r] + 1] - want).max() > 1e-12 * want.max()
    assert caught >= N.size // 2


def test_every_small_law_and_its_reflection_is_exact():
    """Every ``Hyp(N, K, o)`` with ``N <= 14`` (laws of more than ``N / 2`` draws are the
    reflections of the others, ``P(H = t) = P(H' = K - t)``): within 1e-13 of the largest
    entry of the exact rational law (C(K, t) C(N - K, o - t) / C(N, o)), both as the full
    laws of hypergeom_pmf_padded and as the windowed laws of WindowedLaws (whose windows are
    the whole support here: every entry is at least 1 / C(14, 7) of the mode's, far above
    e^-56).  Tolerance: after the reflection a log-probability is a running sum of at most 7
    increments, each a difference of two logarithms of integers below 14^2 (about 5.3): about
    7 (3 x 5.3) eps from the logarithms and 7 x 37 eps / 2 from the running sum's roundings,
    so each entry is within about 250 eps (5.6e-14) relative, and the normalisation over at
    most 8 terms adds about 8 eps.  Control: a backward law read forwards is caught."""
    from math import comb

    N, K, o = (np.array(v) for v in zip(*[(n, k, d) for n in range(1, 15)
                                            for k in range(n + 1) for d in range(n + 1)]))
    W = _ties.hypergeom_pmf_padded(N, K, o)
    want = np.zeros_like(W)
    for r, (n, k, d) in enumerate(zip(N.tolist(), K.tolist(), o.tolist())):
        want[r, :d + 1] = [comb(k, t) * comb(n - k, d - t) / comb(n, d) for t in range(d + 1)]
    err = np.abs(W - want).max(axis=1) / want.max(axis=1)
    assert err.max() <= 1e-13, err.max()
    assert (o > N - o).sum() > 300                             # reflected laws are checked
    laws = _ties.WindowedLaws(N, K, o)

    def placed(laws):
        w, lo = laws.padded(np.arange(N.size))
        out = np.zeros_like(want)
        cols = lo[:, None] + np.arange(w.shape[1])[None, :]
        rows = np.broadcast_to(np.arange(N.size)[:, None], cols.shape)
        keep = w > 0
        out[rows[keep], cols[keep]] = w[keep]
        return out

    support = np.minimum(o, K) - np.maximum(0, o - (N - K)) + 1
    assert np.array_equal(laws.length, support)                # whole supports
    got = placed(laws)
    assert (np.abs(got - want).max(axis=1) / want.max(axis=1)).max() <= 1e-13
    assert laws.backwards.sum() > 300
    laws.backwards[:] = False                                  # control: not reversed
    bad = placed(laws)
    assert (np.abs(bad - want).max(axis=1) / want.max(axis=1)).max() > 0.1


def test_tie_moments_do_not_depend_on_the_chunks(monkeypatch):
    """Parts of up to 400 members (windows longer than NumPy's pairwise-sum blocks of 8 and
    128), computed in chunks of bins sorted by window length (chunks forced small): E|S_j| is
    bit for bit the loop over bins, which computes each bin's parts alone.  Negative
    control: each bin's sum taken over its chunk's padded width (instead of its own entries)
    is caught."""
    rng = np.random.default_rng(11)
    stats = _tie_stats(rng, 30, 5, 400)
    want = _loop_over_bins(stats, 1)
    assert np.array_equal(stats.abs_moment(1), want)
    monkeypatch.setattr(_ties, "_CHUNK", 2000)
    assert np.array_equal(stats.abs_moment(1), want)
    monkeypatch.setattr(_ties, "_row_sums", lambda values, length: values.sum(axis=1))
    got = stats.abs_moment(1)
    assert np.allclose(got, want, rtol=1e-13, atol=0)          # rounding only
    assert not np.array_equal(got, want)


def test_inverse_cdf_rows_is_numpy_row_by_row():
    """The class-wise null's label search: one shifted search per block equals one
    np.searchsorted per row, also where the shift's rounding merges an entry with its target
    (entries one ulp apart, targets on entries, zero probabilities, 3,000 rows: shifts up to
    6,000 drop about 13 bits); and the fix-up is really used there."""
    rng = np.random.default_rng(10)
    b, c, R = 3000, 12, 40
    P = rng.dirichlet(np.full(c, 0.3), size=b)
    P[:, 3] = 0.0                                                # repeated cdf values
    cdf = np.cumsum(P, axis=1)
    cdf[:, 5] = np.nextafter(cdf[:, 4], 2.0)                     # one ulp apart
    cdf = np.maximum.accumulate(cdf, axis=1)
    t = rng.random((b, R)) * cdf[:, -1:]
    t[:, :c] = cdf                                               # targets on the entries
    t[:, c:2 * c] = np.nextafter(cdf, -1.0)                      # just below them
    want = np.array([np.searchsorted(cdf[r], t[r], side="right") for r in range(b)])
    assert np.array_equal(_evalrows.inverse_cdf_rows(cdf, t), want)
    shift = (np.arange(b) * 3.0)[:, None]
    merged = (np.searchsorted((cdf + shift).ravel(), (t + shift).ravel(), side="right")
              - np.repeat(np.arange(b) * c, R)).reshape(b, R)
    assert not np.array_equal(merged, want)                      # the fix-up is exercised


def test_worker_count_from_the_environment(monkeypatch):
    """Every CPU the process may use by default; CALNOTES_THREADS overrides, and a value that
    is not a positive integer is refused naming the variable."""
    monkeypatch.delenv("CALNOTES_THREADS", raising=False)
    assert _sorted.available_workers() >= 1
    monkeypatch.setenv("CALNOTES_THREADS", "3")
    assert _sorted.available_workers() == 3
    for bad in ("0", "-2", "two"):
        monkeypatch.setenv("CALNOTES_THREADS", bad)
        with pytest.raises(ValueError, match="CALNOTES_THREADS: expected a positive integer"):
            _sorted.available_workers()


def test_threaded_references_equal_serial(monkeypatch):
    """The rows' references computed on threads (``_map_plans``) equal those computed on one
    thread, including the folded-normal references (``budget=0``), which read each plan's
    variance sums.  Those are filled lazily, for every plan in one pass
    (``SortedColumns._pq_pass``): a thread that found another's pass half done read unfilled
    sums (a class-wise reference of 0.396 instead of 0.0088 in tests/test_scale.py); this
    failed in 3 of 3 runs before the pass took a lock and published complete sums only."""
    rng = np.random.default_rng(12)
    P, y = _problem(rng, 3000, 4, 1)
    from calnotes.core.measures import confidence_scores
    conf, top, correct = confidence_scores(y, P)

    def refs(workers, budget):
        probs = _evalrows.problems(y, P, top, correct, conf, ("classwise", "confidence"))
        for prob in probs:
            prob.prepare(1)
        out, _ = _evalrows.binned_rows(y, P, probs, [3, 15, 20, 100], "average",
                                       workers=workers, budget=budget)
        return [(r["reference_method"], r["calibrated_reference"]) for r in out]

    monkeypatch.setattr(_evalrows, "_PLAN_THREAD_ROWS", 1)
    for budget in (0.0, _evalrows.EXACT_L1_BUDGET):
        first = refs(1, budget)
        assert any(method == "folded-normal" for method, _ in first) == (budget == 0.0)
        for _ in range(5):
            assert refs(4, budget) == first


def test_run_sums_is_the_sum_of_every_run_on_both_paths(monkeypatch):
    """_evalrows.run_sums (one np.add.reduce per run where the runs are long, else one
    reduceat) gives the integer sums of every run, empty runs included, on both paths (each
    forced in turn, on long runs and on short ones): checked against a plain loop of sums.
    Control: a run boundary off by one row is caught."""
    rng = np.random.default_rng(3)
    rows = (rng.random((5000, 7)) < 0.4).view(np.uint8)
    for cuts in (40, 4000):                                       # long runs, short runs
        at = np.unique(np.r_[0, rng.integers(0, 5000, cuts), 5000])
        at = np.r_[at[:3], at[2], at[3:]]                         # an empty run
        want = np.array([[int(v) for v in rows[a:b].sum(axis=0, dtype=np.int64)]
                         for a, b in zip(at[:-1], at[1:])])
        for loop_rows in (0, 10 ** 9):                            # every run alone; reduceat
            monkeypatch.setattr(_evalrows, "_RUN_LOOP_ENTRIES", loop_rows)
            got = _evalrows.run_sums(rows, at, np.int32)
            assert got.dtype == np.int32 and np.array_equal(got, want), (cuts, loop_rows)
            off = at.copy()
            off[5] += 1
            assert not np.array_equal(_evalrows.run_sums(rows, off, np.int32), want)
