"""Input checks shared by every public function.

All checks raise :class:`ValueError` (or :class:`TypeError` for the wrong kind of
object) with a message that names the argument and, where there is one, the first
offending index.  Nothing here converts beyond floating-point rounding: a probability of
``1.0000001`` is an error, not a clip (the one exception, residue within :data:`VALUE_ATOL`,
is described below).

Conventions
-----------
* ``y_prob`` of shape ``(n,)`` is binary: entry ``i`` is ``P(y_i = 1)``.
* ``y_prob`` of shape ``(n, k)`` with ``k >= 2`` is a row-stochastic matrix; each row
  must sum to one within :data:`ROW_SUM_ATOL`.
* ``y_true`` holds integer labels, ``0 <= y < k`` (``k = 2`` for binary inputs).  Floats
  that are exactly integers (``1.0``) are accepted; ``0.5`` or ``True`` / ``False``
  mixed with ``2`` are not.  Labels of shape ``(n, 1)`` are read as ``(n,)``.  One-hot
  labels ``(n, k)`` are refused with the hint ``labels.argmax(axis=1)`` rather than
  decoded: a 0/1 matrix could also be multi-label targets or a mistaken argument order,
  and the caller knows which.

Tolerances, and the one conversion
----------------------------------
* A row must sum to one within :func:`row_sum_tolerance`: :data:`ROW_SUM_ATOL` for float64
  and float32 data, more for float16 (``k`` times its machine epsilon), whose rounding alone
  moves a row sum by that much.  The tolerance is taken from the dtype the caller passed,
  before the cast to float64.
* Every value must lie in ``[0, 1]``.  Values outside by at most :data:`VALUE_ATOL` (float64;
  ``4 eps`` of a coarser dtype) -- ``1.0000000000000002`` or ``-1e-17``, the residue of
  computing ``1 - p`` or a softmax in floating point -- are clipped to the interval: the only
  value calnotes changes, and only by rounding error.  Anything further out is refused: a single
  probability above one is impossible, whereas a row summing to ``0.99995`` is a normal
  float32 result, hence the different tolerances for values and for row sums.
* A failed check says what the numbers look like (:func:`diagnose_probabilities`): rows
  summing to one only to about ``1e-2`` are *rounded* probabilities (renormalize them); values
  in ``[0, 100]`` whose rows sum to 100 are *percentages*; only values below 0 or above 1 that
  are not percentages can be *logits*.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

__all__ = [
    "HostCopyWarning",
    "as_array",
    "is_array_like",
    "ROW_SUM_ATOL",
    "VALUE_ATOL",
    "RENORMALIZE_TOL",
    "row_sum_tolerance",
    "looks_like_probabilities",
    "diagnose_probabilities",
    "renormalize_rows",
    "scan_rows",
    "check_probabilities",
    "check_labels",
    "check_logits",
    "check_n_bins",
    "check_pair",
    "check_pair_matrix",
    "check_rng",
]

#: Tolerance on ``|sum_r p_r - 1|`` per row.  float32 softmax outputs over 1,000
#: classes are off by up to ~1e-5 (k * float32 epsilon / 2 ~ 6e-5 in the worst case);
#: 1e-4 accepts them while still rejecting un-normalised scores and logits.
ROW_SUM_ATOL = 1e-4
#: Values this far outside ``[0, 1]`` (float64 input) are floating-point residue and clipped.
VALUE_ATOL = 1e-12
#: Default tolerance of ``renormalize=True``: rows summing to one within 2% (probabilities
#: rounded to two decimals over up to a few classes) are divided by their sums.
RENORMALIZE_TOL = 0.02


class HostCopyWarning(UserWarning):
    """A GPU array (a CUDA torch tensor, a CuPy array) was copied to host memory to be
    measured."""


#: Machine epsilon of bfloat16 (8 significant bits), which NumPy has no dtype for.
BFLOAT16_EPS = 2.0 ** -7


def _describe(x) -> str:
    kind = type(x)
    return f"{kind.__module__.split('.')[0]}.{kind.__name__}" if kind.__module__ not in (
        "builtins", None) else kind.__name__


def _on_gpu(x) -> str | None:
    """How to copy ``x`` to host memory when it lives on an accelerator (``"cpu"``: a torch
    tensor's ``.cpu()``; ``"get"``: CuPy's ``.get()``; ``"__array__"``: a JAX array, which
    copies itself), recognised by duck typing so that no GPU library is imported."""
    if getattr(x, "is_cuda", False) is True and callable(getattr(x, "cpu", None)):
        return "cpu"
    device = getattr(getattr(x, "device", None), "type", None)
    if isinstance(device, str) and device not in ("cpu", "meta") \
            and callable(getattr(x, "cpu", None)):
        return "cpu"                            # torch on mps / xpu
    if hasattr(x, "__cuda_array_interface__") and callable(getattr(x, "get", None)):
        return "get"                            # CuPy (and Numba device arrays)
    platform = getattr(getattr(x, "device", None), "platform", None)
    if isinstance(platform, str) and platform.lower() not in ("cpu", "") \
            and hasattr(x, "__array__"):
        return "__array__"                      # JAX on gpu / tpu
    return None


def _caller_level() -> int:
    """``stacklevel`` of the first frame outside calnotes, for warnings about user input."""
    import sys
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("calnotes"):
        frame, level = frame.f_back, level + 1
    return level


def is_array_like(x) -> bool:
    """Whether :func:`as_array` would try ``x``: a NumPy array, a list or tuple, or an object
    with ``__array__``, ``__dlpack__`` or ``to_numpy`` (pandas, polars, xarray, torch, JAX,
    CuPy), or a GPU tensor."""
    return (isinstance(x, (np.ndarray, list, tuple)) or hasattr(x, "__array__")
            or hasattr(x, "__dlpack__") or callable(getattr(x, "to_numpy", None))
            or _on_gpu(x) is not None)


#: The names (``str(dtype)``) of a NumPy dtype that holds bfloat16 values: ml_dtypes' (JAX's
#: ``np.asarray``).  Any 2-byte dtype named here is read as bfloat16 bit patterns.
_BFLOAT16_NAMES = ("bfloat16",)


def _is_bfloat16(dtype) -> bool:
    return str(dtype) in _BFLOAT16_NAMES and getattr(dtype, "itemsize", 0) == 2


def _widen_bfloat16(arr: np.ndarray) -> np.ndarray:
    """bfloat16 values (a NumPy array of a 2-byte bfloat16 dtype) as float64, exactly: a
    bfloat16 is the upper half of a float32, so no library that knows the type is needed."""
    bits = np.ascontiguousarray(arr).view(np.uint16).astype(np.uint32) << 16
    return bits.view(np.float32).astype(np.float64)


def _is_label_name(name: str) -> bool:
    return name.startswith("label") or name in ("y_true", "y")


def _widened_note(name: str) -> str:
    if _is_label_name(name):
        return f"{name}: bfloat16 values widened to float64 (whole numbers up to 256 are exact)"
    return (f"{name}: bfloat16 values widened to float64 (row sums checked to bfloat16's"
            " precision)")


def _check_label_precision(arr, dtype, name: str) -> None:
    """Labels held in a float type too coarse for every whole number they might be (bfloat16:
    exact up to 256; float16: up to 2048) are refused above that: a class index beyond it may
    already have been rounded to a neighbour, which no later check can see."""
    eps = _eps(dtype)
    if eps is None or eps <= np.finfo(np.float32).eps or np.ndim(arr) == 0:
        return
    limit = 2.0 / eps
    values = np.asarray(arr, dtype=np.float64)
    finite = np.abs(values[np.isfinite(values)])
    if finite.size and finite.max() > limit:
        i = int(np.flatnonzero(np.abs(values) == finite.max())[0])
        raise ValueError(f"{name}: labels stored as {dtype}, which holds whole numbers exactly"
                         f" only up to {int(limit)}: label {float(finite.max()):g} at index {i}"
                         " may be a rounded class index; save the labels as integers")


def _unmasked(x, name: str) -> np.ndarray:
    """A NumPy masked array: refused if any entry is masked (half of NumPy honours a mask and
    half reads the data beneath it, so a masked entry would change some numbers of a report
    and not others); its data otherwise."""
    count = int(np.ma.count_masked(x))
    if count:
        drop = "arr[~arr.mask.any(axis=1)]" if np.ndim(x) == 2 else "arr[~arr.mask]"
        raise ValueError(f"{name}: a masked array with {count} masked"
                         f" entr{'y' if count == 1 else 'ies'}; drop or fill them first (e.g."
                         f" {drop}, and the same rows of the other arrays / arr.filled(...))")
    return np.asarray(np.ma.getdata(x))


def _checked_dtype(arr: np.ndarray, name: str, notes: list | None, source=None):
    """``(array, source dtype)`` for a converted NumPy array: complex numbers refused (never
    a NumPy ``ComplexWarning`` that drops the imaginary part), bfloat16 widened."""
    if isinstance(arr, np.ma.MaskedArray):
        arr = _unmasked(arr, name)
    if arr.dtype.kind == "c":
        raise TypeError(f"{name}: complex numbers (dtype {arr.dtype}); pass the real part if"
                        " the imaginary part is meant to be zero (arr.real)")
    if _is_bfloat16(arr.dtype):                 # ml_dtypes (JAX): widened like torch's
        source = "bfloat16"
        arr = _widen_bfloat16(arr)
    if source:
        arr = arr.astype(np.float64)
        if notes is not None:
            notes.append(_widened_note(name))
        return arr, source
    return arr, arr.dtype


def _as_array_and_dtype(x, name: str, notes: list | None = None):
    """:func:`as_array`, and the dtype the values had: a NumPy dtype, or ``"bfloat16"``
    (returned widened to float64).  Every door -- a NumPy array, ``__array__``,
    ``__dlpack__``, ``to_numpy`` -- ends in :func:`_checked_dtype`, so one rule holds for
    masked arrays, complex numbers and bfloat16 whatever form the values came in."""
    if isinstance(x, np.ndarray):
        return _checked_dtype(x, name, notes)
    if isinstance(x, (list, tuple, numbers.Number, str, bytes)) or x is None:
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError) as exc:      # ragged lists
            raise TypeError(f"{name}: could not convert to a float array ({exc})") from None
        return _checked_dtype(arr, name, notes)
    how = _on_gpu(x)
    if how is not None:
        message = (f"{name}: a {_describe(x)} on {getattr(x, 'device', 'the GPU')}, copied to"
                   f" host memory (.{how}()) to be measured")
        if notes is None:
            warnings.warn(message, HostCopyWarning, stacklevel=_caller_level())
        else:
            notes.append(message)
        x = x.cpu() if how == "cpu" else x.get() if how == "get" else np.asarray(x)
        if isinstance(x, np.ndarray):
            return _checked_dtype(x, name, notes)
    if getattr(x, "requires_grad", False) is True and callable(getattr(x, "detach", None)):
        x = x.detach()                          # torch: no numpy() with autograd history
    source = "bfloat16" if str(getattr(x, "dtype", "")).endswith("bfloat16") else None
    if source and callable(getattr(x, "float", None)):
        x = x.float()                           # torch has no NumPy bfloat16: exact in float32
    arr, errors = None, []
    for attempt in ("to_numpy", "__array__", "__dlpack__"):
        method = getattr(x, attempt, None)
        if not callable(method):
            continue
        try:
            arr = (method() if attempt == "to_numpy" else np.asarray(x)
                   if attempt == "__array__" else np.from_dlpack(x))
        except Exception as exc:                # noqa: BLE001 -- every library has its own
            errors.append(f"{attempt}: {exc}")
            continue
        if isinstance(arr, np.ndarray):
            break
        arr = None
    if arr is None and not errors:              # range, array.array, memoryview, sequences
        try:
            arr = np.asarray(x)
        except Exception as exc:                # noqa: BLE001
            errors.append(str(exc))
        else:
            if arr.dtype == object and arr.ndim == 0:
                arr = None
    if arr is None and source:
        raise TypeError(f"{name}: bfloat16 values that NumPy cannot read through"
                        f" {'; '.join(errors) or '__array__ or __dlpack__'}; convert them to"
                        " float32 first (torch: x.float(); JAX: x.astype(jnp.float32))")
    if arr is None:
        tried = "; ".join(errors) if errors else "it has no __array__, __dlpack__ or to_numpy"
        raise TypeError(
            f"{name}: cannot read an object of type {_describe(x)} as an array ({tried});"
            " pass a NumPy array,"
            " a list, a pandas or polars Series/DataFrame, or an array with __array__ or"
            " __dlpack__ (torch, JAX, CuPy, xarray)")
    return _checked_dtype(arr, name, notes, source)


def as_array(x, name: str = "array", *, notes: list | None = None) -> np.ndarray:
    """Any array a user holds, as a NumPy array on the host: the one conversion of calnotes.

    * a NumPy array is returned as it is; lists, tuples and numbers through ``numpy.asarray``;
    * pandas and polars Series and DataFrames through ``to_numpy()`` (a DataFrame's columns
      are then the classes, in order);
    * objects with ``__array__`` (CPU torch tensors, JAX arrays, xarray) through
      ``numpy.asarray``, and objects with only ``__dlpack__`` (or whose ``__array__`` fails)
      through ``numpy.from_dlpack``;
    * GPU arrays (a torch tensor with ``is_cuda``, a CuPy array) are copied to host memory
      (``.cpu()`` / ``.get()``) with a :class:`HostCopyWarning`, or a note appended to
      ``notes`` when a list is given; a torch tensor that requires grad is detached;
    * bfloat16 (torch, JAX, and a NumPy array of ml_dtypes' bfloat16, what ``np.asarray`` of
      a JAX array gives), which NumPy has no type of its own for, is widened to float64 (with
      a note when ``notes`` is given) whatever the door; float16 stays float16 here and is
      widened by the checks, whose tolerances follow the dtype (float16 or bfloat16 rows off
      by more than float64's tolerance are renormalized by :func:`calnotes.evaluate`, with a
      note; labels in either hold whole numbers exactly only up to 256 / 2048, and larger
      ones are refused by the label checks);
    * a NumPy masked array is refused if any entry is masked (NumPy honours a mask in some
      operations and reads the data beneath it in others, so the numbers would mix both);
      one with no masked entry is read as its data;
    * complex numbers are refused (never cast with a ``ComplexWarning`` that drops the
      imaginary part).

    No library is imported: each is recognised by the methods it has.  Anything else is a
    :class:`TypeError` naming the argument.

    Examples
    --------
    >>> class Tensor:                       # any object with __array__, e.g. torch.Tensor
    ...     def __array__(self, dtype=None, copy=None):
    ...         return np.array([0.2, 0.9])
    >>> as_array(Tensor(), "y_prob").tolist()
    [0.2, 0.9]
    >>> as_array({"a": 1}, "y_prob")
    Traceback (most recent call last):
    ...
    TypeError: y_prob: cannot read an object of type dict as an array (it has no __array__, __dlpack__ or to_numpy); pass a NumPy array, a list, a pandas or polars Series/DataFrame, or an array with __array__ or __dlpack__ (torch, JAX, CuPy, xarray)
    """
    return _as_array_and_dtype(x, name, notes)[0]


def _eps(dtype) -> float | None:
    """Machine epsilon of a floating dtype (``"bfloat16"`` included), else ``None``."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        return BFLOAT16_EPS
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) if dtype.kind == "f" else None


def row_sum_tolerance(dtype, n_classes: int) -> float:
    """Tolerance on ``|sum_r p_r - 1|`` for probabilities stored as ``dtype``.

    :data:`ROW_SUM_ATOL` unless the dtype is coarser: ``n_classes`` times its machine epsilon
    (float16: about ``1e-3`` per class; ``"bfloat16"``: ``2^-7`` per class), the most its
    rounding can move a row sum.

    Examples
    --------
    >>> row_sum_tolerance(np.float64, 3)
    0.0001
    >>> round(row_sum_tolerance(np.float16, 3), 6)
    0.00293
    >>> row_sum_tolerance("bfloat16", 2)
    0.015625
    """
    eps = _eps(dtype)
    if eps is None:
        return ROW_SUM_ATOL
    return max(ROW_SUM_ATOL, n_classes * eps)


def _value_tolerance(dtype) -> float:
    eps = _eps(dtype)
    if eps is None or eps <= np.finfo(np.float64).eps:
        return VALUE_ATOL
    return max(VALUE_ATOL, 4 * eps)


def looks_like_probabilities(arr) -> bool:
    """Every value in ``[0, 1]`` and every row summing to one within the row-sum tolerance.

    The test behind "these look like probabilities, not logits".  The tolerance is
    :func:`row_sum_tolerance` of the array's own dtype (:data:`ROW_SUM_ATOL` for float64 and
    float32), so float16 probabilities are recognised too.  A 2-d matrix with ``k >= 2``
    columns only: a 1-d vector (or one column) of binary logits can legitimately lie in
    ``[0, 1]``, so it never "looks like probabilities".

    Examples
    --------
    >>> looks_like_probabilities([[0.2, 0.8], [0.5, 0.5]]), looks_like_probabilities([[2.0, -1.0]])
    (True, False)
    >>> looks_like_probabilities([0.2, 0.8]), looks_like_probabilities([[0.2, 0.7]])
    (False, False)
    """
    dtype = getattr(arr, "dtype", None)
    try:
        arr = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] < 2:
        return False
    tol = row_sum_tolerance(dtype if dtype is not None and np.dtype(dtype).kind == "f"
                            else np.float64, arr.shape[1])
    with np.errstate(invalid="ignore"):
        return bool(np.all((arr >= 0.0) & (arr <= 1.0))
                    and np.all(np.abs(arr.sum(axis=1) - 1.0) <= tol))


def diagnose_probabilities(arr) -> str | None:
    """What a matrix that fails the probability checks looks like, or ``None``.

    ``"rounded"``: every value in ``[0, 1]``, every row sum within :data:`RENORMALIZE_TOL`
    of one.  ``"percentages"``: every value in ``[0, 100]``, some above one, every row sum
    consistent with percentages (for a 1-d vector: most values above one).  ``"logits"``: some
    finite value outside ``[0, 1]`` that is not a percentage.  ``"scores"``: values in
    ``[0, 1]`` whose rows are far from summing to one.

    Examples
    --------
    >>> diagnose_probabilities([[0.33, 0.33, 0.33]]), diagnose_probabilities([[40.0, 60.0]])
    ('rounded', 'percentages')
    >>> diagnose_probabilities([[2.0, -1.0]]), diagnose_probabilities([[0.9, 0.8]])
    ('logits', 'scores')
    """
    arr = np.asarray(arr, dtype=np.float64)
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        return None
    lo, hi = float(arr.min()), float(arr.max())
    if arr.ndim == 2:
        dev = np.abs(arr.sum(axis=1) - 1.0)
        if lo >= 0.0 and hi <= 1.0:
            return "rounded" if dev.max() <= RENORMALIZE_TOL else "scores"
        if lo >= 0.0 and hi <= 100.0 and np.all(np.abs(arr.sum(axis=1) - 100.0)
                                                 <= 100.0 * RENORMALIZE_TOL):
            return "percentages"
        return "logits"
    if lo >= 0.0 and hi <= 1.0:
        return None
    if lo >= 0.0 and hi <= 100.0 and np.mean(arr > 1.0) > 0.75:   # most values above 1
        return "percentages"
    return "logits"


_OPTION_HINTS = {
    "rounded": ("rows sum to 1 only to within {dev:.1g}: rounded probabilities? pass"
                " renormalize=True (command line: --renormalize) to divide each row by its sum"),
    "percentages": ("these look like percentages (values in [0, 100], rows summing to 100):"
                    " divide by 100, or pass renormalize=True (command line: --renormalize)"),
    "logits": ("pass probabilities, not scores or logits (if these are logits, pass"
               " kind='logits' (command line: --logits))"),
    "scores": ("rows of class probabilities must sum to one (if some columns are not class"
               " probabilities, select the class columns; in a CSV: prob_columns=..."
               " (command line: --prob-columns))"),
    "integers": ("these are whole numbers, not probabilities (class indices, counts or ids?);"
                 " pass class probabilities (in a CSV, select the class columns:"
                 " prob_columns=... (command line: --prob-columns))"),
    "residue": ("only by {excess:.1g}: inexact arithmetic? pass"
                " renormalize=True (command line: --renormalize) to clip such values to"
                " [0, 1] and divide each row by its sum"),
    "residue1d": "only by {excess:.1g}: inexact arithmetic? clip to [0, 1]",
}
_ARRAY_HINTS = {
    "rounded": ("rows sum to 1 only to within {dev:.1g}: rounded probabilities? renormalize"
                " them, e.g. P / P.sum(axis=1, keepdims=True)"),
    "percentages": "these look like percentages (values in [0, 100]): divide by 100",
    "logits": "pass probabilities, not scores or logits",
    "scores": "pass probabilities, not scores or logits",
    "integers": "these are whole numbers, not probabilities (class indices, counts or ids?)",
    "residue": ("only by {excess:.1g}: inexact arithmetic? clip to [0, 1] and"
                " renormalize, e.g. P = np.clip(P, 0, 1); P / P.sum(axis=1, keepdims=True)"),
    "residue1d": "only by {excess:.1g}: inexact arithmetic? clip to [0, 1]",
}


def _hint(arr, options: bool) -> str:
    """What to do about probabilities that failed a check.  Values outside ``[0, 1]`` are
    hinted as logits only when they are not whole numbers (class indices, counts, ids) and
    not within :data:`RENORMALIZE_TOL` of the interval (arithmetic residue: a value of
    ``1.00005`` is refused, unlike a row sum off by as much, since no rounding of a
    probability gives it, but it gets the clip-and-renormalize advice, not the logits one)."""
    kind = diagnose_probabilities(arr)
    table = _OPTION_HINTS if options else _ARRAY_HINTS
    a = np.asarray(arr, dtype=np.float64)
    excess = 0.0
    if kind in (None, "logits") and a.size:
        finite = a[np.isfinite(a)]
        if finite.size:
            excess = max(0.0, -float(finite.min()), float(finite.max()) - 1.0)
            if np.all(finite == np.round(finite)):
                kind = "integers"
            elif 0.0 < excess <= RENORMALIZE_TOL:
                kind = "residue" if a.ndim == 2 else "residue1d"
    if kind is None:
        return table["logits"]
    dev = float(np.abs(a.sum(axis=-1) - 1.0).max())
    return table[kind].format(dev=dev, excess=excess)


def renormalize_rows(arr, tol=True, name: str = "probs"):
    """Divide rounded probabilities (or percentages) by their row sums; return ``(P, note)``.

    Parameters
    ----------
    arr : array_like, shape (n, k)
    tol : True or float
        Rows must sum to one (or to 100, for percentages) within this relative tolerance;
        ``True`` means :data:`RENORMALIZE_TOL`.
    name : str
        Argument name for messages.

    Returns
    -------
    P : numpy.ndarray of float64
    note : str or None
        What was done, for the report.

    Examples
    --------
    >>> P, note = renormalize_rows([[0.33, 0.33, 0.33], [0.5, 0.5, 0.0]])
    >>> P.sum(axis=1).tolist(), note
    ([1.0, 1.0], 'probs: divided 1 of 2 rows by their sums (largest deviation of a row sum from 1: 0.01)')
    """
    if tol is True:
        tol = RENORMALIZE_TOL
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0 < tol < 1:
        raise ValueError(f"renormalize (command line: --renormalize): expected True or a"
                         f" tolerance in (0, 1), got {tol!r}")
    P = np.array(arr, dtype=np.float64)
    if P.ndim != 2:
        return P, None
    if not np.all(np.isfinite(P)):
        return P, None          # check_probabilities names the bad entry
    scale = 1.0
    clipped = 0
    if diagnose_probabilities(P) == "percentages":
        scale = 100.0
    elif P.min() < 0.0 or P.max() > 1.0:
        if P.min() < -tol or P.max() > 1.0 + tol:
            return P, None      # not probabilities at all: check_probabilities explains
        clipped = int(np.count_nonzero((P < 0.0) | (P > 1.0)))   # residue within tol
        P = np.clip(P, 0.0, 1.0)
    sums = P.sum(axis=1)
    dev = np.abs(sums / scale - 1.0)
    bad = dev > tol
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: row {i} sums to {sums[i]:.6g}, more than renormalize's"
                         f" tolerance {tol:g} away from {scale:g}; these are not rounded"
                         " probabilities")
    changed = int(np.count_nonzero(sums != 1.0)) if scale == 1.0 else P.shape[0]
    P /= sums[:, None]
    what = "percentages: divided every row by its sum (about 100)" if scale != 1.0 else (
        f"divided {changed} of {P.shape[0]} rows by their sums (largest deviation of a row sum"
        f" from 1: {dev.max():.2g})")
    if clipped:
        what = (f"clipped {clipped} value(s) outside [0, 1] by at most {tol:g}"
                + (f"; {what}" if changed else ""))
    return P, (f"{name}: {what}" if changed or clipped else None)


def _first_index(mask: np.ndarray) -> tuple:
    """Index tuple of the first True entry of ``mask`` (C order)."""
    flat = int(np.flatnonzero(mask.ravel())[0])
    return np.unravel_index(flat, mask.shape)


def _fmt_index(idx: tuple) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def check_probabilities(y_prob, name: str = "y_prob", *, allow_2d: bool = True,
                        allow_1d: bool = True, return_argmax: bool = False,
                        option_hints: bool = False, dtype=None):
    """Validate predicted probabilities and return them as a float64 array.

    Parameters
    ----------
    y_prob : array_like, shape (n,) or (n, k)
        Binary probabilities ``P(y=1)`` or a row-stochastic matrix: anything
        :func:`as_array` reads (pandas, polars, torch, JAX, CuPy, ...).
    name : str
        Argument name used in error messages.
    allow_2d, allow_1d : bool
        Which shapes the caller accepts.
    return_argmax : bool
        Also return each row's first maximal column, found by the same scan (2-d only).
    option_hints : bool
        Word the diagnosis of a failure with the loader's options (``renormalize=True``,
        ``kind='logits'``, ...); otherwise with what to do to the array.
    dtype : numpy dtype or "bfloat16", optional
        The dtype the values had before a caller widened them, for the tolerances (default:
        their own; float16 and bfloat16 get :func:`row_sum_tolerance`).

    Returns
    -------
    numpy.ndarray
        ``float64`` view or copy of the input.
    top : numpy.ndarray of intp, shape (n,)
        Only with ``return_argmax``.

    Raises
    ------
    ValueError
        Empty input, wrong number of dimensions, NaN/inf, values outside ``[0, 1]``,
        fewer than two columns, or rows not summing to one.

    Examples
    --------
    >>> check_probabilities([0.2, 0.9]).dtype
    dtype('float64')
    >>> check_probabilities([[0.5, 0.6]])
    Traceback (most recent call last):
    ...
    ValueError: y_prob: row 0 sums to 1.1, not 1 (tolerance 0.0001); pass probabilities, not scores or logits
    >>> check_probabilities([[0.33, 0.33, 0.33]])
    Traceback (most recent call last):
    ...
    ValueError: y_prob: row 0 sums to 0.99, not 1 (tolerance 0.0001); rows sum to 1 only to within 0.01: rounded probabilities? renormalize them, e.g. P / P.sum(axis=1, keepdims=True)
    """
    arr, source = _as_array_and_dtype(y_prob, name)
    if dtype is None:
        dtype = source
    try:
        arr = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: could not convert to a float array ({exc})") from None
    if _eps(dtype) is None:
        dtype = arr.dtype
    if arr.ndim == 1 and not allow_1d:
        raise ValueError(f"{name}: expected a 2-d array of shape (n, k), got shape {arr.shape}")
    if arr.ndim == 2 and not allow_2d:
        raise ValueError(f"{name}: expected a 1-d array of shape (n,), got shape {arr.shape}")
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name}: expected shape (n,) or (n, k), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name}: empty input (n = 0); at least one sample is needed")
    if arr.ndim == 2 and arr.shape[1] < 2:
        raise ValueError(
            f"{name}: a 2-d array needs k >= 2 columns (one per class), got shape {arr.shape};"
            " pass binary probabilities as a 1-d array"
        )
    if arr.ndim == 1:
        in_range = bool(arr.min() >= 0.0 and arr.max() <= 1.0)  # NaN fails both tests
        row_sum = top = None
    else:
        in_range, row_sum, top = scan_rows(arr)
    if not in_range:
        bad = ~np.isfinite(arr)
        if bad.any():
            idx = _first_index(bad)
            raise ValueError(
                f"{name}: non-finite value {float(arr[idx])} at index {_fmt_index(idx)}")
        atol = _value_tolerance(dtype)
        bad = (arr < -atol) | (arr > 1.0 + atol)
        if bad.any():
            idx = _first_index(bad)
            raise ValueError(
                f"{name}: value {float(arr[idx])!r} at index {_fmt_index(idx)} is outside"
                f" [0, 1]; {_hint(arr, option_hints)}")
        # floating-point residue just outside [0, 1]: clip (module docstring)
        arr = np.clip(arr, 0.0, 1.0)
        if arr.ndim == 2:
            _, row_sum, top = scan_rows(arr)
    if row_sum is not None:
        tol = row_sum_tolerance(dtype, arr.shape[1])
        bad = np.abs(row_sum - 1.0) > tol
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name}: row {i} sums to {row_sum[i]:.6g}, not 1 (tolerance {tol:g});"
                f" {_hint(arr, option_hints)}")
    if return_argmax:
        if top is None:
            raise ValueError(f"{name}: expected a 2-d array of shape (n, k), got shape {arr.shape}")
        return arr, top
    return arr


#: Bytes per block of :func:`scan_rows` (256 rows of 1,000 float64 values): a block stays in
#: cache while the three reductions run over it.
_BLOCK_BYTES = 1 << 21
#: Matrices with at least this many entries are scanned by two threads (numpy releases the
#: GIL inside each reduction); smaller ones are not worth the hand-off.
_PARALLEL_SIZE = 1 << 22
_pool = None


def _block_rows(n_cols: int) -> int:
    return max(16, _BLOCK_BYTES // (8 * n_cols))


def _scan_block(arr, bits, top, row_sum, lo, hi) -> None:
    """Fill ``top`` and ``row_sum`` for rows ``lo:hi``, one cache-sized block at a time."""
    step = _block_rows(arr.shape[1])
    for start in range(lo, hi, step):
        stop = min(start + step, hi)
        top[start:stop] = bits[start:stop].argmax(axis=1)
        row_sum[start:stop] = np.einsum("ij->i", arr[start:stop])  # faster than .sum(axis=1)


def scan_rows(arr: np.ndarray):
    """One pass over a float64 matrix: range check, row sums and row argmax.

    The trick: read as unsigned 64-bit integers, non-negative floats keep their order, while
    every negative number (sign bit set), NaN and infinity compares larger than ``1.0``.  So
    the argmax of the bit patterns is the usual argmax when the row is valid, and points at an
    offending entry when it is not: checking the one gathered value ``arr[i, top[i]]`` checks
    the whole row.  (The one exception, a row whose largest pattern is ``-0.0``, is re-checked
    the slow way.)  Each block of rows is read from memory once for the argmax and the row
    sum; large matrices are split between two threads.

    Returns
    -------
    in_range : bool
        Every entry is a number in ``[0, 1]``.
    row_sum : ndarray, shape (n,)
    top : ndarray of intp, shape (n,)
        First maximal column of each row (as ``numpy.argmax``); only meaningful if in range.

    Examples
    --------
    >>> ok, sums, top = scan_rows(np.array([[0.2, 0.8], [0.5, 0.5]]))
    >>> ok, sums.tolist(), top.tolist()
    (True, [1.0, 1.0], [1, 0])
    >>> scan_rows(np.array([[0.5, np.nan], [0.5, 0.5]]))[0], scan_rows(np.array([[-0.5, 1.5]]))[0]
    (False, False)
    """
    global _pool
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    n = arr.shape[0]
    bits = arr.view(np.uint64)
    top = np.empty(n, dtype=np.intp)
    row_sum = np.empty(n, dtype=np.float64)
    step = _block_rows(arr.shape[1])
    if arr.size < _PARALLEL_SIZE or n < 2 * step:
        _scan_block(arr, bits, top, row_sum, 0, n)
    else:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor
            _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="calnotes-scan")
        half = (n // 2 // step) * step
        for part in [_pool.submit(_scan_block, arr, bits, top, row_sum, lo, hi)
                     for lo, hi in ((0, half), (half, n))]:
            part.result()
    largest = arr[np.arange(n), top]
    negative_zero = np.flatnonzero(np.signbit(largest) & (largest == 0.0))
    if negative_zero.size:  # all other entries of these rows have smaller bit patterns
        rows = arr[negative_zero]
        if not (rows.min() >= 0.0 and rows.max() <= 1.0):
            return False, row_sum, top
        top[negative_zero] = rows.argmax(axis=1)
        largest = arr[np.arange(n), top]
    return bool(np.all((largest >= 0.0) & (largest <= 1.0))), row_sum, top


def check_labels(y_true, n_classes: int, n_samples: int | None = None,
                 name: str = "y_true") -> np.ndarray:
    """Validate integer class labels in ``{0, ..., n_classes - 1}``.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Labels.  Booleans are accepted for ``n_classes == 2``; floats only when integral.
    n_classes : int
        Number of classes ``k``.
    n_samples : int, optional
        Expected length (from the predictions); a mismatch is an error.
    name : str
        Argument name for messages.

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> check_labels([0, 2, 1], n_classes=3)
    array([0, 2, 1])
    >>> check_labels([0, 3], n_classes=3)
    Traceback (most recent call last):
    ...
    ValueError: y_true: label 3 at index 1 is out of range; expected integers in 0..2
    """
    arr, source = _as_array_and_dtype(y_true, name)
    _check_label_precision(arr, source, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim == 2 and arr.shape[1] == n_classes and arr.shape[0] > 0 \
            and np.issubdtype(arr.dtype, np.number) \
            and np.all((arr == 0) | (arr == 1)) and np.all(arr.sum(axis=1) == 1):
        raise ValueError(f"{name}: labels of shape {arr.shape} look one-hot encoded; pass the"
                         " class indices, labels.argmax(axis=1)")
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d array of labels, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name}: empty input (n = 0); at least one sample is needed")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(
            f"{name}: has {arr.shape[0]} labels but the predictions have {n_samples} rows"
        )
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    elif np.issubdtype(arr.dtype, np.integer):
        arr = arr.astype(np.int64, copy=False)
    elif np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}: non-finite label {float(arr[i])} at index {i}")
        bad = arr != np.round(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}: label {float(arr[i])!r} at index {i} is not an integer")
        bad = (arr < 0) | (arr >= n_classes)     # before the cast: 1e20 does not fit int64
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}: label {_plain(arr[i])} at index {i} is out of range;"
                             f" expected integers in 0..{n_classes - 1}"
                             f"{_one_based(arr, n_classes)}")
        arr = arr.astype(np.int64)
    else:
        raise TypeError(f"{name}: labels must be integers, got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= n_classes)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}: label {int(arr[i])} at index {i} is out of range;"
            f" expected integers in 0..{n_classes - 1}{_one_based(arr, n_classes)}"
        )
    return arr


def _plain(value) -> str:
    """A float label as the user wrote it: ``2`` for ``2.0``, ``1e+20`` for ``1e20``."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _one_based(arr, n_classes: int) -> str:
    """A hint for labels out of range in a known convention: 1-based (all in 1..k and k
    present), -1/+1 (SVM, libsvm), -100 (Hugging Face's ignored tokens)."""
    if arr.min() == 1 and arr.max() == n_classes:
        return f" (the labels run from 1 to {n_classes}: 1-based? subtract 1)"
    present = set(np.unique(arr).tolist())
    if n_classes == 2 and present <= {-1, 1}:
        return (" (labels -1/+1, the SVM/libsvm convention? map them to 0/1:"
                " (labels + 1) // 2)")
    if -100 in present:
        return (" (-100 marks tokens to ignore (Hugging Face): drop those rows first, e.g."
                " keep = labels != -100)")
    return ""


def check_pair(y_true, y_prob, *, allow_2d: bool = True, allow_1d: bool = True):
    """Validate labels and predictions together.

    Returns ``(y, P)`` where ``P`` has shape ``(n,)`` (binary) or ``(n, k)`` and ``y`` is
    an int64 array of labels in range.

    Examples
    --------
    >>> y, p = check_pair([1, 0], [0.9, 0.2])
    >>> y.tolist(), p.tolist()
    ([1, 0], [0.9, 0.2])
    >>> check_pair([1, 0, 1], [0.9, 0.2])
    Traceback (most recent call last):
    ...
    ValueError: y_true: has 3 labels but the predictions have 2 rows
    """
    prob = check_probabilities(y_prob, allow_2d=allow_2d, allow_1d=allow_1d)
    k = 2 if prob.ndim == 1 else prob.shape[1]
    y = check_labels(y_true, n_classes=k, n_samples=prob.shape[0])
    return y, prob


def check_pair_matrix(y_true, y_prob):
    """:func:`check_pair`, with binary predictions ``(n,)`` read as the matrix ``[1 - p, p]``.

    Examples
    --------
    >>> y, P = check_pair_matrix([1, 0], [0.9, 0.2])
    >>> P.tolist()
    [[0.09999999999999998, 0.9], [0.8, 0.2]]
    """
    y, P = check_pair(y_true, y_prob)
    if P.ndim == 1:
        P = np.column_stack([1.0 - P, P])
    return y, P


def check_logits(logits, name: str = "X") -> np.ndarray:
    """Validate a logit matrix: 2-d, ``k >= 2`` columns, non-empty, real or ``-inf``.

    ``-inf`` is a masked class (probability 0 after softmax) and is accepted as long as
    every row has at least one finite logit; NaN and ``+inf`` are refused.

    Examples
    --------
    >>> check_logits([[0.0, -np.inf]]).tolist()
    [[0.0, -inf]]
    >>> check_logits([[0.0, np.nan]])
    Traceback (most recent call last):
    ...
    ValueError: X: non-finite logit nan at index [0, 1] (logits must be real, or -inf for a masked class)
    >>> check_logits([[-np.inf, -np.inf]])
    Traceback (most recent call last):
    ...
    ValueError: X: row 0 has no finite logit (all -inf); every row needs at least one
    """
    try:
        z = np.asarray(as_array(logits, name), dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: could not convert to a float array ({exc})") from None
    if z.ndim != 2:
        raise ValueError(f"{name}: expected logits of shape (n, k), got shape {z.shape}")
    if z.shape[0] == 0:
        raise ValueError(f"{name}: empty input (n = 0); at least one sample is needed")
    if z.shape[1] < 2:
        raise ValueError(f"{name}: logits need k >= 2 columns, got shape {z.shape}")
    bad = np.isnan(z) | (z == np.inf)
    if bad.any():
        i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), z.shape)
        raise ValueError(f"{name}: non-finite logit {z[i, j]} at index [{i}, {j}] (logits must"
                         " be real, or -inf for a masked class)")
    empty = ~np.isfinite(z).any(axis=1)
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise ValueError(f"{name}: row {i} has no finite logit (all -inf); every row needs at"
                         " least one")
    return z


def check_n_bins(n_bins, n_samples: int, name: str = "n_bins") -> int:
    """Validate a bin count: a positive integer not larger than the sample size.

    Examples
    --------
    >>> check_n_bins(10, 100)
    10
    >>> check_n_bins(20, 10)
    Traceback (most recent call last):
    ...
    ValueError: n_bins: 20 bins for 10 samples; use at most as many bins as samples
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral):
        raise TypeError(f"{name}: expected a positive integer, got {n_bins!r}")
    n_bins = int(n_bins)
    if n_bins < 1:
        raise ValueError(f"{name}: expected a positive integer, got {n_bins}")
    if n_bins > n_samples:
        raise ValueError(
            f"{name}: {n_bins} bins for {n_samples} samples; use at most as many bins as samples"
        )
    return n_bins


def check_rng(rng) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from a Generator or an integer seed.

    ``None`` is refused on purpose: every random function in calnotes is reproducible.

    Examples
    --------
    >>> int(check_rng(0).integers(10)) == int(check_rng(0).integers(10))
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (numbers.Integral, np.random.SeedSequence)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise TypeError(
        f"rng: expected a numpy.random.Generator or an integer seed, got {rng!r}"
        " (calnotes never draws from unseeded global state)"
    )
