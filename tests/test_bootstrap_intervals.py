"""The report's bootstrap intervals (``calnotes._engine.rows``): the interval formula, the law of
the resamples, each resample's value, and the rules for which rows get an interval.

Properties pinned (each by a ``check_*`` function that ``tests/test_engine_slips.py`` also
calls under planted slips):

* :func:`check_basic_interval_formula` -- :func:`calnotes._engine.rows.basic_interval` is
  ``[max(0, T - q_hi), T - q_lo]`` with ``q_lo``, ``q_hi`` the order statistics of the
  deviations ``T* - mean(T*)`` at positions ``(B + 1) alpha`` and ``(B + 1)(1 - alpha)``,
  ``alpha = (1 - level) / 2`` (interpolated), for skewed resample laws, levels 0.5, 0.8, 0.9
  and 0.95, ``B`` where the positions are integers and where they are not, and a value near
  0 where the lower end is clipped.  The order statistics are computed here by hand.
* :func:`check_resample_law_rows` and :func:`check_resample_law_groups` -- the resamples
  are ``n`` rows drawn uniformly with replacement: with one bin and known rows the
  resampled measure has a closed-form law (a multinomial sum; a binomial count), whose
  mean and variance the recorded resampled values must match within Monte Carlo error.
  Both engines of the one-column bootstrap are covered: rows as units (distinct
  predictions) and tie groups as units (equal predictions, both outcomes).
* :func:`check_resample_values` -- every resample's value is the measure of the resampled
  rows: the drawn positions are recorded, the rows expanded and sorted, and the ECE,
  l1-QECE and l2-QECE recomputed by brute force (equal-mass bins ``floor(j n / m)``,
  equal-width bins ``floor(m p)``), with ``m = 3`` so that copies of a row straddle edges.
* :func:`check_report_interval` -- the report's ``ci_lower``/``ci_upper`` are the formula at
  the level the row reports (``ci_level`` = ``CI_LEVEL`` = 0.9), applied to the resamples.
* :func:`check_interval_rules` -- a row gets an interval from ``n / m = 10`` rows per bin
  (``MIN_ROWS_PER_BIN``) and not below; ``bootstrap = 19`` (``MIN_BOOTSTRAP``) is accepted and
  18 refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

import calnotes
from calnotes._engine import rows as _evalrows
from calnotes.core.measures import confidence_scores
from calnotes._engine.significance import CI_LEVEL, MIN_BOOTSTRAP

# ----------------------------------------------------------------------------- helpers


def order_statistic(x: np.ndarray, h: float) -> float:
    """The order statistic of ``x`` at the 1-based position ``h``, interpolated linearly
    between neighbours and clamped to the sample's range (the Weibull plotting positions)."""
    s = np.sort(np.asarray(x, dtype=np.float64))
    B = s.shape[0]
    if h <= 1:
        return float(s[0])
    if h >= B:
        return float(s[-1])
    i = int(np.floor(h))
    return float(s[i - 1] + (h - i) * (s[i] - s[i - 1]))


def hand_interval(value: float, resampled, level: float) -> tuple[float, float]:
    """The documented basic interval, by hand (see the module docstring)."""
    v = np.asarray(resampled, dtype=np.float64)
    d = v - v.sum() / v.shape[0]
    B = v.shape[0]
    alpha = (1.0 - level) / 2.0
    q_lo = order_statistic(d, (B + 1) * alpha)
    q_hi = order_statistic(d, (B + 1) * (1.0 - alpha))
    return max(0.0, value - q_hi), value - q_lo


def binary_rows(p1, y, bins, bootstrap, rng, ties="average"):
    """The report's binned rows of the binary column ``P(y = 1) = p1`` (no references, no
    p-values): the engine that :func:`calnotes.evaluate` runs."""
    p1 = np.asarray(p1, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    P = np.column_stack([1.0 - p1, p1])
    conf, top, correct = confidence_scores(y, P)
    probs = _evalrows.problems(y, P, top, correct, conf, ("binary",))
    for prob in probs:
        prob.prepare(1)
    rows, _ = _evalrows.binned_rows(y, P, probs, bins, ties, references=False, draws=0,
                                    bootstrap=bootstrap, rng=rng, workers=1)
    return rows


class RecordingRNG:
    """A :class:`numpy.random.Generator` whose ``integers`` draws are recorded."""

    def __init__(self, seed):
        self._rng = np.random.default_rng(seed)
        self.drawn = []

    def integers(self, *args, **kwargs):
        out = self._rng.integers(*args, **kwargs)
        self.drawn.append(np.array(out))
        return out

    def __getattr__(self, name):
        return getattr(self._rng, name)


def record_resamples(monkeypatch):
    """Record every ``(value, resampled values, level)`` that the engine passes to
    :func:`calnotes._engine.rows.basic_interval`."""
    calls = []
    original = _evalrows.basic_interval

    def recording(value, resampled, level):
        calls.append((value, np.array(resampled, dtype=np.float64), level))
        return original(value, resampled, level)

    monkeypatch.setattr(_evalrows, "basic_interval", recording)
    return calls


# ----------------------------------------------------------------------------- checks


def check_basic_interval_formula() -> None:
    """:func:`calnotes._engine.rows.basic_interval` equals the hand formula."""
    rng = np.random.default_rng(20261128)
    cases = []
    for B in (19, 39, 40, 200):               # (B + 1) alpha integral at 0.9 for 19, 39, 199
        skewed = 0.2 + rng.exponential(0.05, size=B) ** 1.5      # a right-skewed law
        for level in (0.5, 0.8, 0.9, 0.95):
            cases.append((0.3, skewed, level))                    # value above mean(T*)
            cases.append((0.01, skewed, level))                   # lower end clipped at 0
    for value, v, level in cases:
        lo, hi = _evalrows.basic_interval(value, v, level)
        want_lo, want_hi = hand_interval(value, v, level)
        assert lo == pytest.approx(want_lo, abs=1e-13), (value, len(v), level)
        assert hi == pytest.approx(want_hi, abs=1e-13), (value, len(v), level)
    # the clipped case really is clipped, and the other not: both branches are exercised
    assert any(hand_interval(*c)[0] == 0.0 for c in cases)
    assert any(hand_interval(*c)[0] > 0.0 for c in cases)


def _moments_check(v: np.ndarray, mean: float, var: float, what: str) -> None:
    """Mean within 5 standard errors (``sqrt(var / B)``), variance within 15% (the sample
    variance of a near-normal law has relative standard error ``sqrt(2 / B)``, 0.022 at
    ``B = 4000``; 15% allows a kurtosis up to 5 at 4.7 standard errors)."""
    B = v.shape[0]
    assert abs(v.mean() - mean) <= 5 * np.sqrt(var / B), (what, v.mean(), mean)
    assert abs(v.var(ddof=1) / var - 1) <= 0.15, (what, v.var(ddof=1), var)


def check_resample_law_rows(monkeypatch) -> None:
    """Rows as units (distinct predictions, one bin, every outcome 0): a resample's
    ``l1 = |sum_i W_i (y_i - p_i)| / n = sum_i W_i p_i / n`` with ``W ~ Multinomial(n, 1/n)``,
    so ``E = mean(p)`` and ``Var = (mean(p^2) - mean(p)^2) / n``; its ``l2 = l1^2``."""
    calls = record_resamples(monkeypatch)
    n, B = 20, 4000
    p = np.linspace(0.03, 0.6, n)
    p[-1] = 0.97                            # the largest prediction, last in canonical order
    y = np.zeros(n, dtype=np.int64)
    rows = binary_rows(p, y, [1], B, np.random.default_rng(11))
    assert [r["measure"] for r in rows] == ["ECE", "l1-QECE", "l2-QECE"]
    assert len(calls) == 3 and all(c[1].shape == (B,) for c in calls)
    mu, var = p.mean(), (np.mean(p ** 2) - p.mean() ** 2) / n
    for (_, v, _), name in zip(calls, ("ECE", "l1-QECE")):
        _moments_check(v, mu, var, name)
    np.testing.assert_allclose(calls[2][1], calls[1][1] ** 2, rtol=1e-12)


def check_resample_law_groups(monkeypatch) -> None:
    """Tie groups as units (every prediction 0.5, 7 of 20 outcomes 1, one bin): a resample's
    positives ``K* ~ Bin(20, 7/20)``, its l1 value ``|K* - 10| / 20`` and l2 value
    ``(K* - 10)^2 / 400``; their exact means and variances from scipy's binomial law."""
    calls = record_resamples(monkeypatch)
    n, k, B = 20, 7, 4000
    p = np.full(n, 0.5)
    y = np.r_[np.zeros(n - k), np.ones(k)].astype(np.int64)
    binary_rows(p, y, [1], B, np.random.default_rng(12))
    K = np.arange(n + 1)
    w = binom.pmf(K, n, k / n)
    for (_, v, _), g in zip(calls, (np.abs(K - 10) / n, np.abs(K - 10) / n,
                                    (K - 10) ** 2 / n ** 2)):
        mu = float((w * g).sum())
        _moments_check(v, mu, float((w * g ** 2).sum()) - mu ** 2, "groups")


def brute_measures(p: np.ndarray, y: np.ndarray, m: int) -> list:
    """ECE (equal width, bin ``floor(m p)``), l1-QECE and l2-QECE (equal mass, sorted
    positions ``[floor(j n / m), floor((j + 1) n / m))``) of the rows ``(p, y)``."""
    n = p.shape[0]
    order = np.argsort(p, kind="stable")
    ps, ys = p[order], y[order]
    ece = sum(abs((ys - ps)[np.floor(m * ps) == j].sum()) for j in range(m)) / n
    sums = [(ys - ps)[j * n // m:(j + 1) * n // m].sum() for j in range(m)]
    return [ece, sum(abs(s) for s in sums) / n, sum(s * s for s in sums) / n ** 2]


def check_resample_values(monkeypatch) -> None:
    """Every resample's three values equal the brute-force measures of its rows (drawn
    positions of the canonical order, which for distinct predictions sorts by prediction),
    to 1e-12."""
    calls = record_resamples(monkeypatch)
    rng = np.random.default_rng(5)
    n, m, B = 36, 3, 60
    p = np.sort(rng.uniform(0.02, 0.98, n))
    p = p[np.abs(m * p - np.round(m * p)) > 1e-6]           # no value on a width edge
    n = p.shape[0]
    p = rng.permutation(p)                                   # input order is not sorted
    y = (rng.uniform(size=n) < p).astype(np.int64)
    rec = RecordingRNG(6)
    binary_rows(p, y, [m], B, rec)
    pos = np.concatenate(rec.drawn, axis=0)
    canon = np.argsort(p, kind="stable")
    assert pos.shape[0] == B
    for b in range(B):
        rows = canon[pos[b]]
        want = brute_measures(p[rows], y[rows], m)
        got = [c[1][b] for c in calls]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=f"resample {b}")


def check_report_interval(monkeypatch) -> None:
    """The reported interval is the formula at the reported level applied to the engine's
    resamples, and that level is :data:`CI_LEVEL` = 0.9 (the documented level)."""
    assert CI_LEVEL == 0.9
    calls = record_resamples(monkeypatch)
    rng = np.random.default_rng(8)
    n = 200
    p = rng.beta(2, 5, n)
    y = (rng.uniform(size=n) < np.clip(1.3 * p, 0, 1)).astype(np.int64)
    rows = binary_rows(p, y, [5, 10], 60, np.random.default_rng(9))
    assert len(calls) == len(rows) == 6
    for row, (value, v, _) in zip(rows, calls):
        assert row["ci_level"] == CI_LEVEL and row["bootstrap"] == 60
        assert value == row["value"]
        lo, hi = hand_interval(row["value"], v, row["ci_level"])
        assert row["ci_lower"] == pytest.approx(lo, abs=1e-13), row
        assert row["ci_upper"] == pytest.approx(hi, abs=1e-13), row


def check_interval_rules() -> None:
    """``n = 10 m`` gets an interval and ``n = 10 m - 1`` a ``ci_note``; the fewest resamples
    accepted by :func:`calnotes.evaluate` is 19."""
    rng = np.random.default_rng(3)
    for n, has in ((100, True), (99, False)):
        p = rng.uniform(0.05, 0.95, n)
        y = (rng.uniform(size=n) < p).astype(np.int64)
        for row in binary_rows(p, y, [10], 19, np.random.default_rng(4)):
            assert (row.get("ci_lower") is not None) == has, (n, row)
            assert ("ci_note" in row) == (not has), (n, row)
    assert MIN_BOOTSTRAP == 19
    p = rng.uniform(0.05, 0.95, 40)
    y = (rng.uniform(size=40) < p).astype(np.int64)
    try:
        report = calnotes.evaluate(p, labels=y, n_bins=[2], bootstrap=19, draws=19,
                                   smooth_ece=False, utility=False, references=False)
    except ValueError as exc:
        raise AssertionError(f"bootstrap = MIN_BOOTSTRAP refused: {exc}") from exc
    assert any(r.get("bootstrap") == 19 for r in report.rows)
    with pytest.raises(ValueError, match="19"):
        calnotes.evaluate(p, labels=y, n_bins=[2], bootstrap=18, draws=19,
                          smooth_ece=False, utility=False, references=False)


# ----------------------------------------------------------------------------- tests


def test_basic_interval_is_the_reflected_weibull_interval():
    check_basic_interval_formula()


def test_resamples_of_distinct_rows_have_the_multinomial_law(monkeypatch):
    check_resample_law_rows(monkeypatch)


def test_resamples_of_tie_groups_have_the_binomial_law(monkeypatch):
    check_resample_law_groups(monkeypatch)


def test_each_resample_value_is_the_measure_of_its_rows(monkeypatch):
    check_resample_values(monkeypatch)


def test_report_interval_is_the_formula_at_its_level(monkeypatch):
    check_report_interval(monkeypatch)


def test_interval_rules_at_their_boundaries():
    check_interval_rules()
