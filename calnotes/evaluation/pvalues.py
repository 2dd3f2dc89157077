"""A report's p-values as text, and the one p-value for the whole report (Holm)."""

from __future__ import annotations

import math


def _mc_floor(row) -> float | None:
    """The Monte Carlo floor ``1 / (draws + 1)`` of a row whose p-value sits at it (no draw
    reached the value), else ``None``."""
    p = row.get("p_value")
    draws = row.get("p_value_draws")
    if p is None or row.get("p_value_method") != "monte-carlo" or not draws:
        return None
    floor = 1.0 / (draws + 1)
    return floor if p <= floor * (1 + 1e-9) else None


def _ceil_digits(x: float, digits: int = 2) -> str:
    """``x`` > 0 rounded **up** to ``digits`` significant digits, shortest text (``0.005``)."""
    scale = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return f"{math.ceil(x / scale - 1e-9) * scale:.{max(0, -math.floor(math.log10(scale)))}f}" \
        .rstrip("0").rstrip(".")


def format_p_value(row, *, method: bool = True) -> str:
    """A row's p-value as the report prints it (text report and the book's table,
    :func:`calnotes.book.tables.report_table`): ``-`` when absent; ``< 0.0001`` below that; a
    Monte Carlo value that no draw reached as ``< x``, its floor ``1 / (draws + 1)`` rounded
    up (the p-value is at most that; ``report.json`` keeps the number and the flag
    ``p_value_floor``); `` (MC)`` after a Monte Carlo value (resolution ``1 / (draws + 1)``)
    unless ``method=False``.

    Examples
    --------
    >>> format_p_value({"p_value": 1 / 201, "p_value_method": "monte-carlo", "p_value_draws": 200})
    '< 0.005 (MC)'
    >>> format_p_value({"p_value": 0.0398, "p_value_method": "monte-carlo", "p_value_draws": 200})
    '0.0398 (MC)'
    >>> format_p_value({"p_value": 1 / 1000, "p_value_method": "monte-carlo",
    ...                 "p_value_draws": 999}, method=False)
    '< 0.001'
    >>> format_p_value({"p_value": 0.01234, "p_value_method": "exact"})
    '0.0123'
    >>> format_p_value({"p_value": 2e-7, "p_value_method": "exact"}), format_p_value({})
    ('< 0.0001', '-')
    """
    p = row.get("p_value")
    if p is None:
        return "-"
    floor = _mc_floor(row)
    if floor is not None:
        text = f"< {_ceil_digits(floor)}"
    else:
        text = "< 0.0001" if p < 1e-4 else f"{p:.4f}"
    if method and row.get("p_value_method") == "monte-carlo":
        text += " (MC)"
    return text


def _p_text(row) -> str:
    """The p-value column of :meth:`EvaluationReport.format_table` (:func:`format_p_value`)."""
    return format_p_value(row)


def _mark_floors(rows) -> None:
    """Give every row with a p-value the flag ``p_value_floor``: a Monte Carlo p-value that no
    draw reached, so the number is the floor ``1 / (draws + 1)``, an upper bound."""
    for row in rows:
        if row.get("p_value") is not None:
            row["p_value_floor"] = _mc_floor(row) is not None


def p_value_summary(rows) -> dict | None:
    """The one p-value to read for "any miscalibration beyond chance" in a report with many
    rows: the smallest p-value adjusted for the number of rows that carry one (Holm's
    step-down adjustment, which for the smallest p-value is Bonferroni's, ``R p``, capped at
    1).  A calibrated model's rows each fall below 0.05 about 5% of the time, so the smallest
    of ``R`` rows does far more often; its adjusted value is a valid p-value for the whole
    report whatever the dependence between the rows (they share their data).  ``None`` when
    no row has a p-value.

    Returns
    -------
    dict or None
        ``rows`` (``R``), ``min_p_value``, ``row`` (measure, aggregation, ``n_bins`` and
        ``p_value_method`` of the smallest), ``adjusted_min_p_value`` and ``adjustment``
        (``"holm"``).

    Examples
    --------
    >>> rows = [{"measure": "ECE", "aggregation": "confidence", "n_bins": 15, "p_value": 0.01},
    ...         {"measure": "ECE", "aggregation": "classwise", "n_bins": 15, "p_value": 0.4},
    ...         {"measure": "SmoothECE", "aggregation": "confidence", "n_bins": None}]
    >>> summary = p_value_summary(rows)
    >>> summary["rows"], summary["min_p_value"], summary["adjusted_min_p_value"]
    (2, 0.01, 0.02)
    """
    carried = [row for row in rows if row.get("p_value") is not None]
    if not carried:
        return None
    best = min(carried, key=lambda row: row["p_value"])
    smallest = float(best["p_value"])
    return {"rows": len(carried), "min_p_value": smallest,
            "row": {key: best.get(key) for key in ("measure", "aggregation", "n_bins",
                                                   "p_value_method", "p_value_draws")
                    if key in best},
            "adjusted_min_p_value": min(1.0, len(carried) * smallest),
            "adjustment": "holm"}
