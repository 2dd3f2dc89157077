"""Read and write a model's predictions: ``.npz``, ``.npy`` pairs, CSV, and (opt-in) pickle.

Formats
-------
``.npz``
    Arrays ``labels`` (also read as ``y_true``, ``label_ids``, ...) (shape ``(n,)``; ``(n, 1)``
    is squeezed) and exactly one of ``probs`` (also ``y_prob``; Hugging Face's
    ``predictions`` as probabilities when they are, else with ``kind``)
    (``(n, k)`` rows summing to one, or ``(n,)`` / ``(n, 1)`` binary ``P(y = 1)``) or ``logits``
    (``(n, k)`` real; ``(n,)`` / ``(n, 1)`` is one binary logit, read as ``[0, z]``, i.e. a
    sigmoid).  Written by :func:`save_predictions`.
``.npy`` pair
    The predictions in one file and the labels in another (``labels=`` argument; ``--labels`` on
    the command line).  ``kind="probs"`` (default) or ``"logits"`` says what the matrix holds.
CSV (``.csv``, ``.tsv``, ``.txt``, and any of them gzipped as ``.gz``)
    UTF-8 text (a byte-order mark, as Excel writes, is fine; UTF-16 with a byte-order mark is
    decoded too; other encodings are refused with the file named); gzip is recognised by its
    content, whatever the file's name.  Lines starting with ``#``
    before the header and after the data are skipped.  The separator is ``,``, ``;``, a tab or
    ``|``, taken from the header line (or from Excel's ``sep=;`` first line) unless
    ``delimiter`` is given.  **Decimal commas** (``0,4``, as European
    locales write them with ``;`` separators) are read as decimal points, and **percent
    signs** (``75%``, Excel's ``75,0 %``: every cell of the column) as percentages divided by
    100, with a note.  Columns without a name whose every cell is empty (trailing separators)
    are dropped.  A ``#`` line inside the data is an error that names its line; a first line of
    numbers (no header) is refused with the ``header=False`` hint.
    A header row names the columns (``header=False`` numbers them ``0, 1, ...``).  The label
    column is ``label_column`` or the one column named ``label``, ``labels``, ``y``,
    ``y_true``, ``target`` or ``class`` (any case); or the labels come from a separate file or
    array (``labels=``).  The class columns are ``prob_columns`` (in class order) or else every
    other column except: a pandas index column (the first column with an empty header,
    ``Unnamed: N`` anywhere, pyarrow's ``__index_level_N__``), a column numbering the rows
    (``0..n-1`` for ``n >= 3``, ``1..n`` for ``n >= 2``: a named index), columns named
    like identifiers (``id``, ``index``, ``image``, ``file``, ``filename``, ``path``, ``name``,
    ``sample``, ``sample_id``, ...; :data:`ID_COLUMNS`) and ``ignore_columns``; each skipped
    column is named in :attr:`Predictions.notes`, and the columns read are kept as
    :attr:`Predictions.class_columns`.  A class column of whole numbers among columns that
    are not (a ``pred`` column of predicted classes) is refused naming it, never hinted as
    logits.  A single class column is ``P(y = 1)`` of a
    binary problem (or its logit with ``kind="logits"``).  Every error names the file line
    (the header is line 1) and the column.
Parquet (``.parquet``) and Feather (``.feather``, Arrow IPC)
    Read through pyarrow (or pandas) when installed -- neither is a dependency, and they are
    imported only for such a file -- and then exactly as a CSV with its header (the label and
    class columns, skipped columns, string labels).  A pandas DataFrame is read the same way
    (:meth:`Predictions.from_frame`, and :func:`calnotes.evaluate`).
pickle
    The format of the NN_calibration logit files (Kull et al.'s and Guo et al.'s
    experiments): ``((logits_val, labels_val), (logits_test, labels_test))``.  Unpickling a
    file can run arbitrary code, so it is refused unless the caller passes
    ``allow_pickle=True`` (``--allow-pickle``).

Labels
    Integers ``0..k-1``.  Strings are mapped to classes through ``classes`` (the class names
    in column order; ``--classes``), or, in a CSV, through the class columns' names when every
    label is one of them (``cat`` names the column ``cat``, ``prob_cat`` or ``cat_prob``), and
    otherwise, for two classes only, in sorted order -- scikit-learn's ``classes_``, the column
    order of ``predict_proba`` -- (with a single ``P(y = 1)`` column: the column is the second
    label's, or the one it is named after).  With more than two classes, labels that are not
    the columns' names are refused rather than guessed: a sorted-order guess gives wrong
    numbers silently whenever the columns are in another order.  Fewer or more
    distinct labels than columns, or labels of which only some are column names, are refused
    (pass ``classes``).  A missing label (``NA``, an empty cell) is refused naming its line.
    In a CSV whose class columns are numbered in their names (``p1..pk``,
    ``prob_1..prob_k``, ``class_1..class_k``, ``1..k``), numeric labels are those numbers: label
    ``j`` is the column named ``j``; labels that fit neither those numbers nor the column
    positions ``0..k-1`` are refused.  ``True``/``False`` are 1/0 in a binary problem.
    ``classes`` also maps numbers by their text, so ``classes=["1", "2", "3"]`` reads 1-based
    labels.  Every mapping is noted and kept as :attr:`Predictions.label_mapping` (the
    evaluation report prints and saves it).  Labels that never use 0 but use 1 get a note
    (1-based?); labels out of range by exactly that get a hint, and so do -1/+1 (SVM) and -100
    (Hugging Face's ignored tokens).  A separate labels file is
    ``.npy`` or text with one label per line (an optional header line ``label``), or a CSV with
    a label column.

Checks (see :mod:`calnotes._validate`)
    Probabilities must lie in ``[0, 1]`` with rows summing to one; a failure says whether the
    numbers look rounded (``renormalize=True``; the message names the row furthest from one),
    like percentages, or like logits (never for whole numbers, nor for values off ``[0, 1]``
    by less than 0.02, which ``renormalize`` clips).  Logits
    (``kind="logits"``) that look like probabilities -- a matrix on the simplex, rounded
    probabilities, percentages, or one column (``(n,)``, ``(n, 1)``, a single CSV column) all
    in ``[0, 1]`` -- are refused unless ``force_logits=True`` (which applies to logits only);
    ``-inf`` logits (masked classes) are allowed.  float16 probabilities, whose rounding moves
    a row sum by up to ``k`` times float16's epsilon, are divided by their row sums (a note).
    A single column of ones (a one-class softmax) is refused.  A matrix whose
    shape is the transpose of the labels' length is diagnosed as such.

Every other file is read with ``allow_pickle=False``.  The file's content decides the format
check: a pickle (any protocol) renamed to ``.npz`` is still refused as a pickle.

Only regular files are read (``check_regular_file``, ``open_regular``): a FIFO, a pipe
(``<(...)``), a device such as ``/dev/zero`` (or a link to one) or a socket is refused naming
the argument before anything reads it.  An array is refused before it is allocated when its
``.npy`` header (of a ``.npy`` file or of an ``.npz`` member, read with the zip directory
without decompressing the data) promises more than :data:`MAX_ARRAY_BYTES` or more than the
file holds; a gzipped text file is decompressed up to the same limit.

Used by :func:`calnotes.evaluate` and the chapter "Evaluate your own model".
"""

from __future__ import annotations

import codecs
import csv
import dataclasses
import gzip
import io
import os
import pickle
import pickletools
import re
import stat
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import (_as_array_and_dtype, _check_label_precision, _eps, as_array,
                         check_labels, check_probabilities, diagnose_probabilities,
                         looks_like_probabilities, renormalize_rows, row_sum_tolerance)

__all__ = ["Predictions", "load_predictions", "save_predictions", "LABEL_COLUMNS",
           "ID_COLUMNS"]

#: Accepted names of the label column of a CSV file (case-insensitive).
LABEL_COLUMNS = ("label", "labels", "y", "y_true", "target", "class")
#: Names of identifier columns that a CSV reader skips (case-insensitive), with a note.
ID_COLUMNS = ("id", "ids", "index", "idx", "image", "image_id", "img", "file", "filename",
              "file_name", "path", "filepath", "name", "sample", "sample_id", "uid", "uuid",
              "key", "row", "row_id")
_KINDS = ("probs", "logits")
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"
_CSV_SUFFIXES = (".csv", ".tsv", ".txt")
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+(?:[eE][+-]?\d+)?\s*$")
#: Largest file that is parsed opcode by opcode to recognise an old-protocol pickle.
_PICKLE_SNIFF_BYTES = 1 << 26


@dataclass(frozen=True)
class Predictions:
    """A model's predictions on labelled samples.

    Attributes
    ----------
    labels : numpy.ndarray of int64, shape (n,)
    probs : numpy.ndarray of float64, shape (n, k)
        Row-stochastic; a binary ``P(y = 1)`` vector is stored as ``[1 - p, p]``.
    logits : numpy.ndarray or None
        The logits when the file held logits (``probs`` is then their softmax); binary logits
        ``z`` are stored as ``[0, z]``.
    source : str
        Where the predictions came from (a path, or a short description).
    notes : tuple of str
        What the loader did that the numbers do not show: skipped columns, mapped labels,
        renormalized rows, a suspicion of 1-based labels.
    label_mapping : dict or None
        How the labels in the input became class indices, ``{original label (text): class
        index}``, when they were not already indices ``0..k-1`` (names, ``True``/``False``,
        numbers ``1..k`` named by the columns); ``None`` otherwise.  Reported by
        :func:`calnotes.evaluate` (``EvaluationReport.label_mapping``).
    class_columns : tuple of str or None
        The names of the columns read as classes, in class order (a CSV's header, a
        DataFrame's or a Parquet/Feather file's columns; one name for a binary ``P(y = 1)``
        column); ``None`` for arrays, whose classes are the columns in order.  Reported by
        :func:`calnotes.evaluate` (``EvaluationReport.class_columns``).
    input_sha256, labels_sha256 : str or None
        SHA-256 of the predictions file and of a separate labels file, of the bytes that were
        loaded, when :func:`calnotes.as_predictions` read them (``None`` otherwise).
        Reported by :func:`calnotes.evaluate`.
    """

    labels: np.ndarray
    probs: np.ndarray
    logits: np.ndarray | None = None
    source: str = "arrays"
    notes: tuple = ()
    label_mapping: dict | None = None
    class_columns: tuple | None = None
    input_sha256: str | None = None
    labels_sha256: str | None = None

    @property
    def n_samples(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.probs.shape[1])

    @classmethod
    def from_arrays(cls, labels, probs=None, *, logits=None, source: str = "arrays",
                    renormalize=False, force_logits: bool = False, classes=None,
                    column_names=None):
        """Validate arrays and build :class:`Predictions` (exactly one of probs / logits).

        Parameters
        ----------
        labels : array_like, shape (n,) or (n, 1)
            Class indices, or class names with ``classes`` (or ``column_names``).
        probs : array_like, shape (n, k), (n,) or (n, 1)
            Class probabilities; a vector (or one column) is binary ``P(y = 1)``.
        logits : array_like, shape (n, k), (n,) or (n, 1)
            Logits; a vector (or one column) is the binary logit of class 1.
        source : str
            Named in messages.
        renormalize : bool or float, default False
            Divide rows summing to one within a tolerance (``True``: 0.02), or percentages, by
            their sums (:func:`calnotes._validate.renormalize_rows`), with a note.
        force_logits : bool, default False
            Accept ``logits`` that look like probabilities (on the simplex, rounded, in
            percent, or one column all in ``[0, 1]``: refused by default, since they almost
            surely are probabilities).  With ``probs`` it is an error, not ignored.
        classes : sequence of str, optional
            Class names in column order: labels are looked up by their text.
        column_names : sequence of str, optional
            The class columns' names (CSV).  String labels are mapped through them when every
            label is one of them (also with a shared prefix or suffix such as ``prob_``
            removed), and otherwise, for two classes, in sorted order (scikit-learn's
            ``classes_``, the column order of ``predict_proba``); with more than two classes
            such labels are refused (pass ``classes``).
            Numeric labels follow columns numbered in their names (``p1, ..., pk``: label
            ``j`` is the column named ``j``).  The mapping is noted and kept in
            :attr:`label_mapping`.

        Examples
        --------
        >>> pred = Predictions.from_arrays([0, 1], [[0.9, 0.1], [0.3, 0.7]])
        >>> pred.n_samples, pred.n_classes
        (2, 2)
        >>> Predictions.from_arrays([0, 1], [0.2, 0.8]).probs.tolist()  # binary P(y=1)
        [[0.8, 0.2], [0.19999999999999996, 0.8]]
        >>> Predictions.from_arrays(["dog", "cat"], [[0.9, 0.1], [0.3, 0.7]],
        ...                         classes=["cat", "dog"]).labels.tolist()
        [1, 0]

        With two classes, labels that are not the columns' names are taken in sorted order
        (scikit-learn's ``classes_``), and labels ``1..k`` follow columns named ``p1..pk``:

        >>> pred = Predictions.from_arrays(["yes", "no"], [[0.2, 0.8], [0.6, 0.4]],
        ...                                column_names=["p0", "p1"])
        >>> pred.labels.tolist(), pred.label_mapping
        ([1, 0], {'no': 0, 'yes': 1})
        >>> pred = Predictions.from_arrays([1, 3], [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]],
        ...                                column_names=["p1", "p2", "p3"])
        >>> pred.labels.tolist(), pred.label_mapping
        ([0, 2], {'1': 0, '2': 1, '3': 2})
        """
        if (probs is None) == (logits is None):
            raise ValueError(f"{source}: give exactly one of probs or logits")
        if force_logits and logits is None:
            raise ValueError("force_logits (command line: --force-logits): applies to logits"
                             " only, and these predictions are read as probabilities; pass"
                             " kind='logits' (command line: --logits) with it, or drop it")
        notes = []
        what = "logits" if logits is not None else "probs"
        y, label_dtype = _as_array(labels, "labels", notes)
        _check_label_precision(y, label_dtype, "labels")
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        raw, source_dtype = _as_array(logits if logits is not None else probs, what, notes)
        _check_shapes(y, raw, what)
        one_column = raw.ndim == 2 and raw.shape[1] == 1
        if one_column:
            raw = raw[:, 0]
        if logits is not None:
            from .._validate import check_logits
            from ..recalibrate import softmax
            if not force_logits:
                _refuse_probabilities_as_logits(raw)
            if raw.ndim == 1:
                raw = np.column_stack([np.zeros(raw.shape[0]), np.asarray(raw, dtype=np.float64)])
                notes.append("logits: one column, read as the logit of class 1 of a binary"
                             " problem (probabilities 1 - sigmoid(z), sigmoid(z))")
            z = check_logits(raw, name="logits")
            P = softmax(z)
        else:
            z = None
            if raw.ndim == 1 and raw.size > 1 and raw.dtype.kind in "biuf" \
                    and np.all(raw == 1):
                shape = f"({raw.shape[0]}, 1)" if one_column else f"({raw.shape[0]},)"
                raise ValueError(
                    f"probs: shape {shape} and every value is 1: the softmax of a one-class"
                    " model? A single column is read as P(y = 1) of a binary problem, and"
                    " calibration needs at least two classes; if every sample really has"
                    " P(y = 1) = 1, pass the two columns [1 - p, p]")
            if renormalize is False and raw.ndim == 2 and raw.dtype.kind == "f" \
                    and (_eps(source_dtype) or 0.0) > np.finfo(np.float32).eps:
                raw, note = _renormalize_coarse(raw, source_dtype)
                if note:
                    notes.append(note)
            if renormalize is not False and raw.ndim == 2:
                raw, note = renormalize_rows(raw, renormalize, name="probs")
                if note:
                    notes.append(note)
            try:
                P = check_probabilities(raw, name="probs", option_hints=True,
                                        dtype=source_dtype)
            except ValueError:
                _refuse_rounded(raw)        # names the worst row rather than the first
                raise
            if P.ndim == 1:
                P = np.column_stack([1.0 - P, P])
        y, mapping = _map_labels(y, P.shape[1], classes, column_names, notes)
        y = check_labels(y, n_classes=P.shape[1], n_samples=P.shape[0], name="labels")
        if mapping is None and y.min() == 1 and P.shape[1] > 2:
            notes.append(f"no sample has label 0 (labels run from 1 to {int(y.max())} of"
                         f" 0..{P.shape[1] - 1}): are the labels 1-based? If so, subtract 1"
                         " or pass classes=['1', '2', ...] (command line: --classes 1,2,...)")
        return cls(labels=y, probs=P, logits=z, source=source, notes=tuple(notes),
                   label_mapping=mapping)

    @classmethod
    def from_frame(cls, frame, *, labels=None, kind: str = "probs", label_column=None,
                   prob_columns=None, ignore_columns=None, classes=None, renormalize=False,
                   force_logits: bool = False, source: str = "DataFrame"):
        """Predictions from a pandas or polars DataFrame, read as a CSV with its header would be.

        The label column, the class columns and the skipped columns (a pandas index such as
        ``Unnamed: 0``, identifiers, a column numbering the rows) are found from the column
        names exactly as for a CSV file (:func:`load_predictions`); string labels are mapped
        through the class columns' names.  ``labels`` gives the labels separately (an array,
        or a labels file).  Messages name the row (0-based position) and the column.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"label": ["dog", "cat"], "cat": [0.2, 0.9], "dog": [0.8, 0.1]})
        >>> pred = Predictions.from_frame(df)
        >>> pred.labels.tolist(), pred.class_columns
        ([1, 0], ('cat', 'dog'))
        """
        names = [str(c) for c in frame.columns]
        table = _Table.from_columns(names, _frame_columns(frame, len(names)))
        csv_options = {"label_column": label_column, "prob_columns": prob_columns,
                       "ignore_columns": ignore_columns, "header": True}
        options = {"renormalize": renormalize, "force_logits": force_logits,
                   "classes": classes}
        return _from_table(source, table, _check_kind(kind), labels, csv_options, options)

    @classmethod
    def from_estimator(cls, model, X, labels, *, source: str | None = None):
        """Predictions of a fitted classifier on ``X``: ``model.predict_proba(X)``, with
        ``model.classes_`` as the class names (as scikit-learn's
        ``CalibrationDisplay.from_estimator``).

        Labels are matched to the classes by name when ``classes_`` is not ``0..k-1``
        (``["cat", "dog"]``, ``[-1, 1]``, ``[1, 2, 3]``), so string labels work as they did
        for fitting; the mapping is noted and kept in :attr:`label_mapping`, and
        :attr:`class_columns` holds the class names.  Any object with ``predict_proba``
        works; scikit-learn is not imported.

        Examples
        --------
        >>> from sklearn.linear_model import LogisticRegression
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> y = np.array(["no", "no", "yes", "yes"])
        >>> pred = Predictions.from_estimator(LogisticRegression().fit(X, y), X, y)
        >>> pred.labels.tolist(), pred.class_columns, pred.source
        ([0, 0, 1, 1], ('no', 'yes'), 'LogisticRegression.predict_proba(X)')
        """
        return _from_estimator(model, X, labels, source)


def is_classifier(value) -> bool:
    """A fitted-or-not probabilistic classifier (scikit-learn's protocol: ``predict_proba``),
    recognised without importing scikit-learn."""
    return (not isinstance(value, (np.ndarray, str, os.PathLike, Predictions))
            and callable(getattr(value, "predict_proba", None)))


def _from_estimator(model, X, labels, source=None) -> "Predictions":
    """:meth:`Predictions.from_estimator` (kept out of the class body to keep it short)."""
    if X is None:
        raise ValueError(f"X: required with a classifier ({type(model).__name__}): the"
                         " samples to predict, e.g. evaluate(model, X=X_test, labels=y_test)")
    if labels is None:
        raise ValueError(f"labels: required with a classifier ({type(model).__name__}): the"
                         " true classes of the samples in X")
    if isinstance(labels, (str, os.PathLike)):                # a labels file
        labels = _load_labels(Path(labels))
    P = model.predict_proba(X)
    if isinstance(P, list):
        raise ValueError(f"predictions: {type(model).__name__}.predict_proba returned a list of"
                         f" {len(P)} arrays (a multi-output classifier?); evaluate one output"
                         " at a time")
    classes = getattr(model, "classes_", None)
    names = None if classes is None else [_label_text(c) for c in as_array(classes, "classes_")]
    identity = names is not None and names == [str(i) for i in range(len(names))]
    pred = Predictions.from_arrays(labels, P, source=source or (
        f"{type(model).__name__}.predict_proba(X)"), classes=None if identity else names)
    if names is not None:
        if len(names) != pred.n_classes:
            raise ValueError(f"predictions: {type(model).__name__}.predict_proba gave"
                             f" {pred.n_classes} columns but classes_ has {len(names)}")
        pred = dataclasses.replace(pred, class_columns=tuple(names))
    return pred


def _frame_columns(frame, k: int) -> list:
    """A DataFrame's columns as 1-d NumPy arrays, without importing its library: pandas by
    position (``iloc``, which keeps repeated names apart), polars by ``to_series`` (or
    ``get_column``), anything else with ``columns`` and ``to_numpy`` through the whole
    matrix."""
    if hasattr(frame, "iloc"):
        return [frame.iloc[:, j].to_numpy() for j in range(k)]
    if callable(getattr(frame, "to_series", None)):
        return [frame.to_series(j).to_numpy() for j in range(k)]
    if callable(getattr(frame, "get_column", None)):
        return [frame.get_column(name).to_numpy() for name in frame.columns]
    values = np.asarray(frame.to_numpy())
    return [values[:, j] for j in range(k)]


def _refuse_probabilities_as_logits(raw: np.ndarray) -> None:
    """``kind="logits"`` on values that are almost surely probabilities: refused (the caller
    passes ``force_logits`` to read them anyway).  A matrix on the simplex, rounded
    probabilities (rows summing to one within :data:`calnotes._validate.RENORMALIZE_TOL`) or
    percentages (rows summing to 100); one column (``(n,)``, ``(n, 1)``, a single CSV column)
    whose every value lies in ``[0, 1]``: ``n`` binary logits all in ``[0, 1]`` would be a
    model that never favours class 0 and never by more than ``e`` to 1, whereas a sigmoid's
    output is exactly that."""
    force = (" drop kind='logits' (command line: --logits), or pass force_logits=True"
             " (command line: --force-logits) if they really are logits")
    try:
        values = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        return                                  # check_logits explains
    if values.size == 0 or not np.all(np.isfinite(values)):
        return
    if values.ndim == 1:
        if values.min() >= 0.0 and values.max() <= 1.0:
            raise ValueError(f"logits: one column of {values.shape[0]} values, every one in"
                             " [0, 1]: these look like binary probabilities P(y = 1) (a"
                             " sigmoid's output), not logits;" + force)
        return
    if values.ndim != 2 or values.shape[1] < 2:
        return
    if looks_like_probabilities(raw):
        raise ValueError("logits: every value lies in [0, 1] and every row sums to 1: these"
                         " look like probabilities, not logits;" + force)
    what = diagnose_probabilities(values)
    if what == "rounded":
        dev = float(np.abs(values.sum(axis=1) - 1.0).max())
        raise ValueError(f"logits: every value lies in [0, 1] and every row sums to 1 within"
                         f" {dev:.1g}: these look like rounded probabilities, not logits;"
                         + force)
    if what == "percentages":
        raise ValueError("logits: every value lies in [0, 100] and every row sums to 100:"
                         " these look like percentages, not logits;" + force)


def _renormalize_coarse(raw: np.ndarray, dtype=None):
    """float16 probabilities: rows divided by their sums when they are off by more than
    :data:`calnotes._validate.ROW_SUM_ATOL` but within the dtype's own tolerance
    (:func:`calnotes._validate.row_sum_tolerance`; float16 rounding moves a row sum by up to
    ``k`` times its epsilon), so that every later check, in memory or out of core, sees rows
    summing to one.  ``(P, note)``; anything else is left to the probability checks."""
    from .._validate import ROW_SUM_ATOL
    values = np.asarray(raw, dtype=np.float64)
    if values.size == 0 or not np.all(np.isfinite(values)) or values.min() < 0 \
            or values.max() > 1:
        return raw, None
    dev = np.abs(values.sum(axis=1) - 1.0)
    dtype = raw.dtype if dtype is None else dtype      # "bfloat16": widened already
    tol = row_sum_tolerance(dtype, raw.shape[1])
    off = dev > ROW_SUM_ATOL
    if not off.any() or dev.max() > tol:
        return raw, None
    values[off] /= values[off].sum(axis=1, keepdims=True)
    return values, (f"probs: {dtype} values, whose rounding moves a row sum by up to"
                    f" {tol:.2g}: divided the {int(off.sum())} of {raw.shape[0]} rows off by"
                    f" more than {ROW_SUM_ATOL:g} by their sums (largest deviation"
                    f" {dev.max():.2g})")


def _as_array(values, name: str, notes: list | None = None):
    """``(array, source dtype)``: any array-like (:func:`calnotes._validate.as_array`: pandas,
    polars, torch, JAX, CuPy; a GPU copy or a widened float16/bfloat16 appends to ``notes``),
    object arrays read as strings or numbers.  The dtype is the values' own, or
    ``"bfloat16"`` for values widened from it."""
    if values is None:
        raise ValueError(f"{name}: missing")
    arr, dtype = _as_array_and_dtype(values, name, notes)
    if arr.dtype == object:
        arr = _from_objects(arr, name)
        dtype = arr.dtype
    return arr, dtype


def _from_objects(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array (pandas ``Categorical`` or string columns, nullable integers) as
    strings when every element is a string, as numbers when every element is one; refused
    otherwise."""
    items = arr.ravel().tolist()
    if items and all(isinstance(v, str) for v in items):
        return np.array(items, dtype=str).reshape(arr.shape)
    if items and all(isinstance(v, (bool, np.bool_)) for v in items):
        return np.array(items, dtype=bool).reshape(arr.shape)
    if items and all(isinstance(v, (int, float, np.integer, np.floating))
                     and not isinstance(v, bool) for v in items):
        return np.array(items, dtype=np.float64).reshape(arr.shape)
    kinds = sorted({type(v).__name__ for v in items})
    raise ValueError(f"{name}: holds Python objects of types {kinds[:5]} (mixed types or"
                     " missing values?); pass numbers or strings")


def _check_shapes(y: np.ndarray, P: np.ndarray, what: str) -> None:
    """Shape mismatches diagnosed before any value is checked (transposed, swapped)."""
    if y.ndim == 1 and P.ndim == 2 and P.shape[0] != y.shape[0] and P.shape[1] == y.shape[0]:
        raise ValueError(f"{what}: has shape {P.shape} but there are {y.shape[0]} labels:"
                         f" transposed? pass {what}.T, shape ({P.shape[1]}, {P.shape[0]})")
    if y.ndim == 2 and y.shape[1] > 1 and P.ndim == 1 and y.shape[0] == P.shape[0] \
            and np.issubdtype(y.dtype, np.floating) and np.any(y != np.round(y)):
        raise ValueError(f"labels: has shape {y.shape} with fractional values and {what} has"
                         f" shape {P.shape}: are labels and {what} swapped?")


def _label_text(value) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


#: Characters that end a shared prefix (``prob_``) or start a shared suffix (``_prob``) of
#: the class columns' names, removed before string labels are matched against them.
_NAME_SEPARATORS = "_-:.= "
#: Largest number of labels shown in a note or message about the label mapping.
_SHOW_LABELS = 12


def _show_mapping(mapping: dict) -> str:
    items = [f"{label!r} -> {index}" for label, index in mapping.items()]
    if len(items) > _SHOW_LABELS:
        items = items[:_SHOW_LABELS] + [f"... ({len(mapping)} labels)"]
    return ", ".join(items)


def _strip_shared(names: list) -> list | None:
    """The names without a shared prefix ending in a separator (``prob_cat``, ``prob_dog``)
    and a shared suffix starting with one (``cat_prob``); ``None`` if nothing is shared or
    the stripped names would be empty or repeat."""
    lowered = [n.lower() for n in names]
    head = os.path.commonprefix(lowered)
    cut = max((i + 1 for i, ch in enumerate(head) if ch in _NAME_SEPARATORS), default=0)
    tail = os.path.commonprefix([n[::-1] for n in lowered])
    back = max((i + 1 for i, ch in enumerate(tail) if ch in _NAME_SEPARATORS), default=0)
    if not cut and not back:
        return None
    stripped = [n[cut:len(n) - back] for n in names]
    if any(not n for n in stripped) or len(set(stripped)) != len(stripped):
        return None
    return stripped


def _name_index(names: list, labels: list):
    """``(index, matched)``: the variant of the columns' names (as given, without a shared
    prefix/suffix; then ignoring case) under which the most distinct labels are column names,
    as ``{label: column}`` for the labels it matches."""
    variants = [names]
    stripped = _strip_shared(names)
    if stripped is not None:
        variants.append(stripped)
    best = {}
    for variant in variants:
        for fold in (False, True):
            keys = [v.casefold() if fold else v for v in variant]
            if len(set(keys)) != len(keys):
                continue
            index = {key: j for j, key in enumerate(keys)}
            found = {t: index[t.casefold() if fold else t] for t in labels
                     if (t.casefold() if fold else t) in index}
            if len(found) > len(best):
                best = found
            if len(best) == len(labels):
                return best
    return best


def _column_numbers(names: list) -> list | None:
    """The numbers in the columns' names when every name is one shared prefix and a number
    (``p1, p2, p3``; ``prob_0, prob_1``; ``1, 2``), all distinct; else ``None``."""
    parts = [re.fullmatch(r"(\D*?)(\d+)", n.strip()) for n in names]
    if not all(parts) or len({m.group(1).lower() for m in parts}) != 1:
        return None
    numbers = [int(m.group(2)) for m in parts]
    return numbers if len(set(numbers)) == len(numbers) else None


def _numbered_labels(y: np.ndarray, k: int, column_names, notes: list):
    """Numeric labels against columns numbered in their names: label ``j`` is the column
    named ``j`` (``p1..pk`` and labels ``1..k``).  ``(y, mapping)``, ``mapping`` ``None``
    when the labels are column positions as they stand."""
    if column_names is None or len(column_names) != k or k < 2 or y.ndim != 1 or not y.size:
        return y, None
    names = [str(c).strip() for c in column_names]
    numbers = _column_numbers(names)
    if numbers is None or numbers == list(range(k)):
        return y, None
    values = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
        return y, None                     # check_labels names the offending label
    index = {v: j for j, v in enumerate(numbers)}
    present = set(np.unique(values).astype(np.int64).tolist())
    if present <= set(index):
        mapping = {str(v): j for v, j in sorted(index.items(), key=lambda item: item[1])}
        notes.append(f"labels read as the numbers in the class columns' names {names}:"
                     f" {_show_mapping(mapping)}")
        return np.array([index[v] for v in values.astype(np.int64).tolist()],
                        dtype=np.int64), mapping
    outside = sorted(present - set(index))
    if all(0 <= v < k for v in present):
        notes.append(f"labels {outside[:_SHOW_LABELS]} name no class column ({names}): the"
                     f" labels are read as column positions 0..{k - 1}; if they are not,"
                     " pass classes=[...] in column order (command line: --classes a,b,...)")
        return y, None
    listed = f"{', '.join(map(str, numbers))}: columns {names}"
    both = [v for v in outside if not 0 <= v < k]
    if both:
        i = int(np.flatnonzero(values == both[0])[0])
        raise ValueError(f"labels: label {both[0]} at index {i} is out of range: it is neither"
                         f" the number in a class column's name ({listed}) nor a column"
                         f" position 0..{k - 1}")
    high = next(v for v in sorted(present) if not 0 <= v < k)
    i, j = (int(np.flatnonzero(values == v)[0]) for v in (outside[0], high))
    raise ValueError(f"labels: label {outside[0]} at index {i} is not the number in a class"
                     f" column's name ({listed}) and label {high} at index {j} is not a column"
                     f" position 0..{k - 1}: the labels fit neither reading")


def _named_labels(texts: list, k: int, column_names, notes: list):
    """String labels against the class columns' names; otherwise in sorted order.
    ``(class indices, mapping)``, or ``None`` when there are no column names."""
    if column_names is None:
        return None
    names = [str(c).strip() for c in column_names]
    distinct = sorted(set(texts))
    unnamed = not any(names)                # a file without a header
    advice = " pass the class names in column order, classes=[...] (command line: --classes" \
             " a,b,...)"
    if not unnamed and len(names) == 1 and k == 2:   # one column: P(y = 1) of its class
        name = names[0]
        sides = {name.casefold()} | {part.casefold() for i, ch in enumerate(name)
                                     if ch in _NAME_SEPARATORS
                                     for part in (name[:i], name[i + 1:]) if part}
        hits = [t for t in distinct if t.casefold() in sides]
        if len(hits) == 1 and len(distinct) <= 2:
            others = [t for t in distinct if t != hits[0]]
            if not others:
                raise ValueError(f"labels: every label is {hits[0]!r}, the class of column"
                                 f" {name!r}: the other class's name is unknown;{advice}")
            mapping = {others[0]: 0, hits[0]: 1}
            notes.append(f"labels mapped to classes by the class column's name {name!r}"
                         f" (P(y = 1) of {hits[0]!r}): {_show_mapping(mapping)}")
            return np.array([mapping[t] for t in texts], dtype=np.int64), mapping
        if hits:
            raise ValueError(f"labels: {len(distinct)} distinct labels ({distinct[:_SHOW_LABELS]})"
                             f" for one probability column {name!r} (a binary problem);"
                             + advice)
    elif not unnamed:
        found = _name_index(names, distinct)
        if len(found) == len(distinct):
            mapping = {t: found[t] for t in sorted(distinct, key=found.get)}
            notes.append(f"labels mapped to classes by the class columns' names {names}:"
                         f" {_show_mapping(mapping)}")
            return np.array([found[t] for t in texts], dtype=np.int64), mapping
        if found:
            t = next(t for t in texts if t not in found)
            i = texts.index(t)
            raise ValueError(f"labels: label {t!r} at index {i} is not the name of a class"
                             f" column, though other labels are ({sorted(found)[:_SHOW_LABELS]};"
                             f" columns {names}):{advice}")
    which = ("the class columns have no names (no header)" if unnamed
             else f"not the class columns' names ({names})")
    if k > 2 and len(distinct) == k:
        # Sorted order is a guess that gives wrong numbers, silently, whenever the columns
        # are in another order (a model trained on relabelled classes, a hand-made export);
        # with two classes the single-column convention (scikit-learn's classes_) decides.
        raise ValueError(f"labels: {distinct[:_SHOW_LABELS]} are {which}: which column holds"
                         " which class cannot be told from the file (with more than two"
                         " classes calnotes does not guess, e.g. from sorted order);" + advice)
    if len(distinct) != k:
        few = "fewer" if len(distinct) < k else "more"
        why = ("cannot tell which class has no sample" if len(distinct) < k
               else "some labels would have no column")
        raise ValueError(f"labels: {len(distinct)} distinct"
                         f" label{'s' if len(distinct) > 1 else ''} ({distinct[:_SHOW_LABELS]}),"
                         f" {few} than the {k} classes, and {which}: {why};{advice}")
    mapping = {t: j for j, t in enumerate(distinct)}
    if len(names) == 1:
        column = f"the column {names[0]!r}" if names[0] else "the probability column"
        assumed = (f"{column} read as P(y = {distinct[1]!r}), the second label in sorted order"
                   " (scikit-learn's classes_[1], predict_proba[:, 1]); if it is not, pass"
                   " classes=[...] with the column's class last")
    else:
        shown = ", ".join(f"{t!r} -> column {names[j]!r}" if names[j] else
                          f"{t!r} -> column {j}" for t, j in mapping.items())
        assumed = (f"assuming the columns are in sorted label order (scikit-learn's classes_,"
                   f" the column order of predict_proba): {shown}; if they are not, pass"
                   " classes=[...] in column order")
    which = ("the class columns have no names (no header)" if unnamed
             else f"labels are not the class columns' names ({names})")
    notes.append(f"{which}: labels mapped in sorted order, {_show_mapping(mapping)}, {assumed}"
                 " (command line: --classes a,b,...)")
    return np.array([mapping[t] for t in texts], dtype=np.int64), mapping


def _map_labels(y: np.ndarray, k: int, classes, column_names, notes: list):
    """Class indices from labels, and the mapping used (``{label text: index}`` or ``None``):
    names through ``classes`` or the class columns' names (sorted order otherwise), text
    numbers, ``True``/``False`` for a binary problem, numbers ``1..k`` through columns
    numbered in their names; other numbers pass through."""
    if classes is not None:
        names = [str(c).strip() for c in classes]
        if len(names) != k:
            raise ValueError(f"classes: {len(names)} names for {k} classes ({names})")
        if len(set(names)) != len(names):
            raise ValueError(f"classes: names repeat ({names})")
        index = {name: i for i, name in enumerate(names)}
        texts = [_label_text(v) for v in y.tolist()]
        missing = [(i, t) for i, t in enumerate(texts) if t not in index]
        if missing:
            i, t = missing[0]
            raise ValueError(f"labels: label {t!r} at index {i} is not one of classes {names}")
        notes.append(f"labels mapped to class indices through classes {names}")
        return np.array([index[t] for t in texts], dtype=np.int64), index
    if y.dtype.kind not in "USO" or y.ndim != 1:
        return _numbered_labels(y, k, column_names, notes)
    texts = [str(v).strip() for v in y.tolist()]
    lowered = {t.lower() for t in texts}
    if k == 2 and lowered <= {"true", "false"}:
        notes.append("labels True/False read as 1/0")
        return (np.array([t.lower() == "true" for t in texts], dtype=np.int64),
                {"False": 0, "True": 1})
    try:
        values = np.array([float(t) for t in texts])
    except ValueError:
        pass
    else:
        return _numbered_labels(values, k, column_names, notes)
    mapped = _named_labels(texts, k, column_names, notes)
    if mapped is not None:
        return mapped
    first = next(t for t in texts if not _is_number(t))
    raise ValueError(f"labels: label {first!r} is not a class index; pass the class names in"
                     " column order, classes=[...] (command line: --classes a,b,...)")


def _refuse_rounded(raw: np.ndarray) -> None:
    """Rows that sum to one only to within :data:`calnotes._validate.RENORMALIZE_TOL`
    (rounded probabilities): refused naming the row furthest from one, with the
    ``renormalize`` hint.  Returns quietly for every other failure."""
    if raw.ndim != 2 or diagnose_probabilities(raw) != "rounded":
        return
    sums = np.asarray(raw, dtype=np.float64).sum(axis=1)
    dev = np.abs(sums - 1.0)
    tol = row_sum_tolerance(raw.dtype, raw.shape[1])
    worst = int(np.argmax(dev))
    count = int(np.count_nonzero(dev > tol))
    raise ValueError(f"probs: row {worst} sums to {sums[worst]:.6g}, the furthest from 1 of the"
                     f" {count} of {raw.shape[0]} rows off by more than {tol:g}; rows sum to 1"
                     f" only to within {dev[worst]:.1g}: rounded probabilities? pass"
                     " renormalize=True (command line: --renormalize) to divide each row by"
                     " its sum (the report records that it did)")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parses_as_pickle(path: Path) -> bool:
    """True if the whole file decodes as pickle opcodes ending in STOP (nothing is executed:
    :func:`pickletools.genops` only decodes); catches protocols 0 and 1."""
    with open_regular(path, "predictions") as fh:
        if os.fstat(fh.fileno()).st_size > _PICKLE_SNIFF_BYTES:
            return False
        data = fh.read()
    try:
        last = None
        for opcode, _, pos in pickletools.genops(io.BytesIO(data)):
            last = (opcode.name, pos)
    except Exception:  # noqa: BLE001 - any decoding failure means "not a pickle"
        return False
    return last is not None and last[0] == "STOP" and last[1] == len(data) - 1


def _sniff(path: Path, what: str = "predictions") -> bytes:
    with open_regular(path, what) as fh:
        return fh.read(8)


def _is_pickle(head: bytes) -> bool:
    # Protocol 2+ pickles start with PROTO (0x80) and the protocol number.
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def _refuse_pickle(path: Path):
    raise ValueError(
        f"{path}: this is a pickle file; unpickling can run arbitrary code, so calnotes refuses"
        " it by default. If you trust the file, pass allow_pickle=True (command line:"
        " --allow-pickle), or convert it to .npz with calnotes.save_predictions")


def _check_kind(kind: str) -> str:
    if kind not in _KINDS:
        raise ValueError(f"kind: expected 'probs' or 'logits', got {kind!r}")
    return kind


def _build(path, labels, matrix, kind: str, options: dict, notes=(), locate=None) -> Predictions:
    try:
        if kind == "logits":
            pred = Predictions.from_arrays(labels, logits=matrix, source=str(path), **options)
        else:
            pred = Predictions.from_arrays(labels, matrix, source=str(path), **options)
    except (ValueError, TypeError) as exc:
        message = str(exc)
        if locate is not None:
            message = locate(message)
        raise type(exc)(f"{path}: {message}") from None
    if notes:
        pred = dataclasses.replace(pred, notes=tuple(notes) + pred.notes)
    return pred


def _check_file(path: Path, what: str) -> None:
    """A regular, non-empty file, checked with :func:`os.stat` before anything is read (a FIFO
    or a device is named as such: reading one would block or never end)."""
    st = check_regular_file(path, what)
    if st.st_size == 0:
        raise ValueError(f"{what}: {path}: empty file (0 bytes)")


#: What ``st_mode`` says a path is, for the paths that are not regular files.
_SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (named pipe)"),
                  (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"),
                  (stat.S_ISSOCK, "a socket"))


def _special_kind(mode: int) -> str:
    """``"a FIFO (named pipe)"``, ``"a character device"``, ... for a mode that is neither a
    regular file nor a folder."""
    return next((kind for test, kind in _SPECIAL_FILES if test(mode)), "not a regular file")


def _not_regular(path, what: str, mode: int) -> ValueError:
    """The error for a path that exists but is no regular file (a pipe, a device, a socket):
    reading it would block (a FIFO with no writer) or never end (``/dev/zero``)."""
    kind = _special_kind(mode)
    where = str(path)
    real = os.path.realpath(path)
    if os.path.islink(path) and real != where and not re.match(r"/(dev|proc/\w+)/fd/", where):
        where += f" (a link to {real})"
    if stat.S_ISFIFO(mode) and re.match(r"/(dev|proc/\w+)/fd/\d+$", str(path)):
        kind = "a pipe (as process substitution, <(...), passes)"
    return ValueError(f"{what}: {where} is {kind}, not a regular file; save the data to a file"
                      " first")


def check_regular_file(path, what: str) -> os.stat_result:
    """:func:`os.stat` of ``path``, which must be a regular file: a missing path, a folder, a
    link to nothing and a FIFO, device or socket are refused naming ``what`` (the argument:
    ``"predictions"``, ``"labels"``) before anything is opened.

    Examples
    --------
    >>> check_regular_file("/dev/null", "labels")
    Traceback (most recent call last):
    ...
    ValueError: labels: /dev/null is a character device, not a regular file; save the data to a file first
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise FileNotFoundError(f"{what}: {path} is a symbolic link to"
                                    f" {os.readlink(path)}, which does not exist") from None
        raise FileNotFoundError(f"{what}: {path}: no such file{_read_as_path(path)}") \
            from None
    except NotADirectoryError:
        raise FileNotFoundError(f"{what}: {path}: no such file (a folder on the way is a"
                                " file)") from None
    except OSError as exc:
        raise type(exc)(f"{what}: {path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{what}: {path}: is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, what, st.st_mode)
    return st


def _read_as_path(path) -> str:
    """For a string that does not look like a file name (spaces or commas between words, such
    as ``"0 1 2"``): that a string is read as a path."""
    text = os.fspath(path)
    if isinstance(text, str) and re.search(r"\S[\s,]+\S", text) and not os.sep in text \
            and not re.search(r"\.\w{1,8}$", text):
        return (f" (the string {text!r} was read as a file path; pass values as a list or an"
                " array)")
    return ""


def open_regular(path, what: str):
    """``path`` opened for binary reading only if it is a regular file: opened without
    blocking (``O_NONBLOCK``: a FIFO would otherwise wait for a writer) and checked with
    :func:`os.fstat` on the open file, so a path swapped for a pipe after
    :func:`check_regular_file` is refused too."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        check_regular_file(path, what)           # names what is missing
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(f"{what}: {path}: is a directory, not a file")
            raise _not_regular(path, what, st.st_mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _load_npy(path: Path, name: str) -> np.ndarray:
    head = _sniff(path, name)
    if _is_pickle(head):
        _refuse_pickle(path)
    if not head.startswith(_NPY_MAGIC):
        raise ValueError(f"{path}: not a .npy file (no NumPy header); for {name} pass a .npy array")
    with open_regular(path, name) as fh:
        _check_npy_size(fh, os.fstat(fh.fileno()).st_size, path, name)
        fh.seek(0)
        arr = _read_npy(fh, path, name)
    return _numeric(arr, path, name)


def _read_npy(fh, path: Path, name: str) -> np.ndarray:
    try:
        arr = np.load(fh, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"{path}: {name} holds Python objects, which calnotes does not"
                         f" unpickle; save a numeric array ({exc})") from None
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot read as .npy ({exc})") from None
    return arr


def _numeric(arr, path, name: str) -> np.ndarray:
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{path}: {name} is not a NumPy array (a zip member not written by"
                         " numpy.savez?)")
    if arr.dtype.kind not in "biufUS":
        raise ValueError(f"{path}: {name} has dtype {arr.dtype}; expected numbers")
    if arr.dtype.kind in "US" and name != "labels":
        raise ValueError(f"{path}: {name} has dtype {arr.dtype}; expected numbers")
    return arr


def _memory_bytes() -> int:
    """The memory this process may use: physical memory, or less when an address-space limit
    (``ulimit -v``) or a cgroup limit (a container) is lower; 16 GiB if none can be read."""
    sizes = []
    try:
        sizes.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft not in (resource.RLIM_INFINITY, -1) and soft > 0:
            sizes.append(soft)
    except (ImportError, OSError, ValueError):
        pass
    for name in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(name) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < 1 << 60:
            sizes.append(int(text))
    return min(sizes) if sizes else 16 << 30


#: Largest array (bytes, from its ``.npy`` header: shape x item size) that is read into
#: memory from an ``.npz``, ``.npy`` or gzipped file: half the memory this process may use
#: (:func:`_memory_bytes`), since the evaluation then holds float64 copies and working arrays
#: of the same size; a larger (or a compressed "zip bomb") array is refused before it is read.
MAX_ARRAY_BYTES = max(1 << 28, _memory_bytes() // 2)
_LIMIT_NAME = "calnotes.data.loaders.MAX_ARRAY_BYTES, half the memory this process may use"
_LIMIT_ADVICE = ("evaluate a .npy file out of core, out_of_core=True (command line:"
                 " --out-of-core), which reads it in row chunks")


def _bytes_text(n: int) -> str:
    """``2.40 GB``, ``3.8 MB``, ``120 bytes``: decimal units."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _npy_header_of(fh):
    """``(shape, dtype)`` from an open ``.npy`` stream positioned at its start, or ``None``
    when there is no readable header (numpy's own reading then explains)."""
    try:
        version = np.lib.format.read_magic(fh)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(fh)
    except Exception:  # noqa: BLE001 - any malformed header: np.load reports it
        return None
    return shape, dtype


def _array_bytes(shape, dtype) -> int:
    count = 1
    for dim in shape:
        count *= int(dim)
    return count * dtype.itemsize


def _check_npy_size(fh, file_size: int, path, name: str, member: str | None = None,
                    stored: int | None = None) -> None:
    """Refuse a ``.npy`` array (a file, or a member of an ``.npz``) whose header promises more
    bytes than ``file_size`` holds (a truncated file) or more than :data:`MAX_ARRAY_BYTES`,
    before NumPy allocates it."""
    header = _npy_header_of(fh)
    if header is None:
        return
    shape, dtype = header
    if dtype.hasobject:
        return                                  # refused as Python objects when read
    nbytes = _array_bytes(shape, dtype)
    where = f"{path}" + ("" if member is None else f": array {member!r}")
    described = f"shape {tuple(shape)}, {dtype}"
    data = file_size - fh.tell()
    if nbytes > MAX_ARRAY_BYTES:
        packed = "" if stored is None else f"; {_bytes_text(stored)} in the file"
        raise ValueError(f"{name}: {where} holds {_bytes_text(nbytes)} ({described}"
                         f"{packed}), above the limit of {_bytes_text(MAX_ARRAY_BYTES)} for"
                         f" one array read into memory ({_LIMIT_NAME}); {_LIMIT_ADVICE}")
    if nbytes > data:
        raise ValueError(f"{name}: {where} is truncated: its header promises {described},"
                         f" {_bytes_text(nbytes)}, but only {_bytes_text(max(data, 0))} of data"
                         " follow")


def _check_npz_sizes(fh, path, name: str) -> None:
    """Every ``.npy`` member of the ``.npz`` archive open as ``fh``, checked from the zip
    directory and the member's ``.npy`` header (its uncompressed size, shape and dtype) before
    any array is decompressed: a member above :data:`MAX_ARRAY_BYTES` (a "zip bomb": a few MB
    that decompress to GBs) or promising more than it holds is refused naming it."""
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        return                                  # np.load reports a broken archive
    with archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            member = info.filename[:-4]
            try:
                with archive.open(info) as member_fh:
                    _check_npy_size(member_fh, info.file_size, path, name, member,
                                    info.compress_size)
            except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError):
                pass                            # np.load reports a broken member
            if info.file_size > MAX_ARRAY_BYTES + (1 << 16):   # no readable header
                raise ValueError(
                    f"{name}: {path}: array {member!r} holds {_bytes_text(info.file_size)} once"
                    f" decompressed ({_bytes_text(info.compress_size)} in the file), above the"
                    f" limit of {_bytes_text(MAX_ARRAY_BYTES)} for one array read into memory"
                    f" ({_LIMIT_NAME}); {_LIMIT_ADVICE}")


def _load_npz(path: Path, kind: str | None, options: dict) -> Predictions:
    # The file is opened here (not by np.load) so that it is closed even when it is corrupt.
    with open_regular(path, "predictions") as fh:
        _check_npz_sizes(fh, path, "predictions")
        fh.seek(0)
        try:
            archive = np.load(fh, allow_pickle=False)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            if "allow_pickle" in str(exc):
                _refuse_pickle(path)
            raise ValueError(f"{path}: cannot read as .npz ({exc})") from None
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ValueError(f"{path}: a single .npy array, not an .npz archive; pass it with"
                             " its labels file, labels=... (command line: --labels FILE)")
        with archive:
            found, arrays, notes = _npz_arrays(path, archive, kind)
    return _build(path, arrays["labels"], arrays[found], found, options, notes)


#: Other names of the arrays of an ``.npz`` file, read with a note: scikit-learn's and
#: calnotes' argument names, Hugging Face Trainer's ``label_ids`` and ``predictions``.
_NPZ_ALIASES = {"labels": ("y_true", "label_ids", "label", "targets", "target", "y"),
                "probs": ("y_prob", "probabilities", "proba", "y_proba"),
                "logits": ()}
#: Arrays that hold predictions of an unstated kind (Hugging Face Trainer's output).
_NPZ_EITHER = ("predictions",)


def _npz_arrays(path: Path, archive, kind: str | None):
    keys = set(archive.files)
    names = {}
    notes = []
    for role in ("labels", "probs", "logits"):
        found = [role] if role in keys else [k for k in _NPZ_ALIASES[role] if k in keys]
        if len(found) > 1:
            raise ValueError(f"{path}: arrays {found} could each be the {role} (found"
                             f" {sorted(keys)}); keep one")
        if found:
            names[role] = found[0]
    if "labels" not in names:
        raise ValueError(f"{path}: no array named 'labels' (found {sorted(keys)}); an .npz"
                         " needs 'labels' and one of 'probs' or 'logits' (also read:"
                         f" {list(_NPZ_ALIASES['labels'])} for the labels,"
                         f" {list(_NPZ_ALIASES['probs'])} for probabilities, 'predictions'"
                         " for either)")
    present = [k for k in _KINDS if k in names]
    either = [k for k in _NPZ_EITHER if k in keys]
    if not present and len(either) == 1:
        values = archive[either[0]]
        if kind is not None:
            present = [kind]
        elif looks_like_probabilities(values):
            present = ["probs"]
        else:
            raise ValueError(f"{path}: array {either[0]!r} (as Hugging Face's Trainer writes"
                             " it) holds predictions that are not probabilities; if they are"
                             " logits, pass kind='logits' (command line: --logits)")
        names[present[0]] = either[0]
    if len(present) != 1:
        what = "both" if len(present) == 2 else "neither"
        raise ValueError(f"{path}: has {what} of 'probs' and 'logits' (found {sorted(keys)});"
                         " an .npz needs exactly one")
    found = present[0]
    if kind is not None and kind != found:
        raise ValueError(f"{path}: kind={kind!r} but the file holds {found!r}")
    renamed = [f"{names[role]!r} as the {role}" for role in ("labels", found)
               if names[role] != role]
    if renamed:
        notes.append(f"read {' and '.join(renamed)}")
    arrays = {}
    for key in ("labels", found):
        try:
            arrays[key] = _numeric(archive[names[key]], path, key)
        except ValueError as exc:
            if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                raise ValueError(f"{path}: array {names[key]!r} holds Python objects, which"
                                 " calnotes does not unpickle; save numeric arrays") from None
            raise
        except (OSError, zipfile.BadZipFile, EOFError) as exc:
            raise ValueError(f"{path}: cannot read array {names[key]!r} ({exc})") from None
    return found, arrays, notes


# ------------------------------------------------------------------------------ text tables

def _read_text(path: Path, what: str = "predictions") -> str:
    """The file as text: UTF-8 (with or without BOM), UTF-16 with BOM; gunzipped first if it is
    gzip (by content, whatever the suffix; at most :data:`MAX_ARRAY_BYTES` once
    decompressed).  Line ends become ``\\n``."""
    with open_regular(path, what) as fh:
        data = fh.read()
    if data.startswith(b"\x1f\x8b"):
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
                data = unzipped.read(MAX_ARRAY_BYTES + 1)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{path}: cannot decompress as gzip ({exc})") from None
        if len(data) > MAX_ARRAY_BYTES:
            raise ValueError(f"{what}: {path}: more than {_bytes_text(MAX_ARRAY_BYTES)} once"
                             " decompressed, above the limit for a file read into memory"
                             f" ({_LIMIT_NAME}); {_LIMIT_ADVICE}")
        if not data:
            raise ValueError(f"{path}: empty file (0 bytes once decompressed)")
    elif path.suffix.lower() == ".gz":
        raise ValueError(f"{path}: named .gz but not gzip-compressed")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: starts with a UTF-16 byte-order mark but is not UTF-16"
                             f" text ({exc.reason}); save the file as UTF-8") from None
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at position {exc.start});"
                " save the file as UTF-8 (Excel: 'CSV UTF-8')") from None
        if "\x00" in text:
            raise ValueError(f"{path}: contains NUL bytes: UTF-16 text without a byte-order"
                             " mark, or not a text file; save the file as UTF-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


class _Table:
    """A table's columns: ``names``, and either ``values`` (every cell a number: the fast
    path, numpy's parser), ``rows`` (cells as text) or ``columns`` (one array per column: a
    DataFrame, a Parquet or Feather file).  ``lines`` (file line of each data row; for
    ``columns``, the row's 0-based position, and ``unit`` is ``"row"``) is worked out only
    when a message needs it."""

    def __init__(self, names, delimiter, notes, body, first_line, rows=None, values=None,
                 lines=None, columns=None, unit="line"):
        self.names, self.delimiter, self.notes = names, delimiter, notes
        self._body, self._first_line = body, first_line
        self.rows, self.values, self._lines = rows, values, lines
        self.columns, self.unit = columns, unit

    @classmethod
    def from_columns(cls, names, columns, notes=()):
        """A table of named 1-d arrays (numbers, strings, or objects with missing values)."""
        arrays = []
        for name, col in zip(names, columns):
            col = np.asarray(col)
            if col.ndim == 1 and col.dtype == object:
                _refuse_list_column(name, col)
            if col.ndim != 1:
                raise ValueError(f"predictions: column {name!r}: expected one value per row,"
                                 " got shape"
                                 f" {col.shape} (a list column? expand it into one column"
                                 " per class)")
            arrays.append(col)
        n = arrays[0].shape[0] if arrays else 0
        numeric = arrays and all(a.dtype.kind in "biuf" for a in arrays)
        values = (np.column_stack([a.astype(np.float64) for a in arrays]) if numeric and n
                  else None)
        return cls(list(names), None, list(notes), "", 0, values=values,
                   lines=list(range(n)), columns=None if values is not None else arrays,
                   unit="row")

    @property
    def n_rows(self) -> int:
        if self.columns is not None:
            return self.columns[0].shape[0] if self.columns else 0
        return len(self.rows) if self.rows is not None else self.values.shape[0]

    @property
    def lines(self) -> list:
        if self._lines is None:
            self._lines = [line for _, line in _csv_rows(self._body, self.delimiter,
                                                         self._first_line)]
        return self._lines

    def numbers(self, j: int):
        """Column ``j`` as float64 when it is stored as numbers, else ``None``."""
        if self.values is not None:
            return self.values[:, j]
        if self.columns is not None and self.columns[j].dtype.kind in "biuf":
            return self.columns[j].astype(np.float64)
        return None

    def cells(self, j: int) -> list:
        if self.rows is not None:
            return [row[j] for row in self.rows]
        if self.columns is not None and self.columns[j].dtype.kind not in "biuf":
            return [_cell_text(v) for v in self.columns[j].tolist()]
        return [repr(float(v)) for v in self.numbers(j)]


def _refuse_list_column(name, col: np.ndarray) -> None:
    """A column whose cells are lists or arrays (Hugging Face's ``predictions`` column, a
    polars ``List``): one value per row is needed, so it is refused with the way out."""
    first = next((v for v in col.tolist() if v is not None), None)
    if isinstance(first, (list, tuple, np.ndarray)) or (
            hasattr(first, "__len__") and hasattr(first, "dtype")):
        raise ValueError(f"predictions: column {name!r}: its cells are lists"
                         f" ({_cell_preview(first)}): a list column? expand it into one"
                         f" column per class (pandas: pd.DataFrame(df[{name!r}].tolist()); polars:"
                         f" df[{name!r}].list.to_struct().struct.unnest()), or pass"
                         f" np.stack(df[{name!r}]) as the probabilities")


def _cell_preview(value) -> str:
    text = " ".join(str(v) for v in list(value)[:4])
    return f"[{text}{' ...' if len(value) > 4 else ''}]"


def _cell_text(value) -> str:
    """A DataFrame/Arrow cell as a CSV would hold it: missing values (``None``, NaN, pandas'
    ``NA``) as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if value != value else repr(float(value))
    text = str(value)
    return "" if text in ("<NA>", "NaT") else text


def _csv_rows(body: str, delimiter: str, first_line: int):
    """``(row, file line)`` for each non-blank row of ``body``, whose first line is
    ``first_line`` of the file."""
    reader = csv.reader(io.StringIO(body), delimiter=delimiter)
    for row in reader:
        if not row or all(not c.strip() for c in row):
            continue
        yield row, reader.line_num + first_line - 1


#: Separators recognised in a header line when ``delimiter`` is not given.
_SEPARATORS = (",", ";", "\t", "|")


def _read_table(path: Path, delimiter, header: bool, fast: bool = True,
                what: str = "predictions") -> _Table:
    text = _read_text(path, what)
    # comment and blank lines before the header
    pos, line_no, comments = 0, 1, 0
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end].strip()
        if line and not line.startswith("#"):
            break
        comments += line.startswith("#")
        pos, line_no = end + 1, line_no + 1
    if pos >= len(text):
        raise ValueError(f"{path}: empty CSV file; expected a header row")
    notes = [f"skipped {comments} comment line(s) before the header"] if comments else []
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    first = text[pos:end]
    directive = re.fullmatch(r"\s*sep=(.)\s*", first, flags=re.IGNORECASE)
    if directive:                     # Excel's "sep=;" line names the separator
        if delimiter is None:
            delimiter = directive.group(1)
        notes.append(f"line {line_no}: Excel's separator line {first.strip()!r} read as the"
                     " separator")
        pos, line_no = end + 1, line_no + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        first = text[pos:end]
        if pos >= len(text) or not first.strip():
            raise ValueError(f"{path}: no header row after the separator line")
    # comment and blank lines after the data (an export's trailer): dropped with a note
    body_end, trailing = len(text), 0       # scanned from the end: no copy of the lines
    while body_end > end + 1:
        stop = body_end - 1 if text[body_end - 1] == "\n" else body_end
        start = max(text.rfind("\n", end + 1, stop) + 1, end + 1)
        line = text[start:stop].strip()
        if line and not line.startswith("#"):
            break
        trailing += line.startswith("#")
        body_end = start
    if trailing:
        notes.append(f"skipped {trailing} comment line(s) after the data")
    rest = text[end + 1:body_end]
    if delimiter is None:
        inner = path.suffix.lower() if path.suffix.lower() != ".gz" else \
            Path(path.stem).suffix.lower()
        counts = {d: first.count(d) for d in _SEPARATORS}
        delimiter = max(counts, key=counts.get) if max(counts.values()) else (
            "\t" if inner == ".tsv" else ",")
    elif not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter: expected one character, got {delimiter!r}")
    if header:
        names = [h.strip() for h in next(csv.reader([first], delimiter=delimiter))]
        body, first_line = rest, line_no + 1
    else:
        names = [str(i) for i in range(len(next(csv.reader([first], delimiter=delimiter))))]
        body, first_line = first + "\n" + rest, line_no
    if len(names) == 1 and re.search(r"\S {2,}\S", names[0]):
        raise ValueError(f"{path}: the {'header' if header else 'first line'} is one field,"
                         f" {names[0]!r}, with columns aligned by runs of spaces (a printed"
                         " table?); save the table as CSV instead (pandas: df.to_csv(path,"
                         " index=False))")
    if len(names) == 1 and delimiter == "," and any(d in names[0] for d in (";", "\t", "|")):
        raise ValueError(f"{path}: the header is one field, {names[0]!r}; pass the separator"
                         " with delimiter=... (command line: --delimiter)")
    what = "header" if header else "first line"
    if fast and body.strip():
        try:  # numpy's C parser; any failure falls through to the reader that explains it
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                values = np.loadtxt(io.StringIO(body), delimiter=delimiter, ndmin=2,
                                    dtype=np.float64, comments=None, quotechar='"')
        except ValueError:
            pass
        else:
            if values.shape[1] == len(names) and values.shape[0] > 0:
                return _Table(names, delimiter, notes, body, first_line, values=values)
    rows, lines = [], []
    for row, line in _csv_rows(body, delimiter, first_line):
        if len(row) > len(names) and not any(c.strip() for c in row[len(names):]):
            row = row[:len(names)]        # a trailing separator on a data line
        if len(row) != len(names):
            if row[0].lstrip().startswith("#"):
                raise ValueError(f"{path}: line {line} is a comment inside the data; only"
                                 f" comment lines before the {what} and after the data are"
                                 " skipped")
            raise ValueError(f"{path}: line {line} has {len(row)} fields, the {what} has"
                             f" {len(names)}")
        rows.append(row)
        lines.append(line)
    # columns without a name whose every cell is empty: trailing separators (Excel's ";;")
    empty = [j for j, name in enumerate(names) if not name and rows
             and not any(row[j].strip() for row in rows)]
    if empty and header:
        keep = [j for j in range(len(names)) if j not in empty]
        names = [names[j] for j in keep]
        rows = [[row[j] for j in keep] for row in rows]
        notes.append(f"dropped {len(empty)} empty column(s) without a name (trailing"
                     " separators)")
    return _Table(names, delimiter, notes, body, first_line, rows=rows, lines=lines)


def _find_column(path, names: list, wanted, what: str) -> int:
    if isinstance(wanted, (int, np.integer)) and not isinstance(wanted, bool):
        if not 0 <= wanted < len(names):
            raise ValueError(f"{what}: column {wanted} does not exist; the file has"
                             f" {len(names)} columns")
        return int(wanted)
    lowered = [n.lower() for n in names]
    key = str(wanted).strip().lower()
    if key in lowered:
        return lowered.index(key)
    raise ValueError(f"{what}: {path} has no column {wanted!r}; its columns are {names}")


_PERCENT = re.compile(r"^\s*([+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d+)?)\s*%\s*$")
#: Label cells that mean "missing" (R's NA, pandas' NaN, SQL's NULL, an empty cell).
_MISSING = ("", "na", "nan", "null", "none", "n/a", "#n/a", "<na>")


def _float_column(path, table: _Table, j: int, notes: list) -> np.ndarray:
    values = table.numbers(j)
    if values is not None:
        return values
    cells = table.cells(j)
    try:
        return np.array(cells, dtype=np.float64)
    except ValueError:
        pass
    name = table.names[j]
    if cells and all(_PERCENT.match(c) for c in cells):
        numbers = [_PERCENT.match(c).group(1).replace(",", ".") for c in cells]
        notes.append(f"column {name!r}: percent signs read as percentages (divided by 100)")
        return np.array(numbers, dtype=np.float64) / 100.0
    comma = [c for c in cells if _DECIMAL_COMMA.match(c)]
    if comma:
        fixed = [c.replace(",", ".") if _DECIMAL_COMMA.match(c) else c for c in cells]
        try:
            values = np.array(fixed, dtype=np.float64)
        except ValueError:
            cells = fixed
        else:
            notes.append(f"column {name!r}: decimal commas read as decimal points")
            return values
    percent = any(_PERCENT.match(c) for c in cells)
    for cell, line in zip(cells, table.lines):
        try:
            float(cell)
        except ValueError:
            what = "an empty cell" if not cell.strip() else f"{cell!r} is not a number"
            if percent and _PERCENT.match(cell) is None and cell.strip():
                what += " (other cells of the column are percentages like '75%')"
            elif percent and not cell.strip():
                what += " (other cells of the column are percentages like '75%')"
            elif not any(_is_number(c) for c in cells[:1000]):
                what += (f"; a column of text (names, ids, a named index?) is not a class: skip"
                         f" it with ignore_columns=[{name!r}] (command line: --ignore-columns"
                         f" {name})")
            raise ValueError(f"{path}: {table.unit} {line}, column {name!r}: {what}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _locator(table: _Table, prob_cols: list, label_col):
    """Rewrite array positions in a validation message as file lines and column names."""
    names = [table.names[j] for j in prob_cols]
    label_name = table.names[label_col] if label_col is not None else None
    unit = table.unit

    def cell(match):
        i, j = int(match.group(1)), int(match.group(2))
        if len(names) == 1:     # a single class column: binary logits are stored as [0, z]
            j = 0
        return f"{unit} {table.lines[i]}, column {names[j]!r}" if j < len(names) \
            else f"{unit} {table.lines[i]}"

    def locate(message: str) -> str:
        message = re.sub(r"at index \[(\d+), (\d+)\]", lambda m: "at " + cell(m), message)
        message = re.sub(r"at index \[(\d+)\]",
                         lambda m: f"at {unit} {table.lines[int(m.group(1))]}, column"
                                   f" {names[0]!r}", message)
        message = re.sub(r"\brow (\d+) sums",
                         lambda m: f"{unit} {table.lines[int(m.group(1))]}: the row sums",
                         message)
        if message.startswith("labels:") and label_name is not None:
            message = re.sub(r"at index (\d+)", lambda m: (
                f"at {unit} {table.lines[int(m.group(1))]}, column {label_name!r}"), message)
        return message
    return locate


def _read_csv(path: Path, kind: str, labels, csv_options: dict, options: dict) -> Predictions:
    header = csv_options.get("header", True)
    table = _read_table(path, csv_options.get("delimiter"), header)
    return _from_table(path, table, kind, labels, csv_options, options)


def _is_row_index(table: _Table, j: int) -> str | None:
    """``"0..n-1"`` or ``"1..n"`` when column ``j`` numbers the rows (a pandas index saved
    under a name, a row number), else ``None``.  Needs ``n >= 3`` for ``0..n-1`` and
    ``n >= 2`` for ``1..n``: below that the column could be one-hot probabilities."""
    n = table.n_rows
    values = table.numbers(j)
    if values is None:
        try:
            values = np.array(table.cells(j), dtype=np.float64)
        except ValueError:
            return None
    if n >= 3 and values[0] == 0 and np.array_equal(values, np.arange(n)):
        return "0..n-1"
    if n >= 2 and values[0] == 1 and np.array_equal(values, np.arange(1, n + 1)):
        return "1..n"
    return None


def _whole_numbers(values: np.ndarray) -> bool:
    return bool(values.size and np.all(np.isfinite(values))
                and np.all(values == np.round(values)))


def _refuse_whole_columns(path, names: list, matrix_columns: list, kind: str) -> None:
    """A class column of whole numbers among columns that are not (a predicted class, a
    count, an id): refused naming the column, never hinted as logits.  For probabilities the
    column must also leave ``[0, 1]`` (0/1 columns are one-hot probabilities)."""
    whole = [_whole_numbers(v) for v in matrix_columns]
    if all(whole) or not any(whole):
        return
    for name, values, is_whole in zip(names, matrix_columns, whole):
        if not is_whole or (kind == "probs" and values.min() >= 0 and values.max() <= 1):
            continue
        lo, hi = _plain_number(values.min()), _plain_number(values.max())
        what = "probabilities" if kind == "probs" else "logits"
        raise ValueError(f"{path}: column {name!r} holds whole numbers ({lo}..{hi}) unlike the"
                         f" other class columns: a predicted class, a count or an id, not"
                         f" {what}; skip it with ignore_columns=[{name!r}] (command line:"
                         f" --ignore-columns {name}), or name the class columns with"
                         " prob_columns=[...] (command line: --prob-columns)")


def _plain_number(value) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _from_table(path, table: _Table, kind: str, labels, csv_options: dict,
                options: dict) -> Predictions:
    """Predictions from a table's columns (a CSV file, a DataFrame, Parquet or Feather)."""
    label_column = csv_options.get("label_column")
    prob_columns = csv_options.get("prob_columns")
    ignore_columns = csv_options.get("ignore_columns") or ()
    header = csv_options.get("header", True)
    notes = list(table.notes)
    names = table.names
    if not table.n_rows:
        raise ValueError(f"{path}: no data rows after the header")
    if not header and labels is None and label_column is None:
        raise ValueError(f"{path}: without a header, say which column holds the labels:"
                         " label_column=0 (command line: --label-column 0), or pass a labels"
                         " file")
    looks_like_data = (header and table.unit == "line" and all(_is_number(n) for n in names)
                       and not all(re.fullmatch(r"\d+", n) for n in names))
    # the label column
    if label_column is not None:
        if labels is not None:
            raise ValueError("label_column: the labels come from labels=...; give one of them")
        label_col = _find_column(path, names, label_column, "label_column")
    elif labels is None:
        found = [j for j, n in enumerate(names) if n.lower() in LABEL_COLUMNS]
        if len(found) != 1:
            if looks_like_data:
                raise ValueError(
                    f"{path}: the first line, {names}, holds numbers, not column names: a"
                    " file without a header? pass header=False (command line: --no-header)"
                    " and the label column's position, label_column=0 (command line:"
                    " --label-column 0)")
            raise ValueError(
                f"{path}: expected exactly one label column named one of {list(LABEL_COLUMNS)}"
                f" in the header, found {[names[j] for j in found] or 'none'} in {names};"
                " name it with label_column=... (command line: --label-column NAME), or pass"
                " the labels in a separate file, labels=... (command line: --labels FILE)")
        label_col = found[0]
    else:
        label_col = None
        clash = [n for n in names if n.lower() in LABEL_COLUMNS]
        if clash:
            raise ValueError(f"{path}: has a label column {clash[0]!r} and labels were given"
                             " separately; give one of them")
    if looks_like_data and labels is not None:
        raise ValueError(f"{path}: the first line, {names}, holds numbers, not column names:"
                         " a file without a header? pass header=False (command line:"
                         " --no-header)")
    # the class columns
    ignored = {_find_column(path, names, c, "ignore_columns") for c in ignore_columns}
    if prob_columns is not None:
        prob_cols = [_find_column(path, names, c, "prob_columns") for c in prob_columns]
        if label_col in prob_cols:
            raise ValueError(f"prob_columns: {names[label_col]!r} is the label column")
        rest = [names[j] for j in range(len(names)) if j not in prob_cols and j != label_col]
        if rest:
            notes.append(f"columns not read (not in prob_columns): {rest}")
    else:
        prob_cols = []
        for j, name in enumerate(names):
            if j == label_col:
                continue
            if j in ignored:
                notes.append(f"column {name!r} skipped (ignore_columns)")
            elif (j == 0 and name == "") or re.fullmatch(r"Unnamed: \d+", name) \
                    or re.fullmatch(r"__index_level_\d+__", name):
                notes.append(f"column {j + 1} ({name or 'no name'}) skipped: a pandas index")
            elif name.lower() in ID_COLUMNS:
                notes.append(f"column {name!r} skipped: an identifier, not a class")
            elif (rows := _is_row_index(table, j)) is not None:
                notes.append(f"column {name!r} skipped: it numbers the rows ({rows}), an index"
                             " (a pandas index saved under a name?), not a class; name the"
                             " class columns with prob_columns=... (command line:"
                             " --prob-columns) if it is one")
            else:
                prob_cols.append(j)
    if not prob_cols:
        raise ValueError(f"{path}: no probability columns (columns: {names}); a binary file"
                         " needs one column with P(y=1), a k-class file one column per class")
    columns = [_float_column(path, table, j, notes) for j in prob_cols]
    if prob_columns is None:
        _refuse_whole_columns(path, [names[j] for j in prob_cols], columns, kind)
    matrix = np.column_stack(columns)
    if matrix.shape[1] == 1:
        matrix = matrix[:, 0]
    if label_col is not None:
        y = table.numbers(label_col)
        if y is None:
            texts = [c.strip() for c in table.cells(label_col)]
            _refuse_missing_labels(path, table, label_col, texts)
            if all(_is_number(t) for t in texts):
                y = _float_column(path, table, label_col, notes)
            else:
                y = np.array(texts)
    else:
        y = _load_labels(Path(labels), options.get("classes")) \
            if isinstance(labels, (str, os.PathLike)) else labels     # any array-like
    # without a header the names are positions ("0", "1", ...), which name no class
    options = dict(options, column_names=[names[j] if header else "" for j in prob_cols])
    pred = _build(path, y, matrix, kind, options, notes,
                  locate=_locator(table, prob_cols, label_col))
    shown = tuple(names[j] if header else f"column {j}" for j in prob_cols)
    return dataclasses.replace(pred, class_columns=shown)


def _refuse_missing_labels(path, table: _Table, j: int, texts: list) -> None:
    """A missing label (R's ``NA``, an empty cell, ``NaN``) among labels that are otherwise
    numbers or names: refused naming its line, rather than read as one more class."""
    missing = [i for i, t in enumerate(texts) if t.casefold() in _MISSING]
    if not missing:
        return
    present = [t for t in texts if t.casefold() not in _MISSING]
    if present and not all(_is_number(t) for t in present) and texts[missing[0]]:
        return          # names, among which "NA" may be a class (checked against the columns)
    i = missing[0]
    raise ValueError(f"{path}: missing label {texts[i]!r} at {table.unit} {table.lines[i]},"
                     f" column {table.names[j]!r} ({len(missing)} missing in all); drop the"
                     " rows without a label")


def _load_labels(path: Path, classes=None) -> np.ndarray:
    """A labels file: ``.npy``, or text with one label per line or a CSV with a label column."""
    _check_file(path, "labels")
    head = _sniff(path, "labels")
    if head.startswith(_NPY_MAGIC) or path.suffix.lower() == ".npy" or _is_pickle(head):
        return _load_npy(path, "labels")
    table = _read_table(path, None, header=False, fast=False, what="labels")
    if len(table.names) > 1:
        names = [c.strip() for c in table.rows[0]]
        found = [j for j, n in enumerate(names) if n.lower() in LABEL_COLUMNS]
        if len(found) != 1:
            raise ValueError(f"{path}: a labels file with several columns needs one label"
                             f" column named one of {list(LABEL_COLUMNS)}; found {names}")
        values = [row[found[0]].strip() for row in table.rows[1:]]
    else:
        values = [row[0].strip() for row in table.rows]
        if values and values[0].lower() in LABEL_COLUMNS and (
                classes is None or values[0] not in [str(c) for c in classes]):
            values = values[1:]
    if not values:
        raise ValueError(f"{path}: no labels")
    if all(_is_number(v) for v in values):
        return np.array(values, dtype=np.float64)
    return np.array(values)


def _load_pickle(path: Path, split: str) -> Predictions:
    with open_regular(path, "predictions") as fh:
        try:
            obj = pickle.load(fh)  # noqa: S301 - the caller opted in with allow_pickle=True
        except Exception as exc:  # noqa: BLE001 - a malformed pickle, reported as such
            raise ValueError(f"{path}: cannot unpickle ({type(exc).__name__}: {exc})") from None
    try:
        (z_val, y_val), (z_test, y_test) = obj
    except (TypeError, ValueError):
        raise ValueError(f"{path}: expected ((logits_val, labels_val), (logits_test, labels_test))"
                         f" in the pickle, got {type(obj).__name__}") from None
    z, y = (z_val, y_val) if split == "val" else (z_test, y_test)
    return _build(f"{path} [{split}]", np.asarray(y), np.asarray(z), "logits", {})


_CSV_ONLY = ("label_column", "prob_columns", "ignore_columns", "delimiter", "header")
#: Suffixes of the columnar formats read through pyarrow (or pandas), when installed.
_COLUMNAR_SUFFIXES = (".parquet", ".pq", ".feather", ".arrow", ".ipc")
_PARQUET_MAGIC = b"PAR1"
_ARROW_MAGIC = b"ARROW1"


def _read_columnar(path: Path, head: bytes) -> _Table:
    """A Parquet or Feather (Arrow IPC) file's columns, through pyarrow when it is installed,
    else pandas (which needs pyarrow or fastparquet for them).  Neither is a dependency of
    calnotes: they are imported only here, when such a file is given."""
    parquet = head.startswith(_PARQUET_MAGIC) or (
        not head.startswith(_ARROW_MAGIC) and path.suffix.lower() in (".parquet", ".pq"))
    what = "Parquet" if parquet else "Feather (Arrow IPC)"
    convert = ("pip install pyarrow, or convert the file to CSV where it was written (pandas:"
               f" pandas.read_{'parquet' if parquet else 'feather'}(path).to_csv("
               "'predictions.csv', index=False))")
    try:
        import pyarrow  # noqa: F401 - optional: only for Parquet and Feather files
    except ImportError:
        pyarrow = None
    try:
        if pyarrow is not None:
            if parquet:
                import pyarrow.parquet as reader
            else:
                import pyarrow.feather as reader
            table = reader.read_table(path)
            names = [str(name) for name in table.column_names]
            columns = [table.column(i).to_numpy() for i in range(table.num_columns)]
        else:
            try:
                import pandas as pd
            except ImportError:
                raise ImportError(f"{path}: reading {what} files needs pyarrow; "
                                  + convert) from None
            frame = pd.read_parquet(path) if parquet else pd.read_feather(path)
            names = [str(name) for name in frame.columns]
            columns = [frame.iloc[:, j].to_numpy() for j in range(len(names))]
    except ImportError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise ImportError(f"{path}: reading {what} files needs pyarrow; " + convert) \
            from None
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"{path}: cannot read as {what} ({type(exc).__name__}: {exc})") \
            from None
    except Exception as exc:  # noqa: BLE001 - pyarrow's own errors (ArrowInvalid, ...)
        raise ValueError(f"{path}: cannot read as {what} ({type(exc).__name__}: {exc})") \
            from None
    if not names:
        raise ValueError(f"{path}: no columns")
    return _Table.from_columns(names, columns)


def load_predictions(path, *, labels=None, kind: str | None = None, allow_pickle: bool = False,
                     split: str = "test", label_column=None, prob_columns=None,
                     ignore_columns=None, delimiter=None, classes=None, header: bool = True,
                     renormalize=False, force_logits: bool = False) -> Predictions:
    """Load a model's predictions and the true labels from a file.

    Parameters
    ----------
    path : str or path-like
        ``.npz``, ``.npy`` (with ``labels``), CSV (``.csv``, ``.tsv``, ``.txt``, gzipped
        ``.gz``), or a pickle (with ``allow_pickle``).  See the module docstring.
    labels : str, path-like or array_like, optional
        The labels that go with a ``.npy`` prediction file or a CSV without a label column:
        a ``.npy`` file, a text file with one label per line (or a CSV with a label column),
        or an array.
    kind : {"probs", "logits"}, optional
        What the prediction matrix holds.  ``.npz`` files name it themselves; for ``.npy``
        and CSV the default is ``"probs"``.
    allow_pickle : bool, default False
        Opt in to unpickling (NN_calibration logit files).  Only for files you trust.
    split : {"test", "val"}
        Which split of a NN_calibration pickle to return.
    label_column : str or int, optional
        CSV: the label column, by name or (0-based) position.
    prob_columns : sequence of str or int, optional
        CSV: the class columns, in class order (every other column is then ignored).
    ignore_columns : sequence of str or int, optional
        CSV: columns to skip.
    delimiter : str, optional
        CSV: the separator (default: ``,``, ``;`` or tab, whichever the header line uses).
    classes : sequence of str, optional
        Class names in column order, to read labels given as names (or as 1-based numbers:
        ``["1", "2", ...]``).  Without it, a CSV's string labels are read through the class
        columns' names, or in sorted order for two classes (see the module docstring).
    header : bool, default True
        CSV: the first line names the columns.
    renormalize : bool or float, default False
        Divide rows that sum to one within a tolerance (``True``: 0.02) -- rounded
        probabilities -- or percentages by their sums; recorded in the notes.
    force_logits : bool, default False
        Read ``kind="logits"`` even when the matrix lies on the simplex.

    Returns
    -------
    Predictions
        With :attr:`Predictions.notes` saying what the loader did beyond reading.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        A named file does not exist, or is a folder.
    ValueError
        A malformed or empty file (missing or extra arrays, non-numeric data, object arrays,
        a pickle without ``allow_pickle``), or predictions/labels that fail validation (NaN,
        rows not summing to one, labels out of range, length mismatch, empty input).

    Examples
    --------
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> path = save_predictions(os.path.join(folder, "model.npz"), [0, 1],
    ...                         probs=[[0.8, 0.2], [0.4, 0.6]])
    >>> load_predictions(path).probs.tolist()
    [[0.8, 0.2], [0.4, 0.6]]
    >>> csv_path = os.path.join(folder, "model.csv")
    >>> with open(csv_path, "w") as fh:
    ...     _ = fh.write("id;class;cat;dog\\nimg_1;dog;0,2;0,8\\nimg_2;cat;0,9;0,1\\n")
    >>> pred = load_predictions(csv_path)
    >>> pred.labels.tolist(), pred.probs.tolist()
    ([1, 0], [[0.2, 0.8], [0.9, 0.1]])
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a file path, got {type(path).__name__}")
    path = Path(path)
    if kind is not None:
        _check_kind(kind)
    if split not in ("test", "val"):
        raise ValueError(f"split: expected 'test' or 'val', got {split!r}")
    _check_file(path, "predictions")
    options = {"renormalize": renormalize, "force_logits": force_logits, "classes": classes}
    csv_options = {"label_column": label_column, "prob_columns": prob_columns,
                   "ignore_columns": ignore_columns, "delimiter": delimiter, "header": header}
    given_csv = [name for name in _CSV_ONLY if csv_options[name] != (True if name == "header"
                                                                     else None)]
    head = _sniff(path)
    suffix = path.suffix.lower()
    inner = Path(path.stem).suffix.lower() if suffix == ".gz" else suffix
    is_csv = inner in _CSV_SUFFIXES and not head.startswith((_ZIP_MAGIC, _NPY_MAGIC))
    is_columnar = not is_csv and (suffix in _COLUMNAR_SUFFIXES
                                  or head.startswith((_PARQUET_MAGIC, _ARROW_MAGIC)))
    if is_columnar:
        given_csv = [name for name in given_csv if name in ("delimiter", "header")]
    if given_csv and not is_csv:
        raise ValueError(f"{given_csv[0]}: applies to CSV files only, and {path} is not one")
    if is_columnar and not _is_pickle(head):
        table = _read_columnar(path, head)
        return _from_table(path, table, kind or "probs", labels, csv_options, options)
    if _is_pickle(head) or suffix in (".pkl", ".pickle", ".p") or (
            not is_csv and not head.startswith((_ZIP_MAGIC, _NPY_MAGIC))
            and _parses_as_pickle(path)):
        if not allow_pickle:
            _refuse_pickle(path)
        if kind not in (None, "logits") or labels is not None:
            given = ("labels (command line: --labels)" if labels is not None
                     else f"kind={kind!r}")
            raise ValueError(f"{path}: a NN_calibration pickle holds its own logits and labels;"
                             f" do not pass {given}")
        return _load_pickle(path, split)
    if suffix == ".npz" or head.startswith(_ZIP_MAGIC):
        if labels is not None:
            raise ValueError(f"{path}: an .npz holds its own labels; do not pass labels"
                             " (command line: --labels)")
        return _load_npz(path, kind, options)
    if suffix == ".npy" or head.startswith(_NPY_MAGIC):
        if labels is None:
            raise ValueError(f"{path}: a .npy file holds only the predictions; pass the labels"
                             " file too, labels=... (command line: --labels FILE)")
        matrix = _load_npy(path, "predictions")
        if isinstance(labels, (str, os.PathLike)):
            y = _load_labels(Path(labels), classes)
        else:
            y = labels                          # any array-like: from_arrays converts it
        return _build(path, y, matrix, kind or "probs", options)
    if is_csv:
        return _read_csv(path, kind or "probs", labels, csv_options, options)
    raise ValueError(f"{path}: unknown format {suffix or '(no suffix)'!r}; expected .npz, .npy"
                     " (with labels), .csv/.tsv/.txt (or gzipped), .parquet or .feather (with"
                     " pyarrow installed), or a pickle with allow_pickle=True (command line:"
                     " --allow-pickle)")


def save_predictions(path, labels, *, probs=None, logits=None, force: bool = False) -> Path:
    """Write predictions and labels to an ``.npz`` file readable by :func:`load_predictions`.

    The arrays are validated first; an existing file is never replaced unless ``force=True``.

    Returns
    -------
    pathlib.Path
        The path written.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "p.npz")
    >>> _ = save_predictions(path, [1, 0], logits=[[0.0, 2.0], [1.0, -1.0]])
    >>> save_predictions(path, [1, 0], logits=[[0.0, 2.0], [1.0, -1.0]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: ... exists; pass force=True to overwrite it
    """
    path = Path(path)
    if path.suffix.lower() != ".npz":
        raise ValueError(f"path: {path} should end in .npz")
    pred = Predictions.from_arrays(labels, probs, logits=logits, source=str(path))
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists; pass force=True to overwrite it")
    arrays = {"labels": pred.labels}
    if pred.logits is not None:
        arrays["logits"] = pred.logits
    else:
        arrays["probs"] = check_probabilities(probs, name="probs")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return path
