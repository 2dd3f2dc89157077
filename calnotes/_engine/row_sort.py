"""Row-wise stable sorting orders of a float matrix from one sort of integer keys.

The utility calibration estimator (:mod:`calnotes.theory.utility`) sorts thousands of rows of
predicted utilities and carries the residuals along.  ``np.argsort`` costs about twice
``np.sort`` and its order within exact ties is unspecified; here each row's order comes from
one ``np.sort`` of 64-bit integer *keys* that hold the value's order in their high bits and
the position in their low bits:

* a float64 ``v`` becomes an ``int64`` whose order is the order of the floats (the bit pattern,
  with the magnitude bits flipped for negative numbers; ``-0.0`` is first made ``+0.0``);
* its ``b = bit_length(n - 1)`` lowest bits are replaced by the position ``0 .. n-1``.

Sorting the keys sorts the values up to the dropped bits and breaks exact ties by position.
Values that agree in every kept bit but differ in a dropped one (relative gap below
``2^(b - 52)``, rare: about ``n^2 2^(b - 52)`` pairs of uniform values) may come out of order:
every row is checked and the rows that are not sorted are finished with a stable sort of the
(almost sorted) gathered values.  The result is exactly ``np.argsort(V, axis=1,
kind="stable")`` (ties by position), with the sorted values.
"""

from __future__ import annotations

import numpy as np

_MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)


def take_rows(A: np.ndarray, idx: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``A[r, idx[r]]`` for every row ``r`` (``np.take_along_axis(A, idx, axis=1)`` without its
    broadcast index arrays: one ``np.take`` per row, about 1.5x faster).

    Examples
    --------
    >>> take_rows(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1, 0], [0, 1]])).tolist()
    [[2.0, 1.0], [3.0, 4.0]]
    """
    if out is None:
        out = np.empty(idx.shape, dtype=A.dtype)
    for r in range(idx.shape[0]):
        np.take(A[r], idx[r], out=out[r])
    return out


def stable_row_order(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(idx, Vs)``: ``idx = np.argsort(V, axis=1, kind="stable")`` and ``Vs`` the sorted rows.

    ``V`` is a finite float64 ``(M, n)`` array.  One integer sort per row (module docstring),
    a gather, and a check; rows the check finds unsorted get a stable sort of their gathered
    values.

    Examples
    --------
    >>> idx, Vs = stable_row_order(np.array([[0.5, -1.0, 0.5, 0.0]]))
    >>> idx.tolist(), Vs.tolist()
    ([[1, 3, 0, 2]], [[-1.0, 0.0, 0.5, 0.5]])
    """
    V = np.ascontiguousarray(V, dtype=np.float64)
    M, n = V.shape
    bits = max(1, int(n - 1).bit_length())
    key = np.add(V, 0.0).view(np.int64)                 # a new array; -0.0 -> +0.0
    if n and V.min() < 0.0:                             # float order -> integer order
        flip = key >> 63
        flip &= _MAGNITUDE
        key ^= flip
        del flip
    key &= np.int64(~((1 << bits) - 1))
    key |= np.arange(n, dtype=np.int64)
    key.sort(axis=1)
    key &= np.int64((1 << bits) - 1)
    idx = key
    Vs = take_rows(V, idx)
    unsorted = np.flatnonzero((Vs[:, 1:] < Vs[:, :-1]).any(axis=1)) if n > 1 else []
    for r in unsorted:
        fix = np.argsort(Vs[r], kind="stable")
        idx[r] = idx[r][fix]
        Vs[r] = Vs[r][fix]
    return idx, Vs


def finish_stable_order(values: np.ndarray, order: np.ndarray,
                        row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(idx, Vs)`` of one row from an order that almost sorts it: ``idx =
    np.argsort(row, kind="stable")`` and ``Vs = row[idx]``, given ``values = row[order]``.

    For two classes every linear or rank utility is monotone in one probability up to
    rounding, so that probability's order (:func:`calnotes.theory.utility._block_order`'s hint)
    leaves a row out of order only where values agree to within rounding.  A stable sort of
    the gathered values then meets long runs (NumPy's stable sort of floats is a timsort:
    about linear here, against a full :func:`stable_row_order`), and its ties -- ordered by
    their place in ``order`` -- are put back in input order, as ``np.argsort(row,
    kind="stable")`` orders them (``-0.0`` and ``0.0`` are equal there and are gathered again
    from ``row``, so each keeps its sign).

    Examples
    --------
    >>> row = np.array([0.3, 0.1, 0.2, 0.1, 0.0, -0.0])
    >>> order = np.array([5, 4, 3, 2, 1, 0])        # not sorted: 0.2 before 0.1
    >>> idx, Vs = finish_stable_order(row[order], order, row)
    >>> idx.tolist() == np.argsort(row, kind="stable").tolist(), Vs.tolist()
    (True, [0.0, -0.0, 0.1, 0.1, 0.2, 0.3])
    """
    fix = np.argsort(values, kind="stable")
    idx = order[fix]
    Vs = values[fix]
    tie = Vs[1:] == Vs[:-1]
    if tie.any():
        member = np.zeros(Vs.shape[0], dtype=bool)
        member[:-1] = tie
        member[1:] |= tie
        pos = np.flatnonzero(member)                        # every entry of a tie run
        joins = np.zeros(pos.shape[0], dtype=bool)          # ... equal to the one before it
        joins[pos > 0] = tie[pos[pos > 0] - 1]
        run = np.cumsum(~joins)
        idx[pos] = idx[pos][np.lexsort((idx[pos], run))]   # runs in input order
        Vs[pos] = row[idx[pos]]
    return idx, Vs
