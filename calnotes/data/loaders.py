"""Read and write a model's predictions: ``.npz``, ``.npy`` pairs, CSV, and (opt-in) pickle.

Formats
-------
``.npz``
    Arrays ``labels`` (shape ``(n,)``) and exactly one of ``probs`` (``(n, k)`` rows summing to
    one, or ``(n,)`` binary ``P(y = 1)``) or ``logits`` (``(n, k)`` real).  Written by
    :func:`save_predictions`.
``.npy`` pair
    The predictions in one file and the labels in another (``labels=`` argument; ``--labels`` on
    the command line).  ``kind="probs"`` (default) or ``"logits"`` says what the matrix holds.
CSV
    A header row; one label column named ``label`` (also accepted: ``labels``, ``y``,
    ``y_true``, ``target``); every other column is one class's probability (or logit with
    ``kind="logits"``), in class order.
pickle
    The format of the NN_calibration logit files (Kull et al.'s and Guo et al.'s
    experiments): ``((logits_val, labels_val), (logits_test, labels_test))``.  Unpickling a
    file can run arbitrary code, so it is refused unless the caller passes
    ``allow_pickle=True`` (``--allow-pickle``).

Every other file is read with ``allow_pickle=False``.  The file's content decides the format
check: a pickle renamed to ``.npz`` is still refused as a pickle.

Used by :func:`calnotes.evaluate` and the chapter "Evaluate your own model".
"""

from __future__ import annotations

import csv
import os
import pickle
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import check_labels, check_probabilities

__all__ = ["Predictions", "load_predictions", "save_predictions", "LABEL_COLUMNS"]

#: Accepted names of the label column of a CSV file (case-insensitive).
LABEL_COLUMNS = ("label", "labels", "y", "y_true", "target")
_KINDS = ("probs", "logits")
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


@dataclass(frozen=True)
class Predictions:
    """A model's predictions on labelled samples.

    Attributes
    ----------
    labels : numpy.ndarray of int64, shape (n,)
    probs : numpy.ndarray of float64, shape (n, k)
        Row-stochastic; a binary ``P(y = 1)`` vector is stored as ``[1 - p, p]``.
    logits : numpy.ndarray or None
        The logits when the file held logits (``probs`` is then their softmax).
    source : str
        Where the predictions came from (a path, or a short description).
    """

    labels: np.ndarray
    probs: np.ndarray
    logits: np.ndarray | None = None
    source: str = "arrays"

    @property
    def n_samples(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.probs.shape[1])

    @classmethod
    def from_arrays(cls, labels, probs=None, *, logits=None, source: str = "arrays"):
        """Validate arrays and build :class:`Predictions` (exactly one of probs / logits).

        Examples
        --------
        >>> pred = Predictions.from_arrays([0, 1], [[0.9, 0.1], [0.3, 0.7]])
        >>> pred.n_samples, pred.n_classes
        (2, 2)
        >>> Predictions.from_arrays([0, 1], [0.2, 0.8]).probs.tolist()  # binary P(y=1)
        [[0.8, 0.2], [0.19999999999999996, 0.8]]
        """
        if (probs is None) == (logits is None):
            raise ValueError(f"{source}: give exactly one of probs or logits")
        if logits is not None:
            from ..recalibrate import check_logits, softmax
            z = check_logits(logits, name="logits")
            P = softmax(z)
        else:
            z = None
            P = check_probabilities(probs, name="probs")
            if P.ndim == 1:
                P = np.column_stack([1.0 - P, P])
        y = check_labels(labels, n_classes=P.shape[1], n_samples=P.shape[0], name="labels")
        return cls(labels=y, probs=P, logits=z, source=source)


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


def _build(path, labels, matrix, kind: str) -> Predictions:
    try:
        if kind == "logits":
            return Predictions.from_arrays(labels, logits=matrix, source=str(path))
        return Predictions.from_arrays(labels, matrix, source=str(path))
    except (ValueError, TypeError) as exc:
        hint = ""
        if kind == "probs" and ("sums to" in str(exc) or "outside [0, 1]" in str(exc)):
            hint = " (if the file holds logits, pass kind='logits' / --logits)"
        raise type(exc)(f"{path}: {exc}{hint}") from None


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
    return _numeric(arr, path, name)


def _numeric(arr: np.ndarray, path, name: str) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{path}: {name} has dtype {arr.dtype}; expected numbers")
    return arr


def _load_npz(path: Path, kind: str | None) -> Predictions:
    # The file is opened here (not by np.load) so that it is closed even when it is corrupt.
    with open(path, "rb") as fh:
        try:
            archive = np.load(fh, allow_pickle=False)
        except (ValueError, OSError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{path}: cannot read as .npz ({exc})") from None
        with archive:
            found, arrays = _npz_arrays(path, archive, kind)
    return _build(path, arrays["labels"], arrays[found], found)


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


def _read_csv(path: Path, kind: str) -> Predictions:
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"{path}: empty CSV file; expected a header row") from None
        header = [h.strip() for h in header]
        lower = [h.lower() for h in header]
        found = [i for i, h in enumerate(lower) if h in LABEL_COLUMNS]
        if len(found) != 1:
            raise ValueError(
                f"{path}: expected exactly one label column named one of {list(LABEL_COLUMNS)}"
                f" in the header, found {[header[i] for i in found] or 'none'} in {header}")
        label_col = found[0]
        try:  # fast path: numpy's C parser; the loop below only runs to explain a failure
            with warnings.catch_warnings():  # an empty body is reported below, not as a warning
                warnings.simplefilter("ignore", UserWarning)
                table = np.loadtxt(fh, delimiter=",", ndmin=2, dtype=np.float64)
        except ValueError:
            fh.seek(0)
            next(reader)
        else:
            return _split_csv(path, table, label_col, len(header), kind)
        rows = []
        for line_no, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}: line {line_no} has {len(row)} fields, the header has"
                                 f" {len(header)}")
            values = []
            for col, cell in enumerate(row):
                try:
                    values.append(float(cell))
                except ValueError:
                    raise ValueError(f"{path}: line {line_no}, column {header[col]!r}: {cell!r}"
                                     " is not a number") from None
            rows.append(values)
    return _split_csv(path, np.asarray(rows, dtype=np.float64).reshape(len(rows), -1),
                      label_col, len(header), kind)


def _split_csv(path, table, label_col, n_columns, kind) -> Predictions:
    if table.shape[0] == 0:
        raise ValueError(f"{path}: no data rows after the header")
    if table.shape[1] != n_columns:
        raise ValueError(f"{path}: rows have {table.shape[1]} fields, the header has {n_columns}")
    labels = table[:, label_col]
    matrix = np.delete(table, label_col, axis=1)
    if matrix.shape[1] == 1:
        if kind == "logits":
            raise ValueError(f"{path}: one score column; logits need one column per class")
        matrix = matrix[:, 0]
    return _build(path, labels, matrix, kind)


def _load_pickle(path: Path, split: str) -> Predictions:
    with open(path, "rb") as fh:
        obj = pickle.load(fh)  # noqa: S301 - the caller opted in with allow_pickle=True
    try:
        (z_val, y_val), (z_test, y_test) = obj
    except (TypeError, ValueError):
        raise ValueError(f"{path}: expected ((logits_val, labels_val), (logits_test, labels_test))"
                         f" in the pickle, got {type(obj).__name__}") from None
    z, y = (z_val, y_val) if split == "val" else (z_test, y_test)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    return _build(f"{path} [{split}]", y, np.asarray(z), "logits")


def load_predictions(path, *, labels=None, kind: str | None = None, allow_pickle: bool = False,
                     split: str = "test") -> Predictions:
    """Load a model's predictions and the true labels from a file.

    Parameters
    ----------
    path : str or path-like
        ``.npz``, ``.npy`` (with ``labels``), ``.csv``, or a pickle (with ``allow_pickle``).
    labels : str or path-like, optional
        The ``.npy`` file of labels that goes with a ``.npy`` prediction file.
    kind : {"probs", "logits"}, optional
        What the prediction matrix holds.  ``.npz`` files name it themselves; for ``.npy``
        and CSV the default is ``"probs"``.
    allow_pickle : bool, default False
        Opt in to unpickling (NN_calibration logit files).  Only for files you trust.
    split : {"test", "val"}
        Which split of a NN_calibration pickle to return.

    Returns
    -------
    Predictions

    Raises
    ------
    FileNotFoundError
        A named file does not exist.
    ValueError
        A malformed file (missing or extra arrays, non-numeric data, object arrays, a pickle
        without ``allow_pickle``), or predictions/labels that fail validation (NaN, rows not
        summing to one, labels out of range, length mismatch, empty input).

    Examples
    --------
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> path = save_predictions(os.path.join(folder, "model.npz"), [0, 1],
    ...                         probs=[[0.8, 0.2], [0.4, 0.6]])
    >>> load_predictions(path).probs.tolist()
    [[0.8, 0.2], [0.4, 0.6]]
    """
    path = Path(path)
    if kind is not None:
        _check_kind(kind)
    if split not in ("test", "val"):
        raise ValueError(f"split: expected 'test' or 'val', got {split!r}")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    head = _sniff(path)
    suffix = path.suffix.lower()
    if _is_pickle(head) or suffix in (".pkl", ".pickle", ".p"):
        if not allow_pickle:
            _refuse_pickle(path)
        if kind not in (None, "logits") or labels is not None:
            raise ValueError(f"{path}: a NN_calibration pickle holds its own logits and labels;"
                             " do not pass labels or kind='probs'")
        return _load_pickle(path, split)
    if suffix == ".npz" or head.startswith(_ZIP_MAGIC):
        if labels is not None:
            raise ValueError(f"{path}: an .npz holds its own labels; do not pass labels")
        return _load_npz(path, kind)
    if suffix == ".npy" or head.startswith(_NPY_MAGIC):
        if labels is None:
            raise ValueError(f"{path}: a .npy file holds only the predictions; pass the labels"
                             " file too (labels=..., command line: --labels FILE)")
        labels = Path(labels)
        if not labels.is_file():
            raise FileNotFoundError(f"{labels}: no such file")
        matrix = _load_npy(path, "predictions")
        y = _load_npy(labels, "labels")
        return _build(path, y, matrix, kind or "probs")
    if suffix in (".csv", ".txt"):
        if labels is not None:
            raise ValueError(f"{path}: a CSV file holds its own label column; do not pass labels")
        return _read_csv(path, kind or "probs")
    raise ValueError(f"{path}: unknown format {suffix or '(no suffix)'!r}; expected .npz, .npy"
                     " (with labels), .csv, or a pickle with allow_pickle=True")


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
    FileExistsError: ... exists; pass force=True (command line: --force) to overwrite it
    """
    path = Path(path)
    if path.suffix.lower() != ".npz":
        raise ValueError(f"path: {path} should end in .npz")
    pred = Predictions.from_arrays(labels, probs, logits=logits, source=str(path))
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists; pass force=True (command line: --force) to"
                              " overwrite it")
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
