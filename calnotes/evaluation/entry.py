"""The entry point :func:`calnotes.evaluate`: options checked before anything is loaded, the
input read, the report's parts computed in memory or out of core."""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._engine import rows as _evalrows
from .._engine import out_of_core as _scale
from .._engine.ties import check_ties
from ..data.loaders import Predictions
from .inputs import LOADER_OPTIONS, ChunkedPredictions, as_predictions
from ..core.measures import confidence_scores
from ..core.scores import _log_loss_from_logits_unchecked, _losses_at_labels
from .._engine.significance import DEFAULT_BOOTSTRAP, DEFAULT_DRAWS, MIN_BOOTSTRAP, MIN_DRAWS
from .figures import _reliability_figure, _sharpness_figure, _utility_figure
from .progress import _Work, _check_progress, _shows_progress
from .publish import REPORT_FILES, check_out
from .pvalues import _mark_floors
from .report import EvaluationReport, _BINARY
from .utility_part import DEFAULT_UTILITY_SAMPLES, _check_utility_options, _utility_part


#: Bin counts used when none are given: 15 (the common ECE default), 20 and 100.  As for
#: requested counts, one above the sample size ``n`` gets equal-width rows only (with a note);
#: when all three exceed ``n``, ``m = n`` is added.
DEFAULT_BINS = (15, 20, 100)


#: Work budget for an exact l1 reference of one plan, in the units of
#: :func:`calnotes._engine.poisson_binomial.work` (about a nanosecond of one core each; 3e8 is about
#: 0.3 s); the rule and its decisions on the benchmark grid: :data:`calnotes._engine.rows.EXACT_L1_BUDGET`.
EXACT_L1_BUDGET = _evalrows.EXACT_L1_BUDGET


_AGGREGATIONS = ("confidence", "classwise")


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

    For each bin count, the binned ECE and the l1-/l2-QECE, top-label and class-wise (and on
    ``P(y = 1)`` for two classes), each with its calibrated reference, p-value and interval;
    SmoothECE; the proper scores; utility calibration; and a verdict on top.  What each field
    of the report means: the book's page :doc:`/book/appendix/report_schema`.

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
        the row order, or eq. (1) with ties in input order (:mod:`calnotes.core.binning`).
    smooth_ece : bool, default True
        Add the SmoothECE rows.
    utility : bool, default True
        Add utility calibration (command line: ``--no-utility`` skips it):
        ``EvaluationReport.utility`` and the figure ``utility_ecdf.png``; its cost grows
        like ``(2 M + 2 k) n log n``.
    utility_samples : int, default 500
        ``M``, the number of utilities sampled from each of ``U_lin`` and ``U_rank`` for the
        eCDF (command line: ``--utility-samples``); the band half-width is
        ``sqrt(ln(2/delta) / (2M))`` (0.061 for ``M = 500``, ``delta = 0.05``).
    utility_delta : float, default 0.05
        The DKW band holds with probability ``1 - delta`` (in ``(0, 1)``).
    rng : numpy.random.Generator or int, default 0
        Draws the sampled utilities (command line: ``--seed``): one generator,
        :func:`calnotes.theory.utility.sample_linear` first, then
        :func:`calnotes.theory.utility.sample_rank`.  The p-values and intervals use a stream of
        their own derived from it (seed ``s``: ``default_rng([s, 1])``), so they do not
        change when utility calibration is skipped.  An integer seed is recorded in the
        report.
    significance : bool, default True
        Add to every binned row the p-value of its value under the calibrated null and a
        bootstrap interval (not to the SmoothECE rows, whose replications would each rerun
        the bandwidth search) (command line: ``--no-significance`` skips both;
        :mod:`calnotes._engine.significance`; the row keys are on the report-schema page).
    draws : int, default 200
        Monte Carlo replications of the null for rows without an exact law (command line:
        ``--draws``; at least ``calnotes._engine.significance.MIN_DRAWS`` = 19); the p-value's
        resolution is ``1 / (draws + 1)``.  Default
        ``calnotes._engine.significance.DEFAULT_DRAWS``.  It also decides which one-column rows keep
        their exact p-value: those whose exact bracket is predicted to be wider than
        ``1 / (2 sqrt(draws))`` (:func:`calnotes._engine.significance.exact_bracket_limit`) get a
        Monte Carlo one instead, so more draws send more of them to Monte Carlo.  Rows whose
        equal-mass bins are split by ties (``ties="average"``) are always Monte Carlo.
    bootstrap : int, default 200
        Bootstrap resamples for the intervals (command line: ``--bootstrap``; 0: none;
        otherwise at least ``calnotes._engine.significance.MIN_BOOTSTRAP`` = 19).  The interval is of
        ``E[value]``, the mean of the measure over test sets of the same size from the same
        population (bias-corrected bootstrap; coverage in :mod:`calnotes.evaluation.coverage`).
        Class-wise rows get them only when ``n k B`` is at most
        ``calnotes._engine.rows.CLASSWISE_BOOTSTRAP_BUDGET`` (a note says when not).
    progress : bool or None, default None
        A progress bar on standard error over the whole computation (scores, binned rows,
        SmoothECE, utility calibration, writing; command line: ``--progress`` /
        ``--no-progress``).  ``None``: shown when standard error is a terminal and the input
        has at least :data:`PROGRESS_ENTRIES` probabilities (about a second of work or more).
    out_of_core : bool, optional
        Evaluate in bounded memory with Dask (:mod:`calnotes._engine.out_of_core`; the ``scale`` extra;
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
        Its fields: :doc:`/book/appendix/report_schema`.

    Raises
    ------
    TypeError, ValueError
        Bad arguments; the message names the argument (and the command-line flag).
    FileExistsError, NotADirectoryError, PermissionError
        ``out`` cannot take the report (before any computation).

    Examples
    --------
    >>> import numpy as np
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
    from .. import __version__

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
    """The report of :func:`evaluate` computed out of core (:mod:`calnotes._engine.out_of_core`); the input
    files' snapshots (taken before opening them) are checked after the computation, which is
    when out of core has read the files."""
    from .. import __version__

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
    notes = ["computed out of core with Dask (calnotes._engine.out_of_core): equal-mass rows exact (eq. (1)),"
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
    for name, value, low in ((_DRAWS_NAME, draws, MIN_DRAWS), (_BOOT_NAME, bootstrap, 0)):
        if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
                or value < low):
            raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
    if 0 < bootstrap < MIN_BOOTSTRAP:
        raise ValueError(f"{_BOOT_NAME}: expected 0 (no intervals) or at least {MIN_BOOTSTRAP}"
                         f" resamples, got {bootstrap}: a 90% interval's ends are the 5% and"
                         f" 95% quantiles of the resamples, which fewer than {MIN_BOOTSTRAP}"
                         " cannot place (calnotes._engine.significance.MIN_BOOTSTRAP)")


def _significance_rng(rng) -> np.random.Generator:
    """The generator of the p-values and intervals: its own stream, so adding or skipping
    utility calibration does not change them (seed ``s`` -> ``default_rng([s, 1])``)."""
    if isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0])
    return np.random.default_rng([int(rng), 1])


def _smooth_ece_rows(y, P, conf, correct) -> list:
    """SmoothECE of the confidences (and of ``P(y = 1)`` for a binary model)."""
    from ..core.kernel import smooth_ece as smooth

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
