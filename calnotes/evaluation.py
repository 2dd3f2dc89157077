"""Evaluate a model's predictions: accuracy, proper scores, binned measures, calibrated references.

:func:`evaluate` is what ``calnotes evaluate PREDICTIONS`` runs.  For each bin count ``m`` it
computes, with both aggregations of the truthfulness paper (confidence, Def 2.8; class-wise,
Def 2.7):

* the equal-width binned ECE (the measure of Guo et al. and of the recalibration paper's tables),
* the l1- and l2-QECE of the truthfulness paper (Def 2.5, equal-mass bins),

and next to each value its **calibrated reference**: the expected value the same measure would
take if the model's predictions were exactly right (outcomes drawn from the predictions).  A
binned measure is not zero for a calibrated model; the reference says how large it is for *these*
predictions at *this* sample size, so a value can be read as "above what calibration alone
explains" or not.  The references are exact (Part II, :func:`calnotes.expected_qece`,
:func:`calnotes.expected_binned_ece`), except for l1 measures on very large inputs, where the
exact Poisson-binomial sums would be slow: l1-QECE then uses the folded-normal approximation
and the equal-width ECE the same approximation on its bins
(:func:`calnotes.folded_normal_l1_approximation`), flagged ``"folded-normal"`` in the report.

Chapter "Evaluate your own model" (``book/practice/evaluate``).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._validate import check_n_bins
from .data.loaders import Predictions, load_predictions
from .expectation import (_width_bin_sums, expected_binned_ece, expected_qece,
                          folded_normal_l1_approximation)
from .measures import binned_ece, classwise, confidence, confidence_scores, l1_qece, l2_qece
from .scores import brier_loss, log_loss, spherical_loss, zero_one_loss

__all__ = ["DEFAULT_BINS", "EvaluationReport", "evaluate", "REPORT_FILES"]

#: Bin counts used when none are given: 15 (the common ECE default), 20 and 100.  Bin counts
#: larger than the sample size are dropped from the default (and are an error when requested).
DEFAULT_BINS = (15, 20, 100)
#: Files :meth:`EvaluationReport.write` creates in the output folder.
REPORT_FILES = ("report.json", "report.csv", "reliability.png")
#: Work budget for an exact l1 reference, in units of columns x bins x (largest bin)^2 (an upper
#: bound of the Poisson-binomial convolutions' work; 3e9 units took about 1 s on one core).
EXACT_L1_BUDGET = 3e9

_MEASURES = (
    # name, p, binning
    ("ECE", 1, "width"),
    ("l1-QECE", 1, "mass"),
    ("l2-QECE", 2, "mass"),
)
_AGGREGATIONS = ("confidence", "classwise")


@dataclass
class EvaluationReport:
    """The result of :func:`evaluate`.

    Attributes
    ----------
    source : str
    n_samples, n_classes : int
    accuracy, mean_confidence : float
    scores : dict
        Mean proper losses: ``log``, ``brier``, ``spherical``, ``zero_one`` (``log`` is
        ``inf`` when some label got probability 0).
    rows : list of dict
        One per (measure, aggregation, bin count): ``measure``, ``aggregation``, ``binning``,
        ``n_bins``, ``value``, ``calibrated_reference``, ``reference_method`` (``"exact"``,
        ``"folded-normal"``, or ``"skipped"`` when ``references=False``).
    notes : list of str
    """

    source: str
    n_samples: int
    n_classes: int
    accuracy: float
    mean_confidence: float
    scores: dict
    rows: list
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready dictionary (non-finite numbers become ``None``, explained in ``notes``)."""
        return {
            "source": self.source,
            "n_samples": self.n_samples,
            "n_classes": self.n_classes,
            "accuracy": _finite_or_none(self.accuracy),
            "mean_confidence": _finite_or_none(self.mean_confidence),
            "scores": {k: _finite_or_none(v) for k, v in self.scores.items()},
            "measures": [{k: (_finite_or_none(v) if isinstance(v, float) else v)
                          for k, v in row.items()} for row in self.rows],
            "notes": list(self.notes),
        }

    def to_csv(self) -> str:
        """Long-format CSV: one line per score and per measure row."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["quantity", "aggregation", "binning", "n_bins", "value",
                         "calibrated_reference", "reference_method"])
        writer.writerow(["accuracy", "", "", "", _fmt_csv(self.accuracy), "", ""])
        writer.writerow(["mean_confidence", "", "", "", _fmt_csv(self.mean_confidence), "", ""])
        for name, value in self.scores.items():
            writer.writerow([f"{name}_loss", "", "", "", _fmt_csv(value), "", ""])
        for row in self.rows:
            writer.writerow([row["measure"], row["aggregation"], row["binning"], row["n_bins"],
                             _fmt_csv(row["value"]), _fmt_csv(row["calibrated_reference"]),
                             row["reference_method"]])
        return buf.getvalue()

    def format_table(self) -> str:
        """The report as readable plain text (what the command line prints)."""
        s = self.scores
        lines = [
            f"{self.source}: n = {self.n_samples}, k = {self.n_classes}",
            f"accuracy {self.accuracy:.4f}   mean confidence {self.mean_confidence:.4f}",
            "mean proper losses: "
            f"log {s['log']:.4f}   Brier {s['brier']:.4f}   spherical {s['spherical']:.4f}"
            f"   0-1 {s['zero_one']:.4f}",
            "",
            f"{'measure':<9} {'aggregation':<11} {'m':>5} {'value':>9} {'calibrated':>10}"
            f" {'ratio':>7}  reference",
        ]
        for row in self.rows:
            ref = row["calibrated_reference"]
            ratio = row["value"] / ref if ref else math.nan
            ref_text = f"{ref:10.4g}" if ref is not None else f"{'-':>10}"
            lines.append(f"{row['measure']:<9} {row['aggregation']:<11} {row['n_bins']:>5}"
                         f" {row['value']:9.4g} {ref_text} {ratio:7.2f}  {row['reference_method']}")
        lines.append("")
        lines.append("calibrated = expected value of the measure if outcomes were drawn from these"
                     " predictions (a perfectly calibrated model); ratio = value / calibrated.")
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format_table()

    def write(self, out, *, force: bool = False, figure: bool = True) -> list[Path]:
        """Write ``report.json``, ``report.csv`` and ``reliability.png`` into folder ``out``.

        Nothing is written if any of the files exists, unless ``force=True``.
        """
        out = Path(out)
        names = REPORT_FILES if figure else REPORT_FILES[:2]
        targets = [out / name for name in names]
        existing = [str(t) for t in targets if t.exists()]
        if existing and not force:
            raise FileExistsError(f"{', '.join(existing)} exist(s); pass force=True (command"
                                  " line: --force) to overwrite")
        if out.exists() and not out.is_dir():
            raise NotADirectoryError(f"out: {out} exists and is not a folder")
        out.mkdir(parents=True, exist_ok=True)
        targets[0].write_text(json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n")
        targets[1].write_text(self.to_csv())
        if figure:
            self._figure().savefig(targets[2], dpi=120)
        return targets

    def _figure(self):
        raise RuntimeError("this report holds no predictions to plot")  # replaced in evaluate


def _finite_or_none(value):
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _fmt_csv(value) -> str:
    if value is None:
        return ""
    return repr(float(value))


def _as_predictions(predictions, labels, kind, allow_pickle, split) -> Predictions:
    if kind not in (None, "probs", "logits"):
        raise ValueError(f"kind: expected 'probs' or 'logits', got {kind!r}")
    if isinstance(predictions, Predictions):
        if labels is not None:
            raise ValueError("labels: a Predictions object holds its own labels")
        return predictions
    if isinstance(predictions, (str, Path)):
        return load_predictions(predictions, labels=labels, kind=kind,
                                allow_pickle=allow_pickle, split=split)
    if labels is None:
        raise ValueError("labels: required when predictions is an array")
    if kind == "logits":
        return Predictions.from_arrays(labels, logits=predictions)
    return Predictions.from_arrays(labels, predictions)


def _bin_counts(n_bins, n: int) -> tuple[list[int], list[str]]:
    notes = []
    if n_bins is None:
        chosen = [m for m in DEFAULT_BINS if m <= n]
        dropped = [m for m in DEFAULT_BINS if m > n]
        if dropped:
            notes.append(f"default bin counts {dropped} exceed n = {n} and were skipped")
        if not chosen:
            chosen = [n]
        return chosen, notes
    if isinstance(n_bins, (int, np.integer)) and not isinstance(n_bins, bool):
        n_bins = [n_bins]
    chosen = []
    for m in n_bins:
        m = check_n_bins(m, n, name="n_bins")
        if m not in chosen:
            chosen.append(m)
    if not chosen:
        raise ValueError("n_bins: give at least one bin count")
    return chosen, notes


def _l1_cost(P: np.ndarray, top: np.ndarray, m: int, binning: str, aggregation: str) -> float:
    """Work units of the exact l1 reference: columns x bins x (largest bin)^2."""
    n, k = P.shape
    if binning == "mass":
        largest = -(-n // m)
        return (k if aggregation == "classwise" else 1) * m * largest ** 2
    cols = P if aggregation == "classwise" else P[np.arange(n), top][:, None]
    (counts,) = _width_bin_sums(cols, m)
    return counts.shape[0] * m * float(counts.max()) ** 2


def _reference(P, top, m, p, binning, aggregation):
    """The calibrated reference of one row and how it was computed."""
    if p == 2:
        return expected_qece(P, P, m, p=2, aggregation=aggregation), "exact"
    if _l1_cost(P, top, m, binning, aggregation) <= EXACT_L1_BUDGET:
        if binning == "mass":
            return expected_qece(P, P, m, p=1, aggregation=aggregation), "exact"
        return expected_binned_ece(P, P, m, binning="width", aggregation=aggregation), "exact"
    return (folded_normal_l1_approximation(P, P, m, aggregation=aggregation, binning=binning),
            "folded-normal")


def _value(y, P, m, p, binning, aggregation) -> float:
    if binning == "mass":
        measure = l2_qece if p == 2 else l1_qece
        kwargs = {"n_bins": m}
    else:
        measure, kwargs = binned_ece, {"n_bins": m, "p": p, "binning": "width"}
    lift = confidence if aggregation == "confidence" else classwise
    return float(lift(measure, y, P, **kwargs))


def evaluate(predictions, *, labels=None, kind: str | None = None, n_bins=None,
             references: bool = True, out=None, force: bool = False,
             allow_pickle: bool = False, split: str = "test") -> EvaluationReport:
    """Evaluate the calibration of a model's predictions.

    Parameters
    ----------
    predictions : str, path-like, :class:`calnotes.data.Predictions` or array_like
        A predictions file (see :func:`calnotes.data.load_predictions`), loaded predictions, or
        a probability (or, with ``kind="logits"``, logit) matrix of shape ``(n, k)``.
    labels : path-like or array_like, optional
        The labels file of a ``.npy`` pair, or the label array when ``predictions`` is an array.
    kind : {"probs", "logits"}, optional
        What a ``.npy``/CSV file or an array holds (default ``"probs"``).
    n_bins : int or sequence of int, optional
        Bin counts ``m``; default :data:`DEFAULT_BINS` (those not larger than ``n``).
    references : bool, default True
        Compute the calibrated references.
    out : path-like, optional
        Folder for ``report.json``, ``report.csv`` and ``reliability.png``.
    force : bool, default False
        Overwrite existing report files in ``out``.
    allow_pickle : bool, default False
        Allow a NN_calibration pickle file (only for files you trust).
    split : {"test", "val"}
        Split of a NN_calibration pickle.

    Returns
    -------
    EvaluationReport

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
    """
    pred = _as_predictions(predictions, labels, kind, allow_pickle, split)
    y, P = pred.labels, pred.probs
    n = pred.n_samples
    bins, notes = _bin_counts(n_bins, n)
    conf, top, correct = confidence_scores(y, P)
    with np.errstate(divide="ignore"):
        scores = {
            "log": float(log_loss(y, P)),
            "brier": float(brier_loss(y, P)),
            "spherical": float(spherical_loss(y, P)),
            "zero_one": float(zero_one_loss(y, P)),
        }
    if not math.isfinite(scores["log"]):
        zero = int(np.flatnonzero(P[np.arange(n), y] == 0.0)[0])
        notes.append(f"log loss is infinite: sample {zero} gives probability 0 to its label"
                     " (written as null in JSON, empty in CSV)")
    rows = []
    for m in bins:
        for name, p, binning in _MEASURES:
            for aggregation in _AGGREGATIONS:
                value = _value(y, P, m, p, binning, aggregation)
                if references:
                    ref, method = _reference(P, top, m, p, binning, aggregation)
                else:
                    ref, method = None, "skipped"
                rows.append({"measure": name, "aggregation": aggregation, "binning": binning,
                             "n_bins": m, "value": value,
                             "calibrated_reference": None if ref is None else float(ref),
                             "reference_method": method})
    if any(r["reference_method"] == "folded-normal" for r in rows):
        notes.append("references marked folded-normal are normal approximations: the exact"
                     f" Poisson-binomial sums would take more than {EXACT_L1_BUDGET:.0e}"
                     " operations (calnotes.evaluation.EXACT_L1_BUDGET)")
    report = EvaluationReport(source=pred.source, n_samples=n, n_classes=pred.n_classes,
                              accuracy=float(correct.mean()), mean_confidence=float(conf.mean()),
                              scores=scores, rows=rows, notes=notes)
    report._figure = lambda: _reliability_figure(conf, correct, bins[0], pred.source)
    if out is not None:
        report.write(out, force=force)
    return report


def _reliability_figure(conf, correct, m, title):
    from matplotlib.figure import Figure

    from .plotting import reliability_diagram

    fig = Figure(figsize=(9, 4.2), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, binning in zip(axes, ("width", "mass")):
        reliability_diagram(correct, conf, m, binning=binning, ax=ax)
        ax.set_title(f"confidence, {m} equal-{binning} bins", fontsize=10)
    fig.suptitle(Path(title).name if title else "", fontsize=10)
    return fig
