"""One rule for NumPy masked arrays and complex numbers, whatever the argument:

* a masked array with a masked entry is refused, naming the argument and the count (NumPy
  honours a mask in some reductions and reads the data beneath it in others, so a report
  mixed both: accuracy and 0-1 loss no longer summed to one);
* a masked array without a masked entry is read as its data;
* complex numbers are refused, never cast with a ``ComplexWarning`` that drops the imaginary
  part.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import calnotes as cn
from calnotes._validate import check_labels, check_probabilities


def _calibrated(n=300, k=3, seed=4):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([0.7] * k, n)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    return P, y


def _report(P, y, **kwargs):
    return cn.evaluate(P, labels=y, significance=False, utility=False, n_bins=[15], **kwargs)


def test_masked_labels_are_refused_naming_labels_and_the_count():
    P, y = _calibrated()
    masked = np.ma.masked_array(y, mask=np.arange(300) < 30)
    with pytest.raises(ValueError) as info:
        _report(P, masked)
    assert str(info.value).startswith("labels: a masked array with 30 masked entries; drop"
                                      " or fill them first (e.g. arr[~arr.mask]")
    assert "arr.filled(...)" in str(info.value)
    with pytest.raises(ValueError, match="^labels: a masked array with 1 masked entry;"):
        cn.as_predictions(P, np.ma.masked_array(y, mask=np.arange(300) == 7))


def test_masked_probabilities_are_refused_even_one_entry():
    P, y = _calibrated()
    mask = np.zeros(P.shape, dtype=bool)
    mask[5, 1] = True
    with pytest.raises(ValueError, match=r"^probs: a masked array with 1 masked entry; .*"
                                         r"arr\[~arr\.mask\.any\(axis=1\)\]"):
        _report(np.ma.masked_array(P, mask=mask), y)
    with pytest.raises(ValueError, match="^logits: a masked array"):
        cn.as_predictions(np.ma.masked_array(np.log(P), mask=mask), y, kind="logits")


def test_masked_arrays_without_masked_entries_give_the_plain_report():
    P, y = _calibrated()
    plain = _report(P, y)
    both = _report(np.ma.masked_array(P), np.ma.masked_array(y, mask=np.zeros(300, bool)))
    assert both.accuracy == plain.accuracy
    assert both.accuracy + both.scores["zero_one"] == pytest.approx(1.0)
    assert [r["value"] for r in both.rows] == [r["value"] for r in plain.rows]


def test_the_measures_and_out_of_core_follow_the_same_rule():
    P, y = _calibrated()
    masked = np.ma.masked_array(y, mask=np.arange(300) < 3)
    with pytest.raises(ValueError, match="^y_true: a masked array with 3 masked entries"):
        check_labels(masked, 3)
    with pytest.raises(ValueError, match="^y_prob: a masked array with 2 masked entries"):
        check_probabilities(np.ma.masked_array(P, mask=np.arange(900).reshape(P.shape) < 2))
    with pytest.raises(ValueError, match="^labels: a masked array with 3 masked entries"):
        cn.evaluate(P, labels=masked, out_of_core=True)


@pytest.mark.parametrize("make", [lambda P: P + 0.3j, lambda P: P.astype(np.complex64),
                                  lambda P: (P + 0j).tolist()])
def test_complex_probabilities_are_refused_without_a_complex_warning(make):
    P, y = _calibrated()
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # a ComplexWarning would fail here
        with pytest.raises(TypeError) as info:
            _report(make(P), y)
    assert str(info.value).startswith("probs: complex numbers (dtype complex")
    assert "pass the real part if the imaginary part is meant to be zero" in str(info.value)


def test_complex_labels_logits_and_series_are_refused():
    import pandas as pd

    P, y = _calibrated()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match=r"^labels: complex numbers \(dtype complex128\)"):
            _report(P, y + 0j)
        with pytest.raises(TypeError, match=r"^logits: complex numbers"):
            cn.as_predictions(np.log(P) + 1j, y, kind="logits")
        with pytest.raises(TypeError, match=r"^probs: complex numbers"):
            _report(pd.Series(P[:, 1] + 0j), y % 2)
        with pytest.raises(TypeError, match=r"^y_prob: complex numbers"):
            check_probabilities(P + 0j)
        with pytest.raises(TypeError, match=r"^labels: complex numbers"):
            cn.evaluate(P, labels=y + 0j, out_of_core=True)
