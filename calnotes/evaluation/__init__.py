"""Evaluate a model's predictions: :func:`evaluate` and the :class:`EvaluationReport` it returns.

What the report holds, row by row and field by field, is on the book's page
:doc:`/book/appendix/report_schema`; the chapter "Evaluate your own model"
(``book/practice/evaluate``) reads one.  The package is split by job:

``entry``
    :func:`evaluate`: options checked before anything is loaded, the input read
    (:func:`calnotes.as_predictions`), the parts computed in memory or out of core.
``report``
    :class:`EvaluationReport`: the printed table, CSV and JSON, and :data:`LEGEND`.
``verdict``
    The report's first lines (:func:`verdict_lines`): calibrated or not beyond chance, where,
    the usual next step.
``pvalues``
    p-values as text (:func:`format_p_value`) and the one p-value of a whole report
    (:func:`p_value_summary`, Holm).
``publish``
    The output folder (:func:`check_out`) and files written whole under a lock.
``progress``
    The clock of each part (:data:`TIMED_PARTS`) and the progress bar.
``figures``
    ``reliability.png``, ``sharpness.png`` and ``utility_ecdf.png``.
``utility_part``
    Utility calibration for the report (the utility paper's Lemma 3.4 and eCDF).

The numbers come from the private engine (``calnotes._engine.rows`` and the modules it uses);
this package reads options and writes reports.
"""

from .entry import DEFAULT_BINS, EXACT_L1_BUDGET, evaluate
from .progress import PROGRESS_ENTRIES, TIMED_PARTS
from .publish import REPORT_FILES, STALE_SECONDS, check_out
from .pvalues import format_p_value, p_value_summary
from .report import LEGEND, EvaluationReport
from .utility_part import DEFAULT_UTILITY_SAMPLES, UC_NOISE_ALPHA
from .verdict import RECALIBRATION_CHAPTER, VERDICT_ALPHA, verdict_lines

__all__ = ["DEFAULT_BINS", "DEFAULT_UTILITY_SAMPLES", "EvaluationReport", "evaluate", "TIMED_PARTS",
           "check_out", "REPORT_FILES", "LEGEND", "format_p_value", "p_value_summary",
           "verdict_lines", "VERDICT_ALPHA", "RECALIBRATION_CHAPTER", "UC_NOISE_ALPHA",
           "PROGRESS_ENTRIES", "EXACT_L1_BUDGET", "STALE_SECONDS"]
