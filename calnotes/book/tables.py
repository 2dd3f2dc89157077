"""Tables for reading: pandas DataFrames with math headers, fixed significant digits, right-aligned
numbers, "—" where a value does not apply, and a caption.

:func:`styled_table` turns a DataFrame into a pandas ``Styler`` that Jupyter and the book show as
an HTML table: every number with the same count of significant digits, never in wrapped
scientific notation (``8.145 × 10⁻⁵`` on one line), empty and NaN cells as "—", numbers
aligned on the right, and the code names of the library (``f2``, ``l1_conf``, ``ECE_1``) replaced by the
mathematics they stand for (:data:`NAMES`, extendable per table).  Math is written between
``\\(`` and ``\\)`` and the table carries the class ``mathjax_process``, so MathJax typesets it
inside a notebook page (which is otherwise excluded from MathJax's scan).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["styled_table", "report_table", "format_number", "math_name", "NAMES",
           "NOT_APPLICABLE", "REPORT_PARTS", "note_marks"]

#: What a cell shows when its value does not apply (NaN, None, an empty string).
NOT_APPLICABLE = "\u2014"

_MEASURES = {
    "l1_conf": r"\(\ell_1\)-QECE, confidence",
    "l1_cw": r"\(\ell_1\)-QECE, class-wise",
    "l2_conf": r"\(\ell_2\)-QECE, confidence",
    "l2_cw": r"\(\ell_2\)-QECE, class-wise",
}
#: Code names of the library and the book, and what a reader sees instead.  A name
#: ``"f2.l1_conf"`` (predictor.measure, as in :data:`calnotes.theory.table1.CELLS`) is shown as
#: "f₂, ℓ₁-QECE, confidence" by :func:`math_name`.
NAMES = {
    **{f"f{i}": rf"\(f_{i}\)" for i in range(1, 10)},
    **_MEASURES,
    "ECE_1": r"\(\mathrm{ECE}_1\)",
    "ECE_2": r"\(\mathrm{ECE}_2\)",
    "l2-QECE": r"\(\ell_2\)-QECE",
    "l1-QECE": r"\(\ell_1\)-QECE",
    "conf": "confidence",
    "cw": "class-wise",
    "n": r"\(n\)",
    "m": r"\(m\)",
    "k": r"\(k\)",
}

_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076"
                             "\u2077\u2078\u2079")


def math_name(name, names=None):
    """What a reader sees for the code name ``name`` (unchanged when it has no entry).

    Looks ``name`` up in ``names`` (when given) and then in :data:`NAMES`; a dotted name
    ``"f2.l1_conf"`` is shown part by part, joined by a comma.

    Examples
    --------
    >>> math_name("f2.l1_conf")
    '\\\\(f_2\\\\), \\\\(\\\\ell_1\\\\)-QECE, confidence'
    >>> math_name("accuracy")
    'accuracy'
    """
    table = {**NAMES, **(names or {})}
    if isinstance(name, tuple):
        return tuple(math_name(part, names) for part in name)
    if not isinstance(name, str):
        return name
    if name in table:
        return table[name]
    if "." in name and all(part in table for part in name.split(".")):
        return ", ".join(table[part] for part in name.split("."))
    return name


def format_number(value, digits: int = 4) -> str:
    """``value`` with ``digits`` significant digits, on one line; "—" when it does not apply.

    Integers are written in full; other numbers in fixed notation from 10⁻⁴ up to 10⁶, and as
    ``a × 10ᵇ`` (Unicode superscripts, no line break) outside that range.

    Examples
    --------
    >>> [format_number(v) for v in (0.03267, 0.023067, 8.145e-05, 12, float("nan"), None)]
    ['0.03267', '0.02307', '8.145\\xa0×\\xa010⁻⁵', '12', '—', '—']
    >>> format_number(-0.5, 2), format_number(123456.7, 3)
    ('-0.50', '123457')
    """
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or digits < 1:
        raise ValueError(f"digits: expected a positive integer, got {digits!r}")
    if value is None or (isinstance(value, str) and not value.strip()):
        return NOT_APPLICABLE
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if not isinstance(value, numbers.Real):
        return str(value)
    x = float(value)
    if math.isnan(x):
        return NOT_APPLICABLE
    if math.isinf(x):
        return "\u221e" if x > 0 else "\u2212\u221e"
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    if -4 <= exponent < 6:
        decimals = max(digits - 1 - exponent, 0)
        text = f"{x:.{decimals}f}"
        # rounding may carry into a new digit (0.099996 -> 0.1000): keep `digits` digits
        if decimals and len(text.replace("-", "").replace(".", "").lstrip("0")) > digits:
            text = f"{x:.{decimals - 1}f}"
        return text
    mantissa, exp = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa}\u00a0\u00d7\u00a010{str(int(exp)).translate(_SUPERSCRIPT)}"


def styled_table(df, *, caption=None, digits: int = 4, names=None, formats=None,
                 index: bool = True, align_right=(), compact: bool = False):
    """``df`` as a table for reading: a pandas ``Styler`` (shown as HTML by Jupyter and the book).

    Parameters
    ----------
    df : pandas.DataFrame or pandas.Series
        The values.  Index and column labels that are code names are shown as math
        (:func:`math_name`).
    caption : str, optional
        Shown above the table; say what to look at.  Math between ``\\(`` and ``\\)``.
    digits : int, default 4
        Significant digits of every non-integer number (:func:`format_number`).
    names : dict, optional
        Extra or overriding display names for index and column labels.
    formats : dict, optional
        Column label -> callable (value -> str) or format string, for columns that need their
        own format (a percentage, a p-value); the other columns use :func:`format_number`.
    index : bool, default True
        Show the index (row labels).
    align_right : sequence, default ()
        Columns of text to align on the right like the numbers (p-values, intervals).
    compact : bool, default False
        For a table that must fit the book's text column (about 680 px): one header row (the
        name of a plain index goes in the corner above the row labels, not in a header row of
        its own), narrower cell padding, and long row labels may wrap.

    Returns
    -------
    pandas.io.formats.style.Styler

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"l1_conf": [0.03267, float("nan")], "n": [100, 200]},
    ...                      index=pd.Index(["f1", "f2"], name="predictor"))
    >>> html = styled_table(table, caption="Two predictors").to_html()
    >>> "\\\\(f_2\\\\)" in html, "—" in html, "nan" in html.lower(), "text-align: right" in html
    (True, True, False, True)
    >>> html.count("<tr>", 0, html.index("<tbody>"))          # a row for the index's name
    2
    >>> html = styled_table(table, compact=True).to_html()
    >>> html.count("<tr>", 0, html.index("<tbody>"))          # compact: one header row
    1
    """
    import pandas as pd

    if isinstance(df, pd.Series):
        df = df.to_frame()
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df: expected a pandas DataFrame or Series, got {type(df).__name__}")
    if caption is not None and not isinstance(caption, str):
        raise TypeError(f"caption: expected a string, got {type(caption).__name__}")
    format_number(0.5, digits)                                  # checks digits
    formats = dict(formats or {})
    unknown = [c for c in formats if c not in df.columns]
    if unknown:
        raise ValueError(f"formats: no column(s) {unknown} in the table; its columns are"
                         f" {list(df.columns)}")

    shown = df.copy()
    shown.index = shown.index.map(lambda v: math_name(v, names))
    shown.columns = shown.columns.map(lambda v: math_name(v, names))
    if shown.index.name is not None:
        shown.index.name = math_name(shown.index.name, names)
    if isinstance(shown.index, pd.MultiIndex):
        shown.index.names = [math_name(v, names) for v in shown.index.names]
    if isinstance(shown.columns, pd.MultiIndex):
        shown.columns.names = [math_name(v, names) for v in shown.columns.names]
    renamed = dict(zip(df.columns, shown.columns))
    corner = (compact and shown.index.name is not None and shown.columns.name is None
              and not isinstance(shown.index, pd.MultiIndex)
              and not isinstance(shown.columns, pd.MultiIndex))
    if corner:                  # the index's name in the header row's corner cell
        shown.columns.name, shown.index.name = shown.index.name, None

    def number(value):
        return format_number(value, digits)

    column_formats = {renamed[c]: (f.format if isinstance(f, str) else f)
                      for c, f in formats.items()}

    def cell(column):
        fmt = column_formats.get(column, number)

        def show(value):
            try:
                missing = value is None or bool(pd.isna(value))
            except (TypeError, ValueError):             # an array-like cell: not missing
                missing = False
            if missing or (isinstance(value, str) and not value.strip()):
                return NOT_APPLICABLE
            return fmt(value)
        return show

    def label_text(value):                       # numbers among the labels: shortest form
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            return str(value)
        return str(int(value)) if isinstance(value, numbers.Integral) else f"{value:.{digits}g}"

    styler = shown.style.format({c: cell(c) for c in shown.columns})
    styler = styler.format_index(label_text, axis=0).format_index(label_text, axis=1)
    extra = {renamed.get(c, c) for c in align_right}
    numeric = [c for c in shown.columns
               if pd.api.types.is_numeric_dtype(shown[c]) or pd.api.types.is_bool_dtype(shown[c])
               or c in extra]
    styler = styler.set_properties(**{"white-space": "nowrap"})
    if numeric:
        styler = styler.set_properties(subset=numeric, **{"text-align": "right",
                                                          "font-variant-numeric": "tabular-nums"})
    styler = styler.set_table_styles([
        # column headers may wrap (a narrow column keeps a long header); cells never do
        {"selector": "th", "props": [("text-align", "right"), ("padding", "0.2em 0.6em")]},
        {"selector": "td", "props": [("padding", "0.2em 0.6em")]},
        {"selector": "th.row_heading", "props": [("text-align", "left"),
                                                 ("white-space", "nowrap")]},
        {"selector": "caption", "props": [("caption-side", "top"), ("text-align", "left"),
                                          ("font-weight", "normal")]},
    ])
    if compact:
        styler = styler.set_table_styles([
            {"selector": "th", "props": [("padding", "0.2em 0.35em")]},
            {"selector": "td", "props": [("padding", "0.2em 0.35em")]},
            {"selector": "th.index_name", "props": [("text-align", "left")]},
            # long row labels may wrap (at least 8em wide) rather than widen the table
            {"selector": "th.row_heading", "props": [("white-space", "normal"),
                                                     ("min-width", "8em")]},
        ], overwrite=False)
    styler = styler.set_table_attributes('class="calnotes-table mathjax_process"')
    if caption:
        styler = styler.set_caption(caption)
    if not index:
        styler = styler.hide(axis="index")
    return styler


#: The aggregation column's header: a soft hyphen lets a narrow column break it.
_AGGREGATION = "aggre\u00adgation"
_REPORT_MEASURES = {"ECE": r"\(\mathrm{ECE}_1\)", "l1-QECE": r"\(\ell_1\)-QECE",
                    "l2-QECE": r"\(\ell_2\)-QECE", "SmoothECE": "SmoothECE"}


#: The parts of :func:`report_table`: the columns each shows after measure, aggregation and
#: bin count.  ``"values"`` and ``"details"`` together hold what ``"all"`` does, each narrow
#: enough for the book's text column (about 680 px).
REPORT_PARTS = {
    "all": ("value", "calibrated reference", "ratio", "p-value", "90% interval", "reference"),
    "values": ("value", "calibrated reference", "ratio", "p-value"),
    "details": ("90% interval of E[value]", "reference", "p-value method"),
}


def report_table(report, *, caption=None, digits: int = 4, part: str = "all"):
    """The binned part of a :class:`calnotes.evaluation.EvaluationReport` as a styled table.

    One row per measure, aggregation and bin count, as in ``report.format_table()``, with the
    columns value, calibrated reference, their ratio, p-value, 90% interval and the reference's
    method; "—" where a column does not apply (SmoothECE has no bins and no reference).  The
    report's source path is not shown.  P-values are printed as in the text report
    (``calnotes.evaluation.format_p_value``): ``< 0.0001``, ``(MC)`` after a Monte Carlo
    value, and ``< 0.005 (MC)`` for one that no draw reached (its floor ``1 / (draws + 1)``
    rounded up).

    Parameters
    ----------
    report : calnotes.evaluation.EvaluationReport
    caption : str, optional
        Default: the sample size, the number of classes, accuracy and the mean proper losses
        (``"all"`` and ``"values"``); what the columns are (``"details"``).
    digits : int, default 4
    part : {"all", "values", "details"}, default "all"
        Which columns (:data:`REPORT_PARTS`): all of them (about 1,100 px wide with 18
        rows); ``"values"``: value, calibrated reference, ratio and p-value, what a reader
        needs first; ``"details"``: the 90% interval of ``E[value]``, how the reference was
        computed and how the p-value was.  The book's chapter *Evaluate your own model* shows
        ``"values"`` and then ``"details"``, each of which fits its text column.

    Returns
    -------
    pandas.io.formats.style.Styler

    Examples
    --------
    >>> row = {"measure": "ECE", "aggregation": "classwise", "binning": "width", "n_bins": 15,
    ...        "value": 0.09, "calibrated_reference": 0.016, "reference_method": "exact",
    ...        "p_value": 1 / 201, "p_value_method": "monte-carlo", "p_value_draws": 200}
    >>> from types import SimpleNamespace
    >>> report = SimpleNamespace(rows=[row], n_samples=2000, n_classes=5, accuracy=0.58,
    ...                          mean_confidence=0.79, scores={"log": 1.4, "brier": 0.62})
    >>> html = report_table(report, part="values").to_html()
    >>> "< 0.005 (MC)" in html, "90% interval" in html
    (True, False)
    """
    import pandas as pd

    from ..evaluation import format_p_value

    rows = getattr(report, "rows", None)
    if rows is None:
        raise TypeError("report: expected a calnotes.evaluate(...) report, got"
                        f" {type(report).__name__}")
    if part not in REPORT_PARTS:
        raise ValueError(f"part: expected one of {', '.join(map(repr, REPORT_PARTS))}, got"
                         f" {part!r}")

    def p_value(row):
        return None if row.get("p_value") is None else format_p_value(row)

    def p_method(row):
        method = row.get("p_value_method")
        if method is None:
            return None
        if method == "monte-carlo":
            return f"MC ({row.get('p_value_draws')})"
        return method

    def interval(row):
        if row.get("ci_lower") is None:
            return None
        lower, upper = (format_number(row[key], digits) for key in ("ci_lower", "ci_upper"))
        return f"[{lower}, {upper}]"

    def ratio(row):
        ref = row["calibrated_reference"]
        if ref is None or ref == 0:
            return None
        return row["value"] / ref

    columns = {
        "value": lambda row: row["value"],
        "calibrated reference": lambda row: row["calibrated_reference"],
        "ratio": ratio,
        "p-value": p_value,
        "90% interval": interval,
        "90% interval of E[value]": interval,
        "reference": lambda row: row["reference_method"],
        "p-value method": p_method,
    }
    if part == "details":       # SmoothECE rows have no interval, reference or p-value
        rows = [row for row in rows if row.get("ci_lower") is not None
                or row.get("p_value") is not None or row["reference_method"] != "none"]
    frame = pd.DataFrame([{
        "measure": _REPORT_MEASURES.get(row["measure"], row["measure"]),
        _AGGREGATION: row["aggregation"],
        "bins \\(m\\)": row["n_bins"] if row["n_bins"] is not None else None,
        **{name: columns[name](row) for name in REPORT_PARTS[part]},
    } for row in rows])
    frame["bins \\(m\\)"] = frame["bins \\(m\\)"].astype("Int64")
    if caption is None and part == "details":
        caption = ("90% interval: of the mean of the measure over test sets of this size from"
                   " the same population (bias-corrected bootstrap). Reference: how the"
                   " calibrated reference was computed. P-value method: exact (upper end of a"
                   " certified bracket), bound (a Chernoff bound below 1e-15), or MC (R): Monte"
                   " Carlo with R draws (resolution 1/(R + 1)).")
    elif caption is None:
        s = report.scores
        caption = (f"\\(n\\) = {report.n_samples} predictions, \\(k\\) = {report.n_classes}"
                   f" classes; accuracy {report.accuracy:.4f}, mean confidence"
                   f" {report.mean_confidence:.4f}; mean log loss {s['log']:.4f}, Brier (all"
                   f" classes) {s['brier']:.4f}. Ratio: value / calibrated reference (near 1:"
                   " no miscalibration beyond sampling noise); p-value: (MC) Monte Carlo,"
                   " < 0.005 (MC) no draw reached the value.")
    styler = styled_table(frame, caption=caption, digits=digits, index=False,
                        formats={name: fmt for name, fmt in (
                            ("ratio", lambda v: f"{v:.2f}"),
                            ("bins \\(m\\)", lambda v: str(int(v)))) if name in frame.columns},
                        align_right=[c for c in ("p-value", "90% interval",
                                                 "90% interval of E[value]")
                                     if c in frame.columns])
    # narrower cells than styled_table's (0.6em a side): the two parts fit the book's column
    return styler.set_table_styles([
        {"selector": "th", "props": [("padding", "0.2em 0.35em")]},
        {"selector": "td", "props": [("padding", "0.2em 0.35em")]},
    ], overwrite=False)


def note_marks(df, column: str = "note"):
    """A column of notes, said once: for a note that repeats on many rows of a table.

    When every row that has a note has the same one, the column is dropped and the note is
    returned, to be said once (in the caption); otherwise each distinct note gets a letter
    (a, b, ...), the column holds the letters and the returned text says what each means.

    Parameters
    ----------
    df : pandas.DataFrame
    column : str, default "note"

    Returns
    -------
    (pandas.DataFrame, str)
        The table (a copy) and the note(s), "" when no row has one.

    Examples
    --------
    >>> import pandas as pd
    >>> same = pd.DataFrame({"value": [1.0, 1.0, 1.0], "note": [None, "equal", "equal"]})
    >>> table, text = note_marks(same)
    >>> list(table.columns), text
    (['value'], 'equal')
    >>> mixed = pd.DataFrame({"value": [1.0, 2.0, 3.0], "note": ["x", None, "y"]})
    >>> table, text = note_marks(mixed)
    >>> table["note"].tolist(), text
    (['a', '', 'b'], 'a: x; b: y')
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if column not in df.columns:
        raise ValueError(f"column: no column {column!r} in the table; its columns are"
                         f" {list(df.columns)}")
    notes = [None if (v is None or (isinstance(v, float) and math.isnan(v))
                      or (isinstance(v, str) and not v.strip())) else str(v)
             for v in df[column]]
    distinct = list(dict.fromkeys(v for v in notes if v is not None))
    table = df.copy()
    if len(distinct) <= 1:
        return table.drop(columns=column), (distinct[0] if distinct else "")
    if len(distinct) > 26:
        raise ValueError(f"{column}: {len(distinct)} different notes, more than letters a-z")
    letters = {note: chr(ord("a") + i) for i, note in enumerate(distinct)}
    table[column] = ["" if v is None else letters[v] for v in notes]
    return table, "; ".join(f"{letters[v]}: {v}" for v in distinct)
