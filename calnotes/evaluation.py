"""Evaluate a model's predictions: accuracy, proper scores, binned measures, calibrated references.

:func:`evaluate` is what ``calnotes evaluate PREDICTIONS`` runs.  It takes any input form that
:func:`calnotes.as_predictions` reads (which holds the options saying how to read it) and
computes; the report says how long each part took (:attr:`EvaluationReport.timings`,
:data:`TIMED_PARTS`).  For each bin count ``m`` it
computes, with both aggregations of the truthfulness paper (confidence, Def 2.8; class-wise,
Def 2.7) and, for a binary model (``k = 2``), on ``P(y = 1)`` as well:

* the equal-width binned ECE (the measure of Guo et al. and of the recalibration paper's tables),
* the l1- and l2-QECE of the truthfulness paper (Def 2.5, equal-mass bins),
* SmoothECE (Blasiok & Nakkiran 2023, :func:`calnotes.kernel.smooth_ece`), once, with its
  fixed-point bandwidth (no bins: ``n_bins`` is ``None`` and the row has a ``bandwidth``),

and, with ``utility=True`` (the default), **utility calibration** (Hegazy, Jordan & Dieuleveut,
paper 001; :mod:`calnotes.utility`): the binning-free estimator of Lemma 3.4 for the top-class
utility ``U_TCE``, the class-wise utilities ``U_CWE`` and the top-``K`` utilities ``U_topK``
(the largest error, which utility and which interval of predicted utility it comes from), and the
eCDF of the estimated errors over ``M`` linear (``U_lin``) and ``M`` rank (``U_rank``) utilities
drawn from the paper's prior, with its DKW band, its quantiles and the worst utilities found
(``EvaluationReport.utility``, the figure ``utility_ecdf.png``).

Next to each binned value stands its **calibrated reference**: the expected value the same
measure would take if the model's predictions were exactly right (outcomes drawn from them).  A
binned measure is not zero for a calibrated model; the reference says how large it is for *these*
predictions at *this* sample size, so a value can be read as "above what calibration alone
explains" or not.  The references are exact (Part II, :func:`calnotes.expected_qece`,
:func:`calnotes.expected_binned_ece`), except for l1 measures on very large inputs, where the
exact Poisson-binomial sums would be slow: l1-QECE then uses the folded-normal approximation
and the equal-width ECE the same approximation on its bins
(:func:`calnotes.folded_normal_l1_approximation`), flagged ``"folded-normal"`` in the report.

Aggregations (the ``aggregation`` of a row)
    ``"confidence"``: top-label, the binary measure on (the largest probability, whether the
    top class was right).  ``"classwise"``: the mean of the ``k`` one-vs-rest measures
    (``p_r`` against ``1[y = r]``).  ``"binary"`` (``k = 2`` only): the usual binary measure
    on ``P(y = 1)`` against ``y`` -- the ECE most binary tools report.  For ``k = 2`` the three
    differ in general (a value ``p`` and ``1 - p`` need not fall in mirrored bins).
Brier
    ``scores["brier"]`` sums over the classes, ``sum_r (p_r - 1[y = r])^2``; for ``k = 2`` it is
    twice scikit-learn's ``brier_score_loss``, which the report gives as
    ``scores["brier_binary"]``, ``mean (P(y = 1) - y)^2``.
Log loss
    From the logits with log-sum-exp when the predictions are logits
    (:func:`calnotes.scores.log_loss_from_logits`): finite for huge logits whose softmax
    underflows to 0.

Utility calibration (``report.utility``)
    ``UC(f, u) = sup_I |mean_i (u(f(X_i), Y_i) - v_u(X_i)) 1{v_u(X_i) in I}|``, the largest
    average gap between the realized utility and the model's own forecast of it, ``v_u``, over
    the intervals ``I`` of predicted utility (Lemma 3.4,
    :func:`calnotes.utility.utility_calibration`).  Each class reports its largest error, the
    utility and the interval it comes from, the interval's share of the samples (``mass``),
    and the direction: *too optimistic* (realized utility below the forecast there,
    ``sign = -1``) or *too pessimistic* (above, ``sign = +1``), printed only when the error
    is above its ``noise_level``, a level a calibrated model's error exceeds with probability
    at most 5% (``_uc_noise_level``; "within noise" otherwise).  The eCDF of the errors of
    ``M`` sampled utilities has the DKW band ``+-sqrt(ln(2/delta) / (2M))`` with
    ``eps_stat = 0``: it covers, with probability ``1 - delta`` over the draw of the
    utilities, the CDF of the *estimated* errors on these samples over the sampling prior, not
    the CDF of the true ``UC(f, u)`` (:class:`calnotes.utility.UtilityECDF`).  The utilities
    are drawn with ``rng`` (default seed 0), so the same call gives the same numbers.

Chapter "Evaluate your own model" (``book/practice/evaluate``); Part IV of the book (*Utility
calibration*, *Bounds and guarantees*) develops the utility part.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import numbers
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import _evalrows
from . import scale as _scale
from ._sorted import available_workers as _available_workers
from ._sorted import threads_for
from .data.loaders import Predictions
from .inputs import LOADER_OPTIONS, ChunkedPredictions, as_predictions
from .measures import confidence_scores
from .significance import DEFAULT_BOOTSTRAP, DEFAULT_DRAWS, MIN_BOOTSTRAP
from ._ties import check_ties
from .scores import _log_loss_from_logits_unchecked, _losses_at_labels

__all__ = ["DEFAULT_BINS", "DEFAULT_UTILITY_SAMPLES", "EvaluationReport", "evaluate", "TIMED_PARTS",
           "check_out", "REPORT_FILES"]

#: Bin counts used when none are given: 15 (the common ECE default), 20 and 100.  As for
#: requested counts, one above the sample size ``n`` gets equal-width rows only (with a note);
#: when all three exceed ``n``, ``m = n`` is added.
DEFAULT_BINS = (15, 20, 100)
#: Files :meth:`EvaluationReport.write` creates in the output folder.
REPORT_FILES = ("report.json", "report.csv", "reliability.png", "sharpness.png",
                "utility_ecdf.png")
#: Default number of sampled utilities per class (``U_lin``, ``U_rank``) in the eCDF.
DEFAULT_UTILITY_SAMPLES = 500
#: Elements of one task's ``(chunk, n)`` array of predicted utilities in the utility estimator
#: (64 MB), and of all the threads' such arrays together (512 MB): see ``_uc_results``.
_UC_BUDGET = 1 << 23
_UC_MEMORY = 1 << 26
#: Utilities x rows per worker thread of the utility estimator.  On a 16-core host
#: (benchmarks/device/thread_sweep_16cores.json) 10^4 x 2 (1,004 utilities, 10^7 utility-rows)
#: took 0.20 s on one thread, 0.14 s on two and 0.21 s on 16; 10^5 x 10 (10^8) 2.9 s, 2.1 s
#: and 1.2 s.  On two cores, 16 threads took twice as long as two at 10^4 rows.
_UC_THREAD_WORK = 1 << 22
#: Worker threads of the utility estimator (NumPy's sorts release the GIL): every CPU this
#: process may use (``os.sched_getaffinity``), or ``CALNOTES_THREADS``.
_UC_WORKERS = _available_workers()
#: Work budget for an exact l1 reference of one plan, in the units of
#: :func:`calnotes.poisson_binomial.work` (about a nanosecond of one core each; 3e8 is about
#: 0.3 s); the rule and its decisions on the benchmark grid: :data:`calnotes._evalrows.EXACT_L1_BUDGET`.
EXACT_L1_BUDGET = _evalrows.EXACT_L1_BUDGET

_AGGREGATIONS = ("confidence", "classwise")
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
    " reflected around the value; coverage measured in calnotes.coverage).",
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

#: The parts of a report whose time :attr:`EvaluationReport.timings` gives, in order (a part
#: that did not run is absent; ``total`` is the wall time of :func:`evaluate`).
TIMED_PARTS = {
    "loading": "reading and validating the input (calnotes.as_predictions)",
    "scores": "accuracy, confidences and the proper scores",
    "binned_rows": "binned values and what the next three parts do not cover",
    "references": "calibrated references of the binned rows",
    "p_values": "p-values under the calibrated null (exact brackets and Monte Carlo)",
    "intervals": "bootstrap intervals",
    "smooth_ece": "SmoothECE rows",
    "utility": "utility calibration",
    "writing": "report files and figures (EvaluationReport.write; not in its report.json)",
    "total": "wall time of evaluate (and of write, once written)",
}


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
            from .plotting import save_figure   # PNGs carry their smallest text size

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
    :func:`calnotes.tables.report_table`): ``-`` when absent; ``< 0.0001`` below that; a
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


#: Level of :attr:`EvaluationReport.verdict`: "miscalibrated beyond chance" when the
#: Holm-adjusted smallest p-value of the report (:func:`p_value_summary`) is below it, which
#: a perfectly calibrated model's report does with probability at most this (Holm's
#: adjustment holds the family-wise error rate whatever the dependence between the rows).
VERDICT_ALPHA = 0.05
#: The book's chapter on recalibration, which the verdict points to: (title, source file).
RECALIBRATION_CHAPTER = ("Trivial recalibration wins ECE", "book/practice/recalibration.md")


def _num(x: float, digits: int = 3) -> str:
    from .tables import format_number

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
    top_sig, bin_sig, cw_sig = (significant(a) for a in ("confidence", _BINARY, "classwise"))
    uc = {c["class"]: c for c in (report.utility or {}).get("classes", [])}
    tce = uc.get("U_TCE")
    tce_beyond = bool(tce and tce.get("beyond_noise"))
    culprits = _classwise_culprits(report)

    cw_head = _headline_row(report.rows, "classwise")
    if adjusted < VERDICT_ALPHA:
        top_flag = top_sig or tce_beyond
        cw_flag = cw_sig or bin_sig or bool(culprits)
        if bin_sig and not cw_sig:
            cw_head = _headline_row(report.rows, _BINARY) or cw_head
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


def _plural(items: list, one: str, many: str) -> str:
    return one if len(items) == 1 else many


def check_out(out, *, force: bool = False, figure: bool = True) -> Path:
    """Check an output folder for :meth:`EvaluationReport.write` before anything is computed.

    Refuses (nothing is created): ``out`` inside the book's or the library's sources
    (:func:`calnotes._outdir.refuse_source_folder`); ``out`` that exists and is not a folder, or lies below a
    file; ``out`` (or a folder above it) that is a symbolic link to nothing; any existing
    report file of :data:`REPORT_FILES` unless ``force=True`` (also the figures a report
    without figures would not write: with ``force=True`` they are removed); a report file
    name that is a folder; a folder that cannot be written (the nearest existing folder is
    checked with :func:`os.access`).  ``figure`` is kept for compatibility: every report
    file is checked.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> open(os.path.join(folder, "report.csv"), "w").close()
    >>> check_out(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: out (command line: --out): .../report.csv exists; pass force=True (command line: --force) to overwrite it
    """
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out (command line: --out): expected a folder path, got"
                        f" {type(out).__name__}")
    out = Path(out)
    from ._outdir import refuse_source_folder
    refuse_source_folder(out)                    # never a report inside the sources
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"out (command line: --out): {out} exists and is not a folder")
    # every report file counts, also one this run would not write (the figures of an earlier
    # in-memory report under an out-of-core one): a folder never mixes two reports (N10)
    existing = [str(out / name) for name in REPORT_FILES if os.path.lexists(out / name)]
    if existing and not force:
        raise FileExistsError(
            f"out (command line: --out): {', '.join(existing)}"
            f" {_plural(existing, 'exists', 'exist')}; pass force=True (command line: --force)"
            f" to overwrite {_plural(existing, 'it', 'them')}")
    folders = [str(out / name) for name in REPORT_FILES
               if (out / name).is_dir() and not (out / name).is_symlink()]
    if folders:
        raise IsADirectoryError(f"out (command line: --out): {folders[0]} is a folder, where"
                                " the report writes a file; move it away")
    folder = out
    while not folder.exists() and folder != folder.parent:
        if folder.is_symlink():     # a dangling link: mkdir would fail after the computation
            raise FileNotFoundError(f"out (command line: --out): {folder} is a symbolic link to"
                                    f" {os.readlink(folder)}, which does not exist; create its"
                                    " target or remove the link")
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(f"out (command line: --out): {folder} is a file, so {out}"
                                 " cannot be a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"out (command line: --out): cannot write in {folder}"
                              " (permission denied)")
    return out


_OUT_NAME = "out (command line: --out)"


#: Age after which a temporary report folder (:func:`_publish`) is removed whoever wrote it:
#: a writer takes seconds, so a day-old folder is left over even if its process id is in use
#: again (or was on another machine sharing the folder).
STALE_SECONDS = 24 * 3600


def _writer_tag() -> str:
    """``HOST-PID`` in a temporary folder's name: which process writes it (``HOST``: eight hex
    digits of the host name's hash, so a folder shared between machines is not judged by
    another machine's process ids)."""
    import hashlib
    import socket

    host = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    return f"{host}-{os.getpid()}"


def _writer_gone(tag: str) -> bool:
    """Whether the process of a ``HOST-PID`` tag has ended (``False`` when it runs, when it
    cannot be told, and for another host)."""
    host, _, pid = tag.partition("-")
    if host != _writer_tag().split("-")[0] or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError, OverflowError):
        return False                            # alive under another user, or unknown
    return False


def _remove_stale(folder: Path, prefix: str) -> list[Path]:
    """Remove the temporary report folders ``prefix*`` in ``folder`` that an interrupted or
    killed :func:`_publish` left behind: those whose writer (the ``HOST-PID`` in the name)
    has ended, and any older than :data:`STALE_SECONDS` (also those of calnotes versions that
    put no writer in the name).  A folder being written by a live process is kept, and so is
    one holding an earlier report that a failed move could not put back (``.earlier``, named
    in that run's error message).  Returns the folders removed."""
    import re
    import shutil

    removed = []
    pattern = re.compile(re.escape(prefix) + r"(?:([0-9a-f]{8}-\d+)-)?[A-Za-z0-9_]+$")
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = pattern.match(entry.name)
        if not match:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
        except OSError:
            continue
        if _holds_earlier_report(Path(entry.path)):
            continue                            # an earlier report not put back: kept
        if old or (match.group(1) is not None and _writer_gone(match.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _holds_earlier_report(tmp: Path) -> bool:
    try:
        with os.scandir(tmp / ".earlier") as entries:
            return any(True for _ in entries)
    except OSError:
        return False


class _Terminated(SystemExit):
    """SIGTERM while report files are written: exits like an unhandled SIGTERM's status
    (128 + 15), after the temporary folder is removed."""


def _on_sigterm(signum, frame):
    raise _Terminated(128 + signum)


class _terminable:
    """SIGTERM raises :class:`_Terminated` while the block runs (main thread only, and only
    where no handler of the program's own is installed), so that cleanup code runs; the
    earlier handler is restored afterwards."""

    def __enter__(self):
        import signal
        import threading

        self.previous = None
        if (threading.current_thread() is threading.main_thread()
                and hasattr(signal, "SIGTERM")
                and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
            self.previous = signal.signal(signal.SIGTERM, _on_sigterm)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            import signal
            signal.signal(signal.SIGTERM, self.previous)
        return False


def _publish(out: Path, makers: dict, force: bool) -> list[Path]:
    """Write ``makers`` (file name -> function writing that file) into a temporary folder next
    to ``out``, then move them in place under a lock on ``out``; report files of an earlier
    run that this run does not write are removed.  All or nothing: on a failure ``out`` keeps
    its earlier files and the error names the file.

    The temporary folder, ``.OUT.calnotes-HOST-PID-XXXX`` beside ``out`` (or
    ``.calnotes-HOST-PID-XXXX`` inside it when its parent is read-only), is removed whatever
    stops the writing: an error, Ctrl-C (``KeyboardInterrupt``) or SIGTERM.  One left by a
    killed process (``kill -9``) is removed by the next run into the same place, once its
    writer has ended (:func:`_remove_stale`)."""
    with _terminable():
        return _publish_files(out, makers, force)


def _publish_files(out: Path, makers: dict, force: bool) -> list[Path]:
    import shutil
    import tempfile

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise type(exc)(f"{_OUT_NAME}: cannot create the folder {out.parent}"
                        f" ({exc.strerror or exc}); nothing was written") from None
    home = out.resolve() if out.is_dir() else out    # a linked folder: beside its target
    _remove_stale(home.parent, f".{home.name}.calnotes-")
    if out.is_dir():
        _remove_stale(out, ".calnotes-")
    tag = _writer_tag()
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{home.name}.calnotes-{tag}-", dir=home.parent))
        if out.is_dir() and os.stat(tmp).st_dev != os.stat(out).st_dev:
            shutil.rmtree(tmp, ignore_errors=True)       # out is a mount point: moves would
            raise PermissionError("another file system")  # copy, so write inside it
    except OSError as exc:
        if not out.is_dir():
            raise type(exc)(f"{_OUT_NAME}: cannot write in {out.parent}"
                            f" ({exc.strerror or exc}); nothing was written") from None
        tmp = Path(tempfile.mkdtemp(prefix=f".calnotes-{tag}-", dir=out))  # read-only parent
    try:
        return _place(out, tmp, makers, force)
    except BaseException as exc:                 # Ctrl-C, SIGTERM: nothing left behind,
        if tmp.is_dir() and not _holds_earlier_report(tmp) and str(tmp) not in str(exc):
            shutil.rmtree(tmp, ignore_errors=True)   # unless the message points there
        raise


def _place(out: Path, tmp: Path, makers: dict, force: bool) -> list[Path]:
    """:func:`_publish`'s work once the temporary folder ``tmp`` exists."""
    import shutil

    name = None
    try:
        for name, make in makers.items():
            make(tmp / name)
    except Exception as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        kind = type(exc) if isinstance(exc, OSError) else RuntimeError
        raise kind(f"{_OUT_NAME}: could not write {out / name} ({exc}); nothing in {out} was"
                   " changed") from exc
    mask = os.umask(0)
    os.umask(mask)
    if not out.exists():
        os.chmod(tmp, 0o777 & ~mask)             # mkdtemp's folder is private (0700)
        try:
            os.rename(tmp, out)                  # the whole folder appears at once
            return [out / name for name in makers]
        except OSError:
            os.chmod(tmp, 0o700)
            try:                                 # another run made it meanwhile
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                raise type(exc)(f"{_OUT_NAME}: cannot create the folder {out}"
                                f" ({exc.strerror or exc}); nothing was written") from None
    with _locked(out):
        existing = [str(out / n) for n in REPORT_FILES if os.path.lexists(out / n)]
        if existing and not force:               # written by another run since check_out
            shutil.rmtree(tmp, ignore_errors=True)
            raise FileExistsError(f"{_OUT_NAME}: {', '.join(existing)} appeared during the"
                                  " run (another run writing there?); pass force=True (command"
                                  " line: --force) to overwrite; nothing was written")
        earlier = tmp / ".earlier"
        moved, placed, name = [], [], None
        try:
            earlier.mkdir()
            for name in REPORT_FILES:            # the earlier report, set aside as a whole
                if os.path.lexists(out / name):
                    os.replace(out / name, earlier / name)
                    moved.append(name)
            for name in makers:
                os.replace(tmp / name, out / name)
                placed.append(name)
        except BaseException as exc:             # an OSError, or Ctrl-C / SIGTERM
            stuck, lost = [], []
            for done in placed:                  # roll back: the new files out again ...
                try:
                    os.replace(out / done, tmp / done)
                except OSError:
                    stuck.append(done)
            for done in moved:                   # ... and the earlier ones in again
                try:
                    os.replace(earlier / done, out / done)
                except OSError:
                    lost.append(done)
            if not isinstance(exc, OSError):
                if not (stuck or lost):
                    shutil.rmtree(tmp, ignore_errors=True)
                raise
            kept = (f"the earlier report files in {out} are kept unchanged"
                    if not (stuck or lost) else
                    f"{out} could not be restored in full (new there: {stuck or 'none'};"
                    f" earlier files not put back, now in {earlier}: {lost or 'none'})")
            raise type(exc)(f"{_OUT_NAME}: cannot replace {out / name}"
                            f" ({exc.strerror or exc}); {kept}; the new report files are in"
                            f" {tmp}") from None
        shutil.rmtree(tmp, ignore_errors=True)   # with the earlier report's files
    return [out / name for name in makers]


class _locked:
    """An exclusive lock on folder ``path`` (``flock`` on POSIX; none elsewhere), held while
    report files are moved in place, so that concurrent writers never mix their files."""

    def __init__(self, path: Path):
        self.path, self.fd = path, None

    def __enter__(self):
        try:
            import fcntl
            self.fd = os.open(self.path, os.O_RDONLY)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except (ImportError, OSError):
            if self.fd is not None:
                os.close(self.fd)
            self.fd = None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)                    # releases the lock
        return False


_BINS_NAME = "n_bins (command line: --bins)"


def _check_bin_request(n_bins) -> list[int] | None:
    """Requested bin counts as a list of distinct positive ints (``None``: the defaults)."""
    if n_bins is None:
        return None
    if isinstance(n_bins, np.ndarray) and n_bins.ndim == 0:
        n_bins = n_bins.item()
    if isinstance(n_bins, (bool, np.bool_)):
        raise TypeError(f"{_BINS_NAME}: expected a positive integer or a list of them, got"
                        f" {n_bins!r}")
    if isinstance(n_bins, numbers.Integral):
        n_bins = [n_bins]
    elif isinstance(n_bins, (str, bytes)):
        raise TypeError(f"{_BINS_NAME}: expected a positive integer or a list of them, got the"
                        f" string {n_bins!r}; pass numbers, e.g. 15 or [15, 20]")
    elif isinstance(n_bins, numbers.Real):
        raise TypeError(f"{_BINS_NAME}: expected a positive integer or a list of them, got"
                        f" {n_bins!r} ({type(n_bins).__name__}); bin counts are whole numbers")
    elif not isinstance(n_bins, (list, tuple, range, np.ndarray)):
        raise TypeError(f"{_BINS_NAME}: expected a positive integer or a list of them, got"
                        f" {type(n_bins).__name__}")
    chosen = []
    for m in list(n_bins):
        if isinstance(m, (bool, np.bool_)) or not isinstance(m, numbers.Integral):
            raise TypeError(f"{_BINS_NAME}: bin count {m!r} is not a positive integer")
        if m < 1:
            raise ValueError(f"{_BINS_NAME}: bin count {int(m)} is not a positive integer")
        if int(m) not in chosen:
            chosen.append(int(m))
    if not chosen:
        raise ValueError(f"{_BINS_NAME}: give at least one bin count, got {n_bins!r}")
    return chosen


def _bin_plan(requested, n: int) -> tuple[list[int], list[str]]:
    """All bin counts, and the notes on rows they lack (equal-mass rows need ``m <= n``)."""
    notes = []
    if requested is None:
        bins = list(DEFAULT_BINS)
        if all(m > n for m in bins):
            bins.append(n)
            notes.append(f"every default bin count {list(DEFAULT_BINS)} exceeds n = {n};"
                         f" m = {n} was added")
    else:
        bins = list(requested)
    above = [m for m in bins if m > n]
    if above:
        notes.append(f"equal-mass rows (l1-QECE, l2-QECE) skipped for m = {above} > n = {n}:"
                     " equal-mass bins need a sample each; the equal-width ECE rows are"
                     " computed (empty bins carry no weight)")
    return bins, notes


def _scores(pred: Predictions, y, P, notes: list) -> dict:
    n, k = P.shape
    logits = pred.logits
    if logits is not None and (logits.ndim == 1 or logits.shape[1] == 1):
        logits = np.column_stack([np.zeros(n), np.reshape(logits, n)])   # sigmoid as [0, z]
    # (y, P) and the logits were validated once, by Predictions: the unvalidated versions of
    # log_loss, brier_loss, spherical_loss, zero_one_loss and log_loss_from_logits (the same
    # numbers), which also skip the (n, k) loss matrices
    losses = _losses_at_labels(y, P)
    with np.errstate(divide="ignore"):
        if logits is not None:
            per_sample = _log_loss_from_logits_unchecked(y, logits)
        else:
            per_sample = losses["log"]
    scores = {"log": float(per_sample.mean()), "brier": float(losses["brier"].mean())}
    if k == 2:
        scores["brier_binary"] = float(np.mean((P[:, 1] - y) ** 2))
    scores["spherical"] = float(losses["spherical"].mean())
    scores["zero_one"] = float(losses["zero_one"].mean())
    if logits is not None and math.isfinite(scores["log"]):
        notes.append("log loss computed from the logits (log-sum-exp), which stays finite"
                     " where softmax underflows to probability 0")
    if not math.isfinite(scores["log"]):
        i = int(np.flatnonzero(~np.isfinite(per_sample))[0])
        why = ("has logit -inf (a masked class) for its label, so even the log loss computed"
               " from the logits is infinite" if logits is not None
               and logits[i, y[i]] == -np.inf else "gives probability 0 to its label")
        notes.append(f"log loss is infinite: sample {i} {why} (written as null in JSON,"
                     " empty in CSV)")
    return scores


def _moved_options_refused(func):
    """``func`` with a clear error for the loader options that moved to
    :func:`calnotes.as_predictions` (the signature shown stays ``func``'s own)."""
    @functools.wraps(func)
    def checked(*args, **kwargs):
        moved = [name for name in kwargs if name in LOADER_OPTIONS]
        if moved:
            given = ", ".join(f"{name}={kwargs[name]!r}" for name in moved)
            raise TypeError(
                f"evaluate() does not take {', '.join(moved)}: the options that say how to read"
                " the input moved to calnotes.as_predictions, which reads every input form;"
                f" pass evaluate(calnotes.as_predictions(predictions, labels, {given}), ...)"
                " (the command line keeps its flags)")
        return func(*args, **kwargs)

    return checked


@dataclass(frozen=True)
class _Request:
    """The computing options of :func:`evaluate`, checked before anything is loaded."""

    requested: list | None
    ties: str
    references: bool
    smooth_ece: bool
    utility: bool
    utility_plan: tuple
    significance: bool
    draws: int
    bootstrap: int
    rng: object
    progress: bool | None


def _checked_request(*, n_bins, ties, references, smooth_ece, utility, utility_samples,
                     utility_delta, rng, significance, draws, bootstrap, progress) -> _Request:
    check_ties(ties)
    utility_plan = _check_utility_options(utility, utility_samples, utility_delta, rng)
    _check_significance_options(significance, draws, bootstrap)
    requested = _check_bin_request(n_bins)
    for name, value in (("references", references), ("smooth_ece", smooth_ece)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name}: expected True or False, got {value!r}")
    return _Request(requested, ties, bool(references), bool(smooth_ece), bool(utility),
                    utility_plan, bool(significance), int(draws), int(bootstrap), rng,
                    _check_progress(progress))


@_moved_options_refused
def evaluate(predictions, *, labels=None, X=None, n_bins=None, references: bool = True,
             ties: str = "average", smooth_ece: bool = True, utility: bool = True,
             utility_samples: int = DEFAULT_UTILITY_SAMPLES, utility_delta: float = 0.05,
             rng=0, significance: bool = True, draws: int = DEFAULT_DRAWS,
             bootstrap: int = DEFAULT_BOOTSTRAP, progress=None, out_of_core=None, out=None,
             force: bool = False) -> EvaluationReport:
    """Evaluate the calibration of a model's predictions.

    Parameters
    ----------
    predictions : Predictions, path-like, array_like, DataFrame or classifier
        What to evaluate, in any form that :func:`calnotes.as_predictions` reads: loaded
        :class:`calnotes.data.Predictions` (used as they are: validated once), a predictions
        file or folder (:func:`calnotes.data.load_predictions`), a probability matrix
        ``(n, k)`` or binary ``P(y = 1)`` vector in any array form (NumPy, a Series, torch /
        JAX / CuPy through ``__array__`` or ``__dlpack__``; a GPU tensor is copied to the host
        and bfloat16 widened, with a note), a pandas or polars DataFrame (its columns read as
        a CSV's), a fitted classifier with ``predict_proba`` (with ``X``), or a Dask array.
        The options that say how to read an input -- ``kind="logits"``, ``label_column``,
        ``prob_columns``, ``ignore_columns``, ``delimiter``, ``classes``, ``header``,
        ``renormalize``, ``force_logits``, ``allow_pickle``, ``split`` -- are
        :func:`calnotes.as_predictions`'s: ``evaluate(as_predictions(Z, y, kind="logits"))``
        (passed here, they raise a TypeError saying so).
    labels : path-like or array_like, optional
        The labels, when ``predictions`` is an array, a classifier, a ``.npy`` file or a
        DataFrame without a label column (an array, or a labels file: ``.npy`` or text).
    X : array_like, optional
        The samples a classifier ``predictions`` is evaluated on, ``predict_proba(X)``, as in
        ``evaluate(model, X=X_test, labels=y_test)``; its ``classes_`` name the classes.
    n_bins : int or sequence of int, optional
        Bin counts ``m`` (command line: ``--bins``); default :data:`DEFAULT_BINS`.  Checked
        before anything is loaded: positive integers (a 0-d integer array counts as one).
        A count above ``n`` gets the equal-width ECE rows only (empty bins are allowed there);
        its equal-mass rows (l1-, l2-QECE) are skipped with a note.
    references : bool, default True
        Compute the calibrated references.
    ties : {"average", "position"}, default "average"
        Tie rule of the equal-mass measures and their references (command line: ``--ties``):
        the exact mean over the orders of tied predictions, so the report does not depend on
        the row order, or eq. (1) with ties in input order (:mod:`calnotes.binning`).
    smooth_ece : bool, default True
        Add the SmoothECE rows (about 0.1-0.3 s whatever ``n``).
    utility : bool, default True
        Add utility calibration (command line: ``--no-utility`` skips it):
        ``EvaluationReport.utility`` and the figure ``utility_ecdf.png``.  Its cost grows
        like ``(2 M + 2 k) n log n``: with the default ``M`` it adds about 0.6 s for
        ``n = 10,000``, ``k = 10`` and 4.5 s for ``n = 50,000``, ``k = 100`` (two cores).
    utility_samples : int, default 500
        ``M``, the number of utilities sampled from each of ``U_lin`` and ``U_rank`` for the
        eCDF (command line: ``--utility-samples``); the band half-width is
        ``sqrt(ln(2/delta) / (2M))`` (0.061 for ``M = 500``, ``delta = 0.05``).
    utility_delta : float, default 0.05
        The DKW band holds with probability ``1 - delta`` (in ``(0, 1)``).
    rng : numpy.random.Generator or int, default 0
        Draws the sampled utilities (command line: ``--seed``): one generator,
        :func:`calnotes.utility.sample_linear` first, then
        :func:`calnotes.utility.sample_rank`.  The p-values and intervals use a stream of
        their own derived from it (seed ``s``: ``default_rng([s, 1])``), so they do not
        change when utility calibration is skipped.  An integer seed is recorded in the
        report.
    significance : bool, default True
        Add to every binned row the p-value of its value under the calibrated null and a
        bootstrap interval (not to the SmoothECE rows, whose replications would each rerun
        the bandwidth search) (command line: ``--no-significance`` skips both;
        :mod:`calnotes.significance`).  Row keys ``p_value``, ``p_value_method``
        (``"exact"``: the upper end of a certified bracket, also given as ``p_value_lower``;
        ``"bound"``: the bracket ``[0, b]`` of a Chernoff bound ``b <= 1e-15``
        (``calnotes.significance.tail_bound``: a clearly miscalibrated column, whose bins'
        exact laws are then not computed);
        ``"monte-carlo"`` with ``p_value_draws``, and a ``p_value_note`` on a one-column row
        whose exact bracket the grid would widen beyond
        ``calnotes.significance.exact_bracket_limit``, as with bins of a few rows),
        ``ci_lower``, ``ci_upper``, ``ci_level``
        and ``bootstrap``; ``ci_note`` instead of the interval where a bin holds fewer than
        ``calnotes._evalrows.MIN_ROWS_PER_BIN`` = 10 rows on average (below the coverage
        measured by :mod:`calnotes.coverage`).
    draws : int, default 200
        Monte Carlo replications of the null for rows without an exact law (command line:
        ``--draws``; at least 19); the p-value's resolution is ``1 / (draws + 1)``.
    bootstrap : int, default 200
        Bootstrap resamples for the intervals (command line: ``--bootstrap``; 0: none;
        otherwise at least ``calnotes.significance.MIN_BOOTSTRAP`` = 19).  The interval is of
        ``E[value]``, the mean of the measure over test sets of the same size from the same
        population (bias-corrected bootstrap; coverage in :mod:`calnotes.coverage`).
        Class-wise rows get them only when ``n k B`` is at most
        ``calnotes._evalrows.CLASSWISE_BOOTSTRAP_BUDGET`` (a note says when not).
    progress : bool or None, default None
        A progress bar on standard error over the whole computation (scores, binned rows,
        SmoothECE, utility calibration, writing; command line: ``--progress`` /
        ``--no-progress``).  ``None``: shown when standard error is a terminal and the input
        has at least :data:`PROGRESS_ENTRIES` probabilities (about a second of work or more).
    out_of_core : bool, optional
        Evaluate in bounded memory with Dask (:mod:`calnotes.scale`; the ``scale`` extra;
        command line: ``--out-of-core``).  Default: for a Dask array of predictions and for a
        folder of shards.  ``True`` also memory-maps a ``.npy`` file (or takes an in-memory
        array) in row chunks; ``False`` computes a Dask array into memory first.  Out of core
        the report has the scores and every binned row (equal-mass rows exact, eq. (1)) with
        exact l2 and folded-normal l1 references, but no p-values, intervals, SmoothECE,
        utility part or figures (notes say so).
    out : path-like, optional
        Folder for ``report.json``, ``report.csv``, ``reliability.png``, ``sharpness.png`` and
        ``utility_ecdf.png``; checked by :func:`check_out` before anything is loaded or
        computed, and written whole or not at all (:meth:`EvaluationReport.write`).
    force : bool, default False
        Replace the report files of an earlier run in ``out`` (those this run does not write
        are removed).

    Returns
    -------
    EvaluationReport
        ``scores["brier"]`` is the multi-class Brier loss, ``sum_r (p_r - 1[y = r])^2``; for
        ``k = 2`` twice scikit-learn's ``brier_score_loss``, which is
        ``scores["brier_binary"]``.  ``scores["log"]`` comes from the logits (log-sum-exp)
        when the predictions are logits.  For ``k = 2`` the rows include the usual binary
        measures on ``P(y = 1)`` (aggregation ``"binary"``).  ``timings`` gives the seconds
        each part took (:data:`TIMED_PARTS`).

    Raises
    ------
    TypeError, ValueError
        Bad arguments; the message names the argument (and the command-line flag).
    FileExistsError, NotADirectoryError, PermissionError
        ``out`` cannot take the report (before any computation).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=300)
    >>> y = (P.cumsum(axis=1) > rng.random((300, 1))).argmax(axis=1)  # calibrated by design
    >>> report = evaluate(P, labels=y, n_bins=[10])
    >>> row = report.rows[4]
    >>> row["measure"], row["aggregation"], row["reference_method"]
    ('l2-QECE', 'confidence', 'exact')
    >>> 0.2 < row["value"] / row["calibrated_reference"] < 5
    True

    A binary model also gets the usual ECE on ``P(y = 1)`` and scikit-learn's Brier score:

    >>> p = rng.uniform(size=200)
    >>> yb = (rng.uniform(size=200) < p).astype(int)
    >>> binary = evaluate(p, labels=yb, n_bins=10)
    >>> [r["aggregation"] for r in binary.rows if r["measure"] == "ECE"]
    ['confidence', 'classwise', 'binary']
    >>> round(binary.scores["brier"] / binary.scores["brier_binary"], 12)
    2.0

    Logits, a DataFrame's columns and the other loader options go through
    :func:`calnotes.as_predictions`:

    >>> from calnotes import as_predictions
    >>> Z = np.log(P)
    >>> from_logits = evaluate(as_predictions(Z, y, kind="logits"), n_bins=[10])
    >>> abs(from_logits.rows[4]["value"] - row["value"]) < 1e-12  # softmax(log P) = P to rounding
    True

    Utility calibration: the top-class utility's error is the binning-free counterpart of the
    confidence ECE, with the interval of confidences it comes from.

    >>> tce = report.utility["classes"][0]
    >>> tce["class"], tce["utility"], tce["lower"] <= tce["upper"], tce["uc"] < 0.1
    ('U_TCE', 'top class', True, True)
    >>> ecdf = report.utility["ecdf"]
    >>> ecdf["n_utilities"], [c["class"] for c in ecdf["classes"]]
    (500, ['U_lin', 'U_rank'])

    Each part's time, in seconds:

    >>> list(report.timings)
    ['loading', 'scores', 'binned_rows', 'references', 'p_values', 'intervals', 'smooth_ece', 'utility', 'total']
    """
    work = _Work()
    request = _checked_request(
        n_bins=n_bins, ties=ties, references=references, smooth_ece=smooth_ece,
        utility=utility, utility_samples=utility_samples, utility_delta=utility_delta, rng=rng,
        significance=significance, draws=draws, bootstrap=bootstrap, progress=progress)
    if out is not None:
        out = check_out(out, force=force)       # before anything is loaded or computed
    with work.part("loading"):
        pred = as_predictions(predictions, labels, X=X, out_of_core=out_of_core)
    with work:
        if isinstance(pred, ChunkedPredictions):
            report = _evaluate_out_of_core(pred, request, work)
        else:
            report = _evaluate_in_memory(pred, request, work, writing=out is not None)
        report.timings = work.timings()
        report._computed_seconds = report.timings["total"]
        return _written(report, out, force, work)


def _evaluate_in_memory(pred: Predictions, request: _Request, work: "_Work", *,
                        writing: bool = False) -> EvaluationReport:
    """The report of validated in-memory predictions: each part timed by ``work``."""
    from . import __version__

    y, P = pred.labels, pred.probs
    n, k = P.shape
    bins, notes = _bin_plan(request.requested, n)
    notes = list(pred.notes or ()) + notes
    aggregations = _AGGREGATIONS + ((_BINARY,) if k == 2 else ())
    specs = sum(1 for m in bins for name in _evalrows.MEASURES
                if not (_evalrows.measure_spec(name).binning == "mass" and m > n))
    units = {"scores": 1, "binned_rows": len(aggregations) * (1 + specs),
             "smooth_ece": (2 if k == 2 else 1) if request.smooth_ece else 0,
             "utility": 1 if request.utility else 0,
             "writing": len(REPORT_FILES) if writing else 0}
    work.show(_shows_progress(request.progress, n * k), units)
    with work.part("scores", units=units["scores"]):
        conf, top, correct = confidence_scores(y, P)
        scores = _scores(pred, y, P, notes)
    with work.part("binned_rows"):
        rows, more, probs = _binned_part(y, P, top, correct, conf, aggregations, bins, request,
                                         work)
    # the class-wise problem's sorted columns (P's columns, ascending): U_CWE reuses them
    presorted = next((prob.sc.values for prob in probs
                      if prob.aggregation == "classwise" and prob.sc.c == k), None)
    del probs
    notes += more
    if request.smooth_ece:
        with work.part("smooth_ece", units=units["smooth_ece"]):
            rows += _smooth_ece_rows(y, P, conf, correct)
        if request.significance:
            notes.append("SmoothECE rows have no p-value or interval: every replication would"
                         " rerun its bandwidth search (0.04 s at n = 50,000, up to 1 s on"
                         " degenerate inputs)")
    utility_part, ecdfs = None, None
    if request.utility:
        with work.part("utility", units=units["utility"]):
            utility_part, ecdfs = _utility_part(y, P, *request.utility_plan, notes,
                                                presorted=presorted)
    del presorted
    notes += _closing_notes(rows, request.ties)
    report = EvaluationReport(
        source=pred.source, n_samples=n, n_classes=k, accuracy=float(correct.mean()),
        mean_confidence=float(conf.mean()), scores=scores, rows=rows, notes=notes,
        calnotes_version=__version__, input_sha256=pred.input_sha256,
        labels_sha256=pred.labels_sha256, utility=utility_part,
        label_mapping=pred.label_mapping,
        class_columns=(None if pred.class_columns is None else list(pred.class_columns)))
    m_fig = min(bins[0], n)
    report._figure = lambda: _reliability_figure(y, P, m_fig, pred.source)
    report._sharpness_figure = lambda: _sharpness_figure(y, P, pred.source)
    if ecdfs is not None:
        report._utility_figure = lambda: _utility_figure(ecdfs, pred.source)
    return report


def _binned_part(y, P, top, correct, conf, aggregations, bins, request: _Request,
                 work: "_Work"):
    """Every binned row (value, reference, p-value, interval): ``(rows, notes, problems)``."""
    significance = request.significance
    probs = _evalrows.problems(y, P, top, correct, conf, aggregations)
    for prob in probs:
        prob.prepare(None)
        work.update(1)
    rows, notes = _evalrows.binned_rows(
        y, P, probs, bins, request.ties, references=request.references,
        draws=request.draws if significance else 0,
        bootstrap=request.bootstrap if significance else 0,
        # the generator also without p-values: a Monte Carlo reference draws from it
        rng=_significance_rng(request.rng), progress=work,
        budget=EXACT_L1_BUDGET)
    _mark_floors(rows)
    return rows, notes, probs


def _closing_notes(rows: list, ties: str) -> list:
    """The notes on the tie rule and on approximate references."""
    notes = []
    if ties == "position":
        notes.append("equal-mass measures with ties='position': tied predictions across a bin"
                     " boundary are split in input order, so these rows depend on the row order")
    if any(r["reference_method"] == "folded-normal" for r in rows):
        notes.append("references marked folded-normal are normal approximations: the exact"
                     f" Poisson-binomial sums would take more than {EXACT_L1_BUDGET:.0e}"
                     " operations (calnotes.evaluation.EXACT_L1_BUDGET)")
    return notes


def _evaluate_out_of_core(chunked: ChunkedPredictions, request: _Request,
                          work: "_Work") -> EvaluationReport:
    """The report of :func:`evaluate` computed out of core (:mod:`calnotes.scale`); the input
    files' snapshots (taken before opening them) are checked after the computation, which is
    when out of core has read the files."""
    from . import __version__

    try:
        n = _scale.n_rows(chunked.probs)
        if n == 0:
            raise ValueError("predictions: empty input (0 rows)")
        bins, notes = _bin_plan(request.requested, n)
        with work.part("binned_rows"):
            part = _scale.evaluate_dask(chunked.probs, chunked.labels, bins=bins,
                                        ties=request.ties, references=request.references)
    finally:
        hashes = chunked.verified_hashes()
    notes = ["computed out of core with Dask (calnotes.scale): equal-mass rows exact (eq. (1)),"
             " l1 references folded-normal"] + notes + part["notes"]
    skipped = {"significance": request.significance, "smooth_ece": request.smooth_ece,
               "utility": request.utility}
    for what, on in skipped.items():
        if on:
            notes.append({"significance": "p-values and bootstrap intervals are not computed"
                                          " out of core",
                          "smooth_ece": "SmoothECE is not computed out of core",
                          "utility": "utility calibration is not computed out of core"}[what])
    if request.ties == "position":
        notes.append("equal-mass measures with ties='position': tied predictions across a bin"
                     " boundary are split in input order, so these rows depend on the row order")
    report = EvaluationReport(
        source=chunked.source, n_samples=n, n_classes=part["k"], accuracy=part["accuracy"],
        mean_confidence=part["mean_confidence"], scores=part["scores"], rows=part["rows"],
        notes=notes, calnotes_version=__version__, input_sha256=hashes[0],
        labels_sha256=hashes[1])
    report._plottable = False
    notes.append("figures are not drawn out of core (they need the predictions in memory)")
    return report


def _written(report: EvaluationReport, out, force: bool, work=None) -> EvaluationReport:
    """``report``, written to ``out`` when given; a failed write keeps the computed report on
    the exception (``exc.report``)."""
    if out is not None:
        try:
            if work is not None:
                work.describe("writing")
            report.write(out, force=force)     # times itself: timings["writing"]
            if work is not None:
                work.update(len(REPORT_FILES))
        except OSError as exc:
            exc.report = report
            exc.add_note("the report was computed (the exception's .report); write it with"
                         " report.write(folder)")
            raise
    return report


_DRAWS_NAME = "draws (command line: --draws)"
_BOOT_NAME = "bootstrap (command line: --bootstrap)"


def _check_significance_options(significance, draws, bootstrap) -> None:
    if not isinstance(significance, (bool, np.bool_)):
        raise TypeError(f"significance (command line: --no-significance): expected True or"
                        f" False, got {significance!r}")
    for name, value, low in ((_DRAWS_NAME, draws, 19), (_BOOT_NAME, bootstrap, 0)):
        if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
                or value < low):
            raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
    if 0 < bootstrap < MIN_BOOTSTRAP:
        raise ValueError(f"{_BOOT_NAME}: expected 0 (no intervals) or at least {MIN_BOOTSTRAP}"
                         f" resamples, got {bootstrap}: a 90% interval's ends are the 5% and"
                         f" 95% quantiles of the resamples, which fewer than {MIN_BOOTSTRAP}"
                         " cannot place (calnotes.significance.MIN_BOOTSTRAP)")


def _significance_rng(rng) -> np.random.Generator:
    """The generator of the p-values and intervals: its own stream, so adding or skipping
    utility calibration does not change them (seed ``s`` -> ``default_rng([s, 1])``)."""
    if isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0])
    return np.random.default_rng([int(rng), 1])


#: Inputs of at least this many entries (n x k) get a progress bar by default when standard
#: error is a terminal (about a second of work); ``progress=True`` / ``False`` forces it on or
#: off.
PROGRESS_ENTRIES = 2_000_000
_PROGRESS_NAME = "progress (command line: --progress / --no-progress)"


def _check_progress(progress) -> bool | None:
    """``progress`` as ``True``, ``False`` or ``None`` (automatic), or a clear error."""
    if progress is None or isinstance(progress, (bool, np.bool_)):
        return None if progress is None else bool(progress)
    raise TypeError(f"{_PROGRESS_NAME}: expected True, False or None (automatic: a bar on a"
                    f" terminal for inputs of at least {PROGRESS_ENTRIES:,} probabilities),"
                    f" got {progress!r}")


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):        # replaced or closed
        return False


def _shows_progress(progress: bool | None, entries: int) -> bool:
    """Whether to show the bar: as asked, or (``None``) for a large input on a terminal."""
    if progress is not None:
        return progress
    return entries >= PROGRESS_ENTRIES and _stderr_is_terminal()


class _Work:
    """The clock and the progress bar of one :func:`evaluate` call.

    :meth:`part` times a part of the report: a part entered inside another one (as
    :func:`calnotes._evalrows.binned_rows` may do for ``"references"``, ``"p_values"``,
    ``"intervals"``) pauses the outer part's clock, so the parts never overlap and sum to at
    most the total.  The bar (tqdm, on standard error) counts work units over the whole
    computation; :meth:`update` advances it (``binned_rows`` calls it once per row), and a
    part given ``units`` advances it by those when it ends.
    """

    def __init__(self):
        self._start = time.perf_counter()
        self._seconds: dict = {}
        self._stack: list = []
        self._bar = None

    def show(self, show: bool, units: dict) -> None:
        """Open the bar over ``sum(units.values())`` work units when ``show``."""
        if show:
            from tqdm import tqdm

            self._bar = tqdm(total=sum(units.values()), desc="calnotes evaluate",
                             unit="step", leave=False)

    def update(self, units: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(units)

    def describe(self, name: str) -> None:
        if self._bar is not None:
            self._bar.set_description(f"calnotes evaluate: {name}", refresh=False)

    def part(self, name: str, units: int = 0) -> "_Part":
        """A context timing part ``name`` (its time adds up over repeated entries)."""
        return _Part(self, name, units)

    def timings(self) -> dict:
        """Seconds per part in the order of :data:`TIMED_PARTS`, then ``total``."""
        order = {name: i for i, name in enumerate(TIMED_PARTS)}
        out = {name: self._seconds[name]
               for name in sorted(self._seconds, key=lambda s: order.get(s, len(order)))}
        out["total"] = time.perf_counter() - self._start
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.close()
        return False


class _Part:
    def __init__(self, work: _Work, name: str, units: int):
        self.work, self.name, self.units = work, name, units

    def __enter__(self):
        now = time.perf_counter()
        stack = self.work._stack
        if stack:                                # pause the enclosing part
            outer = stack[-1]
            self.work._seconds[outer[0]] = self.work._seconds.get(outer[0], 0.0) + now - outer[1]
        stack.append([self.name, now])
        self.work.describe(self.name)
        return self.work

    def __exit__(self, *exc):
        now = time.perf_counter()
        stack = self.work._stack
        name, started = stack.pop()
        self.work._seconds[name] = self.work._seconds.get(name, 0.0) + now - started
        if stack:                                # the enclosing part resumes
            stack[-1][1] = now
            self.work.describe(stack[-1][0])
        if self.units:
            self.work.update(self.units)
        return False


def _smooth_ece_rows(y, P, conf, correct) -> list:
    """SmoothECE of the confidences (and of ``P(y = 1)`` for a binary model)."""
    from .kernel import smooth_ece as smooth

    pairs = [("confidence", correct.astype(np.int64), conf)]
    if P.shape[1] == 2:
        pairs.append((_BINARY, y, P[:, 1]))
    rows = []
    for aggregation, outcome, prob in pairs:
        value, sigma = smooth(outcome, prob, return_bandwidth=True)
        rows.append({"measure": "SmoothECE", "aggregation": aggregation, "binning": "kernel",
                     "n_bins": None, "value": float(value), "calibrated_reference": None,
                     "reference_method": "none", "bandwidth": float(sigma)})
    return rows


def _sharpness_figure(y, P, title):
    """004's calibration-sharpness diagram (Brier pair, Gaussian kernel, the library's default
    bandwidth 0.1 n^(-1/5) rather than the paper's fixed 0.05, which is not consistent), on all
    the predictions (the binned kernel sums need no subsampling, unlike the paper's App. D).
    Unlike App. D's figures, curve and band are drawn only between the smallest and largest
    top-label confidence (at least 1/k) and where the kernel reaches at least
    ``calnotes.plotting.MIN_KERNEL_SAMPLES`` (10) confidences, the band is clipped to [0, 1],
    and ``d_CAL`` and ``d_TOT`` are on their own scale (``d_TOT`` is the table's Brier (all
    classes))."""
    from matplotlib.figure import Figure

    from .plotting import MIN_KERNEL_SAMPLES, calibration_sharpness_diagram
    from .sharpness import calibration_sharpness

    from .plotting import legend_below

    result = calibration_sharpness(y, P, "brier")
    conf = P.max(axis=1)
    fig = Figure(figsize=(4.8, 4.8), layout="constrained")
    # drawn only over the observed confidences (>= 1/k) where the kernel reaches at least
    # MIN_KERNEL_SAMPLES of them; the band clipped to the unit square; d_CAL and d_TOT on
    # their own scale (d_TOT is the report's Brier (all classes))
    calibration_sharpness_diagram(result, ax=fig.subplots(),
                                  title=Path(title).name if title else None,
                                  support=(float(conf.min()), float(conf.max())),
                                  min_samples=MIN_KERNEL_SAMPLES, clip=True, scale=1)
    legend_below(fig, ncols=2)                        # off the data
    return fig


def _reliability_figure(y, P, m, title):
    from matplotlib.figure import Figure

    from .measures import confidence_scores
    from .plotting import corp_diagram, reliability_panels

    panels = 3 if P.shape[1] == 2 else 2
    fig = Figure(figsize=(7, 7.4), layout="constrained")   # 2 x 2 at the book's column width
    axes = fig.subplots(2, 2).ravel()
    reliability_panels(y, P, m, ax=axes[:panels])     # one legend, below the panels
    conf, _, correct = confidence_scores(y, P)
    # CORP: isotonic, ties pooled; its Brier score is the top-label one (binary, on the
    # confidence), not the report's multi-class "Brier (all classes)": named so, and its
    # MCB / DSC / UNC explained where they are shown
    corp_diagram(correct, conf, ax=axes[panels], score_name="top-label Brier", explain=True)
    axes[panels].set_title("confidence, CORP (isotonic)", fontsize=10)
    handles, labels = axes[panels].get_legend_handles_labels()
    axes[panels].get_legend().remove()                # its explanation would cover the curve
    if panels == 2:                                   # the free cell holds CORP's legend
        from .plotting import legend_in_axes

        legend_in_axes(axes[3], handles, labels, fontsize=9)
    else:                                             # k = 2: with the panels' legend, below
        from .plotting import legend_below

        below = fig.legends[0]
        handles = list(below.legend_handles) + handles
        labels = [t.get_text() for t in below.get_texts()] + labels
        below.remove()
        legend_below(fig, axes[:panels], handles=handles, labels=labels, ncols=3, fontsize=9)
    fig.suptitle(Path(title).name if title else "", fontsize=10)
    return fig


# -------------------------------------------------------------------------- utility calibration
_DIRECTION = {1: "too pessimistic", -1: "too optimistic", 0: "none"}
_UTILITY_DESCRIPTIONS = {
    "U_TCE": "top-class utility: 1 when the top class occurs (predicted utility max_j p_j)",
    "U_CWE": "class-wise utilities: 1 when class c occurs (predicted utility p_c), one per class",
    "U_topK": "top-K utilities: 1 when the label is among the K most probable classes,"
              " K = 1..k-1",
    "U_lin": "linear utilities u(p, e_j) = a_j, a uniform on the surface max_j |a_j| = 1",
    "U_rank": "rank utilities u(p, e_j) = theta_rank(j), theta uniform on the surface"
              " max_r |theta_r| = 1 and decreasing",
}
_SAMPLES_NAME = "utility_samples (command line: --utility-samples)"
_RNG_NAME = "rng (command line: --seed)"


def _check_utility_options(utility, samples, delta, rng):
    """The utility options, checked before anything is loaded: ``(M, delta, rng, seed)``."""
    if not isinstance(utility, (bool, np.bool_)):
        raise TypeError(f"utility (command line: --no-utility): expected True or False, got"
                        f" {utility!r}")
    if (isinstance(samples, (bool, np.bool_)) or not isinstance(samples, numbers.Integral)
            or samples < 1):
        raise ValueError(f"{_SAMPLES_NAME}: expected an integer >= 1, got {samples!r}")
    if (isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real)
            or not 0 < delta < 1):
        raise ValueError(f"utility_delta: expected a number in (0, 1), got {delta!r}")
    if isinstance(rng, np.random.Generator):
        seed = None
    elif isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"{_RNG_NAME}: expected a non-negative integer seed, got {rng!r}")
        seed = int(rng)
    else:
        raise TypeError(f"{_RNG_NAME}: expected a non-negative integer seed or a"
                        f" numpy.random.Generator, got {rng!r}")
    return int(samples), float(delta), rng, seed


def _uc_results(y, P, families, presorted=None) -> list:
    """:func:`calnotes.utility.utility_calibration` of every family (one result each), on
    :data:`_UC_WORKERS` threads, without validating ``(y, P)`` again.

    A task holds one or two ``(chunk, n)`` arrays (its other arrays are blocks of about 1 MB):
    ``chunk x n`` at most ``_UC_BUDGET``, and the threads' such arrays together at most
    ``_UC_MEMORY`` elements; one thread per ``_UC_THREAD_WORK`` utility-rows.  A task's
    matrix product reads all of ``P``, so chunks stay large (64 utilities, the default of
    :func:`~calnotes.utility.utility_calibration`, up to ``n = 131072``: about 15 flops per
    byte read with many classes).  The numbers do not depend
    on the number of threads; BLAS may round a product differently for another number of rows,
    so with the same chunk the report's numbers are ``utility_calibration``'s.  ``presorted``:
    the columns of ``P`` sorted, ``(k, n)``, if the caller has them (the class-wise utilities
    then sort nothing).
    """
    from .utility import _uc_families

    n = P.shape[0]
    total = sum(len(f) for f in families)
    chunk = max(2, min(64, _UC_BUDGET // n))
    workers = threads_for(total * n, _UC_THREAD_WORK,
                          min(_UC_WORKERS, _UC_MEMORY // (chunk * n), -(-total // chunk)))
    return _uc_families(y, P, families, chunk=chunk, workers=workers, presorted=presorted)


#: Level of the noise bound of utility calibration (:func:`_uc_noise_level`): a perfectly
#: calibrated model's UC exceeds the ``noise_level`` of one of its utilities with probability
#: at most this, over all the utilities of a class together.
UC_NOISE_ALPHA = 0.05


def _uc_noise_level(v: np.ndarray, n_utilities: int, alpha: float = UC_NOISE_ALPHA) -> float:
    """A level that ``UC`` of a utility with values in ``[0, 1]`` and predicted utilities
    ``v`` exceeds with probability at most ``alpha / n_utilities`` when the model is
    calibrated (outcomes drawn from its predictions).

    Given the predictions, ``D_i = u_i - v_i`` are independent, mean zero (calibration), at
    most 1, with variance at most ``v_i (1 - v_i)``; ``UC`` is the largest ``|sum of D_i|/n``
    over runs of samples in the order of ``v``, at most twice ``max_j |S_j| / n`` for the
    partial sums ``S_j`` in that order.  Freedman's (Bernstein's maximal) inequality gives
    ``P(max_j |S_j| >= t) <= 2 exp(-t^2 / (2 (V + t/3)))`` with ``V = sum v_i (1 - v_i)``;
    solved for ``t`` at level ``alpha / n_utilities`` (a union bound over the class's
    utilities), the level is ``2 t / n``.  Conservative: a calibrated model's UC is typically
    a third to a half of it.

    Examples
    --------
    >>> v = np.full(10_000, 0.5)
    >>> round(_uc_noise_level(v, 1), 4)      # 2 t / n, t = L/3 + sqrt(L^2/9 + 2 L V)
    0.0274
    """
    n = int(v.shape[0])
    V = float(np.sum(v * (1.0 - v)))
    L = math.log(2.0 * n_utilities / alpha)
    t = L / 3.0 + math.sqrt(L * L / 9.0 + 2.0 * L * V)
    return min(1.0, 2.0 * t / n)


def _predicted_utility(fam, index: int, P: np.ndarray) -> np.ndarray:
    """Predicted utility ``v`` of utility ``index`` of one of the fixed families: a class
    probability (``U_CWE``), the sum of the ``K`` largest probabilities (``U_TCE``,
    ``U_topK``: no full sort), else :meth:`UtilityFamily.predicted`."""
    theta = fam.params[index]
    if fam.kind == "linear":
        return P @ theta
    K = int(theta.sum())
    if fam.kind == "rank" and np.array_equal(theta, (np.arange(theta.size) < K).astype(float)):
        if K == 1:
            return P.max(axis=1)
        return -np.partition(-P, K - 1, axis=1)[:, :K].sum(axis=1)
    return fam.take(index).predicted(P)[0]


def _worst_entries(fam, res, k: int = 5, params: bool = False) -> list:
    index = {name: i for i, name in enumerate(fam.names)}
    entries = []
    for w in res.worst(k):
        entry = {"utility": w["utility"], "uc": w["uc"], "lower": _finite_or_none(w["lower"]),
                 "upper": _finite_or_none(w["upper"]), "mass": w["mass"], "sign": w["sign"],
                 "direction": _DIRECTION[w["sign"]]}
        if params:
            entry["a" if fam.kind == "linear" else "theta"] = \
                fam.params[index[w["utility"]]].tolist()
        entries.append(entry)
    return entries


def _utility_part(y, P, samples, delta, rng, seed, notes, presorted=None):
    """The ``utility`` dictionary of the report and the two :class:`UtilityECDF` objects.

    ``presorted``, optional: the columns of ``P`` sorted ascending, shape ``(k, n)`` (e.g. the
    class-wise problem's ``SortedColumns.values``), reused by ``U_CWE`` instead of sorting."""
    from ._validate import check_rng
    from .utility import (classwise, ecdf_from_errors, sample_linear, sample_rank, top_class,
                          top_k)

    k = P.shape[1]
    gen = check_rng(rng)
    fixed = [top_class(k), classwise(k), top_k(k)]
    sampled = [sample_linear(k, samples, rng=gen), sample_rank(k, samples, rng=gen)]
    results = _uc_results(y, P, fixed + sampled, presorted)
    classes = []
    for fam, res in zip(fixed, results[:3]):
        worst = _worst_entries(fam, res)
        index = fam.names.index(worst[0]["utility"])
        noise = _uc_noise_level(_predicted_utility(fam, index, P), len(fam))
        if fam.label == "U_CWE":            # each listed class against its own level (a
            for entry in worst:             # column of P: cheap), for the verdict's classes
                level = _uc_noise_level(P[:, fam.names.index(entry["utility"])], len(fam))
                entry.update(noise_level=level, beyond_noise=bool(entry["uc"] > level))
        classes.append({"class": fam.label, "description": _UTILITY_DESCRIPTIONS[fam.label],
                        "n_utilities": len(fam), **worst[0], "noise_level": noise,
                        "beyond_noise": bool(worst[0]["uc"] > noise), "worst": worst})
    ecdfs, sampled_entries = [], []
    for fam, res in zip(sampled, results[3:]):
        F = ecdf_from_errors(res.values, delta=delta, label=fam.label, result=res)
        ecdfs.append(F)
        sampled_entries.append({
            "class": fam.label, "description": _UTILITY_DESCRIPTIONS[fam.label],
            "median": float(F.quantile(0.5)), "q90": float(F.quantile(0.9)),
            "max": float(F.errors[-1]), "worst": _worst_entries(fam, res, params=True),
            "errors": F.errors.tolist()})
    if seed is None:
        notes.append("utility calibration: the utilities were drawn from the Generator passed"
                     " as rng (no seed recorded)")
    part = {
        "estimator": "Lemma 3.4 of paper 001: sup over intervals I of predicted utility of"
                     " |mean((realized - predicted utility) 1{predicted in I})|",
        "classes": classes,
        "ecdf": {"n_utilities": samples, "seed": seed, "delta": delta,
                 "halfwidth": ecdfs[0].halfwidth, "eps_stat": 0.0,
                 "band": "DKW band of the eCDF at level 1 - delta with eps_stat = 0: it covers"
                         " the CDF of the estimated errors on these samples over the sampling"
                         " prior, not the CDF of the true UC(f, u)",
                 "classes": sampled_entries},
    }
    return part, ecdfs


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


def _utility_figure(ecdfs, title):
    """eCDFs of the estimated utility calibration errors over ``U_lin`` and ``U_rank``, with the
    DKW band (:class:`calnotes.utility.UtilityECDF`, ``eps_stat = 0``)."""
    from matplotlib.figure import Figure

    from .plotting import PALETTE, legend_below

    fig = Figure(figsize=(7, 3.6), layout="constrained")          # the book's column width
    axes = fig.subplots(1, len(ecdfs), sharey=True)
    for ax, F in zip(np.atleast_1d(axes), ecdfs):
        top = float(F.errors[-1])
        xs = np.concatenate([[0.0], F.errors, [top * 1.05 if top > 0 else 1e-3]])
        band = f"DKW band ({1 - F.delta:.0%})"
        ax.fill_between(xs, F.lower(xs), F.upper(xs), step="post", alpha=0.25,
                        color=PALETTE[0], linewidth=0, label=band)
        ax.step(xs, F(xs), where="post", color=PALETTE[0], label="eCDF")
        median = float(F.quantile(0.5))
        ax.axvline(median, color="0.4", linestyle=":", linewidth=1, label="median")
        ax.set_xlim(left=0.0)
        ax.set_ylim(0.0, 1.0)
        ax.set_xlabel("estimated UC")
        name = {"U_lin": "linear utilities", "U_rank": "rank utilities"}.get(F.label, F.label)
        ax.set_title(f"{name}, M = {F.errors.size}\nmedian {median:.3g}, band"
                     f" \u00b1{F.halfwidth:.3f}", fontsize=10)
    np.atleast_1d(axes)[0].set_ylabel("fraction of sampled utilities")
    legend_below(fig, axes=np.atleast_1d(axes)[:1], ncols=3)     # off the data
    fig.suptitle(Path(title).name if title else "", fontsize=10)
    return fig
