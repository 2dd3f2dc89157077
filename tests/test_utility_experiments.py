"""Claims and helpers of chapter *Which recalibrator, for which utility* (paper 001, Sec. 5, App. C)."""

import numpy as np
import pytest

from calnotes.book import claims
from calnotes.theory import utility as ut
from calnotes.book.claims import utility_experiments as ue
from calnotes.data import simulate_logistic_normal
from calnotes.recalibrate import softmax

IDS = [c.id for c in claims.all_claims() if c.chapter == ue.CHAPTER]


def test_claims_registered():
    assert len(IDS) == 15
    assert all(i.startswith("001.") for i in IDS)
    assert not claims.registry_problems([claims.get_claim(i) for i in IDS])


@pytest.mark.parametrize("claim_id", IDS)
@pytest.mark.parametrize("size", ["smoke", "full"])
def test_claim_comes_out_as_registered(claim_id, size):
    result = claims.run_claim(claim_id, size, controls=True)
    assert result.as_expected, result
    assert result.seconds < 1.0          # pure arithmetic on transcribed numbers
    claim = claims.get_claim(claim_id)
    assert len(result.controls) == len(claim.controls)
    assert all(r.rejected for r in result.controls), result.controls
    if claim.expect == "agrees":
        assert claim.controls


def test_disagreements_are_the_expected_ones():
    disagree = {i for i in IDS if claims.get_claim(i).expect == "disagrees"}
    assert disagree == {"001.table1.pm_caption", "001.sec5.brier_improves",
                        "001.table6.dirichlet_topk_brier"}
    assert all(claims.get_claim(i).correction for i in disagree)


def test_claim_ids_appear_in_chapter():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / f"{ue.CHAPTER}.md").read_text()
    for claim_id in IDS:
        assert f'"{claim_id}"' in text, claim_id


@pytest.mark.parametrize("text, value, half", [("89.90", 89.9, 0.005), ("4", 4.0, 0.5),
                                               ("0.0212", 0.0212, 5e-5), ("124.0", 124.0, 0.05)])
def test_parse_printed(text, value, half):
    p = ue.parse_printed(text)
    assert p.value == value and p.half_unit == pytest.approx(half)
    assert p.lo < p.value < p.hi


@pytest.mark.parametrize("bad", ["", "1e3", "12.3.4", "abc", "1,000"])
def test_parse_printed_rejects(bad):
    with pytest.raises(ValueError, match="text"):
        ue.parse_printed(bad)


def test_significant_digits():
    assert ue._significant_digits(ue.parse_printed("0.7")) == 1
    assert ue._significant_digits(ue.parse_printed("0.0212")) == 3
    assert ue._significant_digits(ue.parse_printed("2")) == 1
    assert ue._significant_digits(ue.parse_printed("124.0")) == 4


def test_transcription_shapes():
    assert set(ue.TABLE1) == set(ue.APPENDIX_TABLES[7][1])
    for num, (_, tab) in ue.APPENDIX_TABLES.items():
        widths = {len(row) for row in tab.values()}
        assert len(widths) == 1, num
        assert "Uncalibrated" in tab and "Temp. Scaling" in tab
    assert "Patching" not in ue.APPENDIX_TABLES[8][1]       # as transcribed
    assert "u_dcg" not in ue.APPENDIX_TABLES[4][1]["IR"]


def test_ratio_interval_contains_ratio():
    for row in ue.table1_pm_ratios():
        assert row["lo"] <= row["ratio"] <= row["hi"]
    precise = [r for r in ue.table1_pm_ratios() if r["precise"]]
    fit10 = [r for r in precise if r["lo"] <= ue.TWO_SE_10 <= r["hi"]]
    assert len(precise) == 20 and {r["column"] for r in fit10} == {"brier"} and len(fit10) == 4


def test_worse_than_uncalibrated_uses_rounding():
    tab = {"Uncalibrated": {"x": (ue.parse_printed("22.6"), None)},
           "A": {"x": (ue.parse_printed("22.7"), None)},      # within two half-units
           "B": {"x": (ue.parse_printed("22.8"), None)}}
    assert ue.worse_than_uncalibrated(tab, "x") == ["B"]


def test_split_indices_partition_and_validation():
    pairs = ue.split_indices(50, 3, 0.7, rng=1)
    for fit, test in pairs:
        assert len(fit) == 35 and len(test) == 15
        assert np.array_equal(np.sort(np.concatenate([fit, test])), np.arange(50))
    assert not np.array_equal(pairs[0][0], pairs[1][0])
    with pytest.raises(ValueError, match="fit_fraction"):
        ue.split_indices(10, 1, 1.5, rng=0)
    with pytest.raises(ValueError, match="fit_fraction"):
        ue.split_indices(2, 1, 0.01, rng=0)


def test_sparsity_levels():
    assert ue.sparsity_levels(1000) == [50, 70, 100]
    assert ue.sparsity_levels(100) == [5, 7, 10]
    assert ue.sparsity_levels(10) == [1]


def test_sample_fixed_support():
    fam = ue.sample_fixed_support(20, 30, 4, rng=0)
    nz = fam.params != 0
    assert np.all(nz.sum(axis=1) == 4) and np.all(nz == nz[0])
    assert np.allclose(np.abs(fam.params).max(axis=1), 1.0)


def test_bundle_gap():
    a = np.array([[0.1, 0.2, 0.3], [0.12, 0.22, 0.28]])
    b = np.array([[0.2, 0.3, 0.5]])
    assert ue.bundle_gap(a, b) == pytest.approx(0.08)
    assert ue.bundle_gap(b, a) < 0
    with pytest.raises(ValueError, match="right"):
        ue.bundle_gap(a, np.ones((1, 2)))


def test_evaluate_predictions_identities():
    sim = simulate_logistic_normal(800, 6, rng=3)
    row = ue.evaluate_predictions(sim.labels, sim.true_prob)
    assert row["uc_comb"] == max(row["uc_cwe"], row["uc_topk"])
    assert row["tce_bin"] <= ue.PAPER_BINS * row["uc_topk"] + 1e-12     # App. B.2
    assert row["cwe_bin"] <= ue.PAPER_BINS * row["uc_cwe"] + 1e-12
    assert row["uc_topk"] == pytest.approx(ut.uc_class(sim.labels, sim.true_prob, ut.top_k(6)))


def test_run_comparison_summary_and_verdicts():
    sim = simulate_logistic_normal(900, 5, rng=4)
    fams = [ut.sample_linear(5, 40, rng=0), ut.sample_rank(5, 40, rng=1)]
    res = ue.run_comparison(sim.logits / 0.5, sim.labels, n_splits=2, ecdf_families=fams,
                            extra_rows={"truth": sim.true_prob}, rng=0)
    assert len(res) == 2 and list(res[0].rows)[0] == "uncalibrated"
    assert res[0].test_predictions and not res[1].test_predictions
    assert res[0].rows["TS"]["accuracy"] == res[0].rows["uncalibrated"]["accuracy"]
    mean, two_se = ue.summarize(res)
    assert list(mean.columns) == list(ue.METRICS) and "truth" in mean.index
    assert np.all(np.isfinite(two_se.values))
    q = {f.label: ue.ecdf_quantiles(res, f.label) for f in fams}
    v = ue.verdicts(mean, q, exclude=["truth"])
    assert "truth" not in v["best"].values()
    assert isinstance(v["a_all_improve"], bool) and isinstance(v["e_order_varies"], bool)
    table = ue.format_summary(mean, two_se)
    assert "±" in table.iloc[0, 0]


def test_verdicts_on_a_constructed_table():
    import pandas as pd

    cols = list(ue.METRICS)
    mean = pd.DataFrame([[90, 30, 50, 50, 20, 50, 40, 50], [90, 20, 10, 30, 10, 10, 10, 10],
                         [91, 25, 20, 40, 15, 20, 5, 20]],
                        index=["uncalibrated", "patching", "TS"], columns=cols, dtype=float)
    q = pd.DataFrame([[5, 6], [1, 2], [9, 9]], index=mean.index, columns=[0.1, 0.5], dtype=float)
    v = ue.verdicts(mean, {"U_lin": q})
    assert v["a_all_improve"] and v["c_patching_best"] and v["b_no_dominance"]
    assert not v["d_uncal_worst"] and v["f_some_worsen"] and v["f_detail"] == [("TS", "U_lin")]
    assert v["e_order_varies"] and v["d_beaten_by"] == ["patching"]


def test_default_methods_drop_full_matrices():
    assert "Dirichlet" in ue.default_methods(10) and "matrix" in ue.default_methods(10)
    assert "Dirichlet" not in ue.default_methods(30)
    assert list(ue.default_methods(30, max_full_classes=30))[2:4] == ["matrix", "Dirichlet"]


# --- the relations between columns that the table claims rely on, on computed predictions ----
def _bounds_hold(y, P):
    C = P.shape[1]
    row = ue.evaluate_predictions(y, P, n_bins=3)
    bound = np.sqrt((C - 1) / C * row["brier"])
    for key in ("tce_bin", "cwe_bin", "uc_cwe", "uc_topk", "uc_dcg", "uc_comb"):
        assert row[key] <= bound + 1e-12, key
    assert row["brier"] >= (1 - row["accuracy"]) / 2 - 1e-12
    return row, bound


@pytest.mark.parametrize("C, temp", [(2, 0.3), (3, 1.0), (10, 0.2), (10, 3.0)])
def test_calibration_errors_below_sqrt_brier(C, temp):
    sim = simulate_logistic_normal(500, C, rng=C)
    _bounds_hold(sim.labels, sim.true_prob)
    _bounds_hold(sim.labels, softmax(sim.logits / temp))


def test_sqrt_brier_bound_is_tight():
    # a two-class model sure of the wrong class: TCE^bin = UC(U_topK) = 1 = sqrt(Brier / 2)
    y = np.ones(20, dtype=int)
    P = np.tile([1.0, 0.0], (20, 1))
    row, bound = _bounds_hold(y, P)
    assert bound == pytest.approx(1.0)
    assert row["tce_bin"] == pytest.approx(bound) and row["uc_topk"] == pytest.approx(bound)


def test_error_rate_bound_is_tight():
    # a near tie on the wrong class costs just over 1/2: Brier -> (1 - accuracy) / 2
    y = np.ones(10, dtype=int)
    P = np.tile([0.5 + 1e-6, 0.5 - 1e-6], (10, 1))
    row, _ = _bounds_hold(y, P)
    assert row["accuracy"] == 0 and row["brier"] == pytest.approx(0.5, abs=1e-5)


def test_one_bin_neighbour_is_false():
    # errors of opposite sign in the two bins: TCE^bin = 2 UC(U_topK) > 1 x UC
    P = np.array([[0.6, 0.4]] * 4 + [[0.9, 0.1]] * 4)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 0])      # first bin under-, second overconfident
    row = ue.evaluate_predictions(y, P, n_bins=2)
    assert row["tce_bin"] > row["uc_topk"] + 1e-9
    assert row["tce_bin"] <= 2 * row["uc_topk"] + 1e-12


def test_b2_ratio_rounding_directions():
    for kind in ("tce", "cwe"):
        against = ue.b2_ratios(kind)
        favour = ue.b2_ratios(kind, against=False)
        assert all(a["ratio"] > f["ratio"] for a, f in zip(against, favour))
    summed = ue.b2_ratios("cwe", class_sum=True, against=False)
    favour = ue.b2_ratios("cwe", against=False)
    assert all(s["ratio"] == pytest.approx(ue.TABLE_CLASSES[s["table"]] * f["ratio"])
               for s, f in zip(summed, favour))


def _printed_table(rows):
    return {m: {c: (ue.parse_printed(x), None) for c, x in cells.items()}
            for m, cells in rows.items()}


def test_dominance_and_order_on_constructed_tables():
    tab = _printed_table({"Uncalibrated": {"a": "5.0", "b": "5.0"},
                          "A": {"a": "1.0", "b": "2.0"},
                          "B": {"a": "2.0", "b": "1.0"},
                          "C": {"a": "1.0", "b": "1.05"}})      # C ties A on a within rounding
    assert ue.dominating_methods(tab, ["a", "b"]) == ["C"]
    assert ue.best_methods(tab, "a") == {"A", "C"}
    rev = ue.order_reversals(tab, ["a", "b"])
    assert ("A", "B", "a", "b") in rev and all("Uncalibrated" not in r for r in rev)
    same = _printed_table({"Uncalibrated": {"a": "3.0", "b": "3.0"},
                           "A": {"a": "1.0", "b": "1.0"}, "B": {"a": "2.0", "b": "2.0"}})
    assert ue.order_reversals(same, ["a", "b"]) == []
    acc = _printed_table({"Uncalibrated": {"accuracy": "90.0"}, "A": {"accuracy": "91.0"}})
    assert ue.dominating_methods(acc, ["accuracy"]) == ["A"]       # higher is better


def test_sqrt_brier_ratios_cover_every_row():
    rows = ue.sqrt_brier_ratios()
    n_rows = len(ue.TABLE1) + sum(len(t) for _, t in ue.APPENDIX_TABLES.values())
    assert len({(r["table"], r["method"]) for r in rows}) == n_rows
    outlier = [r for r in rows if (r["table"], r["method"]) == ue.BRIER_OUTLIER
               and r["column"] == "u_topk"]
    assert len(outlier) == 1 and outlier[0]["ratio"] > 1
