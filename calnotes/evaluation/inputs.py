"""One door for every input form: :func:`as_predictions` turns what a user holds into
validated :class:`calnotes.data.Predictions`.

:func:`calnotes.evaluate` computes; reading the input is this module's job, and every option
that says *how to read* the input lives here (``kind``, ``label_column``, ``prob_columns``,
``ignore_columns``, ``delimiter``, ``classes``, ``header``, ``renormalize``, ``force_logits``,
``allow_pickle``, ``split``: :data:`LOADER_OPTIONS`).  ``evaluate(x, labels=y)`` calls
:func:`as_predictions` itself; pass the options through it::

    report = calnotes.evaluate(calnotes.as_predictions(df, label_column="species"))

Input forms
    * a file or folder that :func:`calnotes.data.load_predictions` reads (``.npz``, a
      ``.npy`` pair, CSV in every dialect, Parquet/Feather, a NN_calibration pickle with
      ``allow_pickle=True``), hashed when it is loaded (``Predictions.input_sha256``,
      ``labels_sha256``: the bytes that were read; a file that changes while it is read is
      refused); a path that is not a regular file (a FIFO, a pipe, a device, a socket) is
      refused before anything reads it, and an array larger than
      ``calnotes.data.loaders.MAX_ARRAY_BYTES`` before it is allocated;
    * a Dask DataFrame (computed, then read like a pandas one; a polars LazyFrame is refused
      with the advice to ``.collect()`` it);
    * NumPy arrays and every array-like (:func:`calnotes._validate.as_array`): lists, pandas
      and polars Series, torch / JAX / CuPy arrays through ``__array__`` or ``__dlpack__``
      (a GPU tensor is copied to the host, bfloat16 widened, each with a note); one rule for
      every array argument: a masked array with a masked entry and complex numbers are
      refused naming the argument; rows are matched by position, never by an index;
    * pandas and polars DataFrames, read as a CSV with its header
      (:meth:`calnotes.data.Predictions.from_frame`: the label column, the class columns,
      string labels, skipped id and index columns);
    * a fitted classifier with ``predict_proba`` (scikit-learn) and ``X``
      (:meth:`calnotes.data.Predictions.from_estimator`: ``classes_`` name the classes);
    * out of core (``out_of_core=True``, a Dask array or a folder of shards): a
      :class:`ChunkedPredictions` of Dask arrays, read while the report is computed
      (:mod:`calnotes._engine.out_of_core`);
    * :class:`~calnotes.data.Predictions` (returned as it is: validated once);
    * a :class:`DeferredInput` (an input with its options, read when
      :func:`calnotes.evaluate` has checked its own: what the command line passes).

Optional libraries stay optional: nothing here imports pandas, polars, torch or Dask unless
the input is one of their objects (Dask: out of core only).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .._engine import out_of_core as _scale
from .._validate import as_array, is_array_like
from ..data.loaders import (Predictions, check_regular_file, is_classifier,
                            load_predictions)

__all__ = ["as_predictions", "ChunkedPredictions", "DeferredInput", "LOADER_OPTIONS"]

#: The options of :func:`as_predictions` that say how to read the input, with their defaults
#: (``kind``, ``allow_pickle`` and ``split`` first): only options that differ from their
#: default are passed on to :func:`calnotes.data.load_predictions` and
#: :meth:`calnotes.data.Predictions.from_arrays`.
LOADER_OPTIONS = {"kind": None, "allow_pickle": False, "split": "test", "label_column": None,
                  "prob_columns": None, "ignore_columns": None, "delimiter": None,
                  "classes": None, "header": True, "renormalize": False,
                  "force_logits": False}
#: The loader options that only describe a file (the others apply to arrays too).
_FILE_ONLY = ("label_column", "prob_columns", "ignore_columns", "delimiter", "header")
#: The options passed on as keywords (``kind``, ``allow_pickle``, ``split`` are arguments).
_PASSED = ("label_column", "prob_columns", "ignore_columns", "delimiter", "classes", "header",
           "renormalize", "force_logits")
_OOC_NAME = "out_of_core (command line: --out-of-core)"


@dataclass(frozen=True)
class ChunkedPredictions:
    """Predictions read out of core: Dask arrays, computed in row chunks by
    :func:`calnotes.evaluate` (:mod:`calnotes._engine.out_of_core`).

    Attributes
    ----------
    probs : dask.array.Array
        ``(n, k)`` probabilities (or ``(n,)`` binary ``P(y = 1)``), not yet read.
    labels : dask.array.Array or array_like
    source : str
    """

    probs: object
    labels: object
    source: str
    _snapshots: tuple = field(default=(None, None), repr=False, compare=False)

    def verified_hashes(self) -> list:
        """SHA-256 of the input files, checked after the computation has read them."""
        return _verified(self._snapshots)


@dataclass(frozen=True)
class DeferredInput:
    """An input with the options to read it, read by :func:`as_predictions` later: when
    :func:`calnotes.evaluate` has checked its own options, so that a bad bin count is reported
    before a large file is read, and the reading is timed with the report (what the command
    line passes).

    Examples
    --------
    >>> later = DeferredInput(np.array([[2.0, 0.0], [0.0, 1.0]]), [0, 1], {"kind": "logits"})
    >>> as_predictions(later).probs.round(3).tolist()
    [[0.881, 0.119], [0.269, 0.731]]
    """

    predictions: object
    labels: object = None
    options: dict = field(default_factory=dict)


def as_predictions(predictions, labels=None, *, X=None, kind: str | None = None,
                   allow_pickle: bool = False, split: str = "test", label_column=None,
                   prob_columns=None, ignore_columns=None, delimiter=None, classes=None,
                   header: bool = True, renormalize=False, force_logits: bool = False,
                   out_of_core=None):
    """Turn any input form into validated predictions (see the module docstring).

    Parameters
    ----------
    predictions : path-like, array_like, DataFrame, classifier or Predictions
        A predictions file or folder of shards, a probability (or, with ``kind="logits"``,
        logit) matrix ``(n, k)`` or binary vector ``(n,)`` in any array form, a pandas or
        polars DataFrame, a fitted classifier with ``predict_proba`` (with ``X``), a Dask
        array, or :class:`~calnotes.data.Predictions` (returned unchanged).
    labels : path-like or array_like, optional
        The labels: required with an array or a classifier; with a ``.npy`` file or a
        DataFrame or CSV without a label column (an array, or a labels file).
    X : array_like, optional
        The samples a classifier is evaluated on (``predict_proba(X)``).
    kind : {"probs", "logits"}, optional
        What a ``.npy``/CSV file, a DataFrame or an array holds (default ``"probs"``).
    allow_pickle : bool, default False
        Allow a NN_calibration pickle file (only for files you trust).
    split : {"test", "val"}
        Split of a NN_calibration pickle.
    label_column, prob_columns, ignore_columns, delimiter, classes, header, renormalize, \
force_logits
        Options of :func:`calnotes.data.load_predictions`; ``label_column``,
        ``prob_columns`` and ``ignore_columns`` also read a DataFrame, and ``classes``,
        ``renormalize`` and ``force_logits`` arrays.
    out_of_core : bool, optional
        ``True``: read a ``.npy`` file memory-mapped (or an array) in row chunks; ``None``
        (default): out of core for a Dask array and a folder of shards only; ``False``:
        compute a Dask array into memory.

    Returns
    -------
    Predictions or ChunkedPredictions
        Validated once: :func:`calnotes.evaluate` does not check them again.  A loaded file
        carries its SHA-256 (``input_sha256``, ``labels_sha256``).

    Raises
    ------
    TypeError, ValueError
        An input of no known form, or an option that does not apply to it; the message
        names the argument.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [7, 8, 9], "y": ["cat", "dog", "dog"],
    ...                    "cat": [0.8, 0.3, 0.1], "dog": [0.2, 0.7, 0.9]})
    >>> pred = as_predictions(df, label_column="y")
    >>> pred.labels.tolist(), pred.class_columns
    ([0, 1, 1], ('cat', 'dog'))
    >>> as_predictions(np.array([[2.0, 0.0], [0.0, 1.0]]), [0, 1], kind="logits").probs.round(3)
    array([[0.881, 0.119],
           [0.269, 0.731]])
    """
    options = _given_options(locals())
    if isinstance(predictions, DeferredInput):
        _refuse_options("a DeferredInput holds its own labels and options", labels, kind,
                        options, X)
        return as_predictions(predictions.predictions, predictions.labels,
                              out_of_core=out_of_core, **predictions.options)
    if isinstance(predictions, ChunkedPredictions):
        _refuse_options("a ChunkedPredictions object is already opened", labels, kind,
                        options, X)
        return predictions
    predictions, labels = _computed_frames(predictions, labels, out_of_core)
    ooc_snaps = (_snapshots(predictions, labels) if out_of_core is True
                 and isinstance(predictions, (str, os.PathLike)) else (None, None))
    chunked = _out_of_core_input(predictions, labels, out_of_core, kind, options)
    if chunked is not None:
        return ChunkedPredictions(*chunked, _snapshots=tuple(ooc_snaps))
    _close(ooc_snaps)
    if out_of_core is False and _scale.is_dask_array(predictions):
        predictions = np.asarray(predictions.compute())
        if _scale.is_dask_array(labels):
            labels = np.asarray(labels.compute())
    snaps = (_snapshots(predictions, labels) if isinstance(predictions, (str, os.PathLike))
             else [None, None])
    try:                                         # hashed at load time: the bytes loaded
        pred = _convert(predictions, labels, kind, allow_pickle, split, options, X)
    finally:
        hashes = _verified(snaps)
    if hashes != [None, None]:
        pred = replace(pred, input_sha256=hashes[0], labels_sha256=hashes[1])
    return pred


def _given_options(values: dict) -> dict:
    """The loader options among ``values`` that differ from their defaults."""
    return {name: values[name] for name in _PASSED if values[name] is not LOADER_OPTIONS[name]
            and not (isinstance(values[name], bool) and values[name] == LOADER_OPTIONS[name])}


def _refuse_options(why: str, labels, kind, options, X) -> None:
    given = [name for name, value in (("labels", labels), ("kind", kind), ("X", X))
             if value is not None] + list(options)
    if given:
        raise ValueError(f"{given[0]}: {why}; pass loader options to calnotes.as_predictions"
                         " with a file or an array")


def _convert(predictions, labels, kind, allow_pickle, split, options, X=None) -> Predictions:
    """In-memory :class:`Predictions` of any input form."""
    if kind not in (None, "probs", "logits"):
        raise ValueError(f"kind: expected 'probs' or 'logits', got {kind!r}")
    if is_classifier(predictions):     # a fitted classifier: predict_proba(X), classes_
        given = [name for name, value in (("kind", kind),) if value is not None] + list(options)
        if given:
            raise ValueError(f"{given[0]}: does not apply to a classifier, whose predict_proba"
                             " gives probabilities and classes_ names the classes")
        return Predictions.from_estimator(predictions, X, labels)
    if _lacks_predict_proba(predictions):
        _refuse_without_probabilities(predictions, "X" if X is not None else "predictions")
    if X is not None:
        raise ValueError("X: applies to a fitted classifier (an object with predict_proba),"
                         f" not to a {type(predictions).__name__}; evaluate(model, X=X_test,"
                         " labels=y_test)")
    if isinstance(predictions, Predictions):
        _refuse_options("a Predictions object is already loaded", labels, kind, options, None)
        return predictions
    if isinstance(predictions, (str, os.PathLike)):
        return load_predictions(predictions, labels=labels, kind=kind,
                                allow_pickle=allow_pickle, split=split, **options)
    if _is_lazy_frame(predictions):
        raise TypeError(f"predictions: a {_type_name(predictions)} (a query that has not run);"
                        " call .collect() first")
    if _is_frame(predictions):         # a pandas/polars DataFrame: its columns read like a CSV's
        text_only = [name for name in options if name in ("delimiter", "header")]
        if text_only:
            raise ValueError(f"{text_only[0]}: describes a text file; it does not apply to a"
                             " DataFrame")
        return Predictions.from_frame(predictions, labels=labels, kind=kind or "probs",
                                      **options)
    if is_array_like(predictions):     # NumPy, Series, torch/JAX/CuPy (calnotes._validate)
        if labels is None:
            raise ValueError("labels: required when predictions is an array")
        file_only = [name for name in options if name in _FILE_ONLY]
        if file_only:
            raise ValueError(f"{file_only[0]}: describes a predictions file; it does not apply"
                             " to arrays")
        if isinstance(labels, (str, os.PathLike)):       # a labels file with an array
            from ..data.loaders import _load_labels
            labels = _load_labels(Path(labels), options.get("classes"))
        # converted by from_arrays (calnotes._validate.as_array): a GPU copy or bfloat16
        # values widened are noted there
        if kind == "logits":
            return Predictions.from_arrays(labels, logits=predictions, **options)
        return Predictions.from_arrays(labels, predictions, **options)
    text = repr(predictions)
    raise TypeError("predictions: expected a file path, Predictions, an (n, k) array or a"
                    f" fitted classifier, got {type(predictions).__name__} {text[:60]} (pandas"
                    " and polars DataFrames, and any object with __array__ or __dlpack__, are"
                    " read too)")


def _type_name(value) -> str:
    kind = type(value)
    return f"{kind.__module__.split('.')[0]} {kind.__name__}"


def _is_lazy_frame(value) -> bool:
    """A polars LazyFrame (a query, with ``collect`` and no data yet), recognised by its class
    (asking the object for ``columns`` would resolve its schema)."""
    kind = type(value)
    return (callable(getattr(kind, "collect", None)) and not hasattr(kind, "to_numpy")
            and not hasattr(kind, "__array__") and hasattr(kind, "columns"))


def _is_dask_frame(value) -> bool:
    """A Dask DataFrame or Series (partitions, ``compute``), without importing Dask."""
    kind = type(value)
    return (not _scale.is_dask_array(value) and hasattr(kind, "npartitions")
            and callable(getattr(kind, "compute", None))
            and type(value).__module__.split(".")[0] == "dask")


def _computed_frames(predictions, labels, out_of_core):
    """A Dask DataFrame (and Dask Series labels) computed into pandas, to be read as a pandas
    one; refused out of core, which reads Dask arrays."""
    frames = [(name, value) for name, value in (("predictions", predictions),
                                                ("labels", labels)) if _is_dask_frame(value)]
    if frames and out_of_core is True:
        name, value = frames[0]
        raise TypeError(f"{name}: a Dask {type(value).__name__}, where {_OOC_NAME} reads"
                        " Dask arrays: pass .to_dask_array(lengths=True) of the probability"
                        " columns and the labels as a Dask array, or drop out_of_core to read"
                        " the DataFrame in memory")
    if _is_dask_frame(predictions):
        predictions = predictions.compute()
    if _is_dask_frame(labels):
        labels = labels.compute()
    return predictions, labels


def _lacks_predict_proba(value) -> bool:
    """A classifier that gives no probabilities: ``predict`` or ``decision_function`` but no
    ``predict_proba`` (scikit-learn's SVC and LinearSVC, RidgeClassifier, ...)."""
    return (not isinstance(value, (np.ndarray, str, os.PathLike, Predictions))
            and not is_classifier(value) and not is_array_like(value)
            and (callable(getattr(value, "decision_function", None))
                 or (callable(getattr(value, "predict", None))
                     and (hasattr(value, "classes_")
                          or getattr(value, "_estimator_type", None) == "classifier"))))


def _refuse_without_probabilities(model, name: str) -> None:
    kind = type(model).__name__
    params = getattr(model, "get_params", None)
    try:
        takes = callable(params) and "probability" in params(deep=False)
    except Exception:  # noqa: BLE001 - only the advice is at stake
        takes = False
    older = f" (or {kind}(probability=True) where it is still supported)" if takes else ""
    raise TypeError(f"{name}: {kind} has no predict_proba, so it gives no probabilities to"
                    f" evaluate; wrap it in CalibratedClassifierCV({kind}(), ensemble=False)"
                    f" (sklearn.calibration){older}, or pass the probabilities of a model that"
                    " has predict_proba")


def _is_frame(value) -> bool:
    """A pandas or polars DataFrame (anything 2-d with ``columns`` and ``to_numpy``),
    recognised without importing either library."""
    return (not isinstance(value, np.ndarray) and hasattr(value, "columns")
            and callable(getattr(value, "to_numpy", None))
            and len(getattr(value, "shape", ())) == 2)


# ------------------------------------------------------------------------------ out of core

def _out_of_core_input(predictions, labels, out_of_core, kind, options):
    """``(P, y, source)`` as Dask arrays when the evaluation runs out of core, else ``None``."""
    if out_of_core not in (None, True, False):
        raise TypeError(f"{_OOC_NAME}: expected True, False or None, got {out_of_core!r}")
    is_folder = (isinstance(predictions, (str, os.PathLike))
                 and Path(predictions).is_dir())
    if out_of_core is False:
        if is_folder:
            raise ValueError(f"{_OOC_NAME}: predictions {predictions} is a folder of shards,"
                             " which is read out of core only; drop out_of_core=False")
        return None
    dask_input = _scale.is_dask_array(predictions)
    if out_of_core is None and not (dask_input or is_folder):
        return None
    if kind == "logits":
        raise ValueError(f"kind: logits are not supported out of core ({_OOC_NAME}); save"
                         " probabilities (calnotes.recalibrate.softmax)")
    if options:
        raise ValueError(f"{next(iter(options))}: a loader option, which does not apply out of"
                         f" core ({_OOC_NAME}); save probabilities and integer labels")
    if is_folder:
        if labels is not None:
            raise ValueError("labels: a folder of shards holds its own labels; do not pass"
                             " labels")
        _check_shard_files(Path(predictions))
        P, y = _scale.open_shards(predictions)
        return P, y, str(predictions)
    for name, value in (("predictions", predictions), ("labels", labels)):
        if _scale.is_dask_array(value) and value.dtype.kind == "c":
            raise TypeError(f"{name}: complex numbers (dtype {value.dtype}); pass the real part"
                            " if the imaginary part is meant to be zero (arr.real)")
    if isinstance(labels, np.ndarray):
        labels = as_array(labels, "labels")      # masked entries and complex numbers refused
    if isinstance(predictions, np.ndarray):
        predictions = as_array(predictions, "predictions")
    is_path = isinstance(predictions, (str, os.PathLike))
    if is_path and Path(predictions).suffix.lower() != ".npy":
        raise ValueError(f"{_OOC_NAME}: out of core reads a .npy file (memory-mapped), a"
                         f" folder of shards or a Dask array; got {predictions}")
    if labels is None:
        raise ValueError("labels: required with out-of-core predictions (a Dask array, a"
                         " memory-mapped .npy file or an array)")
    if dask_input:
        if _scale.is_dask_array(labels) and any(
                c != c for dims in labels.chunks for c in dims):
            raise ValueError("labels: the Dask array has unknown chunk sizes; call"
                             " .compute_chunk_sizes() first")
        return predictions, labels, "dask array"
    if is_path:
        P, y = _scale.open_npy(predictions, labels)
        return P, y, str(predictions)
    if isinstance(predictions, np.ndarray):
        import dask.array as da
        if predictions.ndim not in (1, 2) or predictions.shape[0] == 0:
            raise ValueError(f"predictions: expected a non-empty (n, k) or (n,) array, got"
                             f" shape {predictions.shape}")
        width = predictions.shape[1] if predictions.ndim == 2 else 1
        rows = max(1, _scale.DEFAULT_CHUNK_ENTRIES // max(1, width))
        P = da.from_array(predictions, chunks=(rows,) + ((-1,) if predictions.ndim == 2
                                                           else ()))
        return P, labels, "array"
    raise TypeError(f"predictions: out of core takes a Dask array, a .npy path, a folder of"
                    f" shards or an array, got {type(predictions).__name__}")


def _check_shard_files(folder: Path) -> None:
    """The shard files of a folder (``.npz``, ``.npy``; not dot-files), checked before any is
    opened: each must be a regular file (a FIFO or a link to a device is refused naming it,
    where reading it would block or never end) and an ``.npz`` shard's arrays must fit
    ``calnotes.data.loaders.MAX_ARRAY_BYTES`` (read from the zip directory and the
    arrays' headers)."""
    from ..data.loaders import _check_npz_sizes, open_regular
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.suffix.lower() not in (".npz", ".npy"):
            continue
        try:
            is_folder = entry.is_dir()
        except OSError:
            is_folder = False
        if is_folder:
            continue
        check_regular_file(entry, f"predictions (shard {entry.name})")
        if entry.suffix.lower() == ".npz":
            with open_regular(entry, "predictions") as fh:
                _check_npz_sizes(fh, entry, f"predictions (shard {entry.name})")


# ------------------------------------------------------------------------------ provenance

class _Snapshot:
    """SHA-256 of an input file taken when it is loaded: hashed just before loading,
    with the file kept open; :meth:`verified` after loading checks that neither the open file
    nor the path changed meanwhile, so the hash is that of the bytes that were loaded.  A file
    removed after loading keeps its hash (nothing is read again).

    Only a regular file is opened and read: a FIFO, a pipe (``<(...)``), a device
    (``/dev/zero``) or a socket is refused naming ``what`` before anything is read
    (:func:`calnotes.data.loaders.check_regular_file`; opened with ``O_NONBLOCK`` and checked
    again with :func:`os.fstat`, so a path swapped for a pipe in between is refused too)."""

    def __init__(self, path, what: str):
        self.path, self.what, self.sha256, self.fd, self.stat = Path(path), what, None, None, None
        try:
            st = os.stat(self.path)
        except OSError:
            return                               # the loader reports a missing file itself
        if stat.S_ISDIR(st.st_mode):
            return                               # a folder of shards
        if not stat.S_ISREG(st.st_mode):
            check_regular_file(self.path, what)  # raises, naming the kind of file
        try:
            self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            self.stat = os.fstat(self.fd)
            if not stat.S_ISREG(self.stat.st_mode):
                self.close()
                check_regular_file(self.path, what)
                raise ValueError(f"{what}: {self.path} is not a regular file; save the data"
                                 " to a file first")  # replaced between stat and open
            digest = hashlib.sha256()
            while block := os.read(self.fd, 1 << 20):
                digest.update(block)
            self.sha256 = digest.hexdigest()
        except OSError:
            self.close()                         # the loader reports a missing file itself

    @staticmethod
    def _key(st):
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def verified(self) -> str | None:
        """The hash, after checking that the file did not change since it was hashed."""
        if self.fd is None:
            return None
        try:
            changed = self._key(os.fstat(self.fd)) != self._key(self.stat)
            try:
                changed = changed or self._key(os.stat(self.path)) != self._key(self.stat)
            except FileNotFoundError:
                pass                             # removed after it was read: hash kept
        finally:
            self.close()
        if changed:
            raise ValueError(f"{self.what}: {self.path} changed while it was being read"
                             " (replaced or rewritten during the run), so the numbers and"
                             " its hash may describe different files; run again once the file"
                             " is complete")
        return self.sha256

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    __del__ = close                              # an input refused before it was loaded


def _snapshots(predictions, labels) -> list:
    """``[predictions, labels]`` snapshots of the input files (``None`` for arrays)."""
    return [_Snapshot(value, what) if isinstance(value, (str, os.PathLike)) else None
            for value, what in ((predictions, "predictions"), (labels, "labels"))]


def _close(snaps) -> None:
    for snap in snaps:
        if snap is not None:
            snap.close()


def _verified(snaps) -> list:
    """The snapshots' hashes (``None`` for arrays and folders), checked; all closed."""
    try:
        return [None if snap is None else snap.verified() for snap in snaps]
    finally:
        _close(snaps)
