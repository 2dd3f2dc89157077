"""p-values under the calibrated null and bootstrap intervals (calnotes._engine.significance and the
one-sort engine of calnotes.evaluate)."""

import numpy as np
import pytest
from scipy.stats import binomtest

import calnotes
from calnotes._engine import rows as _evalrows
from calnotes._engine.bin_stats import positives_by_class
from calnotes._engine.sorted_columns import SortedColumns, measure_columns, width_raw_bins
from calnotes.core.expectation import poisson_binomial_pmf
from calnotes.core.measures import confidence_scores
from calnotes._engine.significance import (draw_categorical, exact_tail_bounds, monte_carlo_p_value,
                                           poisson_binomial_pmf_fft)


def _calibrated(n, k, rng, ties=False):
    P = rng.dirichlet(np.ones(k), size=n)
    if ties:
        P = np.round(P, 1)
        P[:, -1] = np.clip(1 - P[:, :-1].sum(axis=1), 0, 1)
        P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return P, y


@pytest.mark.parametrize("ties", ["average", "position"])
@pytest.mark.parametrize("rounded", [False, True])
def test_sorted_engine_equals_the_public_measures(ties, rounded):
    """The one-sort engine gives the numbers of calnotes.l1_qece / l2_qece / binned_ece, also
    with heavy ties straddling equal-mass boundaries and with more equal-width bins than
    samples; they differ only in the order of floating-point additions (<= 1e-13 here)."""
    rng = np.random.default_rng(5)
    for _ in range(25):
        n, k = int(rng.integers(5, 80)), int(rng.integers(2, 5))
        P, y = _calibrated(n, k, rng, ties=rounded)
        sc = SortedColumns(P, workers=1)
        loc = sc.locate_positives(positives_by_class(y, k))
        for m in (1, 3, 7, n, n + 4):
            for name, public, binning in (("ECE", calnotes.binned_ece, "width"),
                                          ("l1-QECE", calnotes.l1_qece, "mass"),
                                          ("l2-QECE", calnotes.l2_qece, "mass")):
                if binning == "mass" and m > n:
                    continue
                got = measure_columns(sc.plan(m, binning).stats(loc, ties), name).mean()
                kwargs = {"n_bins": m} if binning == "width" else {"n_bins": m, "ties": ties}
                want = calnotes.classwise(public, y, P, **kwargs)
                assert abs(got - want) <= 1e-13 * (1 + abs(want)), (n, m, name)


def test_fft_poisson_binomial_equals_the_exact_recursion():
    rng = np.random.default_rng(0)
    q = np.concatenate([rng.uniform(size=900), [0.0, 1.0, 1.0]])
    assert np.abs(poisson_binomial_pmf_fft(q) - poisson_binomial_pmf(q)).max() < 1e-14


def test_exact_tail_bracket_contains_the_brute_force_tail():
    """T = sum_j |a_j - K_j| / n over 4 bins of 12: the exact law by enumerating the K_j
    grid (13^4 points) lies inside [lo, hi]."""
    rng = np.random.default_rng(1)
    p = np.sort(rng.uniform(size=48))
    bins = p.reshape(4, 12)
    a = bins.sum(axis=1)
    pmfs = [poisson_binomial_pmf(b) for b in bins]
    grids = np.meshgrid(*[np.arange(13)] * 4, indexing="ij")
    T = sum(np.abs(a[j] - grids[j]) for j in range(4)) / 48
    prob = np.prod([pmfs[j][grids[j]] for j in range(4)], axis=0)
    for t in np.quantile(T, [0.5, 0.9, 0.99]):
        exact = prob[T >= t - 1e-12].sum()
        lo, hi = exact_tail_bounds(a, pmfs, t, 1, 48)
        assert lo - 1e-12 <= exact <= hi + 1e-12
        assert hi - lo < 0.05


def test_draw_categorical_frequencies_and_zero_classes():
    """Frequencies within 4.5 binomial SEs (about 1e-5 two-sided for each of <= 40 classes);
    a class of probability 0 is never drawn (both search paths, k <= 16 and k > 16)."""
    rng = np.random.default_rng(2)
    for k in (3, 9, 40):
        p = rng.dirichlet(np.ones(k))
        p[1] = 0.0
        p /= p.sum()
        labels = draw_categorical(np.cumsum(np.tile(p, (4, 1)), axis=1),
                                  rng.random((50000, 4)))
        freq = np.bincount(labels.ravel(), minlength=k) / labels.size
        assert freq[1] == 0.0
        se = np.sqrt(p * (1 - p) / labels.size)
        assert np.all(np.abs(freq - p) <= 4.5 * se + 1e-12)


def test_monte_carlo_p_value_counts_ties_as_exceeding():
    assert monte_carlo_p_value(1.0, np.array([1.0, 0.5, 2.0])) == 0.75
    assert monte_carlo_p_value(3.0, np.zeros(19)) == 0.05


def _p_values(seed, n=150, k=3):
    rng = np.random.default_rng(seed)
    P, y = _calibrated(n, k, rng)
    report = calnotes.evaluate(P, labels=y, n_bins=[5], utility=False, smooth_ece=False,
                               references=False, draws=99, bootstrap=0, rng=seed)
    return {(r["measure"], r["aggregation"]): (r["p_value"], r["p_value_method"])
            for r in report.rows}


def test_p_values_are_uniform_under_the_calibrated_null():
    """Calibrated data, 300 seeds: each row's rejection rate at 5% (and at 50%) is a
    Binomial(300, alpha) count -- the exact p-values are continuous up to a bracket of width
    < 1e-2, the Monte Carlo ones satisfy P(p <= 5/100) = 5/100 exactly for a continuous
    statistic -- so a two-sided binomial test must not reject at level 0.001 (6 rows x 2
    levels: a family-wise false alarm rate of about 1%)."""
    results = [_p_values(seed) for seed in range(300)]
    assert {method for r in results for _, method in r.values()} == {"exact", "monte-carlo"}
    for key in results[0]:
        p = np.array([r[key][0] for r in results])
        for alpha in (0.05, 0.5):
            hits = int(np.count_nonzero(p <= alpha))
            assert binomtest(hits, p.size, alpha).pvalue > 1e-3, (key, alpha, hits)


def test_miscalibration_gives_small_p_values():
    """Over-confident predictions (labels from a temperature-3 flattening): every row's
    p-value is at the Monte Carlo floor 1/(R + 1) or below 1e-3."""
    rng = np.random.default_rng(4)
    logits = 3 * rng.standard_normal((2000, 4))
    P = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    Q = np.exp(logits / 3) / np.exp(logits / 3).sum(axis=1, keepdims=True)
    y = (Q.cumsum(axis=1) > rng.random((2000, 1))).argmax(axis=1)
    report = calnotes.evaluate(P, labels=y, n_bins=[10], utility=False, smooth_ece=False,
                               draws=99, bootstrap=0)
    for row in report.rows:
        assert row["p_value"] <= max(1e-3, 1 / 100), row


def test_exact_and_monte_carlo_p_values_agree():
    """Confidence rows: the exact bracket against 4000 redraws of correct ~ Ber(conf)
    through the public l1_qece (|difference| <= 4 SE + bracket width)."""
    rng = np.random.default_rng(6)
    P, y = _calibrated(120, 3, rng)
    conf = P.max(axis=1)
    report = calnotes.evaluate(P, labels=y, n_bins=[4], utility=False, smooth_ece=False,
                               draws=99, bootstrap=0)
    row = next(r for r in report.rows
               if (r["measure"], r["aggregation"]) == ("l1-QECE", "confidence"))
    assert row["p_value_method"] == "exact"
    draws = np.array([calnotes.l1_qece((rng.random(120) < conf).astype(int), conf, 4)
                      for _ in range(4000)])
    mc = np.mean(draws >= row["value"] * (1 - 1e-12))
    se = np.sqrt(mc * (1 - mc) / 4000) + 1e-3
    assert abs(mc - row["p_value"]) <= 4 * se + (row["p_value"] - row["p_value_lower"])


@pytest.mark.parametrize("ties", ["average", "position"])
def test_bootstrap_resample_is_the_measure_on_the_resampled_rows(ties):
    """A resample built from the sorted order equals the public measure on the rows repeated
    by their multiplicities (resampled rows in input order), ties included."""
    rng = np.random.default_rng(7)
    P, y = _calibrated(60, 3, rng, ties=True)
    conf, top, correct = confidence_scores(y, P)
    for prob in _evalrows.problems(y, P, top, correct, conf, ("confidence", "classwise")):
        prob.prepare(1)
        resampler = _evalrows.Resampler(prob)
        for _ in range(5):
            w = rng.multinomial(60, np.full(60, 1 / 60))
            idx = np.repeat(np.arange(60), w)
            got = resampler.values(w, [(4, "l1-QECE"), (4, "l2-QECE"), (7, "ECE")], ties)
            if prob.aggregation == "confidence":
                yy, pp, lift = correct[idx], conf[idx], lambda f, **kw: f(yy, pp, **kw)
            else:
                yy, pp = y[idx], P[idx]
                lift = lambda f, **kw: calnotes.classwise(f, yy, pp, **kw)  # noqa: E731
            want = [lift(calnotes.l1_qece, n_bins=4, ties=ties),
                    lift(calnotes.l2_qece, n_bins=4, ties=ties),
                    lift(calnotes.binned_ece, n_bins=7)]
            assert np.allclose(got, want, rtol=1e-12, atol=1e-15), (prob.aggregation, got, want)


def test_significance_is_reproducible_and_reported(tmp_path):
    rng = np.random.default_rng(8)
    P, y = _calibrated(200, 3, rng)
    a = calnotes.evaluate(P, labels=y, n_bins=[5], utility=False, rng=3, out=tmp_path / "a")
    b = calnotes.evaluate(P, labels=y, n_bins=[5], rng=3)       # utility on: same stream
    key = ("p_value", "ci_lower", "ci_upper")
    binned = [r for r in a.rows if r["binning"] != "kernel"]
    assert [[r[k] for k in key] for r in binned] == \
        [[r[k] for k in key] for r in b.rows if r["binning"] != "kernel"]
    for r in binned:
        assert 0 < r["p_value"] <= 1 and r["ci_lower"] <= r["ci_upper"]
    assert "p_value" in (tmp_path / "a" / "report.csv").read_text().splitlines()[0]
    assert "p-value" in a.format_table()


@pytest.mark.parametrize("kwargs, name", [
    ({"draws": 5}, "draws"), ({"draws": 2.5}, "draws"), ({"bootstrap": -1}, "bootstrap"),
    ({"significance": "yes"}, "significance")])
def test_bad_significance_options_name_the_argument(kwargs, name):
    P = np.full((10, 2), 0.5)
    with pytest.raises((TypeError, ValueError), match=name):
        calnotes.evaluate(P, labels=np.arange(10) % 2, **kwargs)


def _tied_problem(rng, n, k, decimals):
    """Rounded probabilities (heavy ties), a block of exact duplicate rows with different
    labels, labels drawn from the rounded rows."""
    P = np.round(rng.dirichlet(np.full(k, 0.5), size=n), decimals)
    P[:, -1] = 1.0 - P[:, :-1].sum(axis=1)
    P = np.clip(P, 0.0, 1.0)
    P /= P.sum(axis=1, keepdims=True)
    P[-6:] = P[0]                                            # duplicates of row 0
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return P, y


@pytest.mark.parametrize("n, k, decimals", [(90, 3, 1), (80, 20, 2)])
def test_significance_does_not_depend_on_the_row_order(n, k, decimals):
    """ties="average": permuting the rows of (y, P) leaves every binned row -- value,
    reference, p-value and bootstrap interval -- *exactly* unchanged for the same seed.

    Exact equality is right here: the sorted columns are the same arrays whatever the row
    order; the null's uniforms and the resamples' multiplicities go to the rows by their
    canonical order (lexicographic in (P row, label)), and rows it cannot tell apart are
    identical; bin counts are integers and the tie-averaged parts depend only on the
    counts of positives per tie group.  So every number is computed by the same operations
    on the same operands.  The data have tie groups straddling equal-mass boundaries (checked
    below) and duplicated rows with different labels; k = 20 takes the per-row label search
    and the group-start gathers of the class-wise null, k = 3 the vectorised search."""
    rng = np.random.default_rng(11)
    P, y = _tied_problem(rng, n, k, decimals)
    conf, top, correct = confidence_scores(y, P)
    straddled = set()
    for prob in _evalrows.problems(y, P, top, correct, conf, ("confidence", "classwise")):
        prob.prepare(1)
        if prob.sc.plan(7, "mass").groups:
            straddled.add(prob.aggregation)
    assert straddled == {"confidence", "classwise"}

    def rows(perm, seed=3):
        report = calnotes.evaluate(P[perm], labels=y[perm], n_bins=[4, 7], utility=False,
                                   smooth_ece=False, draws=59, bootstrap=40, rng=seed)
        return [{key: value for key, value in r.items()} for r in report.rows]

    base = rows(np.arange(n))
    methods = {(r["aggregation"], r["p_value_method"]) for r in base}
    assert ("classwise", "monte-carlo") in methods and ("confidence", "monte-carlo") in methods
    assert all("ci_lower" in r for r in base)
    for seed in range(3):
        perm = np.random.default_rng(seed).permutation(n)
        assert rows(perm) == base, seed
    # the check has teeth: another seed moves the Monte Carlo p-values and the intervals
    other = rows(np.arange(n), seed=4)
    assert [(r["p_value"], r["ci_lower"], r["ci_upper"]) for r in other] != \
        [(r["p_value"], r["ci_lower"], r["ci_upper"]) for r in base]


def test_canonical_order_depends_only_on_the_rows():
    """The canonical order lists the same row contents whatever the input order."""
    rng = np.random.default_rng(12)
    X = np.round(rng.uniform(size=(200, 3)), 1)
    key = rng.integers(0, 2, size=200)
    order = _evalrows.canonical_order(X, key)
    want = np.lexsort((key,) + tuple(X[:, j] for j in range(2, -1, -1)))
    assert np.array_equal(X[order], X[want]) and np.array_equal(key[order], key[want])
    perm = rng.permutation(200)
    again = _evalrows.canonical_order(X[perm], key[perm])
    assert np.array_equal(X[perm][again], X[order])
    assert np.array_equal(key[perm][again], key[order])


@pytest.mark.parametrize("dense", [True, False])
def test_null_draws_locate_entries_as_the_binary_searches_do(dense, monkeypatch):
    """The class-wise null's entries: the labels are those of draw_categorical (k > 16: the
    per-row search), each chunk's distinct drawn entries (two chunks) are numbered in
    row-major order, every draw points to its own entry, and their group starts equal
    binary searches of every entry; the bins of entries
    (equal-width bins from the values, with values on and next to the edges j/m) equal the
    bins of the same positives located by bins_of."""
    rng = np.random.default_rng(13)
    P, y = _tied_problem(rng, 150, 20, 2)
    edges = np.arange(20) / 19
    P[:5] = edges / edges.sum()
    P[5] = np.nextafter(P[0], 1.0)
    P[5] /= P[5].sum()
    for m in (1, 3, 7, 19, 38, 40, 1000):
        edges = np.arange(m + 1) / m
        v = np.clip(np.concatenate([edges, np.nextafter(edges, 2), np.nextafter(edges, -1),
                                    P.ravel()]), 0, 1)
        assert np.array_equal(width_raw_bins(v, m), np.searchsorted(edges[1:m], v, "right"))
    sc = SortedColumns(P, workers=1)
    rows = np.repeat(np.arange(150), 20)
    cols = np.tile(np.arange(20), 150)
    loc = sc.locate(cols, rows)
    assert np.array_equal(loc.left, [np.searchsorted(sc.values[c], P[r, c])
                                     for r, c in zip(rows, cols)])
    for m in (1, 3, 7, 19, 38, 40):
        for binning in ("width", "mass"):
            plan = sc.plan(m, binning)
            got = plan.bins_of_entries(cols, loc.left, P[rows, cols])
            assert np.array_equal(got, plan.bins_of(loc)), (m, binning)
    conf, top, correct = confidence_scores(y, P)
    prob = _evalrows.problems(y, P, top, correct, conf, ("classwise",))[0]
    prob.prepare(1)
    if dense:           # every entry once (20 classes: above the default column limit)
        monkeypatch.setattr(_evalrows, "DENSE_NULL_COLUMNS", 20)
    else:               # every chunk's distinct entries, as for large n x k
        monkeypatch.setattr(_evalrows, "DENSE_NULL_ENTRIES", 0)
    sampler = _evalrows.NullSampler(prob, np.arange(150))
    assert sampler.dense == dense
    for R in (3, 40):
        u = rng.random((150, R))
        labels = sampler.outcomes(u)
        assert np.array_equal(labels, draw_categorical(np.cumsum(P, axis=1), u.T).T)
        hit = np.ones((150, 20), dtype=bool)               # dense: every entry, row-major
        if not dense:                                       # the chunk's, row-major
            hit[...] = False
            hit[np.arange(150)[:, None], labels] = True
        r, c = np.nonzero(hit)
        rows, cols, left = sampler._entries
        assert np.array_equal(rows, r) and np.array_equal(cols, c)
        assert np.array_equal(left, loc.left.reshape(150, 20)[r, c])
        eid = sampler._entry_numbers(0, R).reshape(150, R)
        assert np.array_equal(rows[eid], np.broadcast_to(np.arange(150)[:, None], (150, R)))
        assert np.array_equal(cols[eid], labels)
    # the control: numbering from a chunk with one draw changed must differ
    changed = labels.copy()
    changed[0, 0] = (changed[0, 0] + 1) % 20
    sampler._number_entries(changed)
    assert not np.array_equal(sampler._entries[1][sampler._entry_numbers(0, R)], labels.ravel())
    # canonical order: position p draws the label of input row canon[p] from u[p]
    canon = rng.permutation(150)
    shuffled = _evalrows.NullSampler(prob, canon)
    labels = shuffled.outcomes(u)
    assert np.array_equal(labels, draw_categorical(np.cumsum(P[canon], axis=1), u.T).T)
    rows, cols, left = shuffled._entries
    eid = shuffled._entry_numbers(0, R).reshape(150, R)
    assert np.array_equal(rows[eid], np.broadcast_to(canon[:, None], (150, R)))
    assert np.array_equal(cols[eid], labels)
    assert np.array_equal(left[eid], loc.left.reshape(150, 20)[canon[:, None], labels])


@pytest.mark.parametrize("k, decimals", [(2, None), (3, 1), (4, 2)])
def test_null_counts_from_sorted_orders_equal_the_per_entry_counts(k, decimals, monkeypatch):
    """Few columns: a replication's values from running sums in each column's sorted order
    (bin counts; with straddling tie groups under ties="average" also the groups' positives
    and the bins' other positives) equal those of the per-entry keys' ``bincount`` and of the
    located positives, value for value, for every plan of the report (equal-width and
    equal-mass, 1 to n bins); the control reverses one column's order, which moves outcomes
    to other bins."""
    rng = np.random.default_rng(40 + k)
    if decimals is None:
        P = rng.dirichlet(np.ones(k), size=60)
        y = (P.cumsum(axis=1) > rng.random((60, 1))).argmax(axis=1)
    else:
        P, y = _tied_problem(rng, 60, k, decimals)
    conf, top, correct = confidence_scores(y, P)
    prob = _evalrows.problems(y, P, top, correct, conf, ("classwise",))[0]
    prob.prepare(1)
    by_plan = [(prob.sc.plan(m, binning), names) for m in (1, 3, 7, 60)
               for binning, names in (("width", ["ECE"]), ("mass", ["l1-QECE", "l2-QECE"]))]
    u = rng.random((60, 25))

    def values(columns):
        monkeypatch.setattr(_evalrows, "SORTED_NULL_COLUMNS", columns)
        sampler = _evalrows.NullSampler(prob, np.arange(60))
        sampler.outcomes(u)
        return sampler, sampler.values(0, 25, by_plan, "average")

    sorted_sampler, got = values(4)
    assert sorted_sampler._orders is not None
    _, want = values(0)
    assert got.keys() == want.keys()
    assert all(np.array_equal(got[key], want[key]) for key in want)
    assert any(not plan.has_groups for plan, _ in by_plan)
    assert (decimals is None) != any(plan.has_groups for plan, _ in by_plan)
    sorted_sampler._hits[0] = sorted_sampler._hits[0][::-1]              # control: order reversed
    bad = sorted_sampler.values(0, 25, by_plan, "average")
    assert any(not np.array_equal(bad[key], want[key]) for key in want)


@pytest.mark.parametrize("dense", [True, False])
def test_tie_codes_count_as_the_located_positives(dense, monkeypatch):
    """Class-wise null under ties="average", plans with straddling tie groups: a
    replication's values from one ``bincount`` of its entries' codes
    (``BinPlan.tie_codes_of_entries``: the straddling group, or column and bin) equal those
    of the located positives (``BinPlan.measure_values``), value for value, with every entry
    numbered once (dense) and with each chunk's entries; the control codes every entry by its
    bin alone (no group), which loses the groups' hypergeometric parts."""
    from calnotes._engine import sorted_columns as _sorted
    from calnotes.core.binning import quantile_bin_of_position

    rng = np.random.default_rng(77)
    n, k, R = 80, 6, 30
    P, y = _tied_problem(rng, n, k, 1)
    conf, top, correct = confidence_scores(y, P)
    prob = _evalrows.problems(y, P, top, correct, conf, ("classwise",))[0]
    prob.prepare(1)
    monkeypatch.setattr(_evalrows, "SORTED_NULL_COLUMNS", 0)
    if not dense:
        monkeypatch.setattr(_evalrows, "DENSE_NULL_ENTRIES", 0)
    by_plan = [(prob.sc.plan(m, "mass"), ["l1-QECE", "l2-QECE"]) for m in (2, 3, 7, 20, 80)]
    assert sum(plan.has_groups for plan, _ in by_plan) >= 4
    u = rng.random((n, R))

    def values():
        sampler = _evalrows.NullSampler(prob, np.arange(n))
        assert sampler.dense == dense
        sampler.outcomes(u)
        return sampler, sampler.values(0, R, by_plan, "average")

    sampler, got = values()
    rows, cols, left = sampler._entries
    eid = sampler._entry_numbers(0, R)
    loc = _sorted.Located(cols[eid], np.tile(np.arange(R), n), left[eid], rows[eid], R)
    for plan, names in by_plan:
        want = plan.measure_values(loc, "average", names)
        for name in names:
            assert np.array_equal(got[(id(plan), name)], want[name].reshape(R, k).mean(axis=1))

    def bins_only(self, cols, left):
        return self._g_e.shape[0] + cols * self.m + quantile_bin_of_position(left, self.sc.n,
                                                                               self.m)

    monkeypatch.setattr(_sorted.BinPlan, "tie_codes_of_entries", bins_only)
    _, bad = values()
    assert any(not np.allclose(bad[key], got[key], rtol=1e-9, atol=0) for key in got)


def _binary_problem(n, temperature, rng):
    """Binary predictions ``sigmoid(z)``, ``z ~ N(0, 4)``, with labels from
    ``sigmoid(z / temperature)`` (temperature 1: calibrated; above 1: over-confident)."""
    z = 2 * rng.standard_normal(n)
    x = 1 / (1 + np.exp(-z))
    y = (rng.random(n) < 1 / (1 + np.exp(-z / temperature))).astype(int)
    return x, y


def _public_null_p_values(x, m, values, sims, rng):
    """``P(T >= t)`` for each binary row by direct simulation through the public measures
    (labels redrawn from the predictions), with its binomial standard error."""
    public = {"ECE": calnotes.binned_ece, "l1-QECE": calnotes.l1_qece,
              "l2-QECE": calnotes.l2_qece}
    Y = (rng.random((sims, x.size)) < x).astype(int)
    out = {}
    for name, t in values.items():
        T = np.array([public[name](y, x, n_bins=m) for y in Y])
        p = float(np.mean(T >= t * (1 - 1e-12)))
        out[name] = (p, np.sqrt(max(p * (1 - p), 1 / sims) / sims))
    return out


def test_p_values_with_bins_of_few_rows_mean_what_they_say():
    """Bins of two rows (m = n / 2), over-confident predictions: each binary row's printed
    p-value agrees with P(T >= t) simulated through the public measures (400 redraws) within
    four standard errors of both estimates, plus the grid rounding an exact row may carry
    (exact_bracket_limit).  Negative control: the exact bracket's upper end -- what the report
    printed before the rule -- fails the same comparison (it was 0.95 where the truth is
    below 0.01), and the rule is what switched those rows to Monte Carlo."""
    from calnotes._engine.rows import _single_pmfs
    from calnotes._engine.sorted_columns import MEASURES
    from calnotes._engine.significance import exact_bracket_limit, predicted_bracket_width

    rng = np.random.default_rng(3)
    n, m, draws = 4000, 2000, 200
    x, y = _binary_problem(n, 1.2, rng)
    report = calnotes.evaluate(np.c_[1 - x, x], labels=y, n_bins=[m], utility=False,
                               smooth_ece=False, bootstrap=0, references=False, draws=draws)
    rows = {r["measure"]: r for r in report.rows if r["aggregation"] == "binary"}
    truth = _public_null_p_values(x, m, {k: r["value"] for k, r in rows.items()}, 400,
                                  np.random.default_rng(9))
    limit = exact_bracket_limit(draws)
    sc = SortedColumns(x[:, None], workers=1)
    loc = sc.locate_positives([np.flatnonzero(y)])
    old_misses = 0
    for name, row in rows.items():
        p_true, se_true = truth[name]
        p = row["p_value"]
        if row["p_value_method"] == "monte-carlo":
            se = np.sqrt(max(p * (1 - p), 1 / draws) / draws)
            assert "p_value_note" in row and "grid rounding" in row["p_value_note"]
            slack = 0.0
        else:
            se, slack = 0.0, limit
        assert abs(p - p_true) <= 4 * (se + se_true) + slack, (name, p, p_true)
        plan = sc.plan(m, MEASURES[name].binning)
        pmfs = _single_pmfs(sc, plan)
        power = MEASURES[name].power
        _, hi = exact_tail_bounds(plan.sum_prob[0], pmfs, row["value"], power, n)
        if abs(hi - p_true) > 4 * se_true + limit:
            old_misses += 1
            assert predicted_bracket_width(plan.sum_prob[0], pmfs, row["value"], power,
                                           n) > limit
    assert old_misses >= 2
    assert any("p_value_note" in note for note in report.notes)


def test_predicted_bracket_width_chooses_the_method_safely():
    """Single columns, (n, m) from (30, 2) to (8000, 1000), four prediction laws, calibrated
    and over- / under-confident.  Where the predicted widening is within exact_bracket_limit,
    the exact upper end (the printed p-value) lies within the limit of the same bracket on
    a grid of max(2^17, 128 m) cells (8 or more times finer); where it is beyond, the computed
    bracket is wider than the limit (so no informative bracket is skipped).  Negative
    control: trusting every bracket (no prediction) fails the first property."""
    from calnotes._engine.rows import _single_pmfs
    from calnotes._engine.sorted_columns import MEASURES
    from calnotes._engine.significance import exact_bracket_limit, predicted_bracket_width

    rng = np.random.default_rng(1)
    limit = exact_bracket_limit(200)
    laws = (lambda n: rng.beta(2, 2, n), lambda n: rng.random(n) ** 3,
            lambda n: rng.random(n) ** 8, lambda n: np.clip(rng.normal(0.9, 0.05, n), 0, 1))
    sizes = ((30, 2), (30, 15), (400, 10), (400, 200), (2000, 100), (2000, 400),
             (2000, 1000), (8000, 1000))
    checked = {"kept": 0, "skipped": 0}
    control_misses = 0
    for i, (n, m) in enumerate(sizes * 3):
        x = laws[i % 4](n)
        temp = (1.0, 1.3, 0.7)[i // len(sizes)]
        with np.errstate(divide="ignore"):
            q = 1 / (1 + ((1 - x) / np.maximum(x, 1e-300)) ** (1 / temp))
        y = (rng.random(n) < q).astype(int)
        sc = SortedColumns(x[:, None], workers=1)
        loc = sc.locate_positives([np.flatnonzero(y)])
        for name in ("ECE", "l1-QECE", "l2-QECE"):
            plan = sc.plan(m, MEASURES[name].binning)
            t = float(measure_columns(plan.stats(loc), name).mean())
            pmfs, power = _single_pmfs(sc, plan), MEASURES[name].power
            a = plan.sum_prob[0]
            lo, hi = exact_tail_bounds(a, pmfs, t, power, n)
            fine = max(1 << 17, 128 * plan.m)       # the fine grid's own rounding <= t / 128
            excess = hi - exact_tail_bounds(a, pmfs, t, power, n, cells=fine)[1]
            if predicted_bracket_width(a, pmfs, t, power, n) <= limit:
                checked["kept"] += 1
                assert excess <= limit, (n, m, name, temp, excess)
            else:
                checked["skipped"] += 1
                assert hi - lo > limit, (n, m, name, temp, hi - lo)
            control_misses += excess > limit        # every bracket kept (no prediction)
    assert min(checked.values()) >= 10, checked
    assert control_misses >= 5


@pytest.mark.parametrize("decimals", [None, 1, 2])
def test_one_column_null_from_running_sums_equals_the_located_positives(decimals):
    """One column (the confidence problem): a replication's values from running sums of its
    outcomes in canonical (= sorted) order -- bin counts, and under ties="average" the
    straddling groups' positives and each bin's other positives -- equal those of the
    located positives through BinPlan.measure_values, value for value, for equal-width and
    equal-mass plans of 1 to n bins, with and without straddling tie groups.  Control: tie
    groups one position shorter at their end are caught."""
    from calnotes._engine.sorted_columns import Located

    rng = np.random.default_rng(70)
    if decimals is None:
        P = rng.dirichlet(np.ones(3), size=80)
        y = (P.cumsum(axis=1) > rng.random((80, 1))).argmax(axis=1)
    else:
        P, y = _tied_problem(rng, 80, 3, decimals)
    conf, top, correct = confidence_scores(y, P)
    prob = _evalrows.problems(y, P, top, correct, conf, ("confidence",))[0]
    prob.prepare(1)
    canon = _evalrows.canonical_order(prob.X, prob.outcome_key())
    by_plan = [(prob.sc.plan(m, binning), names) for m in (1, 3, 7, 20, 80)
               for binning, names in (("width", ["ECE"]), ("mass", ["l1-QECE", "l2-QECE"]))]
    assert (decimals is None) != any(plan.has_groups for plan, _ in by_plan)
    sampler = _evalrows.NullSampler(prob, canon)
    chunk = sampler.outcomes(rng.random((80, 30)))
    got = sampler.values(0, 30, by_plan, "average")
    pos, b = np.nonzero(chunk)
    rows = canon[pos]
    loc = Located(np.zeros(rows.shape[0], dtype=np.int64), b.astype(np.int64),
                  prob.sc.left[rows, 0].astype(np.int64), rows, 30)
    for plan, names in by_plan:
        want = plan.measure_values(loc, "average", names)
        for name in names:
            assert np.array_equal(got[(id(plan), name)], want[name]), (plan.m, name)
    if decimals is not None:                    # control: every group one position shorter
        plan = next(plan for plan, _ in by_plan if plan.has_groups)
        plan._g_e = plan._g_e - 1
        bad = sampler.values(0, 30, [(plan, ["l1-QECE"])], "average")[(id(plan), "l1-QECE")]
        plan._g_e = plan._g_e + 1
        assert not np.array_equal(bad, plan.measure_values(loc, "average",
                                                           ["l1-QECE"])["l1-QECE"])


def _enumerated_tails(p, m, power):
    """Every outcome of ``n <= 12`` Bernoulli(p) labels: the distinct values ``t`` of
    ``T = sum_j |S_j|^power / n^power`` over ``m`` equal-mass bins of the sorted ``p`` (at most
    60 of them, the largest always), ``P(T >= t)`` exactly, and the bins' ``V_j``, ``L_j``."""
    import itertools

    n = p.size
    p = np.sort(p)
    edges = (np.arange(m + 1) * n) // m
    Y = np.array(list(itertools.product([0, 1], repeat=n)))
    prob = np.prod(np.where(Y == 1, p, 1 - p), axis=1)
    S = np.stack([(Y[:, a:b] - p[a:b]).sum(axis=1) for a, b in zip(edges[:-1], edges[1:])],
                 axis=1)
    T = (np.abs(S) ** power).sum(axis=1) / n ** power
    ts = np.unique(T[T > 0])
    ts = np.unique(np.r_[ts[np.linspace(0, ts.size - 1, min(ts.size, 50)).astype(int)],
                         ts[-10:]])
    tails = np.array([prob[T >= t * (1 - 1e-12)].sum() for t in ts])
    V = np.array([(p[a:b] * (1 - p[a:b])).sum() for a, b in zip(edges[:-1], edges[1:])])
    return ts, tails, V, np.diff(edges).astype(float)


def test_tail_bound_is_above_the_enumerated_tail():
    """tail_bound against P(T >= t) by enumerating all 2^n outcomes (n = 6, 9, 12; m = 1 to
    3 bins; uniform, U-shaped, extreme and constant-1/2 predictions; l1 and l2; t over the
    whole support up to its maximum): never below it (beyond rounding).  Negative controls,
    run through the same comparison: the variance proxies divided by 4, and the l1 bound
    without the factor 2 per bin that |S_j| costs (a one-sided bound), each fall below the
    exact tail somewhere."""
    from calnotes._engine.significance import tail_bound

    rng = np.random.default_rng(0)
    misses = {"bound": 0, "quarter variance": 0, "one-sided": 0}
    for trial in range(24):
        n = (6, 9, 12)[trial % 3]
        p = [rng.random(n), rng.beta(0.3, 0.3, n), np.full(n, 0.5),
             rng.random(n) ** 4][trial % 4]
        p = np.clip(p, 1e-3, 1 - 1e-3)
        for m in (1, 2, 3):
            for power in (1, 2):
                ts, tails, V, L = _enumerated_tails(p, m, power)
                for t, tail in zip(ts, tails):
                    b = tail_bound(t, power, n, V, L)
                    misses["bound"] += b < tail - 1e-12
                    misses["quarter variance"] += tail_bound(t, power, n, V / 4,
                                                             L / 4) < tail - 1e-12
                    if power == 1:
                        misses["one-sided"] += b / 2 ** m < tail - 1e-12
    assert misses["bound"] == 0, misses
    assert misses["quarter variance"] > 0 and misses["one-sided"] > 0, misses


def test_clearly_miscalibrated_columns_are_decided_by_the_bound():
    """Over-confident binary predictions, n = 5,000: the one-column rows' p-values are
    certified brackets [0, bound] with bound <= 1e-15 (p_value_method "bound"), and the
    exact bracket of the same rows agrees: its upper end is below 1e-10.  Calibrated labels
    for the same predictions: no row is decided by the bound."""
    from calnotes._engine.rows import _single_pmfs
    from calnotes._engine.sorted_columns import MEASURES

    rng = np.random.default_rng(12)
    x, y = _binary_problem(5000, 2.0, rng)
    report = calnotes.evaluate(np.c_[1 - x, x], labels=y, n_bins=[10, 50], utility=False,
                               smooth_ece=False, bootstrap=0, references=False)
    rows = [r for r in report.rows if r["aggregation"] == "binary"]
    assert rows and all(r["p_value_method"] == "bound" for r in rows)
    sc = SortedColumns(x[:, None], workers=1)
    for r in rows:
        assert r["p_value_lower"] == 0.0 and r["p_value"] <= 1e-15
        plan = sc.plan(r["n_bins"], MEASURES[r["measure"]].binning)
        lo, hi = exact_tail_bounds(plan.sum_prob[0], _single_pmfs(sc, plan), r["value"],
                                   MEASURES[r["measure"]].power, 5000)
        assert hi <= 1e-10, (r["measure"], r["n_bins"], hi)
    y_cal = (rng.random(5000) < x).astype(int)
    calibrated = calnotes.evaluate(np.c_[1 - x, x], labels=y_cal, n_bins=[10, 50],
                                   utility=False, smooth_ece=False, bootstrap=0,
                                   references=False)
    assert not any(r.get("p_value_method") == "bound" for r in calibrated.rows)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_null_draw_with_a_pool_is_the_same_stream(k, monkeypatch):
    """NullSampler.draw with a thread pool (uniforms drawn in order on the calling thread,
    outcomes computed by the pool, blocks of 7 rows here) gives the outcomes of one
    ``rng.random((n, R))`` (which ``outcomes`` leaves unchanged) and leaves the generator
    where the serial draw does: the one-column
    problems (binary, confidence) and the class-wise one.  Control: the same blocks' uniforms
    taken in another order give other outcomes."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(k)
    n, R = 60, 9
    P = rng.dirichlet(np.ones(k), size=n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(0, k - 1)
    conf, top, correct = confidence_scores(y, P)
    aggs = ("classwise", "confidence") + (("binary",) if k == 2 else ())
    for prob in _evalrows.problems(y, P, top, correct, conf, aggs):
        prob.prepare(1)
        canon = _evalrows.canonical_order(prob.X, prob.outcome_key())
        sampler = _evalrows.NullSampler(prob, canon)
        blocks = [(a, min(n, a + 7)) for a in range(0, n, 7)]
        monkeypatch.setattr(sampler, "_blocks", lambda R_: blocks)
        given = np.random.default_rng(5).random((n, R))
        kept = given.copy()
        want = sampler.outcomes(given).copy()
        assert np.array_equal(given, kept)          # the caller's uniforms are left alone
        serial_rng, pooled_rng = np.random.default_rng(5), np.random.default_rng(5)
        serial = sampler.draw(serial_rng, R).copy()
        with ThreadPoolExecutor(max_workers=2) as pool:
            pooled = sampler.draw(pooled_rng, R, pool).copy()
        assert np.array_equal(serial, want) and np.array_equal(pooled, want), prob.aggregation
        assert serial_rng.random() == pooled_rng.random()
        u = np.random.default_rng(5).random((n, R))
        swapped = np.concatenate([u[7:14], u[:7], u[14:]])   # two blocks' uniforms exchanged
        assert not np.array_equal(sampler.outcomes(swapped), want), prob.aggregation
