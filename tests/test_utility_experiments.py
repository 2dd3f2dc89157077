"""The transcribed tables of paper 001 and the helpers of calnotes.claims.utility_experiments."""

import math

import numpy as np

from calnotes.claims import utility_experiments as ue


def test_transcriptions_have_every_method_and_column():
    assert set(ue.TABLE1) == set(ue.TABLE7)
    assert all(len(rows) == 6 and all(len(r) == 4 for r in rows)
               for rows in ue.TABLES_2_8.values())
    # the ViT rows of Tables 2-8 are the Table 7 numbers
    vit = ue.TABLES_2_8["Table 7 (ViT-ImageNet)"]
    for (cwe, tce, ucwe, topk), method in zip(vit, ue.TABLE7):
        t7 = ue.TABLE7[method]
        assert (cwe, tce, ucwe, topk) == (t7["cwe"][0], t7["tce"][0], t7["ucwe"][0], t7["topk"][0])


def test_significant_digit_filter():
    assert ue._sig3(0.924) and ue._sig3(22.6) and ue._sig3(0.0212)
    assert not ue._sig3(0.5) and not ue._sig3(2.0) and not ue._sig3(0.29)


def test_error_bar_ratios_cluster_at_two_values():
    ratios = np.array([r["ratio"] for r in ue.error_bar_ratios()])
    near_2se = np.abs(ratios - 2 / math.sqrt(10)) < 0.005
    near_sqrt08 = np.abs(ratios - math.sqrt(0.8)) < 0.005
    assert np.all(near_2se | near_sqrt08)
    assert near_2se.sum() == 4 and near_sqrt08.sum() == 14


def test_compare_for_utilities_columns_are_consistent():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), size=600)
    y = (P.cumsum(axis=1) > rng.random((600, 1))).argmax(axis=1)
    methods = {k: ue.METHODS[k] for k in ("Uncalibrated", "TS", "Patching")}
    rows, (y_test, preds) = ue.compare_for_utilities(np.log(P), y, inputs="logits", n_splits=2,
                                                     rng=1, methods=methods)
    assert len(rows) == 6 and len(y_test) == 180
    for r in rows:
        assert abs(r["U_comb"] - max(r["U_CWE"], r["U_topK"])) < 1e-12
        assert r["TCE_bin"] <= 15 * r["U_topK"] + 1e-12     # App. B.2 with m = 15 (no ties)
