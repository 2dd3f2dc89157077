"""calnotes.book.tables: tables for reading.

Expected strings are written out by hand from the rules (significant digits, "—" for values
that do not apply, Unicode powers of ten), not computed by the code under test.
"""

import math
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from calnotes.book.tables import (NOT_APPLICABLE, format_number, math_name, report_table,
                                  styled_table)


@pytest.mark.parametrize("value, digits, text", [
    (0.03267, 4, "0.03267"),
    (0.023067, 4, "0.02307"),           # four significant digits, not four decimals
    (0.099996, 4, "0.1000"),            # rounding carries into a new digit: still four
    (123.456, 4, "123.5"),
    (-0.5, 2, "-0.50"),
    (8.145e-05, 4, "8.145\u00a0\u00d7\u00a010\u207b\u2075"),   # one line: no-break spaces
    (2.5e7, 3, "2.50\u00a0\u00d7\u00a010\u2077"),
    (12, 4, "12"),
    (np.int64(7), 4, "7"),
    (0.0, 4, "0"),
    (math.inf, 4, "\u221e"),
    (float("nan"), 4, NOT_APPLICABLE),
    (None, 4, NOT_APPLICABLE),
    ("", 4, NOT_APPLICABLE),
])
def test_format_number(value, digits, text):
    assert format_number(value, digits) == text


def test_format_number_rejects_bad_digits():
    with pytest.raises(ValueError, match="^digits:"):
        format_number(0.5, 0)
    with pytest.raises(ValueError, match="^digits:"):
        format_number(0.5, 2.5)


def test_math_names():
    assert math_name("f2.l1_conf") == r"\(f_2\), \(\ell_1\)-QECE, confidence"
    assert math_name("l2_cw") == r"\(\ell_2\)-QECE, class-wise"
    assert math_name("something else") == "something else"
    assert math_name("x", {"x": r"\(x\)"}) == r"\(x\)"
    assert math_name(("f1", "n")) == (r"\(f_1\)", r"\(n\)")


def _cells(html):
    return re.findall(r"<td[^>]*>(.*?)</td>", html)


def test_styled_table_reads_well():
    table = pd.DataFrame({"l1_conf": [0.03267, np.nan, 8.145e-05], "n": [100, 200, 300],
                          "note": ["a", None, ""]},
                         index=pd.Index(["f1", "f2", "f3"], name="predictor"))
    styler = styled_table(table, caption="Look at f2.")
    html = styler.to_html()
    cells = _cells(html)
    assert cells == ["0.03267", "100", "a",
                     NOT_APPLICABLE, "200", NOT_APPLICABLE,
                     "8.145\u00a0\u00d7\u00a010\u207b\u2075", "300", NOT_APPLICABLE]
    assert "nan" not in html.lower() and "e-05" not in html and "None" not in html
    assert r"\(f_2\)" in html and r"\(\ell_1\)-QECE, confidence" in html   # no code names
    assert "f1<" not in html and "l1_conf" not in html
    assert "mathjax_process" in html and "<caption>Look at f2.</caption>" in html
    # numbers on the right; text columns keep their default alignment; nothing wraps
    styler._compute()
    for col, right in ((0, True), (1, True), (2, False)):
        props = dict(styler.ctx[(0, col)])
        assert (props.get("text-align") == "right") is right
        assert props["white-space"] == "nowrap"
    assert not _problems(html)


def _problems(html):
    """What makes a table hard to read (NaN or None shown, scientific notation, code names),
    found in a table's HTML."""
    found = []
    if re.search(r">\s*(NaN|nan|None)\s*<", html):
        found.append("NaN or None shown")
    if re.search(r"\de-\d", html):
        found.append("scientific notation")
    if re.search(r">\s*(f\d\.)?l[12]_(conf|cw)\s*<", html):
        found.append("code names")
    return found


def test_styled_table_negative_control_raw_pandas_fails_the_same_checks():
    table = pd.DataFrame({"l1_conf": [0.03267, np.nan, 8.145e-05]}, index=["f1", "f2", "f3"])
    with pd.option_context("display.float_format", "{:.4g}".format):   # the chapters' setting
        raw = table.to_html()
    assert _problems(raw) == ["NaN or None shown", "scientific notation", "code names"]


def test_styled_table_rejects_bad_arguments():
    with pytest.raises(TypeError, match="^df:"):
        styled_table([[1, 2]])
    with pytest.raises(ValueError, match="^formats:"):
        styled_table(pd.DataFrame({"a": [1.0]}), formats={"b": "{:.2f}"})
    with pytest.raises(ValueError, match="^digits:"):
        styled_table(pd.DataFrame({"a": [1.0]}), digits=0)
    with pytest.raises(TypeError, match="^caption:"):
        styled_table(pd.DataFrame({"a": [1.0]}), caption=3)


def test_report_table_hides_the_path_and_marks_what_does_not_apply():
    rows = [
        {"measure": "ECE", "aggregation": "confidence", "binning": "width", "n_bins": 15,
         "value": 0.0412, "calibrated_reference": 0.0206, "reference_method": "exact",
         "p_value": 0.00002, "p_value_method": "exact", "ci_lower": 0.03, "ci_upper": 0.05},
        {"measure": "SmoothECE", "aggregation": "confidence", "binning": "kernel",
         "n_bins": None, "value": 0.0301, "calibrated_reference": None,
         "reference_method": "none"},
    ]
    report = SimpleNamespace(rows=rows, n_samples=1000, n_classes=10, accuracy=0.9,
                             mean_confidence=0.95, scores={"log": 0.3, "brier": 0.15},
                             source="/tmp/calnotes-evaluate-x/mlp.npz")
    html = report_table(report).to_html()
    cells = _cells(html)
    assert cells[:9] == [r"\(\mathrm{ECE}_1\)", "confidence", "15", "0.04120", "0.02060",
                         "2.00", "< 0.0001", "[0.03000, 0.05000]", "exact"]
    assert cells[9:] == ["SmoothECE", "confidence", NOT_APPLICABLE, "0.03010", NOT_APPLICABLE,
                         NOT_APPLICABLE, NOT_APPLICABLE, NOT_APPLICABLE, "none"]
    assert "calnotes-evaluate" not in html and "mlp.npz" not in html
    with pytest.raises(TypeError, match="^report:"):
        report_table(object())
