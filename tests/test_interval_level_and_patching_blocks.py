"""Two properties no other test pins (a slip planted in either went unnoticed before these).

1. The level of the evaluate report's bootstrap interval ("90% interval"): the reported bounds
   are the value minus the (1 +- level) / 2 quantiles of the bootstrap deviations
   ``T* - mean(T*)`` (the bias-corrected interval), with the level the report
   documents.  Checked on inputs whose bootstrap law is known exactly, so the expectation is
   derived without the code under test.  (Its coverage of ``E[T_n]`` is measured in
   tests/test_report_intervals.py.)
2. The fresh-sample blocks of ``UtilityPatching(samples_per_iteration=N)``: floor(n / N)
   disjoint blocks of exactly N rows, each used by exactly one iteration, at sizes where N
   divides n and where it does not.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

import calnotes
from calnotes.theory import patching
from calnotes._engine import significance
from calnotes.evaluation import LEGEND
from calnotes.theory.patching import UtilityPatching
from calnotes.recalibrate import DegenerateFitWarning

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------------
# 1. the bootstrap interval's level
# --------------------------------------------------------------------------------------------

def _documented_level() -> float:
    """The level the report states ("NN% interval"), read from the legend, the table header
    and the Evaluate chapter: they must agree with each other and with ``CI_LEVEL`` and the
    rows' ``ci_level``, so no single edit of the level goes unnoticed."""
    legend = " ".join(LEGEND)
    found = {int(x) for x in re.findall(r"(\d+)% interval", legend)}
    chapter = (ROOT / "book" / "practice" / "evaluate.md").read_text()
    found |= {int(x) for x in re.findall(r"\*\*(\d+)% interval\*\*", chapter)}
    assert len(found) == 1, f"the legend and the chapter state different levels: {found}"
    return found.pop() / 100


# The inputs: every row predicts (0.1, 0.9) and half the labels are 1.  Then every binned row
# with one bin (ECE, l1-QECE, l2-QECE; confidence, class-wise, binary) is a function of the
# number K of label-1 rows only, and a resample of the n rows drawn with replacement (the
# documented construction: "resamples the rows (n with replacement, B times)") has
# K ~ Binomial(n, 1/2).  So the bootstrap law of each row is known exactly: T(K) with binomial
# weights, T computed by the public measure functions on a data set with K ones.  The interval
# is [T - q_hi(d), T - q_lo(d)] with d = T* - mean(T*), so T - ci_upper + mean(T*)
# and T - ci_lower + mean(T*) are the (1 -+ level) / 2 quantiles of the resamples; mean(T*)
# is replaced by the exact law's mean, within a window for the B resamples' mean.
_N = 1000
_PRED = np.tile([0.1, 0.9], (_N, 1))
_LABELS = (np.arange(_N) < _N // 2).astype(int)
_PUBLIC = {"ECE": lambda y, p: calnotes.binned_ece(y, p, n_bins=1),
           "l1-QECE": lambda y, p: calnotes.l1_qece(y, p, n_bins=1),
           "l2-QECE": lambda y, p: calnotes.l2_qece(y, p, n_bins=1)}


def _bootstrap_law(measure: str, aggregation: str):
    """``(atoms, weights)``: the exact law of the row's value on a resample (support of the
    binomial cut where its mass is below 1e-13)."""
    K = np.arange(_N + 1)
    pmf = binom.pmf(K, _N, 0.5)
    keep = pmf > 1e-13
    atoms = []
    for k in K[keep]:
        y = (np.arange(_N) < k).astype(int)            # k label-1 rows, all predicting 0.9
        f = _PUBLIC[measure]
        if aggregation == "classwise":
            atoms.append(calnotes.classwise(f, y, _PRED))
        else:   # confidence: conf 0.9 against "top class right" = y; binary: P(y=1) against y
            atoms.append(f(y, _PRED[:, 1]))
    return np.asarray(atoms), pmf[keep] / pmf[keep].sum()


def _cdf_brackets(atoms, weights, x):
    """``(P(T < x), P(T <= x))`` up to a relative 1e-9 (engine and public measure add in
    different orders; atoms are >= 1e-4 apart here)."""
    slack = 1e-9 * max(1.0, abs(x))
    return float(weights[atoms < x - slack].sum()), float(weights[atoms <= x + slack].sum())


def _tail_brackets(seeds, B):
    """Per (seed, aggregation): the exact law's mass below the resamples' lower quantile
    ``T - ci_upper + mean`` and above their upper one ``T - ci_lower + mean``, bracketed for
    atoms and for the resamples' mean (``mean`` is the exact law's, within ``w = 4.5 sd /
    sqrt(B)`` of the resamples' mean: ``(below_lo_strict, below_lo_weak, above_hi_strict,
    above_hi_weak)``), and the rows' ``ci_level`` values."""
    laws = {}
    out, levels = {}, set()
    for seed in seeds:
        report = calnotes.evaluate(_PRED, labels=_LABELS, n_bins=[1], references=False,
                                   utility=False, smooth_ece=False, draws=19, bootstrap=B,
                                   rng=seed)
        rows = [r for r in report.rows if r["binning"] != "kernel"]
        assert {(r["measure"], r["aggregation"]) for r in rows} == {
            (m, a) for m in _PUBLIC for a in ("confidence", "classwise", "binary")}
        for r in rows:
            key = (r["measure"], r["aggregation"])
            if key not in laws:
                laws[key] = _bootstrap_law(*key)
            atoms, w = laws[key]
            mean = float(atoms @ w)
            win = 4.5 * np.sqrt(float(((atoms - mean) ** 2) @ w) / B)
            assert r["ci_lower"] > 0          # not clipped at 0 on these inputs
            q_lo = r["value"] - r["ci_upper"] + mean
            q_hi = r["value"] - r["ci_lower"] + mean
            lo_s, lo_w = _cdf_brackets(atoms, w, q_lo - win)[0], _cdf_brackets(atoms, w,
                                                                               q_lo + win)[1]
            hi_s, hi_w = _cdf_brackets(atoms, w, q_hi - win)[0], _cdf_brackets(atoms, w,
                                                                               q_hi + win)[1]
            # the three measures of one aggregation are increasing in the same |0.9 - K/n|,
            # so they share the resamples' ranks: one sample per (seed, aggregation)
            out.setdefault((seed, r["aggregation"]), []).append(
                (lo_s, lo_w, 1.0 - hi_w, 1.0 - hi_s))
            levels.add(r["ci_level"])
            assert r["bootstrap"] == B
    return np.array([b[0] for b in out.values()]), levels


def _assert_level(tails, level, B):
    """The mean mass of the exact law below the lower bound (and above the upper) is
    ``(1 - level) / 2`` within 4.5 standard errors.

    With ``U_(j)`` the uniforms behind the B replicates (T_b = F^{-1}(U_b)), a bound between
    the order statistics ``j`` and ``j + 1`` has ``P(T < bound) <= U_(j+1)`` and
    ``P(T <= bound) >= U_(j)``; the ``U_(j)`` are Beta with standard deviation
    ``sqrt(a (1 - a) / B)`` at ``j ~ a B``, and the S (seed, aggregation) pairs are
    independent resamplings."""
    a = (1.0 - level) / 2
    S = tails.shape[0]
    tol = 4.5 * np.sqrt(a * (1 - a) / B / S) + 2.0 / B
    lo_s, lo_w, hi_s, hi_w = tails.mean(axis=0)
    assert lo_s <= a + tol and lo_w >= a - tol, (
        f"lower bound: the bootstrap law has mass in [{lo_s:.4f}, {lo_w:.4f}] below it,"
        f" expected {a:.4f} +- {tol:.4f} (level {level})")
    assert hi_s <= a + tol and hi_w >= a - tol, (
        f"upper bound: the bootstrap law has mass in [{hi_s:.4f}, {hi_w:.4f}] above it,"
        f" expected {a:.4f} +- {tol:.4f} (level {level})")


def test_bootstrap_interval_has_the_documented_level():
    """The reported bounds come from the 5% and 95% quantiles (for the documented 90%) of the
    bootstrap law: over 2 seeds x 3 aggregations of B = 1000 resamples, the exact law's mass
    below the lower quantile and above the upper one is 0.05 within 0.015 (the window for
    the resamples' mean widens each bracket by about 0.015); an 80% interval (0.10) is
    outside.  ``CI_LEVEL``, the rows' ``ci_level``, the legend and
    the table header all state the same level."""
    level = _documented_level()
    assert significance.CI_LEVEL == level
    B = 1000
    tails, levels = _tail_brackets([0, 1], B)
    assert levels == {level}
    report_header = calnotes.evaluate(_PRED[:50], labels=_LABELS[:50], n_bins=[1],
                                      utility=False, smooth_ece=False, draws=19,
                                      bootstrap=20).format_table()
    header = [line for line in report_header.splitlines() if line.startswith("measure ")]
    assert len(header) == 1 and f"{round(100 * level)}% interval" in header[0], header
    _assert_level(tails, level, B)


def test_bootstrap_interval_follows_the_level_constant(monkeypatch):
    """The level comes from the one constant ``calnotes._engine.significance.CI_LEVEL`` (and is not
    hard-coded where the bounds are taken): set to 0.5, the bounds become the quartiles of
    the bootstrap law and the rows say ``ci_level = 0.5``."""
    original = significance.CI_LEVEL
    for name, module in list(sys.modules.items()):      # the constant and its imported names
        if (name == "calnotes" or name.startswith("calnotes.")) and \
                getattr(module, "CI_LEVEL", None) == original:
            monkeypatch.setattr(module, "CI_LEVEL", 0.5)
    B = 400
    tails, levels = _tail_brackets([2], B)
    assert levels == {0.5}
    _assert_level(tails, 0.5, B)


# --------------------------------------------------------------------------------------------
# 2. fresh-sample blocks of UtilityPatching
# --------------------------------------------------------------------------------------------

def _blocks_used(monkeypatch, n, N, seed):
    """Fit with ``samples_per_iteration = N`` on n rows whose labels are all different
    (k = n classes: a row is known by its label, which patching never changes), and record
    the rows each iteration's witness search sees.  ``eps`` is too small to be reached, so the
    fit runs until the blocks run out."""
    rng = np.random.default_rng(1000 * n + N + seed)
    P = rng.dirichlet(np.ones(n), size=n)
    y = rng.permutation(n)                               # row i has the label y[i]
    row_of_label = np.argsort(y)
    seen = []
    real = patching._witness

    def spy(fams, F, T, w):
        seen.append(row_of_label[np.argmax(T, axis=1)])
        assert np.allclose(T.sum(axis=1), 1.0) and np.all(T.max(axis=1) == 1.0)
        return real(fams, F, T, w)

    monkeypatch.setattr(patching, "_witness", spy)
    pat = UtilityPatching(eps=1e-9, samples_per_iteration=N, rng=seed, max_iter=10 * n)
    with pytest.warns(DegenerateFitWarning, match="exhausted"):
        pat.fit(P, y)
    return seen, pat


@pytest.mark.parametrize("n, N", [
    (24, 1), (24, 4), (24, 6), (24, 8), (24, 12), (24, 24),     # N divides n
    (24, 5), (24, 7), (24, 10), (24, 13), (24, 23), (25, 24),   # it does not
])
def test_fresh_samples_use_every_full_block_once(monkeypatch, n, N):
    """The docstring: rows shuffled, iteration t uses the t-th disjoint block of N rows,
    fitting stops when the blocks run out.  Expected independently: floor(n / N) iterations
    (``n // N`` patches), each on N distinct rows, the blocks pairwise disjoint, together
    N floor(n / N) rows (all rows when N divides n; n mod N rows unused otherwise)."""
    blocks = n // N
    for seed in (0, 1):
        seen, pat = _blocks_used(monkeypatch, n, N, seed)
        assert len(seen) == blocks, f"{len(seen)} iterations, expected {blocks} blocks"
        assert len(pat.patches_) == pat.trace_.n_steps == blocks and not pat.trace_.converged
        for t, rows in enumerate(seen):
            assert rows.shape == (N,) and np.unique(rows).shape == (N,), (t, rows)
        used = np.concatenate(seen)
        assert np.unique(used).shape[0] == used.shape[0] == N * blocks   # disjoint
        assert set(used.tolist()) <= set(range(n))
        if n % N == 0:
            assert sorted(used.tolist()) == list(range(n))                # covering


def test_fresh_sample_blocks_are_shuffled(monkeypatch):
    """The blocks come from a shuffle drawn with ``rng``: not the rows in input order, and a
    different seed gives different blocks."""
    first, _ = _blocks_used(monkeypatch, 24, 6, 0)
    other, _ = _blocks_used(monkeypatch, 24, 6, 3)
    consecutive = [np.arange(6 * t, 6 * t + 6) for t in range(4)]
    assert not all(np.array_equal(np.sort(b), c) for b, c in zip(first, consecutive))
    assert any(set(a.tolist()) != set(b.tolist()) for a, b in zip(first, other))
