"""Read and write a model's predictions: ``.npz``, ``.npy`` pairs, CSV, and (opt-in) pickle.

Formats
-------
``.npz``
    Arrays ``labels`` (shape ``(n,)``; ``(n, 1)`` is squeezed) and exactly one of ``probs``
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
    before the header are skipped.  The separator is ``,``, ``;`` or a tab, taken from the
    header line unless ``delimiter`` is given.  **Decimal commas** (``0,4``, as European
    locales write them with ``;`` separators) are read as decimal points, with a note.  A
    ``#`` line inside the data is an error that names its line.
    A header row names the columns (``header=False`` numbers them ``0, 1, ...``).  The label
    column is ``label_column`` or the one column named ``label``, ``labels``, ``y``,
    ``y_true``, ``target`` or ``class`` (any case); or the labels come from a separate file or
    array (``labels=``).  The class columns are ``prob_columns`` (in class order) or else every
    other column except: a pandas index column (header empty or ``Unnamed: 0``), columns named
    like identifiers (``id``, ``index``, ``image``, ``file``, ``filename``, ``path``, ``name``,
    ``sample``, ``sample_id``, ...; :data:`ID_COLUMNS`) and ``ignore_columns``; each skipped
    column is named in :attr:`Predictions.notes`.  A single class column is ``P(y = 1)`` of a
    binary problem (or its logit with ``kind="logits"``).  Every error names the file line
    (the header is line 1) and the column.
pickle
    The format of the NN_calibration logit files (Kull et al.'s and Guo et al.'s
    experiments): ``((logits_val, labels_val), (logits_test, labels_test))``.  Unpickling a
    file can run arbitrary code, so it is refused unless the caller passes
    ``allow_pickle=True`` (``--allow-pickle``).

Labels
    Integers ``0..k-1``.  Strings are mapped to classes through ``classes`` (the class names
    in column order; ``--classes``), or, in a CSV, through the class columns' names when every
    label is one of them (``cat`` names the column ``cat``, ``prob_cat`` or ``cat_prob``), and
    otherwise in sorted order -- scikit-learn's ``classes_``, the column order of
    ``predict_proba`` -- when there are exactly ``k`` distinct labels (with a single ``P(y = 1)``
    column: the column is the second label's, or the one it is named after).  Fewer or more
    distinct labels than columns, or labels of which only some are column names, are refused
    (pass ``classes``).  In a CSV whose class columns are numbered in their names (``p1..pk``,
    ``prob_1..prob_k``, ``class_1..class_k``, ``1..k``), numeric labels are those numbers: label
    ``j`` is the column named ``j``; labels that fit neither those numbers nor the column
    positions ``0..k-1`` are refused.  ``True``/``False`` are 1/0 in a binary problem.
    ``classes`` also maps numbers by their text, so ``classes=["1", "2", "3"]`` reads 1-based
    labels.  Every mapping is noted and kept as :attr:`Predictions.label_mapping` (the
    evaluation report prints and saves it).  Labels that never use 0 but use 1 get a note
    (1-based?); labels out of range by exactly that get a hint.  A separate labels file is
    ``.npy`` or text with one label per line (an optional header line ``label``), or a CSV with
    a label column.

Checks (see :mod:`calnotes._validate`)
    Probabilities must lie in ``[0, 1]`` with rows summing to one; a failure says whether the
    numbers look rounded (``renormalize=True``; the message names the row furthest from one),
    like percentages, or like logits.  Logits
    (``kind="logits"``) that already lie on the simplex are refused unless
    ``force_logits=True``; ``-inf`` logits (masked classes) are allowed.  A matrix whose
    shape is the transpose of the labels' length is diagnosed as such.

Every other file is read with ``allow_pickle=False``.  The file's content decides the format
check: a pickle (any protocol) renamed to ``.npz`` is still refused as a pickle.

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
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import (check_labels, check_probabilities, diagnose_probabilities,
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
    """

    labels: np.ndarray
    probs: np.ndarray
    logits: np.ndarray | None = None
    source: str = "arrays"
    notes: tuple = ()
    label_mapping: dict | None = None

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
            Accept ``logits`` that lie on the simplex (refused by default: they are almost
            surely probabilities).
        classes : sequence of str, optional
            Class names in column order: labels are looked up by their text.
        column_names : sequence of str, optional
            The class columns' names (CSV).  String labels are mapped through them when every
            label is one of them (also with a shared prefix or suffix such as ``prob_``
            removed), and otherwise in sorted order (scikit-learn's ``classes_``, the column
            order of ``predict_proba``) when there are as many distinct labels as columns.
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

        Labels that are not the columns' names are taken in sorted order (scikit-learn's
        ``classes_``), and labels ``1..k`` follow columns named ``p1..pk``:

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
        notes = []
        what = "logits" if logits is not None else "probs"
        y = _as_array(labels, "labels")
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        raw = _as_array(logits if logits is not None else probs, what)
        _check_shapes(y, raw, what)
        if raw.ndim == 2 and raw.shape[1] == 1:
            raw = raw[:, 0]
        if logits is not None:
            from .._validate import check_logits
            from ..recalibrate import softmax
            if raw.ndim == 2 and not force_logits and looks_like_probabilities(raw):
                raise ValueError(
                    "logits: every value lies in [0, 1] and every row sums to 1: these look"
                    " like probabilities, not logits; drop kind='logits' (command line:"
                    " --logits), or pass force_logits=True (command line: --force-logits) if"
                    " they really are logits")
            if raw.ndim == 1:
                raw = np.column_stack([np.zeros(raw.shape[0]), np.asarray(raw, dtype=np.float64)])
                notes.append("logits: one column, read as the logit of class 1 of a binary"
                             " problem (probabilities 1 - sigmoid(z), sigmoid(z))")
            z = check_logits(raw, name="logits")
            P = softmax(z)
        else:
            z = None
            if renormalize is not False and raw.ndim == 2:
                raw, note = renormalize_rows(raw, renormalize, name="probs")
                if note:
                    notes.append(note)
            try:
                P = check_probabilities(raw, name="probs", option_hints=True)
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


def _as_array(values, name: str) -> np.ndarray:
    if values is None:
        raise ValueError(f"{name}: missing")
    arr = np.asarray(values)
    if arr.dtype == object:
        raise ValueError(f"{name}: holds Python objects (mixed types?); pass numbers")
    return arr


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
    if len(distinct) != k:
        few = "fewer" if len(distinct) < k else "more"
        why = ("cannot tell which class has no sample" if len(distinct) < k
               else "some labels would have no column")
        which = ("the class columns have no names (no header)" if unnamed
                 else f"not the class columns' names ({names})")
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
        assumed = ("assuming the columns are in sorted label order (scikit-learn's classes_,"
                   " the column order of predict_proba); if they are not, pass classes=[...]"
                   " in column order")
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
    if path.stat().st_size > _PICKLE_SNIFF_BYTES:
        return False
    data = path.read_bytes()
    try:
        last = None
        for opcode, _, pos in pickletools.genops(io.BytesIO(data)):
            last = (opcode.name, pos)
    except Exception:  # noqa: BLE001 - any decoding failure means "not a pickle"
        return False
    return last is not None and last[0] == "STOP" and last[1] == len(data) - 1


def _sniff(path: Path) -> bytes:
    with open(path, "rb") as fh:
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
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a directory, not a file ({what})")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if path.stat().st_size == 0:
        raise ValueError(f"{path}: empty file (0 bytes)")


def _load_npy(path: Path, name: str) -> np.ndarray:
    head = _sniff(path)
    if _is_pickle(head):
        _refuse_pickle(path)
    if not head.startswith(_NPY_MAGIC):
        raise ValueError(f"{path}: not a .npy file (no NumPy header); for {name} pass a .npy array")
    try:
        with open(path, "rb") as fh:
            arr = np.load(fh, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"{path}: {name} holds Python objects, which calnotes does not"
                         f" unpickle; save a numeric array ({exc})") from None
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot read as .npy ({exc})") from None
    return _numeric(arr, path, name)


def _numeric(arr, path, name: str) -> np.ndarray:
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{path}: {name} is not a NumPy array (a zip member not written by"
                         " numpy.savez?)")
    if arr.dtype.kind not in "biufUS":
        raise ValueError(f"{path}: {name} has dtype {arr.dtype}; expected numbers")
    if arr.dtype.kind in "US" and name != "labels":
        raise ValueError(f"{path}: {name} has dtype {arr.dtype}; expected numbers")
    return arr


def _load_npz(path: Path, kind: str | None, options: dict) -> Predictions:
    # The file is opened here (not by np.load) so that it is closed even when it is corrupt.
    with open(path, "rb") as fh:
        try:
            archive = np.load(fh, allow_pickle=False)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            if "allow_pickle" in str(exc):
                _refuse_pickle(path)
            raise ValueError(f"{path}: cannot read as .npz ({exc})") from None
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ValueError(f"{path}: a single .npy array, not an .npz archive; pass it with"
                             " its labels file (labels=..., command line: --labels FILE)")
        with archive:
            found, arrays = _npz_arrays(path, archive, kind)
    return _build(path, arrays["labels"], arrays[found], found, options)


def _npz_arrays(path: Path, archive, kind: str | None):
    keys = set(archive.files)
    if "labels" not in keys:
        raise ValueError(f"{path}: no array named 'labels' (found {sorted(keys)}); an .npz"
                         " needs 'labels' and one of 'probs' or 'logits'")
    present = [k for k in _KINDS if k in keys]
    if len(present) != 1:
        what = "both" if len(present) == 2 else "neither"
        raise ValueError(f"{path}: has {what} of 'probs' and 'logits' (found {sorted(keys)});"
                         " an .npz needs exactly one")
    found = present[0]
    if kind is not None and kind != found:
        raise ValueError(f"{path}: kind={kind!r} but the file holds {found!r}")
    arrays = {}
    for key in ("labels", found):
        try:
            arrays[key] = _numeric(archive[key], path, key)
        except ValueError as exc:
            if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                raise ValueError(f"{path}: array {key!r} holds Python objects, which calnotes"
                                 " does not unpickle; save numeric arrays") from None
            raise
        except (OSError, zipfile.BadZipFile, EOFError) as exc:
            raise ValueError(f"{path}: cannot read array {key!r} ({exc})") from None
    return found, arrays


# ------------------------------------------------------------------------------ text tables

def _read_text(path: Path) -> str:
    """The file as text: UTF-8 (with or without BOM), UTF-16 with BOM; gunzipped first if it is
    gzip (by content, whatever the suffix).  Line ends become ``\\n``."""
    data = path.read_bytes()
    if data.startswith(b"\x1f\x8b"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{path}: cannot decompress as gzip ({exc})") from None
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
    """A CSV file's columns: ``names``, and either ``values`` (every cell a number: the fast
    path, numpy's parser) or ``rows`` (cells as text).  ``lines`` (file line of each data row)
    is worked out only when a message needs it."""

    def __init__(self, names, delimiter, notes, body, first_line, rows=None, values=None,
                 lines=None):
        self.names, self.delimiter, self.notes = names, delimiter, notes
        self._body, self._first_line = body, first_line
        self.rows, self.values, self._lines = rows, values, lines

    @property
    def n_rows(self) -> int:
        return len(self.rows) if self.rows is not None else self.values.shape[0]

    @property
    def lines(self) -> list:
        if self._lines is None:
            self._lines = [line for _, line in _csv_rows(self._body, self.delimiter,
                                                         self._first_line)]
        return self._lines

    def cells(self, j: int) -> list:
        if self.rows is not None:
            return [row[j] for row in self.rows]
        return [repr(float(v)) for v in self.values[:, j]]


def _csv_rows(body: str, delimiter: str, first_line: int):
    """``(row, file line)`` for each non-blank row of ``body``, whose first line is
    ``first_line`` of the file."""
    reader = csv.reader(io.StringIO(body), delimiter=delimiter)
    for row in reader:
        if not row or all(not c.strip() for c in row):
            continue
        yield row, reader.line_num + first_line - 1


def _read_table(path: Path, delimiter, header: bool, fast: bool = True) -> _Table:
    text = _read_text(path)
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
    if delimiter is None:
        inner = path.suffix.lower() if path.suffix.lower() != ".gz" else \
            Path(path.stem).suffix.lower()
        counts = {d: first.count(d) for d in (",", ";", "\t")}
        delimiter = max(counts, key=counts.get) if max(counts.values()) else (
            "\t" if inner == ".tsv" else ",")
    elif not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter: expected one character, got {delimiter!r}")
    if header:
        names = [h.strip() for h in next(csv.reader([first], delimiter=delimiter))]
        body, first_line = text[end + 1:], line_no + 1
    else:
        names = [str(i) for i in range(len(next(csv.reader([first], delimiter=delimiter))))]
        body, first_line = text[pos:], line_no
    if len(names) == 1 and delimiter == "," and any(d in names[0] for d in (";", "\t")):
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
        if len(row) != len(names):
            if row[0].lstrip().startswith("#"):
                raise ValueError(f"{path}: line {line} is a comment inside the data; only"
                                 f" comment lines before the {what} are skipped")
            raise ValueError(f"{path}: line {line} has {len(row)} fields, the {what} has"
                             f" {len(names)}")
        rows.append(row)
        lines.append(line)
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


def _float_column(path, table: _Table, j: int, notes: list) -> np.ndarray:
    if table.values is not None:
        return table.values[:, j]
    cells = table.cells(j)
    try:
        return np.array(cells, dtype=np.float64)
    except ValueError:
        pass
    name = table.names[j]
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
    for cell, line in zip(cells, table.lines):
        try:
            float(cell)
        except ValueError:
            what = "an empty cell" if not cell.strip() else f"{cell!r} is not a number"
            raise ValueError(f"{path}: line {line}, column {name!r}: {what}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _locator(table: _Table, prob_cols: list, label_col):
    """Rewrite array positions in a validation message as file lines and column names."""
    names = [table.names[j] for j in prob_cols]
    label_name = table.names[label_col] if label_col is not None else None

    def cell(match):
        i, j = int(match.group(1)), int(match.group(2))
        if len(names) == 1:     # a single class column: binary logits are stored as [0, z]
            j = 0
        return f"line {table.lines[i]}, column {names[j]!r}" if j < len(names) \
            else f"line {table.lines[i]}"

    def locate(message: str) -> str:
        message = re.sub(r"at index \[(\d+), (\d+)\]", lambda m: "at " + cell(m), message)
        message = re.sub(r"at index \[(\d+)\]",
                         lambda m: f"at line {table.lines[int(m.group(1))]}, column {names[0]!r}",
                         message)
        message = re.sub(r"\brow (\d+) sums",
                         lambda m: f"line {table.lines[int(m.group(1))]}: the row sums", message)
        if message.startswith("labels:") and label_name is not None:
            message = re.sub(r"at index (\d+)", lambda m: (
                f"at line {table.lines[int(m.group(1))]}, column {label_name!r}"), message)
        return message
    return locate


def _read_csv(path: Path, kind: str, labels, csv_options: dict, options: dict) -> Predictions:
    label_column = csv_options.get("label_column")
    prob_columns = csv_options.get("prob_columns")
    ignore_columns = csv_options.get("ignore_columns") or ()
    header = csv_options.get("header", True)
    table = _read_table(path, csv_options.get("delimiter"), header)
    notes = list(table.notes)
    names = table.names
    if not table.n_rows:
        raise ValueError(f"{path}: no data rows after the header")
    if not header and labels is None and label_column is None:
        raise ValueError(f"{path}: without a header, say which column holds the labels:"
                         " label_column=0 (command line: --label-column 0), or pass a labels"
                         " file")
    # the label column
    if label_column is not None:
        if labels is not None:
            raise ValueError("label_column: the labels come from labels=...; give one of them")
        label_col = _find_column(path, names, label_column, "label_column")
    elif labels is None:
        found = [j for j, n in enumerate(names) if n.lower() in LABEL_COLUMNS]
        if len(found) != 1:
            raise ValueError(
                f"{path}: expected exactly one label column named one of {list(LABEL_COLUMNS)}"
                f" in the header, found {[names[j] for j in found] or 'none'} in {names};"
                " name it with label_column=... (command line: --label-column NAME), or pass"
                " the labels in a separate file (labels=..., command line: --labels FILE)")
        label_col = found[0]
    else:
        label_col = None
        clash = [n for n in names if n.lower() in LABEL_COLUMNS]
        if clash:
            raise ValueError(f"{path}: has a label column {clash[0]!r} and labels were given"
                             " separately; give one of them")
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
            elif j == 0 and (name == "" or re.fullmatch(r"Unnamed: \d+", name)):
                notes.append(f"column {j + 1} ({name or 'no name'}) skipped: a pandas index")
            elif name.lower() in ID_COLUMNS:
                notes.append(f"column {name!r} skipped: an identifier, not a class")
            else:
                prob_cols.append(j)
    if not prob_cols:
        raise ValueError(f"{path}: no probability columns (columns: {names}); a binary file"
                         " needs one column with P(y=1), a k-class file one column per class")
    matrix = np.column_stack([_float_column(path, table, j, notes) for j in prob_cols])
    if matrix.shape[1] == 1:
        matrix = matrix[:, 0]
    if label_col is not None:
        if table.values is not None:
            y = table.values[:, label_col]
        else:
            y = np.array([row[label_col].strip() for row in table.rows])
            if all(_is_number(t) for t in y.tolist()):
                y = _float_column(path, table, label_col, notes)
    else:
        y = _load_labels(Path(labels), options.get("classes")) \
            if isinstance(labels, (str, os.PathLike)) else np.asarray(labels)
    # without a header the names are positions ("0", "1", ...), which name no class
    options = dict(options, column_names=[names[j] if header else "" for j in prob_cols])
    return _build(path, y, matrix, kind, options, notes,
                  locate=_locator(table, prob_cols, label_col))


def _load_labels(path: Path, classes=None) -> np.ndarray:
    """A labels file: ``.npy``, or text with one label per line or a CSV with a label column."""
    _check_file(path, "labels")
    head = _sniff(path)
    if head.startswith(_NPY_MAGIC) or path.suffix.lower() == ".npy" or _is_pickle(head):
        return _load_npy(path, "labels")
    table = _read_table(path, None, header=False, fast=False)
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
    with open(path, "rb") as fh:
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
        columns' names or in sorted order (see the module docstring).
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
    if given_csv and not is_csv:
        raise ValueError(f"{given_csv[0]}: applies to CSV files only, and {path} is not one")
    if _is_pickle(head) or suffix in (".pkl", ".pickle", ".p") or (
            not is_csv and not head.startswith((_ZIP_MAGIC, _NPY_MAGIC))
            and _parses_as_pickle(path)):
        if not allow_pickle:
            _refuse_pickle(path)
        if kind not in (None, "logits") or labels is not None:
            raise ValueError(f"{path}: a NN_calibration pickle holds its own logits and labels;"
                             " do not pass labels or kind='probs'")
        return _load_pickle(path, split)
    if suffix == ".npz" or head.startswith(_ZIP_MAGIC):
        if labels is not None:
            raise ValueError(f"{path}: an .npz holds its own labels; do not pass labels")
        return _load_npz(path, kind, options)
    if suffix == ".npy" or head.startswith(_NPY_MAGIC):
        if labels is None:
            raise ValueError(f"{path}: a .npy file holds only the predictions; pass the labels"
                             " file too (labels=..., command line: --labels FILE)")
        matrix = _load_npy(path, "predictions")
        if isinstance(labels, (str, os.PathLike)):
            y = _load_labels(Path(labels), classes)
        else:
            y = np.asarray(labels)
        return _build(path, y, matrix, kind or "probs", options)
    if is_csv:
        return _read_csv(path, kind or "probs", labels, csv_options, options)
    raise ValueError(f"{path}: unknown format {suffix or '(no suffix)'!r}; expected .npz, .npy"
                     " (with labels), .csv/.tsv/.txt (or gzipped), or a pickle with"
                     " allow_pickle=True")


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
