"""The Table 1 example (paper 000, Sec. 4): predictors, exact and Monte Carlo expectations,
closed forms, rankings, and the two figure notebooks under papermill."""

import json
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy.stats import binom

from calnotes.theory import symbolic
from calnotes.theory import table1 as t1
from calnotes.core.expectation import expected_qece, poisson_binomial_pmf

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "book" / "truthfulness" / "figures"
SMALL = (4, 60, 6, 0.1, 0.05, 0.02)          # k, n, m, eps1, eps2, eps3


# --------------------------------------------------------------------------- the example

@pytest.mark.parametrize("k", [2, 3, 7])
def test_predictors_match_the_printed_definitions(k):
    e1, e2, e3 = 0.1, 0.05, 0.01
    x = np.arange(k)
    P = t1.table1_predictions(x, k, e1, e2, e3)
    truth = t1.true_conditional(x, k, e1)
    for name, p in P.items():
        assert p.shape == (k, k)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-15, err_msg=name)
        assert (p >= 0).all()
    for i in range(k):
        nxt = (i + 1) % k
        # f1 = truth: 1 - eps1 on x, eps1 on x + 1 (mod k); f(k) = (eps1, 0, .., 1 - eps1)
        assert P["f1"][i, i] == 1 - e1 and P["f1"][i, nxt] == e1
        assert P["f2"][i, i] == 1 - e1 - e2 and P["f2"][i, nxt] == e1 + e2
        assert np.count_nonzero(P["f1"][i]) == 2 and np.count_nonzero(P["f2"][i]) == 2
    np.testing.assert_array_equal(P["f1"], truth)
    np.testing.assert_array_equal(P["f3"], np.full((k, k), 1 / k))
    assert np.allclose(P["f4"][:, 0], 1 / k + (k - 1) * e3)
    assert np.allclose(P["f4"][:, 1:], 1 / k - e3)
    # the paper's f1(k) (our class k-1): eps1 on the first class, 1 - eps1 on the last
    assert P["f1"][k - 1, 0] == e1 and P["f1"][k - 1, k - 1] == 1 - e1


def test_f1_and_f3_are_calibrated_f2_and_f4_are_not():
    """E[1(y = r) | f(x) = p] = p_r, exactly, over the uniform feature distribution."""
    k, e1, e2, e3 = 5, 0.15, 0.05, 0.02
    x = np.arange(k)
    P = t1.table1_predictions(x, k, e1, e2, e3)
    truth = t1.true_conditional(x, k, e1)

    def miscalibration(p):
        worst = 0.0
        for row in np.unique(p, axis=0):
            same = np.all(p == row, axis=1)               # the features predicting `row`
            conditional = truth[same].mean(axis=0)          # x uniform: equal weights
            worst = max(worst, np.abs(conditional - row).max())
        return worst

    assert miscalibration(P["f1"]) == 0.0
    assert miscalibration(P["f3"]) < 1e-15
    assert miscalibration(P["f2"]) == pytest.approx(e2)
    assert miscalibration(P["f4"]) == pytest.approx((k - 1) * e3)


def test_draw_outcomes_follow_the_distribution():
    rng = np.random.default_rng(3)
    k, e1, n = 4, 0.2, 40_000
    x = t1.draw_features(n, k, rng)
    y = t1.draw_outcomes(x, k, e1, rng)
    shifted = (y - x) % k
    assert set(np.unique(shifted)) <= {0, 1}
    se = np.sqrt(e1 * (1 - e1) / n)
    assert abs(shifted.mean() - e1) < 4 * se
    assert abs(np.bincount(x, minlength=k) / n - 1 / k).max() < 4 * np.sqrt(1 / k / n)


@pytest.mark.parametrize("kwargs, match", [
    (dict(k=1), "k: expected an integer >= 2"),
    (dict(m=100), "m: 100 bins for n = 60"),
    (dict(eps1=0.5), "eps1: expected 0 <= eps1 < 1/2"),
    (dict(eps2=-0.01), "eps2: expected eps2 >= 0"),
    (dict(eps1=0.3, eps2=0.25), "need eps1 \\+ eps2 < 1/2"),
    (dict(eps3=0.3), "eps3: expected 0 <= eps3 <= 1/k"),
    (dict(eps3=float("nan")), "eps3: expected a finite number"),
    (dict(n=2.5), "n: expected an integer"),
])
def test_invalid_parameters_are_refused(kwargs, match):
    params = dict(zip(("k", "n", "m", "eps1", "eps2", "eps3"), SMALL))
    params.update(kwargs)
    with pytest.raises(ValueError, match=match):
        t1.check_table1_params(**params)


# --------------------------------------------------------------------------- exact building blocks

@pytest.mark.parametrize("t, h, q", [
    (3.3, 10, 0.2), (0.0, 5, 0.5), (7.0, 7, 1.0), (2.0, 6, 0.0), (-1.0, 4, 0.3),
    (12.7, 20, 0.9), (4.0, 0, 0.4), (99.5, 100, 0.97),
])
def test_binomial_abs_deviation_matches_the_sum(t, h, q):
    y = np.arange(h + 1)
    brute = float(binom.pmf(y, h, q) @ np.abs(t - y))
    assert float(t1.binomial_abs_deviation(t, h, q)) == pytest.approx(brute, rel=1e-12, abs=1e-14)


def test_two_group_sums_match_the_convolution():
    rng = np.random.default_rng(0)
    l = rng.integers(0, 40, size=30)
    h = rng.integers(0, 40, size=30)
    for qL, qH in ((0.1, 0.9), (0.3, 0.65)):
        c = l * (qL + 0.02) + h * (qH - 0.03)
        got = t1._two_group_abs(l, h, qL + 0.02, qL, qH - 0.03, qH)
        for i in range(l.size):
            pmf = poisson_binomial_pmf(np.r_[np.full(l[i], qL), np.full(h[i], qH)])
            assert got[i] == pytest.approx(pmf @ np.abs(c[i] - np.arange(pmf.size)),
                                           rel=1e-11, abs=1e-13)


def test_conditional_expectation_is_expected_qece_per_cell():
    k, n, m, e1, e2, e3 = SMALL
    x = t1.draw_features(n, k, rng=5)
    cond = t1.conditional_table1(x, k, m, e1, e2, e3)
    P = t1.table1_predictions(x, k, e1, e2, e3)
    T = t1.true_conditional(x, k, e1)
    assert cond["f2.l1_cw"] == expected_qece(P["f2"], T, m, p=1, aggregation="classwise")
    assert cond["f4.l2_conf"] == expected_qece(P["f4"], T, m, p=2, aggregation="confidence")


# --------------------------------------------------------------------------- the estimators

def test_l2_cells_of_the_calibrated_predictors_equal_the_closed_forms():
    """Thm 2.6 / Lemma C.1: exact for every m, also given each feature draw."""
    for k, n, m, e1 in ((10, 2000, 20, 0.1), (4, 60, 7, 0.3), (3, 50, 1, 0.05)):
        for est in (t1.exact_table1(k, n, m, e1, 0.01, 0.0),
                    t1.expected_table1(k, n, m, e1, 0.01, 0.0, n_draws=20, rng=0)):
            assert est.mean["f1.l2_conf"] == pytest.approx(e1 * (1 - e1) / n, rel=1e-12)
            assert est.mean["f1.l2_cw"] == pytest.approx(2 * e1 * (1 - e1) / (k * n), rel=1e-12)
            assert est.mean["f3.l2_conf"] == pytest.approx((1 / k) * (1 - 1 / k) / n, rel=1e-12)
            assert est.mean["f3.l2_cw"] == pytest.approx((1 - 1 / k) / (k * n), rel=1e-12)
            for cell in ("f1.l2_conf", "f1.l2_cw", "f3.l2_conf", "f3.l2_cw"):
                assert est.se[cell] == 0.0
    # given a single feature draw, literally (the reference conditional expectation)
    x = t1.draw_features(60, 4, rng=9)
    cond = t1.conditional_table1(x, 4, 6, 0.1, 0.05, 0.02)
    assert cond["f1.l2_cw"] == pytest.approx(2 * 0.1 * 0.9 / (4 * 60), rel=1e-12)
    assert cond["f1.l2_conf"] == pytest.approx(0.1 * 0.9 / 60, rel=1e-12)


def test_exact_bias_cells_equal_the_printed_forms_when_m_divides_n():
    k, n, m, e1, e2, e3 = 10, 2000, 20, 0.1, 0.02, 0.003
    ex = t1.exact_table1(k, n, m, e1, e2, e3).mean
    assert ex["f2.l2_conf"] == pytest.approx(e2 ** 2 / m + e1 * (1 - e1) / n, rel=1e-12)
    assert ex["f4.l2_conf"] == pytest.approx((k - 1) ** 2 * e3 ** 2 / m + (1 - 1 / k) / (k * n),
                                             rel=1e-12)
    assert ex["f4.l2_cw"] == pytest.approx((k - 1) * e3 ** 2 / m + (1 - 1 / k) / (k * n),
                                           rel=1e-12)
    upper = 2 * e2 ** 2 / (k * m) + 2 * e1 * (1 - e1) / (k * n)
    assert upper - 2 * e2 ** 2 / m ** 2 <= ex["f2.l2_cw"] <= upper


def test_fast_path_equals_the_reference_draw_by_draw():
    k, n, m, e1, e2, e3 = 5, 40, 5, 0.1, 0.05, 0.02
    fast = t1.expected_table1(k, n, m, e1, e2, e3, n_draws=25, rng=11)
    ref = t1.expected_table1(k, n, m, e1, e2, e3, n_draws=25, rng=11, method="reference")
    for cell in ("f1.l1_cw", "f2.l1_cw", "f2.l2_cw"):
        np.testing.assert_allclose(fast.values[cell], ref.values[cell], rtol=1e-12, atol=0)
    np.testing.assert_allclose(ref.values["f1.l2_cw"], fast.mean["f1.l2_cw"], rtol=1e-12)
    for cell in ("f1.l1_conf", "f1.l2_conf", "f2.l1_conf", "f2.l2_conf"):  # x-free: no spread
        np.testing.assert_allclose(ref.values[cell], fast.mean[cell], rtol=1e-12)
    # f3, f4 vary given x; averaged over draws they estimate the exact values
    for cell in t1.CELLS:
        if ref.se[cell] > 1e-12 * abs(ref.mean[cell]):
            assert abs(ref.z_score(cell, fast.mean[cell])) < 4, cell


def test_exact_is_within_four_standard_errors_of_the_draws():
    params = (10, 400, 20, 0.1, 0.05, 0.01)
    ex = t1.exact_table1(*params)
    rb = t1.expected_table1(*params, n_draws=3000, rng=2)
    for cell in t1.CELLS:
        assert abs(rb.z_score(cell, ex.mean[cell])) < 4, (cell, rb.mean[cell], ex.mean[cell])


def test_rao_blackwellized_estimate_agrees_with_plain_simulation():
    """RB (outcomes integrated out) and plain Monte Carlo (x and y drawn) estimate the same."""
    ex = t1.exact_table1(*SMALL)
    rb = t1.expected_table1(*SMALL, n_draws=1500, rng=4)
    sim = t1.simulate_table1(*SMALL, n_reps=1500, rng=5)
    for cell in t1.CELLS:
        gap = rb.mean[cell] - sim.mean[cell]
        assert abs(gap) < 4 * np.hypot(rb.se[cell], sim.se[cell]), cell
        assert abs(sim.z_score(cell, ex.mean[cell])) < 4, cell
        assert rb.se[cell] < sim.se[cell]          # the point of Rao-Blackwellizing


def test_exact_table1_is_cached_but_returns_fresh_dicts():
    a = t1.exact_table1(*SMALL)
    a.mean["f1.l1_conf"] = -1.0
    assert t1.exact_table1(*SMALL).mean["f1.l1_conf"] > 0


def test_estimate_frame():
    pytest.importorskip("pandas")
    frame = t1.exact_table1(*SMALL).to_frame()
    assert list(frame.index) == list(t1.PREDICTORS)
    assert list(frame.columns) == list(t1.MEASURES)


# --------------------------------------------------------------------------- closed forms

def test_printed_table_as_in_the_paper():
    s = symbolic.table1_symbols()
    k, n, m, e1, e2, e3 = (s[x] for x in ("k", "n", "m", "eps1", "eps2", "eps3"))
    printed = symbolic.table1_printed()
    assert sp.simplify(printed["f1.l2_cw"] - 2 * (1 - e1) * e1 / (k * n)) == 0
    assert sp.simplify(printed["f4.l2_conf"]
                       - ((k - 1) ** 2 * e3 ** 2 / m + (1 - 1 / k) / (k * n))) == 0
    assert printed["f2.l1_cw"] - e2 / k == printed["f1.l1_cw"]
    assert printed["f3.l1_cw"].func == symbolic.TABLE1_THETA


def test_theta_constants_and_the_folded_normal():
    c = symbolic.table1_theta_constants()
    root = sp.sqrt(2 / sp.pi)
    assert c["f1.l1_conf"] == root and c["f3.l1_conf"] == root
    assert c["f1.l1_cw"] == 2 * root
    assert sp.simplify(c["f3.l1_cw"] - symbolic.table1_symbols()["k"] * root) == 0
    from scipy import integrate, stats
    fn = sp.lambdify(sp.symbols("mu sigma"), symbolic.folded_normal_mean(
        sp.Symbol("mu", real=True), sp.Symbol("sigma", positive=True)), "scipy")
    for mu, sigma in ((0.0, 1.0), (0.7, 0.3), (-2.0, 1.5)):
        brute = integrate.quad(lambda t: abs(t) * stats.norm.pdf(t, mu, sigma), -np.inf, np.inf)[0]
        assert fn(mu, sigma) == pytest.approx(brute, rel=1e-9)
        assert max(abs(mu), sigma * np.sqrt(2 / np.pi)) <= fn(mu, sigma) + 1e-15
        assert fn(mu, sigma) <= abs(mu) + sigma * np.sqrt(2 / np.pi) + 1e-15
    ratio = sp.lambdify(sp.Symbol("z", nonnegative=True), symbolic.folded_normal_additive_ratio())
    z = np.linspace(0, 10, 2001)
    assert 1.54 < ratio(z).max() < 1.545


def test_derived_matches_printed_where_the_paper_is_right():
    d = t1.derived_table1(10, 2000, 20, 0.1, 0.02, 0.003)
    p = t1.printed_table1(10, 2000, 20, 0.1, 0.02, 0.003)
    for cell in t1.CELLS:
        if cell.endswith(("l2_conf", "l2_cw")) or cell in ("f1.l1_conf", "f1.l1_cw", "f3.l1_conf"):
            assert d[cell] == pytest.approx(p[cell], rel=1e-12), cell
    assert d["f3.l1_cw"] == pytest.approx(5 * p["f3.l1_cw"], rel=1e-12)   # k/2


def test_allowances():
    assert t1.clt_allowance(100, 0.5) == pytest.approx(1 / 100)    # no skewness at p = 1/2
    prm = t1.check_table1_params(10, 2000, 20, 0.1, 0.0, 0.0)
    assert t1.boundary_allowance(prm, "f1") == pytest.approx(10 / 160)
    with pytest.raises(ValueError, match="k \\| m"):
        t1.boundary_allowance(t1.check_table1_params(10, 2000, 25, 0.1, 0.0, 0.0), "f2")
    a = t1.table1_allowances(10, 2000, 25, 0.1, 0.02, 0.003)        # k does not divide m
    assert np.isnan(a["f2.l1_cw"][0]) and np.isfinite(a["f2.l1_conf"][0])
    assert all(np.isnan(v[0]) for v in t1.table1_allowances(10, 1000, 30, 0.1, 0.02, 0.0).values())


def test_compare_cells_flags_the_f3_classwise_cell():
    c = t1.compare_cells(10, 2000, 20, 0.1, 0.02, 0.003)
    assert c["f3.l1_cw"]["ratio"] == pytest.approx(5.0, rel=0.02)
    assert c["f3.l1_cw"]["deviation"] > 10
    assert all(v["derived_deviation"] <= 1 for v in c.values())


# --------------------------------------------------------------------------- rankings

def test_rank_changes_and_rankings():
    assert t1.rank_changes([[1, 2, 3, 4], [1, 2, 3, 4]]) == 0
    assert t1.rank_changes([[1, 2, 3, 4], [2, 1, 4, 3], [2, 1, 4, 3]]) == 2
    assert t1.rank_changes([[1, 2], [2, 1], [1, 2]]) == 2
    assert t1.rankings([[0.1, 0.3, 0.2, 0.4]]) == ["f1 < f3 < f2 < f4"]
    v = t1.table1_by_bins(10, 1000, [1, 10, 50], 0.1, 0.02, 0.003)
    assert t1.rankings(v["l2_conf"])[0].startswith("f1 = f3")   # eps1 = 1/k: a tie
    assert t1.rank_changes(v["l2_cw"]) == 0


# --------------------------------------------------------------------------- figure notebooks

@pytest.mark.parametrize("name, parameters", [
    ("table1_grid", {"k": 5, "m": 10, "n_values": [100, 200]}),
    ("rankings_vs_bins", {"k": 5, "n": 200, "m": 20}),
])
def test_figure_notebook_runs_under_papermill(name, parameters, tmp_path):
    papermill = pytest.importorskip("papermill")
    source = FIGURES / f"{name}.ipynb"
    raw = json.loads(source.read_text())
    code = [c for c in raw["cells"] if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", [])
    assert raw["cells"][0]["cell_type"] == "markdown"
    assert "".join(raw["cells"][0]["source"]).startswith("# ")
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)
    out = tmp_path / f"{name}.out.ipynb"
    papermill.execute_notebook(str(source), str(out), parameters=parameters,
                               kernel_name="python3", cwd=str(FIGURES), progress_bar=False)
    nb = json.loads(out.read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1
    text = "".join(injected[0]["source"])
    for key in parameters:
        assert f"{key} = " in text
    assert not any(o.get("output_type") == "error" for c in nb["cells"]
                   for o in c.get("outputs", []))

