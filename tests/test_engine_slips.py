"""The property tests of the report's intervals, tail bounds and coverage study can fail.

Each case plants one plausible slip in the library -- by re-executing the source of one
function with one expression changed, in place of the original for the duration of the
test (``monkeypatch``; no file is edited) -- and asserts that the ``check_*`` function of
the property test written for it (``tests/test_bootstrap_intervals.py``,
``tests/test_tail_bounds.py``, ``tests/test_coverage_study.py``) raises ``AssertionError``.
A slip whose expression is no longer in the source fails its case too: the slips follow the
code.  The slips:

bootstrap intervals (``calnotes/_engine/rows.py``, ``calnotes/evaluation/entry.py``)
    quantile level ``1 - level`` or a fixed 0.05; deviations added instead of reflected;
    deviations from the value instead of the resamples' mean; NumPy's linear quantile
    positions; lower end not clipped at 0; resamples of ``n - 1`` rows, positions drawn
    from ``0 .. n - 2``, or without replacement; multiplicities shifted by one position;
    the outcome of the row before an equal-mass edge given to the cut copies; the interval
    at 0.95 while ``ci_level`` says 0.9; ``n = 10 m`` without an interval;
    ``bootstrap = 19`` refused.
tail bounds and p-values (``calnotes/_engine/significance.py``, ``calnotes/_engine/poisson_binomial.py``)
    Bennett's ``m' log 2`` counted once or its exponent 10% larger; Hoeffding's proxy
    ``L / 4.4`` or the variance ``V``; the Monte Carlo ``+1`` dropped, the slack for equal
    values dropped, or a strict count; the bins' laws shifted by one; the bracket's
    roundings swapped; the binomial path's top entry cut.
coverage study (``calnotes/evaluation/coverage.py``)
    covers counted strictly; rejection-rate tolerance at 0.9 instead of alpha; ``S - 1``
    in the standard error; one test set too few; ``p < alpha`` for ``p <= alpha``; labels
    drawn from the prediction; the overconfident truth with ``k = 2`` for every ``k``;
    ``check_coverage``'s level ignored.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import textwrap

import pytest

import calnotes  # noqa: F401  (every module the slips reach is loaded before planting)
import calnotes._engine.rows  # noqa: F401
import calnotes.evaluation.coverage  # noqa: F401
import calnotes.evaluation  # noqa: F401
import calnotes._engine.poisson_binomial  # noqa: F401
import calnotes._engine.significance  # noqa: F401
import test_bootstrap_intervals as boot
import test_coverage_study as cov
import test_tail_bounds as tails

# name: (module, function, text in its source, replacement, the check that must fail)
SLIPS = {
    "ci-alpha-one-sided": (
        "calnotes._engine.rows", "basic_interval",
        "alpha = (1.0 - level) / 2", "alpha = 1.0 - level", boot.check_basic_interval_formula),
    "ci-alpha-fixed": (
        "calnotes._engine.rows", "basic_interval",
        "alpha = (1.0 - level) / 2", "alpha = 0.05", boot.check_basic_interval_formula),
    "ci-not-reflected": (
        "calnotes._engine.rows", "basic_interval",
        "return max(0.0, float(value - q_hi)), float(value - q_lo)",
        "return max(0.0, float(value + q_lo)), float(value + q_hi)",
        boot.check_basic_interval_formula),
    "ci-centred-at-value": (
        "calnotes._engine.rows", "basic_interval",
        "np.quantile(v - v.mean(),", "np.quantile(v - value,",
        boot.check_basic_interval_formula),
    "ci-linear-quantiles": (
        "calnotes._engine.rows", "basic_interval",
        ', method="weibull")', ")", boot.check_basic_interval_formula),
    "ci-lower-unclipped": (
        "calnotes._engine.rows", "basic_interval",
        "return max(0.0, float(value - q_hi))", "return float(value - q_hi)",
        boot.check_basic_interval_formula),
    "resample-n-minus-1": (
        "calnotes._engine.rows", "_bootstrap",
        "rng.integers(0, n, size=(hi - lo, n),", "rng.integers(0, n, size=(hi - lo, n - 1),",
        boot.check_resample_law_rows),
    "resample-skips-last-row": (
        "calnotes._engine.rows", "_bootstrap",
        "rng.integers(0, n, size=(hi - lo, n),", "rng.integers(0, n - 1, size=(hi - lo, n),",
        boot.check_resample_law_groups),
    "resample-without-replacement": (
        "calnotes._engine.rows", "_bootstrap",
        "rng.integers(0, n, size=(hi - lo, n), dtype=_position_type(n))",
        "np.argsort(rng.random((hi - lo, n)), axis=1).astype(_position_type(n))",
        boot.check_resample_law_rows),
    "resample-weights-shifted": (
        "calnotes._engine.rows", "_row_counts",
        "counts[r] = np.bincount(draws[r], minlength=n)",
        "counts[r] = np.roll(np.bincount(draws[r], minlength=n), 1)",
        boot.check_resample_values),
    "resample-cut-outcome-wrong-side": (
        "calnotes._engine.rows", "Resampler._weighted_values",
        "+ before * yv[cut].astype(np.int64))",
        "+ before * yv[np.maximum(cut - 1, 0)].astype(np.int64))",
        boot.check_resample_values),
    "ci-computed-at-095": (
        "calnotes._engine.rows", "_bootstrap",
        'basic_interval(row["value"], v, CI_LEVEL)', 'basic_interval(row["value"], v, 0.95)',
        boot.check_report_interval),
    "ci-rows-per-bin-boundary": (
        "calnotes._engine.rows", "binned_rows",
        'if n < MIN_ROWS_PER_BIN * r["n_bins"]:', 'if n <= MIN_ROWS_PER_BIN * r["n_bins"]:',
        boot.check_interval_rules),
    "min-bootstrap-boundary": (
        "calnotes.evaluation.entry", "_check_significance_options",
        "if 0 < bootstrap < MIN_BOOTSTRAP:", "if 0 < bootstrap <= MIN_BOOTSTRAP:",
        boot.check_interval_rules),
    "bennett-log2-once": (
        "calnotes._engine.significance", "tail_bound",
        "log_p = float(live.sum()) * np.log(2.0) -", "log_p = np.log(2.0) -",
        tails.check_tail_bound_is_valid),
    "bennett-exponent-10pct": (
        "calnotes._engine.significance", "tail_bound",
        "- total * ((1.0 + x) * np.log1p(x) - x)",
        "- 1.1 * total * ((1.0 + x) * np.log1p(x) - x)", tails.check_tail_bound_is_valid),
    "hoeffding-proxy-10pct": (
        "calnotes._engine.significance", "tail_bound",
        "s2 = np.where(live, L / 4.0, 0.0)", "s2 = np.where(live, L / 4.4, 0.0)",
        tails.check_hoeffding_formula),
    "hoeffding-proxy-variance": (
        "calnotes._engine.significance", "tail_bound",
        "s2 = np.where(live, L / 4.0, 0.0)", "s2 = np.where(live, V, 0.0)",
        tails.check_tail_bound_is_valid),
    "mc-plus-one-dropped": (
        "calnotes._engine.significance", "monte_carlo_p_value",
        "(1 + np.count_nonzero(draws >= observed - slack))",
        "max(1, np.count_nonzero(draws >= observed - slack))",
        tails.check_monte_carlo_p_value),
    "mc-no-slack": (
        "calnotes._engine.significance", "monte_carlo_p_value",
        "draws >= observed - slack", "draws >= observed", tails.check_monte_carlo_p_value),
    "mc-strict-count": (
        "calnotes._engine.significance", "monte_carlo_p_value",
        "draws >= observed - slack", "draws > observed + slack",
        tails.check_monte_carlo_p_value),
    "bin-law-shifted": (
        "calnotes._engine.significance", "_term_values",
        "k = np.arange(w.shape[0], dtype=np.float64) - np.repeat(",
        "k = 1.0 + np.arange(w.shape[0], dtype=np.float64) - np.repeat(",
        tails.check_exact_bracket),
    "bin-law-shifted-report": (
        "calnotes._engine.significance", "_term_values",
        "np.repeat(np.cumsum(sizes) - sizes, sizes)",
        "np.repeat(np.cumsum(sizes) - sizes + 1, sizes)", tails.check_report_exact_p_values),
    "bracket-roundings-swapped": (
        "calnotes._engine.significance", "_grid_terms",
        "np.floor(g / h * (1 + 1e-12)), cells),\n"
        "                    np.minimum(np.ceil(g / h * (1 - 1e-12))",
        "np.ceil(g / h * (1 - 1e-12)), cells),\n"
        "                    np.minimum(np.floor(g / h * (1 + 1e-12))",
        tails.check_exact_bracket),
    "binomial-path-top-cut": (
        "calnotes._engine.poisson_binomial", "_run_pmfs",
        "out[np.arange(N)[None, :] > np.asarray(L)[:, None]] = 0.0",
        "out[np.arange(N)[None, :] >= np.asarray(L)[:, None]] = 0.0",
        tails.check_run_path_laws),
    "covers-strict": (
        "calnotes.evaluation.coverage", "_cell",
        'r["ci_lower"] <= target[key] <= r["ci_upper"]',
        'r["ci_lower"] < target[key] < r["ci_upper"]', cov.check_cell_counts),
    "reject-tolerance-at-level": (
        "calnotes.evaluation.coverage", "check_coverage",
        'tol = tolerance(row["sims"], len(checks), nominal)',
        'tol = tolerance(row["sims"], len(checks))', cov.check_check_coverage),
    "tolerance-s-minus-1": (
        "calnotes.evaluation.coverage", "tolerance",
        "np.sqrt(level * (1 - level) / sims)", "np.sqrt(level * (1 - level) / (sims - 1))",
        cov.check_tolerance_formula),
    "one-test-set-too-few": (
        "calnotes.evaluation.coverage", "_cell",
        'for _ in range(cfg["sims"]):', 'for _ in range(cfg["sims"] - 1):',
        cov.check_cell_counts),
    "reject-strict": (
        "calnotes.evaluation.coverage", "_cell",
        'rejects[key, a] += r["p_value"] <= a', 'rejects[key, a] += r["p_value"] < a',
        cov.check_cell_counts),
    "labels-from-prediction": (
        "calnotes.evaluation.coverage", "draw_test_set",
        "cdf = np.cumsum(dist.truth[idx], axis=1)",
        "cdf = np.cumsum(dist.prediction[idx], axis=1)", cov.check_test_set_law),
    "overconfident-k-fixed": (
        "calnotes.evaluation.coverage", "population",
        "(2 / 3) * pred + 1 / (3 * k)", "(2 / 3) * pred + 1 / 6", cov.check_populations),
    "coverage-level-ignored": (
        "calnotes.evaluation.coverage", "check_coverage",
        'level if key == "coverage" else nominal', 'CI_LEVEL if key == "coverage" else nominal',
        cov.check_check_coverage),
}


def plant(monkeypatch, module: str, qualname: str, old: str, new: str) -> None:
    """Replace the function ``module.qualname`` (a method as ``Class.method``) by its source
    with ``old`` replaced by ``new``, executed in the module's namespace, here and wherever a
    loaded ``calnotes`` module imported it by name; ``monkeypatch`` restores them."""
    mod = importlib.import_module(module)
    parts = qualname.split(".")
    owner = mod
    for part in parts[:-1]:
        owner = getattr(owner, part)
    original = getattr(owner, parts[-1])
    source = textwrap.dedent(inspect.getsource(original))
    assert source.count(old) == 1, f"{qualname}: the slip's text is not in its source once"
    namespace: dict = {}
    exec(compile(source.replace(old, new), inspect.getsourcefile(original), "exec"),
         mod.__dict__, namespace)
    slipped = namespace[parts[-1]]
    monkeypatch.setattr(owner, parts[-1], slipped)
    for other in list(sys.modules.values()):
        if other is owner or not getattr(other, "__name__", "").startswith("calnotes"):
            continue
        for name, value in list(vars(other).items()):
            if value is original:
                monkeypatch.setattr(other, name, slipped)


def _run(check, monkeypatch) -> None:
    """Call ``check`` with ``monkeypatch`` where it takes one."""
    if inspect.signature(check).parameters:
        check(monkeypatch)
    else:
        check()


@pytest.mark.parametrize("name", list(SLIPS))
def test_property_check_fails_under_the_slip(name, monkeypatch):
    module, qualname, old, new, check = SLIPS[name]
    plant(monkeypatch, module, qualname, old, new)
    with pytest.raises(AssertionError):
        _run(check, monkeypatch)


@pytest.mark.parametrize("check", sorted({s[4] for s in SLIPS.values()},
                                         key=lambda f: f.__name__),
                         ids=lambda f: f.__name__)
def test_property_check_passes_without_a_slip(check, monkeypatch):
    _run(check, monkeypatch)
