"""The verdict of a report: calibrated or not beyond chance, where, and the usual next step."""

from __future__ import annotations

import math

from .pvalues import _ceil_digits, p_value_summary


#: Level of :attr:`EvaluationReport.verdict`: "miscalibrated beyond chance" when the
#: Holm-adjusted smallest p-value of the report (:func:`p_value_summary`) is below it, which
#: a perfectly calibrated model's report does with probability at most this (Holm's
#: adjustment holds the family-wise error rate whatever the dependence between the rows).
VERDICT_ALPHA = 0.05


#: The book's chapter on recalibration, which the verdict points to: (title, source file).
RECALIBRATION_CHAPTER = ("Trivial recalibration wins ECE", "book/practice/recalibration.md")


def _num(x: float, digits: int = 3) -> str:
    from ..book.tables import format_number

    return format_number(float(x), digits)


def _times(value: float, ref) -> str:
    """``value / ref`` as ``7.2x`` (``12x`` from 10 on); ``""`` without a positive reference."""
    if ref is None or not ref > 0:
        return ""
    r = value / ref
    return f"{r:.0f}x" if r >= 10 else f"{r:.1f}x"


def _holm(rows) -> dict:
    """Holm's adjusted p-value of every row with one, by ``id`` of the row."""
    carried = sorted((row for row in rows if row.get("p_value") is not None),
                     key=lambda row: row["p_value"])
    R, running, out = len(carried), 0.0, {}
    for i, row in enumerate(carried):
        running = max(running, min(1.0, (R - i) * float(row["p_value"])))
        out[id(row)] = running
    return out


def _headline_row(rows, aggregation: str = "confidence"):
    """The ECE at the first bin count (top-label: the measure most papers report)."""
    ece = [r for r in rows if r["measure"] == "ECE" and r["aggregation"] == aggregation]
    return ece[0] if ece else None


def _ratio(row) -> float:
    ref = None if row is None else row.get("calibrated_reference")
    return row["value"] / ref if ref else 0.0


def _distance_text(row) -> str:
    """``top-label ECE (m = 15) 0.165 = 7.2x its calibrated reference 0.0230``."""
    if row is None:
        return ""
    what = {"classwise": "class-wise", "binary": "P(y = 1)"}.get(row["aggregation"],
                                                                  "top-label")
    text = f"{what} ECE (m = {row['n_bins']}) {_num(row['value'])}"
    ref = row.get("calibrated_reference")
    if ref is None:
        return text + " (no calibrated reference computed)"
    times = _times(row["value"], ref)
    return text + (f" = {times} its calibrated reference {_num(ref)}" if times
                   else f", calibrated reference {_num(ref)}")


def _class_name(report, c: int) -> str:
    """``class 4`` or ``class 4 ('cat')``: the input's name of class index ``c``."""
    name = None
    if report.label_mapping:
        names = {int(v): k for k, v in report.label_mapping.items()}
        name = names.get(c)
    elif report.class_columns and len(report.class_columns) == report.n_classes:
        name = report.class_columns[c]
    return f"class {c}" if name is None or str(name) == str(c) else f"class {c} ({name!r})"


def _classwise_culprits(report, limit: int = 3) -> list:
    """The classes of ``U_CWE``'s worst list whose error is beyond their noise level, as
    ``class 4 ('cat') too optimistic``."""
    if not report.utility:
        return []
    cwe = next((c for c in report.utility["classes"] if c["class"] == "U_CWE"), None)
    if cwe is None:
        return []
    out = []
    for entry in cwe.get("worst", [cwe]):
        if not entry.get("beyond_noise"):
            continue
        c = int(str(entry["utility"]).split()[-1])
        out.append(f"{_class_name(report, c)} {entry['direction']}")
    return out[:limit]


def _confidence_words(gap: float) -> str:
    return "overconfident" if gap > 0 else "underconfident"


def verdict_lines(report) -> list:
    """The verdict of a report, three lines built only from its own numbers.

    1. Calibrated or not beyond chance, decided by the **Holm-adjusted smallest p-value**
       (:func:`p_value_summary`) at :data:`VERDICT_ALPHA`, never by a single row: with 18-27
       rows a calibrated model's report shows some row below 0.05 about 40% of the time,
       the adjusted value at most 5% of the time.  With it, the top-label ECE at the first
       bin count against its calibrated reference.  A Monte Carlo p-value at its floor
       ``1 / (draws + 1)`` that the adjustment cannot bring below the level (``rows / (draws
       + 1) >= 0.05``) makes the verdict "not resolved", with the number of draws that would.
    2. Where: over- or underconfident (mean confidence against accuracy; the interval of
       confidences of the largest top-class utility gap ``U_TCE`` when it is beyond its noise
       level) and, when the class-wise part stands out (the top label within noise, or a
       larger class-wise ratio), which classes (``U_CWE``'s worst classes beyond their noise
       levels).  For a calibrated verdict: the 90% interval of the top-label ECE's expected
       value instead.
    3. The usual next step: temperature scaling (vector or Dirichlet scaling for class-wise
       errors), pointing to the book's chapter :data:`RECALIBRATION_CHAPTER`; or none.

    Without p-values (``significance=False``, out of core) the first line says that the
    report cannot tell miscalibration from chance.

    Examples
    --------
    >>> import numpy as np
    >>> from calnotes import evaluate
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=400)
    >>> y = (P.cumsum(axis=1) > rng.random((400, 1))).argmax(axis=1)   # calibrated
    >>> print(evaluate(P, labels=y, n_bins=[10], utility=False, smooth_ece=False).verdict)
    verdict: no miscalibration beyond chance at this sample size (Holm-adjusted p = 1.0 over 6 rows, n = 400).
    top-label ECE (m = 10) 0.0460 = 1.0x its calibrated reference 0.0451; 90% interval of its expected value [0.0196, 0.0720]; mean confidence 0.603 vs accuracy 0.585.
    next: nothing to recalibrate on this evidence; compare models by their proper losses (log, Brier); a larger test set resolves smaller errors.
    """
    summary = p_value_summary(report.rows)
    head = _headline_row(report.rows)
    far = _distance_text(head)
    gap = report.mean_confidence - report.accuracy
    confidence = (f"mean confidence {_num(report.mean_confidence)} vs accuracy"
                  f" {_num(report.accuracy)}")
    chapter = (f"see the book's chapter \"{RECALIBRATION_CHAPTER[0]}\""
               f" ({RECALIBRATION_CHAPTER[1]})")
    if summary is None:
        out_of_core = not report._plottable
        why = ("p-values are not computed out of core" if out_of_core
               else "significance was off (command line: --no-significance)")
        return [f"verdict: this report cannot tell miscalibration from chance: it has no"
                f" p-values ({why})" + (f"; {far}" if far else "") + ".",
                f"untested: {confidence}.",
                "next: " + ("evaluate a random subsample of the rows in memory for p-values."
                            if out_of_core else "rerun with significance (the default) to"
                            " tell noise from miscalibration.")]

    R = summary["rows"]
    adjusted = summary["adjusted_min_p_value"]
    shown = "< 0.0001" if adjusted < 1e-4 else f"= {_num(adjusted, 2)}"
    holm = _holm(report.rows)
    carried = [r for r in report.rows if r.get("p_value") is not None]
    def significant(aggregation):
        return any(holm[id(r)] < VERDICT_ALPHA for r in carried
                   if r["aggregation"] == aggregation)

    # the binary rows (k = 2, P(y = 1) against y) are a one-vs-rest measure: class-wise
    top_sig, bin_sig, cw_sig = (significant(a) for a in ("confidence", "binary", "classwise"))
    uc = {c["class"]: c for c in (report.utility or {}).get("classes", [])}
    tce = uc.get("U_TCE")
    tce_beyond = bool(tce and tce.get("beyond_noise"))
    culprits = _classwise_culprits(report)

    cw_head = _headline_row(report.rows, "classwise")
    if adjusted < VERDICT_ALPHA:
        top_flag = top_sig or tce_beyond
        cw_flag = cw_sig or bin_sig or bool(culprits)
        if bin_sig and not cw_sig:
            cw_head = _headline_row(report.rows, "binary") or cw_head
        if cw_flag and not top_flag:
            far = _distance_text(cw_head) or far
        first = (f"verdict: miscalibrated beyond chance (Holm-adjusted p {shown} over {R}"
                 f" rows)" + (f"; {far}" if far else "") + ".")
        head_ratio, cw_ratio = _ratio(head), _ratio(cw_head)
        if top_flag:
            second = f"{_confidence_words(gap)}: {confidence}"
            if tce_beyond and tce.get("lower") is not None:
                worst = "overconfident" if tce["sign"] < 0 else "underconfident"
                where = (f"confidences {_num(tce['lower'], 2)}-{_num(tce['upper'], 2)}"
                         f" ({tce['mass']:.0%} of the samples)")
                second += (f"; largest gap on {where}" if worst == _confidence_words(gap)
                           else f", but {worst} on {where}")
            if culprits and cw_ratio > head_ratio:
                second += f"; class-wise, most in {', '.join(culprits)}"
        else:
            what = "P(y = 1)" if bin_sig and not cw_sig else "the class probabilities"
            second = (f"class-wise: the top label is within noise ({confidence}), {what}"
                      " not" + (f": {', '.join(culprits)}" if culprits else ""))
        fix = "temperature scaling fitted on held-out data (calnotes.recalibrate." \
              "TemperatureScaling) is the usual first fix"
        if not top_flag and cw_flag:
            fix = ("vector scaling or Dirichlet calibration fitted on held-out data"
                   " (calnotes.recalibrate.VectorScaling, DirichletCalibration) adjust each"
                   " class; temperature scaling, the usual first fix, changes all alike")
        third = f"next: {fix}; {chapter}."
        return [first, second + ".", third]

    floors = [r for r in carried if r.get("p_value_floor")]
    floor_limited = [r for r in floors if R * r["p_value"] >= VERDICT_ALPHA]
    if floor_limited:
        draws = max(int(r["p_value_draws"]) for r in floor_limited)
        wanted = int(math.ceil(100 * R / 1000.0)) * 1000     # rows / (draws + 1) <= 0.01
        kinds = sorted({r["aggregation"].replace("classwise", "class-wise")
                        for r in floor_limited})
        floor = _ceil_digits(floor_limited[0]["p_value"])
        first = (f"verdict: not resolved at {draws} Monte Carlo draws: {len(floor_limited)}"
                 f" {'/'.join(kinds)} p-value{'s' if len(floor_limited) > 1 else ''} sit at"
                 f" the draws' floor {floor}, which Holm's adjustment over {R} rows"
                 f" ({R} x {floor} >= {VERDICT_ALPHA:g}) cannot bring below {VERDICT_ALPHA:g};"
                 f" the report's Holm-adjusted p is {shown[2:]}, so no row is beyond chance"
                 " yet.")
        if any(r["aggregation"] == "classwise" for r in floor_limited) and cw_head:
            far = "; ".join(t for t in (_distance_text(cw_head), far) if t)
        second = (far + "; " if far else "") + confidence
        if culprits:
            second += f"; class-wise beyond noise: {', '.join(culprits)}"
        third = (f"next: rerun with draws={wanted} (command line: --draws {wanted}), which"
                 f" resolves p-values down to {_num(1 / (wanted + 1), 1)}.")
        return [first, second + ".", third]

    first = (f"verdict: no miscalibration beyond chance at this sample size (Holm-adjusted p"
             f" {shown} over {R} rows, n = {report.n_samples}).")
    parts = [far] if far else []
    if head is not None and head.get("ci_lower") is not None:
        parts.append(f"90% interval of its expected value [{_num(head['ci_lower'])},"
                     f" {_num(head['ci_upper'])}]")
    parts.append(confidence)
    uc_beyond = [name for name, c in uc.items() if c.get("beyond_noise")]
    if uc_beyond:
        parts.append(f"utility calibration finds {', '.join(uc_beyond)} beyond its noise"
                     " level (below)")
    third = ("next: nothing to recalibrate on this evidence; compare models by their proper"
             " losses (log, Brier); a larger test set resolves smaller errors.")
    return [first, "; ".join(parts) + ".", third]
