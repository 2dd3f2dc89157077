"""The report of :func:`calnotes.evaluate`: :class:`EvaluationReport`, its table, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from .progress import TIMED_PARTS
from .publish import REPORT_FILES, _publish, check_out
from .pvalues import _p_text, format_p_value, p_value_summary
from .verdict import verdict_lines


_BINARY = "binary"


#: The legend of :meth:`EvaluationReport.format_table`: one sentence per term.
LEGEND = (
    "calibrated = expected value of the measure if outcomes were drawn from these predictions"
    " (a perfectly calibrated model); ratio = value / calibrated (inf: the reference is 0 but"
    " the value is not; -: no reference).",
    "confidence = top-label: the measure on (the largest probability, whether the top class"
    " was right).",
    "classwise = the mean of the k one-vs-rest measures (p_r against 1[y = r]).",
    "p-value = P(value at least this large | outcomes drawn from these predictions): exact"
    " (upper end of a certified bracket) or, marked (MC), Monte Carlo (< x (MC): no draw"
    " reached the value, and x, 1/(draws + 1) rounded up, is the smallest p-value the draws"
    " resolve); small = more miscalibration than chance explains in that row. Many rows: even"
    " for a calibrated model about 5% of the rows fall below 0.05 by chance, so a report of 20"
    " rows shows some p < 0.05 far more often than 5% of the time (about 40% of calibrated"
    " reports); for 'any miscalibration beyond chance' read the one Holm-adjusted p-value of"
    " the header (the verdict's).",
    "90% interval = of E[value]: the mean of this measure over test sets of the same size from"
    " the same population (bias-corrected bootstrap: the resamples' deviations from their mean,"
    " reflected around the value; coverage measured in calnotes.evaluation.coverage).",
)


#: The entries of :data:`LEGEND` printed only when a row has a p-value, resp. an interval.
_LEGEND_P, _LEGEND_CI = LEGEND[-2], LEGEND[-1]


_LEGEND_BINARY = ("binary = the usual binary measure on P(y = 1) against y (k = 2 only; the ECE"
                  " most binary tools report).")


_LEGEND_BRIER = ("Brier (all classes) = sum over the classes of (p_r - 1[y = r])^2 (= d_TOT of"
                 " sharpness.png); for k = 2 that is twice scikit-learn's brier_score_loss,"
                 " which is 'Brier (binary)' = mean (P(y = 1) - y)^2. reliability.png's CORP"
                 " panel gives the top-label Brier, mean (confidence - 1[top class right])^2,"
                 " = MCB - DSC + UNC (miscalibration, discrimination, uncertainty).")


@dataclass
class EvaluationReport:
    """The result of :func:`evaluate`.

    Attributes
    ----------
    source : str
    n_samples, n_classes : int
    accuracy, mean_confidence : float
    scores : dict
        Mean proper losses: ``log``, ``brier``, ``spherical``, ``zero_one``, and for ``k = 2``
        ``brier_binary``.  ``brier`` sums over classes, ``||p - e_y||^2``: for ``k = 2`` twice
        scikit-learn's ``brier_score_loss``, which is ``brier_binary`` = ``mean (p_1 - y)^2``.
        ``log`` is computed from the logits when there are logits, and is ``inf`` when some
        label got probability 0.
    rows : list of dict
        One per (measure, aggregation, bin count): ``measure``, ``aggregation``
        (``"confidence"``, ``"classwise"``, and ``"binary"`` for ``k = 2``), ``binning``,
        ``n_bins``, ``value``, ``calibrated_reference``, ``reference_method`` (``"exact"``,
        ``"folded-normal"``, ``"monte-carlo"`` -- the mean of ``reference_draws`` draws of the
        calibrated null, for a measure without an exact reference -- or ``"skipped"`` when
        ``references=False``).  The SmoothECE rows
        (aggregation ``"confidence"``, and ``"binary"`` for ``k = 2``) have ``binning``
        ``"kernel"``, ``n_bins`` ``None``, the fixed-point ``bandwidth`` and no reference
        (``reference_method`` ``"none"``).
    notes : list of str
        Everything the numbers alone do not say: skipped rows, approximations, the loader's
        notes (``Predictions.notes``).
    utility : dict or None
        Utility calibration (``None`` when ``utility=False``), JSON-ready: ``classes``, one
        entry per class ``U_TCE``, ``U_CWE``, ``U_topK`` with ``uc`` (the class's largest
        error), the worst ``utility``, its interval ``lower``, ``upper`` of predicted utility,
        ``mass``, ``sign`` and ``direction``, ``noise_level`` (what a calibrated model's
        ``uc`` exceeds with probability at most :data:`UC_NOISE_ALPHA`) and ``beyond_noise``,
        and ``worst`` (its five largest errors); ``ecdf``:
        ``n_utilities``, ``seed``, ``delta``, ``halfwidth``, ``eps_stat`` and per sampled class
        (``U_lin``, ``U_rank``) the sorted ``errors``, ``median``, ``q90``, ``max`` and the
        five ``worst`` utilities with their parameters (payoffs ``a`` or valuations
        ``theta``).  Intervals are ``None`` where the error is 0.
    calnotes_version : str
        The calnotes version that made the report.
    input_sha256, labels_sha256 : str or None
        SHA-256 of the predictions file and of a separate labels file (``None`` for arrays,
        Dask arrays and shard folders), of the bytes that were loaded: taken when the file is
        loaded (out of core: when it is opened, checked after the computation, which reads
        it); a file that changes while it is being read is refused, and one replaced or
        removed later keeps the hash of what was evaluated.
    label_mapping : dict or None
        How the input's labels became class indices, ``{original label (text): class index}``
        (:attr:`calnotes.data.Predictions.label_mapping`): class names, ``True``/``False``,
        or numbers ``1..k`` named by the columns; ``None`` when the labels were indices
        already.  Printed under the header of :meth:`format_table` and saved in JSON and CSV.
    class_columns : list of str or None
        The input's columns read as classes, in class order (a CSV's, DataFrame's,
        Parquet/Feather file's column names; :attr:`calnotes.data.Predictions.class_columns`);
        ``None`` for arrays and ``.npz`` files, whose classes are the matrix's columns in order.
        Always printed in a header line of :meth:`format_table` and saved in JSON.
    timings : dict
        Seconds each part took (:data:`TIMED_PARTS`: ``loading``, ``scores``,
        ``binned_rows``, ``smooth_ece``, ``utility``, ``writing``, ``total``); the parts do not
        overlap, so they sum to at most ``total``.  Saved in JSON (``report.json`` holds the
        computation's; ``writing`` is added once the files are written) and printed by
        :meth:`format_timings` (command line: ``--timings``).  Timings differ between runs:
        compare reports without them.
    """

    source: str
    n_samples: int
    n_classes: int
    accuracy: float
    mean_confidence: float
    scores: dict
    rows: list
    notes: list = field(default_factory=list)
    calnotes_version: str = ""
    input_sha256: str | None = None
    labels_sha256: str | None = None
    utility: dict | None = None
    label_mapping: dict | None = None
    class_columns: list | None = None
    timings: dict = field(default_factory=dict)

    @property
    def p_value_summary(self) -> dict | None:
        """:func:`p_value_summary` of the rows (``None`` without p-values): the Holm-adjusted
        smallest p-value of the report, printed in the header of :meth:`format_table` and
        saved in JSON, the one p-value to read for "any miscalibration beyond chance"."""
        return p_value_summary(self.rows)

    @property
    def verdict(self) -> str:
        """Three lines for a reader in a hurry (``verdict_lines``): miscalibrated beyond
        chance or not, over- or underconfident and where, and the usual next step."""
        return "\n".join(verdict_lines(self))

    def to_dict(self) -> dict:
        """JSON-ready dictionary (non-finite numbers become ``None``, explained in ``notes``)."""
        return {
            "verdict": self.verdict,
            "source": self.source,
            "calnotes_version": self.calnotes_version,
            "input_sha256": self.input_sha256,
            "labels_sha256": self.labels_sha256,
            "n_samples": self.n_samples,
            "n_classes": self.n_classes,
            "label_mapping": (None if self.label_mapping is None
                              else {str(k): int(v) for k, v in self.label_mapping.items()}),
            "class_columns": (None if self.class_columns is None
                              else [str(c) for c in self.class_columns]),
            "accuracy": _finite_or_none(self.accuracy),
            "mean_confidence": _finite_or_none(self.mean_confidence),
            "scores": {k: _finite_or_none(v) for k, v in self.scores.items()},
            "measures": [{k: (_finite_or_none(v) if isinstance(v, float) else v)
                          for k, v in row.items()} for row in self.rows],
            "p_value_summary": _json_ready(self.p_value_summary),
            "utility": _json_ready(self.utility),
            "notes": list(self.notes),
            "timings": {name: round(float(s), 6) for name, s in self.timings.items()},
        }

    def format_timings(self) -> str:
        """How long each part took, one line per part (command line: ``--timings``).

        Examples
        --------
        >>> report = EvaluationReport("x", 1, 2, 1.0, 1.0, {}, [],
        ...                           timings={"loading": 0.25, "total": 1.0})
        >>> print(report.format_timings())
        timings (seconds; the parts do not overlap)
        loading          0.250   25.0%  reading and validating the input (calnotes.as_predictions)
        total            1.000  100.0%  wall time of evaluate (and of write, once written)
        """
        total = self.timings.get("total") or 0.0
        lines = ["timings (seconds; the parts do not overlap)"]
        for name, seconds in self.timings.items():
            share = f"{seconds / total:7.1%}" if total > 0 else f"{'-':>7}"
            lines.append(f"{name:<12} {seconds:9.3f} {share}  {TIMED_PARTS.get(name, '')}")
        return "\n".join(lines)

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON text (what ``calnotes evaluate --json`` prints)."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    def to_csv(self) -> str:
        """Long-format CSV: one line per score and per measure row, then the utility calibration:
        quantity ``UC`` per class (``aggregation`` is the class, ``binning`` the worst utility)
        and ``UC_median``, ``UC_q90``, ``UC_max`` per sampled class; last, when the labels were
        mapped (:attr:`label_mapping`), one line per label, quantity ``label_mapping``,
        ``aggregation`` the original label and ``value`` its class index."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["quantity", "aggregation", "binning", "n_bins", "value",
                         "calibrated_reference", "reference_method", "p_value",
                         "p_value_method", "ci_lower", "ci_upper", "p_value_floor"])
        blank = ["", "", "", "", ""]
        writer.writerow(["accuracy", "", "", "", _fmt_csv(self.accuracy), "", ""] + blank)
        writer.writerow(["mean_confidence", "", "", "", _fmt_csv(self.mean_confidence), "",
                         ""] + blank)
        for name, value in self.scores.items():
            writer.writerow([f"{name}_loss", "", "", "", _fmt_csv(value), "", ""] + blank)
        for row in self.rows:
            writer.writerow([row["measure"], row["aggregation"], row["binning"],
                             "" if row["n_bins"] is None else row["n_bins"],
                             _fmt_csv(row["value"]), _fmt_csv(row["calibrated_reference"]),
                             row["reference_method"], _fmt_csv(row.get("p_value")),
                             row.get("p_value_method", ""), _fmt_csv(row.get("ci_lower")),
                             _fmt_csv(row.get("ci_upper")),
                             {True: "true", False: "false"}.get(row.get("p_value_floor"), "")])
        if self.utility is not None:
            for entry in self.utility["classes"]:
                writer.writerow(["UC", entry["class"], entry["utility"], "",
                                 _fmt_csv(entry["uc"]), "", "none"] + blank)
            for entry in self.utility["ecdf"]["classes"]:
                for key in ("median", "q90", "max"):
                    writer.writerow([f"UC_{key}", entry["class"], "", "",
                                     _fmt_csv(entry[key]), "", "none"] + blank)
        for label, index in (self.label_mapping or {}).items():
            writer.writerow(["label_mapping", label, "", "", int(index), "", "none"] + blank)
        return buf.getvalue()

    def format_table(self) -> str:
        """The report as readable plain text (what the command line prints)."""
        s = self.scores
        losses = f"log {s['log']:.4f}   Brier (all classes) {s['brier']:.4f}"
        if "brier_binary" in s:
            losses += f"   Brier (binary) {s['brier_binary']:.4f}"
        losses += f"   spherical {s['spherical']:.4f}   0-1 {s['zero_one']:.4f}"
        w = max([5] + [len(str(row["n_bins"])) for row in self.rows])
        lines = self.verdict.splitlines() + [
            "",
            f"{self.source}: n = {self.n_samples}, k = {self.n_classes}",
        ] + _mapping_lines(self.label_mapping) + [
            _class_columns_line(self.class_columns, self.n_classes),
            f"accuracy {self.accuracy:.4f}   mean confidence {self.mean_confidence:.4f}",
            f"mean proper losses: {losses}",
        ] + _p_summary_line(self.p_value_summary) + [
            "",
            f"{'measure':<9} {'aggregation':<11} {'m':>{w}} {'value':>9} {'calibrated':>10}"
            f" {'ratio':>7} {'p-value':>12} {'90% interval':>21}  reference",
        ]
        for row in self.rows:
            ref = row["calibrated_reference"]
            ref_text = f"{ref:10.4g}" if ref is not None else f"{'-':>10}"
            m_text = "-" if row["n_bins"] is None else row["n_bins"]
            lines.append(f"{row['measure']:<9} {row['aggregation']:<11} {m_text:>{w}}"
                         f" {row['value']:9.4g} {ref_text} {_ratio_text(row['value'], ref):>7}"
                         f" {_p_text(row):>12} {_ci_text(row):>21}  {row['reference_method']}")
        if self.utility is not None:
            lines += [""] + _utility_lines(self.utility)
        lines.append("")
        shown = {_LEGEND_P: any(row.get("p_value") is not None for row in self.rows),
                 _LEGEND_CI: any(row.get("ci_lower") is not None for row in self.rows)}
        lines += [entry for entry in LEGEND if shown.get(entry, True)]
        if any(row["aggregation"] == _BINARY for row in self.rows):
            lines.append(_LEGEND_BINARY)
        lines.append(_LEGEND_BRIER)
        lines += [f"note: {note}" for note in self.notes]
        provenance = f"calnotes {self.calnotes_version}" if self.calnotes_version else ""
        if self.input_sha256:
            provenance += f"; input sha256 {self.input_sha256}"
        if provenance:
            lines.append(provenance)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format_table()

    def write(self, out, *, force: bool = False, figure: bool = True) -> list[Path]:
        """Write ``report.json``, ``report.csv``, ``reliability.png`` (binned diagrams with
        consistency bands and the CORP diagram), ``sharpness.png`` (the
        calibration-sharpness diagram, Brier pair) and ``utility_ecdf.png`` (the eCDFs of
        utility calibration errors; only when the report has a utility part) into folder
        ``out``.

        Nothing is written if any report file (any of :data:`REPORT_FILES`) exists, unless
        ``force=True`` (:func:`check_out` runs first).  The files are written into a
        temporary folder next to ``out`` (in its parent; inside ``out`` when the parent cannot
        be written) and moved in place only once all of them are complete, under a lock on
        ``out`` (concurrent writers never interleave).  With ``force=True`` every report file
        of an earlier run is replaced or, when this report does not write it (an out-of-core
        report's figures, ``utility_ecdf.png`` without a utility part), removed, so the
        folder never mixes two reports.  If anything fails, the error names the file and
        ``out`` keeps the earlier report files unchanged (the message says where the new
        files were left when they could be kept).

        Returns
        -------
        list of pathlib.Path
            The files written.
        """
        started = time.perf_counter()
        written = self._write(out, force, figure)
        elapsed = time.perf_counter() - started   # not in the report.json just written
        self.timings.pop("total", None)
        self.timings["writing"] = elapsed
        if self._computed_seconds is not None:
            self.timings["total"] = self._computed_seconds + elapsed
        return written

    def _write(self, out, force: bool, figure: bool) -> list[Path]:
        figure = figure and self._plottable      # out-of-core reports hold no predictions
        out = check_out(out, force=force, figure=figure)
        makers = {REPORT_FILES[0]: lambda path: path.write_text(self.to_json() + "\n"),
                  REPORT_FILES[1]: lambda path: path.write_text(self.to_csv())}
        if figure:
            from ..core.plotting import save_figure   # PNGs carry their smallest text size

            makers[REPORT_FILES[2]] = lambda path: save_figure(self._figure(), path, dpi=120)
            makers[REPORT_FILES[3]] = lambda path: save_figure(self._sharpness_figure(), path,
                                                               dpi=120)
            if self.utility is not None:
                makers[REPORT_FILES[4]] = lambda path: save_figure(self._utility_figure(),
                                                                   path, dpi=120)
        return _publish(out, makers, force)

    #: False for a report computed out of core: :meth:`write` writes no figures.
    _plottable = True
    #: The wall time of :func:`evaluate` (``timings["total"]`` before writing).
    _computed_seconds = None

    def _figure(self):
        raise RuntimeError("this report holds no predictions to plot")  # replaced in evaluate

    def _sharpness_figure(self):
        raise RuntimeError("this report holds no predictions to plot")  # replaced in evaluate

    def _utility_figure(self):
        raise RuntimeError("this report holds no predictions to plot")  # replaced in evaluate


#: Labels shown by :meth:`EvaluationReport.format_table` (all of them are in JSON and CSV).
_TABLE_LABELS = 20


def _class_columns_line(columns, k: int) -> str:
    """The header line of :meth:`EvaluationReport.format_table` saying which columns were
    read as classes (always printed: a column read by mistake changes every number)."""
    if columns is None:
        return f"classes: the {k} columns of the probability matrix, in order"
    if len(columns) == 1:
        return f"classes: P(y = 1) read from column {columns[0]!r} (k = 2)"
    items = [f"{j} = {c!r}" for j, c in enumerate(columns)]
    if len(items) > _TABLE_LABELS:
        items = items[:_TABLE_LABELS] + [f"... ({len(items)} columns in all: report.json)"]
    return f"classes read from columns: {', '.join(items)}"


def _mapping_lines(mapping) -> list:
    """The header line of :meth:`EvaluationReport.format_table` for a label mapping."""
    if not mapping:
        return []
    items = [f"{label!r} -> {index}" for label, index in mapping.items()]
    if len(items) > _TABLE_LABELS:
        items = items[:_TABLE_LABELS] + [f"... ({len(items)} labels in all: report.json)"]
    return [f"labels -> classes: {', '.join(items)}"]


def _p_summary_line(summary) -> list:
    """The header line of :meth:`EvaluationReport.format_table` with the adjusted p-value."""
    if summary is None:
        return []
    row = summary["row"]
    where = f"{row['measure']} {row['aggregation']}" + (
        f", m = {row['n_bins']}" if row.get("n_bins") is not None else "")
    adjusted = summary["adjusted_min_p_value"]
    shown = "< 0.0001" if adjusted < 1e-4 else f"= {adjusted:.4f}"
    least = format_p_value({**row, "p_value": summary["min_p_value"]}, method=False)
    if row.get("p_value_method") == "monte-carlo":
        least += " (Monte Carlo)"
    return [f"any miscalibration beyond chance: Holm-adjusted p {shown} (the smallest of the"
            f" {summary['rows']} rows' p-values, {least} for {where}, times {summary['rows']},"
            " at most 1)"]


def _ci_text(row) -> str:
    if row.get("ci_lower") is None:
        return "-"
    return f"[{row['ci_lower']:.4g}, {row['ci_upper']:.4g}]"


def _ratio_text(value: float, ref) -> str:
    if ref is None:
        return "-"
    if ref == 0:
        return "inf" if value > 0 else "-"
    return f"{value / ref:.2f}"


def _finite_or_none(value):
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _fmt_csv(value) -> str:
    if value is None:
        return ""
    return repr(float(value))


def _json_ready(value):
    """A deep copy with non-finite floats as ``None``."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, float):
        return _finite_or_none(value)
    return value


def _interval_text(entry) -> str:
    if entry["lower"] is None:
        return "-"
    return f"[{entry['lower']:.4g}, {entry['upper']:.4g}]"


def _noise_text(entry) -> str:
    noise = entry.get("noise_level")
    return "-" if noise is None else f"{noise:.4g}"


def _direction_text(entry) -> str:
    """The direction of a class's worst gap, printed only beyond its noise level."""
    if entry.get("beyond_noise") is False:
        return "within noise"
    return entry["direction"]


def _utility_lines(part: dict) -> list:
    """The utility calibration block of :meth:`EvaluationReport.format_table`."""
    classes = part["classes"]
    wu = max([13] + [len(c["utility"]) for c in classes])
    wi = max([16] + [len(_interval_text(c)) for c in classes])
    lines = ["utility calibration (binning-free, Lemma 3.4 of paper 001): the largest |mean"
             " (realized - predicted utility)| over intervals of predicted utility",
             f"{'class':<7} {'UC':>9}  {'worst utility':<{wu}}  {'on predicted in':<{wi}}"
             f" {'mass':>6} {'noise 95%':>9}  direction"]
    for c in classes:
        lines.append(f"{c['class']:<7} {c['uc']:9.4g}  {c['utility']:<{wu}}"
                     f"  {_interval_text(c):<{wi}} {c['mass']:6.3f} {_noise_text(c):>9}"
                     f"  {_direction_text(c)}")
    e = part["ecdf"]
    seed = "" if e["seed"] is None else f", seed {e['seed']}"
    lines += ["",
              f"eCDF of the estimated UC over M = {e['n_utilities']} sampled utilities per class"
              f"{seed} (figure utility_ecdf.png)",
              f"{'class':<7} {'median':>9} {'90%':>9} {'max':>9}  worst utilities (UC)"]
    for c in e["classes"]:
        worst = ", ".join(f"{w['utility']} {w['uc']:.4g}" for w in c["worst"])
        lines.append(f"{c['class']:<7} {c['median']:9.4g} {c['q90']:9.4g} {c['max']:9.4g}"
                     f"  {worst}")
    lines += [
        "UC = how far the realized utility is from the model's forecast of it on the worst"
        " interval of forecasts; mass = share of the samples in that interval; noise 95% ="
        " a level a perfectly calibrated model's UC exceeds with probability at most 5% (for"
        " any utility of the class; Freedman's inequality, conservative); direction, only"
        " for UC above it: too optimistic = realized below forecast there, too pessimistic ="
        " above (within noise: UC is what calibration alone can give).",
        f"DKW band: +-{e['halfwidth']:.3f} at delta = {e['delta']:g}; it covers the CDF of the"
        " *estimated* errors over the sampling prior (eps_stat = 0), not that of the true UC.",
    ]
    return lines
