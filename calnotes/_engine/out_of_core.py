"""Out-of-core evaluation: :func:`calnotes.evaluate` on predictions that do not fit in memory.

:func:`calnotes.evaluate` hands a **Dask array** of predictions (with a Dask or NumPy array of
labels), a **folder of shards** or a **memory-mapped** ``.npy`` file (``out_of_core=True``) to
:func:`evaluate_dask`.  Each pass maps a function over row chunks (one chunk in memory per task)
and reduces small per-chunk summaries, so memory per worker is bounded by the chunk size; the
work runs wherever Dask runs it (a ``distributed.Client`` if one is active, else threads).

What is computed, and how
    * accuracy, mean confidence and the mean proper losses (log, Brier, spherical, 0-1): sums;
    * equal-width ECE for every bin count, and the per-bin variance sums of its references:
      sums (pass 1);
    * the l1- and l2-QECE **exactly as eq. (1) defines them**, not from approximate quantiles:
      pass 1 also keeps a regular sample of every sorted chunk column (every ``s``-th value);
      from the pooled sample each order statistic the bins need (the values at sorted
      positions ``b_j - 1`` and ``b_j`` of every inner bound ``b_j = floor(j n / m)``) gets a
      bracket ``[lo, hi]`` that contains it **with certainty** (regular sampling: in a chunk
      with ``a`` sampled values below ``v`` there are at least ``a s`` and at most
      ``a s + s - 1`` values below ``v``).  Pass 2 then reads every value once more: values
      strictly inside a bracket (at most about ``2 C s`` per bracket for ``C`` chunks) are
      kept with their outcome and global row; values equal to a bracket end are counted as
      one tie group; every other run of values lies inside one bin for every ``m`` and is
      summed.  The sorted sequence of these pieces gives every bin's size, prediction sum,
      outcome count and the tie groups that straddle a boundary, exactly;
    * ``ties="average"`` (default): straddling tie groups enter as hypergeometric parts, as in
      memory (``calnotes._engine.bin_stats.BinStats``); ``ties="position"`` orders a tie group
      by global row (input position), with one more pass for the groups counted in pass 2;
    * references, by each measure's specification (:mod:`calnotes.core.measure_spec`): the l2
      references are exact (``sum p (1 - p) / n^2``, a sum); the l1 references use the
      folded-normal approximation on the bins' variance sums (the exact Poisson-binomial sums
      need every bin's predictions in memory); a measure whose reference is the mean of the
      calibrated null's draws gets none (out of core draws no null), and a note says so.

Not computed out of core (each with a note): p-values and bootstrap intervals, SmoothECE,
utility calibration and the figures; logits, renormalisation and class names are refused (save
probabilities and integer labels).  The numbers equal the in-memory report's: integer
quantities (counts, accuracy's numerator) exactly, floating-point sums up to their order of
addition (relative ``1e-12``); the tests check this on a ``distributed.LocalCluster`` with
heavy ties straddling bin and chunk boundaries.

Shard folders
    Files in natural name order (``part-2`` before ``part-10``): ``.npz`` files each holding
    ``labels`` and ``probs`` (as :func:`calnotes.data.save_predictions` writes), or pairs
    ``<stem>.probs.npy`` and ``<stem>.labels.npy``.  Row ``i`` of the concatenation is the
    input position that ``ties="position"`` uses.  Dot-files (macOS's ``._part-0.npz``) are
    skipped; labels may be ``(n,)`` or ``(n, 1)`` (as in memory) and must be numbers (a shard
    of string labels is named before anything is computed).  :func:`open_npy` also reads a
    text labels file (one label per line), as the in-memory loader does.

Chapter "Evaluate your own model" (``book/practice/evaluate``), section *Beyond one machine*.
"""

from __future__ import annotations

import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bin_stats import BinStats, TieParts
from ..core.measure_spec import measure_spec
from .sorted_columns import MEASURES
from .._validate import check_labels, check_probabilities
from ..core.binning import _width_bins_unchecked, quantile_bin_of_position

__all__ = ["evaluate_dask", "open_shards", "open_npy", "is_dask_array", "n_rows", "DEFAULT_CHUNK_ENTRIES"]

#: Probabilities per chunk when calnotes chooses the chunks (shards and memory-mapped files keep
#: their own rows per shard; a memory-mapped ``(n, k)`` file gets ``max(1, 2^22 // k)`` rows).
DEFAULT_CHUNK_ENTRIES = 1 << 22
#: Largest pooled sample per column kept by the driver (values): bounds the sampling step from
#: below, ``s >= n / SAMPLE_BUDGET``.
SAMPLE_BUDGET = 1 << 24


def is_dask_array(x) -> bool:
    """Is ``x`` a Dask array (checked without importing Dask)?

    Examples
    --------
    >>> is_dask_array(np.zeros(3))
    False
    """
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "chunks")


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError:  # pragma: no cover - the `scale` extra is installed by make test
        raise ImportError("out-of-core evaluation needs Dask: pip install 'calnotes[scale]'"
                          ) from None
    return dask, da


# ---------------------------------------------------------------------- inputs
def _natural_key(path: Path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]


def _npy_header(fh) -> tuple[tuple, np.dtype]:
    version = np.lib.format.read_magic(fh)
    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
            else np.lib.format.read_array_header_2_0)
    shape, _, dtype = read(fh)
    if dtype.hasobject:
        raise ValueError("holds Python objects, which calnotes does not unpickle")
    return shape, dtype


def _is_npy(path) -> bool:
    """Does the file start with numpy's magic string (a missing file counts as one: opening
    it names it)?"""
    try:
        with open(path, "rb") as fh:
            return fh.read(6) == b"\x93NUMPY"
    except IsADirectoryError:
        raise IsADirectoryError(f"labels: {path} is a directory, not a file") from None
    except FileNotFoundError:
        return True


def _npz_member_header(path: Path, key: str) -> tuple[tuple, np.dtype]:
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            if key + ".npy" not in names:
                found = sorted(n[:-4] for n in names if n.endswith(".npy"))
                raise ValueError(f"{path}: no array named {key!r} (found {found}); a shard"
                                 " needs 'labels' and 'probs' (logits are not supported out of"
                                 " core)")
            with z.open(key + ".npy") as fh:
                try:
                    return _npy_header(fh)
                except ValueError as exc:
                    raise ValueError(f"{path}: array {key!r} {exc}") from None
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{path}: cannot read as .npz ({exc})") from None


def _load_npz_member(path: str, key: str, flat: bool = False) -> np.ndarray:
    with np.load(path, allow_pickle=False) as archive:
        arr = np.asarray(archive[key])
    return arr.reshape(-1) if flat else arr        # (n, 1) labels as (n,)


def _load_npy_rows(path: str, start: int, stop: int, flat: bool = False) -> np.ndarray:
    arr = np.array(np.load(path, mmap_mode="r", allow_pickle=False)[start:stop])
    return arr.reshape(-1) if flat else arr


def open_shards(folder):
    """A folder of prediction shards as lazy Dask arrays ``(probs, labels)``.

    Parameters
    ----------
    folder : path-like
        ``.npz`` shards (arrays ``labels`` and ``probs``), or pairs ``<stem>.probs.npy`` and
        ``<stem>.labels.npy``, concatenated in natural name order.  Nothing is read but the
        arrays' headers; each shard is one chunk.

    Returns
    -------
    probs, labels : dask.array.Array

    Examples
    --------
    >>> import tempfile
    >>> from calnotes.data import save_predictions
    >>> folder = tempfile.mkdtemp()
    >>> for i in range(2):
    ...     _ = save_predictions(os.path.join(folder, f"part-{i}.npz"), [0, 1],
    ...                      probs=[0.2, 0.9])
    >>> P, y = open_shards(folder)
    >>> P.shape, y.shape, P.chunks[0]
    ((4,), (4,), (2, 2))
    """
    _, da = _dask()
    import dask
    folder = Path(folder)
    if not folder.is_dir():
        raise NotADirectoryError(f"predictions: {folder} is not a folder of shards")
    # dot-files are skipped: macOS writes an AppleDouble "._part-0.npz" next to every shard
    # copied to a foreign disk, and editors leave ".part-0.npz.swp" files
    files = sorted((p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")),
                   key=_natural_key)
    npz = [p for p in files if p.suffix.lower() == ".npz"]
    probs_npy = [p for p in files if p.name.lower().endswith(".probs.npy")]
    if npz and probs_npy:
        raise ValueError(f"predictions: {folder} mixes .npz shards and .probs.npy files;"
                         " keep one kind")
    blocks_p, blocks_y = [], []
    if npz:
        for path in npz:
            (ps, pdt), (ys, ydt) = (_npz_member_header(path, "probs"),
                                    _npz_member_header(path, "labels"))
            _check_shard(path, ps, ys, ydt)
            blocks_p.append(da.from_delayed(dask.delayed(_load_npz_member)(str(path), "probs"),
                                            shape=ps, dtype=pdt))
            blocks_y.append(da.from_delayed(dask.delayed(_load_npz_member)(str(path), "labels",
                                                                           True),
                                            shape=ys[:1], dtype=ydt))
    elif probs_npy:
        for path in probs_npy:
            lab = path.with_name(path.name[:-len(".probs.npy")] + ".labels.npy")
            if not lab.is_file():
                raise FileNotFoundError(f"predictions: shard {path.name} has no labels file"
                                        f" {lab.name} next to it")
            headers = []
            for p in (path, lab):
                with open(p, "rb") as fh:
                    try:
                        headers.append(_npy_header(fh))
                    except ValueError as exc:
                        raise ValueError(f"{p}: {exc}") from None
            (ps, pdt), (ys, ydt) = headers
            _check_shard(path, ps, ys, ydt)
            blocks_p.append(da.from_delayed(dask.delayed(_load_npy_rows)(str(path), 0, ps[0]),
                                            shape=ps, dtype=pdt))
            blocks_y.append(da.from_delayed(dask.delayed(_load_npy_rows)(str(lab), 0, ys[0],
                                                                         True),
                                            shape=ys[:1], dtype=ydt))
    else:
        raise ValueError(f"predictions: {folder} holds no shards (.npz files with 'labels' and"
                         " 'probs', or <stem>.probs.npy with <stem>.labels.npy)")
    ndims = {b.ndim for b in blocks_p}
    widths = {b.shape[1] for b in blocks_p if b.ndim == 2}
    if len(ndims) > 1 or len(widths) > 1:
        raise ValueError(f"predictions: the shards in {folder} disagree on the number of"
                         f" classes ({sorted(widths) or 'vectors and matrices'})")
    return da.concatenate(blocks_p, axis=0), da.concatenate(blocks_y, axis=0)


def _check_shard(path, ps, ys, ydt=None):
    """Shapes (labels ``(n,)`` or ``(n, 1)``, as in memory) and the labels' dtype of one shard,
    checked from the headers, so that a bad shard is named before anything is computed (a
    string shard would otherwise turn every shard's labels into strings)."""
    if len(ps) not in (1, 2) or not (len(ys) == 1 or (len(ys) == 2 and ys[1] == 1)) \
            or ps[0] != ys[0]:
        raise ValueError(f"predictions: shard {path.name} has probabilities of shape {ps} and"
                         f" labels of shape {ys}; expected (n, k) or (n,) and (n,) or (n, 1)")
    _check_label_dtype(ydt, f"shard {path}")


def _check_label_dtype(ydt, where: str) -> None:
    """Out of core reads integer labels (integral floats and booleans too, as in memory)."""
    if ydt is not None and ydt.kind not in "biuf":
        raise ValueError(f"labels: {where} holds labels of dtype {ydt} (not integers); out of"
                         " core reads integer labels 0..k-1 (class names are not mapped out"
                         " of core: save the class indices)")


def open_npy(path, labels, *, chunk_rows: int | None = None):
    """A ``.npy`` prediction file, memory-mapped, as a Dask array in row chunks, with labels.

    Parameters
    ----------
    path : path-like
        ``(n, k)`` probabilities or ``(n,)`` binary ``P(y = 1)``.
    labels : path-like or array_like
        A ``.npy`` file (memory-mapped too) or an array of ``n`` integer labels.
    chunk_rows : int, optional
        Rows per chunk (default ``max(1, DEFAULT_CHUNK_ENTRIES // k)``).

    Examples
    --------
    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "p.npy")
    >>> np.save(path, np.full((10, 2), 0.5))
    >>> P, y = open_npy(path, np.zeros(10, dtype=int), chunk_rows=4)
    >>> P.chunks[0]
    (4, 4, 2)
    """
    _, da = _dask()
    import dask
    path = Path(path)
    with open(path, "rb") as fh:
        try:
            shape, dtype = _npy_header(fh)
        except ValueError as exc:
            raise ValueError(f"predictions: {path}: {exc}") from None
    if len(shape) not in (1, 2):
        raise ValueError(f"predictions: {path} has shape {shape}; expected (n, k) or (n,)")
    n = shape[0]
    k = shape[1] if len(shape) == 2 else 1
    rows = max(1, DEFAULT_CHUNK_ENTRIES // k) if chunk_rows is None else int(chunk_rows)
    if rows < 1:
        raise ValueError(f"chunk_rows: expected a positive integer, got {chunk_rows!r}")
    starts = list(range(0, n, rows)) or [0]

    def lazy(file, shp, dt):
        return da.concatenate([
            da.from_delayed(dask.delayed(_load_npy_rows)(str(file), s, min(n, s + rows)),
                            shape=(min(n, s + rows) - s,) + tuple(shp[1:]), dtype=dt)
            for s in starts], axis=0)

    P = lazy(path, shape, dtype)
    if isinstance(labels, (str, os.PathLike)) and not _is_npy(labels):
        # a text labels file (one label per line), read as in memory: the labels are n values,
        # small next to the n k probabilities
        from ..data.loaders import _load_labels
        y = _load_labels(Path(labels))
        _check_label_dtype(y.dtype, f"file {labels}")
    elif isinstance(labels, (str, os.PathLike)):
        with open(labels, "rb") as fh:
            try:
                lshape, ldtype = _npy_header(fh)
            except ValueError as exc:
                raise ValueError(f"labels: {labels}: {exc}") from None
        if lshape not in ((n,), (n, 1)):
            raise ValueError(f"labels: {labels} has shape {lshape}; expected ({n},) to match"
                             f" the predictions {path}")
        _check_label_dtype(ldtype, f"file {labels}")
        y = lazy(labels, lshape, ldtype)
    else:
        y = labels
    return P, y


# ---------------------------------------------------------------------- chunk tasks
def _coarse_rows(raw: np.ndarray):
    """float16 (or coarser) ``(n_c, k)`` probabilities as the in-memory loader reads them
    (``calnotes.data.loaders._renormalize_coarse``: rows off by more than
    :data:`calnotes._validate.ROW_SUM_ATOL`, within the dtype's rounding, divided by their
    sums), so that the same file gives the same report in memory and out of core.
    ``(P, rows divided, largest deviation)``."""
    if raw.ndim != 2 or raw.dtype.kind != "f" \
            or np.finfo(raw.dtype).eps <= np.finfo(np.float32).eps:
        return raw, 0, 0.0
    from .._validate import ROW_SUM_ATOL
    from ..data.loaders import _renormalize_coarse
    values, note = _renormalize_coarse(raw)
    if note is None:
        return raw, 0, 0.0
    dev = np.abs(np.asarray(raw, dtype=np.float64).sum(axis=1) - 1.0)
    return values, int(np.count_nonzero(dev > ROW_SUM_ATOL)), float(dev.max())


def _chunk_arrays(Pc, yc, start: int, k: int, info: dict | None = None):
    """Validate one chunk (messages name global rows) and return ``(P (n_c, k), y)``;
    ``info`` receives the rows :func:`_coarse_rows` divided by their sums."""
    try:
        Pc, divided, dev = _coarse_rows(np.asarray(Pc))
        if info is not None:
            info.update(divided=divided, dev=dev)
        P = check_probabilities(np.asarray(Pc), name="predictions")
        y = check_labels(np.asarray(yc), n_classes=k, n_samples=P.shape[0], name="labels")
    except (TypeError, ValueError) as exc:
        stop = start + np.asarray(Pc).shape[0]
        text = re.sub(r"(index \[?)(\d+)", lambda g: g.group(1) + str(start + int(g.group(2))),
                      str(exc))
        raise type(exc)(f"rows {start}..{stop - 1} of the out-of-core input (row numbers are"
                        f" global): {text}") from None
    if P.ndim == 1:
        P = np.column_stack([1.0 - P, P])
    if P.shape[1] != k:
        raise ValueError(f"rows {start}..: {P.shape[1]} classes, expected {k}")
    return P, y


def _problems(P, y, aggregations):
    """``(X (n_c, c), Y (n_c, c) bool)`` per aggregation (``"confidence"``: the first maximum;
    ``"classwise"``: one column per class), as ``calnotes._engine.rows.problems`` builds them."""
    out = []
    for agg in aggregations:
        if agg == "confidence":
            top = P.argmax(axis=1)
            out.append((P[np.arange(P.shape[0]), top][:, None], (top == y)[:, None]))
        else:
            out.append((P, y[:, None] == np.arange(P.shape[1])[None, :]))
    return out


def _width_sums(xs: np.ndarray, xp: np.ndarray, m: int) -> np.ndarray:
    """``(4, m)``: count, sum p, sum y, sum p (1 - p) of the equal-width bins of one column,
    from its sorted values ``xs`` and the sorted values of its positives ``xp`` (bins are runs
    of the sorted order, bounded by binary searches of the edges ``j / m``, as in memory)."""
    edges = np.arange(1, m, dtype=np.float64) / m
    starts = np.concatenate([[0], np.searchsorted(xs, edges, side="left"), [xs.shape[0]]])
    out = np.zeros((4, m))
    out[0] = np.diff(starts)
    filled = out[0] > 0
    if filled.any():
        first = starts[:-1][filled]
        out[1, filled] = np.add.reduceat(xs, first)
        out[3, filled] = np.add.reduceat(xs * (1.0 - xs), first)
    out[2] = np.diff(np.concatenate([[0], np.searchsorted(xp, edges, side="left"),
                                     [xp.shape[0]]]))
    return out


def _pass_sums(Pc, yc, start, k, aggregations, width_bins, step):
    """Pass 1 on one chunk: scores, equal-width sums, variance sums and the regular sample."""
    info = {}
    P, y = _chunk_arrays(Pc, yc, start, k, info)
    n = P.shape[0]
    rows = np.arange(n)
    py = P[rows, y]
    sq = np.einsum("ij,ij->i", P, P)
    with np.errstate(divide="ignore"):
        log = -np.log(py)
    top = P.argmax(axis=1)
    out = {"n": n, "correct": int(np.count_nonzero(top == y)),
           "conf": float(P[rows, top].sum()), "log": float(log.sum()),
           "log_inf_row": int(start + np.flatnonzero(~np.isfinite(log))[0])
           if not np.all(np.isfinite(log)) else -1,
           "brier": float((sq - 2.0 * py + 1.0).sum()),
           "spherical": float((1.0 - py / np.sqrt(sq)).sum()),
           "zero_one": float(np.count_nonzero(top != y))}
    if k == 2:
        out["brier_binary"] = float(((P[:, 1] - (y == 1)) ** 2).sum())
    out["divided"], out["dev"] = info.get("divided", 0), info.get("dev", 0.0)
    probs = []
    for X, Y in _problems(P, y, aggregations):
        c = X.shape[1]
        width = [np.empty((4, c, m)) for m in width_bins]
        pq = np.empty(c)
        sample = []
        for col in range(c):
            xs = np.sort(X[:, col])
            xp = np.sort(X[Y[:, col], col])
            pq[col] = (xs * (1.0 - xs)).sum()
            for W, m in zip(width, width_bins):
                W[:, col] = _width_sums(xs, xp, m)
            if step:
                sample.append(xs[step - 1::step])
        entry = {"pq": pq, "width": width}
        if step:
            entry["sample"] = sample
        probs.append(entry)
    out["problems"] = probs
    return out


def _pass_pieces(Pc, yc, start, k, aggregations, keys, gather):
    """Pass 2 on one chunk: per column, key groups, summed gaps and the gathered values."""
    P, y = _chunk_arrays(Pc, yc, start, k)
    out = []
    for (X, Y), K_cols, G_cols in zip(_problems(P, y, aggregations), keys, gather):
        cols = []
        for col in range(X.shape[1]):
            x, yy, K, G = X[:, col], Y[:, col], K_cols[col], G_cols[col]
            s = np.searchsorted(K, x, side="left")
            eq = s < K.shape[0]
            eq[eq] = K[s[eq]] == x[eq]
            nk = K.shape[0]
            grp = np.stack([np.bincount(s[eq], minlength=nk),
                            np.bincount(s[eq], weights=yy[eq], minlength=nk)]).astype(np.int64)
            gap = ~eq
            take = gap & G[s]
            summed = gap & ~take
            ss = s[summed]
            xs = x[summed]
            gaps = np.stack([np.bincount(ss, minlength=nk + 1),
                             np.bincount(ss, weights=xs, minlength=nk + 1),
                             np.bincount(ss, weights=yy[summed], minlength=nk + 1),
                             np.bincount(ss, weights=xs * (1.0 - xs), minlength=nk + 1)])
            idx = np.flatnonzero(take)
            cols.append((grp, gaps, x[idx], yy[idx], start + idx))
        out.append(cols)
    return out


def _pass_cuts(Pc, yc, start, k, aggregations, targets):
    """Pass 3 (``ties="position"``): positives among the first ``t`` members (by global row)
    of tie groups, for the cuts ``targets`` = ``[(problem, col, value, offset, cuts)]``."""
    P, y = _chunk_arrays(Pc, yc, start, k)
    probs = _problems(P, y, aggregations)
    out = []
    for prob, col, value, offset, cuts in targets:
        X, Y = probs[prob]
        members = np.flatnonzero(X[:, col] == value)
        pos_ranks = offset + np.flatnonzero(Y[members, col])
        out.append(np.searchsorted(pos_ranks, np.asarray(cuts), side="left"))
    return out


# ---------------------------------------------------------------------- driver
@dataclass
class _Chunks:
    P: list
    y: list
    starts: list
    n: int
    k: int


def n_rows(P) -> int:
    """Rows of a Dask array of predictions, checked (known chunk sizes, 1 or 2 dimensions).

    Examples
    --------
    >>> import dask.array as da
    >>> n_rows(da.zeros((5, 2), chunks=2))
    5
    """
    if not is_dask_array(P):
        raise TypeError(f"predictions: expected a Dask array, got {type(P).__name__}")
    if P.ndim not in (1, 2):
        raise ValueError(f"predictions: expected shape (n, k) or (n,), got {P.shape}")
    if any(np.isnan(c) for dims in P.chunks for c in dims):
        raise ValueError("predictions: the Dask array has unknown chunk sizes; call"
                         " .compute_chunk_sizes() first")
    return int(P.shape[0])


def _as_chunks(P, y) -> _Chunks:
    dask, da = _dask()
    n = n_rows(P)
    if n == 0:
        raise ValueError("predictions: empty input (0 rows)")
    k = int(P.shape[1]) if P.ndim == 2 else 2
    if P.ndim == 2 and k < 2:
        if k == 1:
            P = P[:, 0]
            k = 2
        else:
            raise ValueError(f"predictions: expected at least 2 classes, got shape {P.shape}")
    if P.ndim == 2:
        P = P.rechunk({1: -1})
    if not is_dask_array(y):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(f"labels: expected shape ({n},) to match the predictions, got"
                             f" {y.shape}")
        y = da.from_array(y, chunks=(P.chunks[0],))
    else:
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(f"labels: expected shape ({n},) to match the predictions, got"
                             f" {y.shape}")
        y = y.rechunk((P.chunks[0],))
    blocks = P.to_delayed()
    blocks = list(blocks.ravel()) if P.ndim == 1 else list(blocks[:, 0])
    starts = np.concatenate([[0], np.cumsum(P.chunks[0])[:-1]]).astype(int).tolist()
    return _Chunks(blocks, list(y.to_delayed().ravel()), starts, n, k)


def _compute(tasks):
    import dask
    return list(dask.compute(*tasks))


def _sample_step(n: int, C: int, targets: int, c: int) -> int:
    """Regular-sampling step: balance the pooled sample (``n / s`` per column) against the
    values gathered in pass 2 (about ``2 C s`` per bracket)."""
    if targets == 0:
        return 0
    s = int(round(np.sqrt(n / (2.0 * C * targets))))
    s = max(s, int(np.ceil(n * c / SAMPLE_BUDGET)))
    return max(1, s)


def _brackets(pooled: np.ndarray, ranks: np.ndarray, s: int, C: int):
    """Certain brackets ``[lo, hi]`` of the order statistics at sorted positions ``ranks``."""
    q_lo = (ranks - C * (s - 1)) // s
    q_hi = -((-(ranks + 1)) // s) - 1
    size = pooled.shape[0]
    lo = np.where(q_lo >= 0, pooled[np.clip(q_lo, 0, max(size - 1, 0))] if size else -np.inf,
                  -np.inf)
    hi = np.where(q_hi < size, pooled[np.clip(q_hi, 0, max(size - 1, 0))] if size else np.inf,
                  np.inf)
    return lo, hi


def _keys_and_gather(lo, hi):
    """Sorted distinct finite bracket ends and, for each gap between consecutive keys (gap
    ``g`` lies between ``K[g-1]`` and ``K[g]``), whether it lies inside a bracket."""
    K = np.unique(np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]]))
    i_lo = np.where(np.isfinite(lo), np.searchsorted(K, lo), -1)
    i_hi = np.where(np.isfinite(hi), np.searchsorted(K, hi), K.shape[0])
    diff = np.zeros(K.shape[0] + 2, dtype=np.int64)
    np.add.at(diff, i_lo + 1, 1)
    np.add.at(diff, i_hi + 1, -1)
    return K, np.cumsum(diff)[:K.shape[0] + 1] > 0


@dataclass
class _Column:
    """One column's sorted pieces: each is a tie group (``value``; gathered groups also carry
    their members' outcomes in row order) or a summed run of values inside one bin."""

    start: np.ndarray       # first sorted position
    count: np.ndarray
    sum_p: np.ndarray
    sum_y: np.ndarray
    sum_pq: np.ndarray
    value: np.ndarray       # NaN for summed runs
    outcomes: dict          # piece index -> outcomes in global-row order (gathered groups)


def _column_pieces(K, G, grp, gaps, gx, gy, gpos) -> _Column:
    """Assemble the sorted pieces of one column from the reduced pass-2 results."""
    order = np.lexsort((gpos, gx))
    gx, gy, gpos = gx[order], gy[order], gpos[order]
    nk = K.shape[0]
    gslot = np.searchsorted(K, gx, side="left")                    # the gap of each gathered value
    rec = {"count": [], "sum_p": [], "sum_y": [], "sum_pq": [], "value": []}
    outcomes = {}

    def add(count, sp, sy, spq, value):
        rec["count"].append(count)
        rec["sum_p"].append(sp)
        rec["sum_y"].append(sy)
        rec["sum_pq"].append(spq)
        rec["value"].append(value)

    bounds_g = np.searchsorted(gslot, np.arange(nk + 2), side="left")
    for g in range(nk + 1):
        if G[g]:
            a, b = bounds_g[g], bounds_g[g + 1]
            if b > a:
                xs, ys = gx[a:b], gy[a:b]
                new = np.concatenate([[True], xs[1:] != xs[:-1]])
                heads = np.flatnonzero(new)
                ends = np.append(heads[1:], xs.shape[0])
                for h, e in zip(heads.tolist(), ends.tolist()):
                    u = float(xs[h])
                    outcomes[len(rec["count"])] = ys[h:e]
                    add(e - h, u * (e - h), float(ys[h:e].sum()), u * (1.0 - u) * (e - h), u)
        elif gaps[0, g] > 0:
            add(int(gaps[0, g]), float(gaps[1, g]), float(gaps[2, g]), float(gaps[3, g]),
                np.nan)
        if g < nk and grp[0, g] > 0:
            u = float(K[g])
            c = int(grp[0, g])
            add(c, u * c, float(grp[1, g]), u * (1.0 - u) * c, u)
    count = np.array(rec["count"], dtype=np.int64)
    return _Column(start=np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64),
                   count=count, sum_p=np.array(rec["sum_p"]), sum_y=np.array(rec["sum_y"]),
                   sum_pq=np.array(rec["sum_pq"]), value=np.array(rec["value"]),
                   outcomes=outcomes)


def _overlaps(a: int, e: int, n: int, m: int):
    bounds = (np.arange(m + 1, dtype=np.int64) * n) // m
    j_lo = int(quantile_bin_of_position(a, n, m))
    j_hi = int(quantile_bin_of_position(e - 1, n, m))
    return [(j, min(e, int(bounds[j + 1])) - max(a, int(bounds[j])))
            for j in range(j_lo, j_hi + 1)]


def _straddlers(col: _Column, n: int, m: int) -> np.ndarray:
    first = quantile_bin_of_position(col.start, n, m)
    last = quantile_bin_of_position(col.start + col.count - 1, n, m)
    straddle = first != last
    if np.any(straddle & np.isnan(col.value)):
        raise AssertionError("calnotes._engine.out_of_core: a summed run straddles a bin boundary (the"
                             " brackets missed an order statistic); please report this")
    return np.flatnonzero(straddle)


def _mass_stats(columns: list, n: int, m: int, ties: str, cuts: dict, pidx: int, col_ids):
    """``BinStats`` and per-bin variance sums of ``m`` equal-mass bins for the columns
    ``col_ids`` of problem ``pidx`` (``cuts``: the pass-3 positives of aggregated groups,
    ``ties="position"``)."""
    c = len(col_ids)
    bounds = (np.arange(m + 1, dtype=np.int64) * n) // m
    count = np.broadcast_to(np.diff(bounds).astype(np.float64), (c, m)).copy()
    sum_prob = np.zeros((c, m))
    sum_outcome = np.zeros((c, m))
    fixed = np.zeros((c, m))
    pq = np.zeros((c, m))
    parts = []
    for ci, col_id in enumerate(col_ids):
        col = columns[col_id]
        first = quantile_bin_of_position(col.start, n, m)
        strad = _straddlers(col, n, m)
        whole = np.ones(col.count.shape[0], dtype=bool)
        whole[strad] = False
        sum_prob[ci] = np.bincount(first[whole], weights=col.sum_p[whole], minlength=m)
        fixed[ci] = np.bincount(first[whole], weights=col.sum_y[whole], minlength=m)
        pq[ci] = np.bincount(first[whole], weights=col.sum_pq[whole], minlength=m)
        sum_outcome[ci] = fixed[ci]
        for i in strad.tolist():
            a, N = int(col.start[i]), int(col.count[i])
            u, K = float(col.value[i]), int(round(col.sum_y[i]))
            for j, o in _overlaps(a, a + N, n, m):
                sum_prob[ci, j] += o * u
                pq[ci, j] += o * u * (1.0 - u)
                if ties == "average":
                    sum_outcome[ci, j] += o * K / N
                    parts.append((ci, j, N, K, o))
                else:
                    lo_t = max(a, int(bounds[j])) - a
                    hi_t = min(a + N, int(bounds[j + 1])) - a
                    if i in col.outcomes:
                        ys = col.outcomes[i]
                        got = float(ys[lo_t:hi_t].sum())
                    else:
                        got = float(cuts[(pidx, col_id, a, hi_t)]
                                    - cuts[(pidx, col_id, a, lo_t)])
                    sum_outcome[ci, j] += got
                    fixed[ci, j] += got
    if parts:
        tie_parts = TieParts(*(np.array(v, dtype=np.int64) for v in zip(*parts)))
        return BinStats(count=count, sum_prob=sum_prob, sum_outcome=sum_outcome, n=n,
                        parts=tie_parts, fixed_outcome=fixed), pq
    return BinStats(count=count, sum_prob=sum_prob, sum_outcome=sum_outcome, n=n), pq


def _position_cuts(ch: _Chunks, aggregations, columns_by_prob, per_chunk_groups, bins, n,
                   k) -> dict:
    """Pass 3: for ``ties="position"``, positives among the first ``t`` members of every
    aggregated tie group that straddles a boundary, at every cut ``t`` any bin count needs."""
    import dask
    wanted = {}                                    # (prob, col, start) -> (value, key slot, cuts)
    for pidx, columns in enumerate(columns_by_prob):
        for ci, col in enumerate(columns):
            for m in bins:
                if m > n:
                    continue
                bounds = (np.arange(m + 1, dtype=np.int64) * n) // m
                for i in _straddlers(col, n, m).tolist():
                    if i in col.outcomes:
                        continue
                    a, N = int(col.start[i]), int(col.count[i])
                    cuts = {max(a, int(b)) - a for b in bounds if a <= b <= a + N}
                    entry = wanted.setdefault((pidx, ci, a), [float(col.value[i]), set()])
                    entry[1] |= cuts | {0, N}
    if not wanted:
        return {}
    keys = list(wanted)
    # members of each group in earlier chunks: the per-chunk key-group counts of pass 2
    offsets = {key: 0 for key in keys}
    tasks = []
    for c_i, (Pb, yb, start) in enumerate(zip(ch.P, ch.y, ch.starts)):
        targets = []
        for key in keys:
            pidx, ci, _ = key
            value, cuts = wanted[key]
            targets.append((pidx, ci, value, offsets[key], sorted(cuts)))
            offsets[key] += per_chunk_groups[c_i][pidx][ci].get(value, 0)
        tasks.append(dask.delayed(_pass_cuts)(Pb, yb, start, k, aggregations, targets))
    results = _compute(tasks)
    out = {}
    for t_i, key in enumerate(keys):
        total = sum(np.asarray(r[t_i]) for r in results)
        for cut, got in zip(sorted(wanted[key][1]), total.tolist()):
            out[key + (cut,)] = got
    return out


def evaluate_dask(P, y, *, bins, ties: str = "average", references: bool = True,
                  sample_step: int | None = None) -> dict:
    """The out-of-core part of :func:`calnotes.evaluate`: scores and binned rows.

    Parameters
    ----------
    P : dask.array.Array, shape (n, k) or (n,)
        Probabilities (a vector: binary ``P(y = 1)``), chunked along rows.
    y : dask.array.Array or array_like, shape (n,)
        Integer labels ``0 .. k - 1``.
    bins : list of int
        Bin counts (equal-mass rows only for ``m <= n``).
    ties : {"average", "position"}
    references : bool
    sample_step : int, optional
        The regular-sampling step ``s`` (default: chosen from ``n``, the number of chunks and
        the number of order statistics); any ``s >= 1`` gives the same numbers.

    Returns
    -------
    dict
        ``n``, ``k``, ``accuracy``, ``mean_confidence``, ``scores``, ``rows`` and ``notes``.

    Examples
    --------
    >>> import dask.array as da
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> y = (rng.uniform(size=1000) < p).astype(int)
    >>> part = evaluate_dask(da.from_array(p, chunks=300), y, bins=[10])
    >>> [r["measure"] for r in part["rows"]][:3]
    ['ECE', 'ECE', 'ECE']
    """
    import dask
    ch = _as_chunks(P, y)
    n, k, C = ch.n, ch.k, len(ch.P)
    # the column problems computed; for k = 2 the binary problem (P(y = 1) against y = 1) is
    # column 1 of the class-wise one, so it is not computed twice
    aggregations = ("confidence", "classwise")
    widths = {"confidence": 1, "classwise": k}
    sources = {"confidence": (0, [0]), "classwise": (1, list(range(k)))}
    if k == 2:
        sources["binary"] = (1, [1])
    mass_bins = [m for m in bins if m <= n]
    ranks = np.unique(np.concatenate(
        [np.concatenate([b - 1, b]) for b in
         ((np.arange(1, m, dtype=np.int64) * n) // m for m in mass_bins)] or
        [np.empty(0, np.int64)])).astype(np.int64)
    ranks = ranks[(ranks >= 0) & (ranks < n)]
    if sample_step is None:
        step = _sample_step(n, C, ranks.shape[0], k)
    else:
        step = int(sample_step)
        if step < 1:
            raise ValueError(f"sample_step: expected a positive integer, got {sample_step!r}")
    if not mass_bins:
        step = 0
    width_bins = list(bins)

    # pass 1: sums, equal-width sums, regular samples
    first = _compute([dask.delayed(_pass_sums)(Pb, yb, s, k, aggregations, width_bins, step)
                      for Pb, yb, s in zip(ch.P, ch.y, ch.starts)])
    total = lambda key: sum(r[key] for r in first)      # noqa: E731
    notes = []
    scores = {"log": total("log") / n, "brier": total("brier") / n}
    if k == 2:
        scores["brier_binary"] = total("brier_binary") / n
    scores["spherical"] = total("spherical") / n
    scores["zero_one"] = total("zero_one") / n
    divided = total("divided")
    if divided:                                  # the in-memory loader's note, in its words
        from .._validate import ROW_SUM_ATOL, row_sum_tolerance
        tol = row_sum_tolerance(P.dtype, k)
        notes.append(f"probs: {P.dtype} values, whose rounding moves a row sum by up to"
                     f" {tol:.2g}: divided the {divided} of {n} rows off by more than"
                     f" {ROW_SUM_ATOL:g} by their sums (largest deviation"
                     f" {max(r['dev'] for r in first):.2g})")
    inf_rows = [r["log_inf_row"] for r in first if r["log_inf_row"] >= 0]
    if inf_rows:
        notes.append(f"log loss is infinite: sample {inf_rows[0]} gives probability 0 to its"
                     " label (written as null in JSON, empty in CSV)")
    pq_total = [sum(r["problems"][p]["pq"] for r in first) for p in range(len(aggregations))]
    width = {(pidx, m_i): sum(r["problems"][pidx]["width"][m_i] for r in first)
             for pidx in range(len(aggregations)) for m_i in range(len(width_bins))}
    summary = {"n": n, "k": k, "accuracy": total("correct") / n,
               "mean_confidence": total("conf") / n, "scores": scores}
    samples = ([[np.sort(np.concatenate([r["problems"][pidx]["sample"][col] for r in first]))
                 for col in range(widths[agg])] for pidx, agg in enumerate(aggregations)]
               if mass_bins else None)
    del first

    # pass 2: pieces of the sorted order around every order statistic
    columns_by_prob = [[] for _ in aggregations]
    per_chunk_groups = [[[{} for _ in range(widths[a])] for a in aggregations]
                        for _ in range(C)]
    if mass_bins:
        keys, gather = [], []
        for pidx, agg in enumerate(aggregations):
            kp, gp = [], []
            for col in range(widths[agg]):
                lo, hi = _brackets(samples[pidx][col], ranks, step, C)
                K, G = _keys_and_gather(lo, hi)
                kp.append(K)
                gp.append(G)
            keys.append(kp)
            gather.append(gp)
        samples = None
        second = _compute([dask.delayed(_pass_pieces)(Pb, yb, s, k, aggregations, keys, gather)
                           for Pb, yb, s in zip(ch.P, ch.y, ch.starts)])
        for pidx, agg in enumerate(aggregations):
            for col in range(widths[agg]):
                K = keys[pidx][col]
                grp = sum(r[pidx][col][0] for r in second)
                gaps = sum(r[pidx][col][1] for r in second)
                gx = np.concatenate([r[pidx][col][2] for r in second])
                gy = np.concatenate([r[pidx][col][3] for r in second])
                gpos = np.concatenate([r[pidx][col][4] for r in second])
                columns_by_prob[pidx].append(
                    _column_pieces(K, gather[pidx][col], grp, gaps, gx, gy.astype(np.float64),
                                   gpos))
                for c_i, r in enumerate(second):
                    counts = r[pidx][col][0][0]
                    nz = np.flatnonzero(counts)
                    per_chunk_groups[c_i][pidx][col] = dict(zip(K[nz].tolist(),
                                                                counts[nz].tolist()))
        del second
    cuts = (_position_cuts(ch, aggregations, columns_by_prob, per_chunk_groups, bins, n, k)
            if ties == "position" and mass_bins else {})

    # rows, in the in-memory report's order: bin count, measure, aggregation
    from ..core.expectation import _folded_normal_mean
    rows = []
    no_reference: list = []         # measures whose reference needs the null's draws
    for m_i, m in enumerate(bins):
        for name in MEASURES:
            spec = measure_spec(name)
            binning = spec.binning
            if binning == "mass" and m > n:
                continue
            for agg, (pidx, cols) in sources.items():
                if binning == "width":
                    W = width[pidx, m_i][:, cols]
                    stats = BinStats(count=W[0], sum_prob=W[1], sum_outcome=W[2], n=n)
                    var = W[3]
                else:
                    stats, var = _mass_stats(columns_by_prob[pidx], n, m, ties, cuts, pidx,
                                             cols)
                value = float(spec.of_stats(stats).mean())
                row = {"measure": name, "aggregation": agg, "binning": binning, "n_bins": m,
                       "value": value, "calibrated_reference": None,
                       "reference_method": "skipped"}
                if references and spec.reference == "exact-variance":
                    row["calibrated_reference"] = float(pq_total[pidx][cols].mean() / n ** 2)
                    row["reference_method"] = "exact"
                elif references and spec.reference == "exact-abs":
                    sigma = np.sqrt(np.maximum(var, 0.0))
                    row["calibrated_reference"] = float(
                        (_folded_normal_mean(0.0, sigma).sum(axis=1) / n).mean())
                    row["reference_method"] = "folded-normal"
                elif references:
                    no_reference.append(name)
                rows.append(row)
    for name in dict.fromkeys(no_reference):
        notes.append(f"no calibrated reference for {name} out of core: its reference is the"
                     f" mean of the calibrated null's draws ({measure_spec(name).reference}),"
                     " and out of core no null is drawn")
    summary.update(rows=rows, notes=notes)
    return summary
