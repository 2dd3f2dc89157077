"""Thread pools of the library's parallel parts, whose threads know they are pool threads,
and running sums along rows that leave the interpreter lock to the other threads.

A part that splits its own NumPy or SciPy calls over threads (the batched FFTs of
:mod:`calnotes._engine.poisson_binomial`) asks :func:`in_worker` first: on a thread of one of these
pools the cores are already shared out, and a call that starts threads of its own there
oversubscribes them (measurements: benchmarks/README.md, *Tuning constants of the engine*).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["worker_pool", "in_worker", "cumsum_rows", "reduceat_rows", "ROW_LOOP_MIN",
           "NUMPY_THREAD_ROWS"]

#: Row length from which :func:`cumsum_rows` and :func:`reduceat_rows` take one row at a
#: time: NumPy holds the interpreter lock through a whole 2-d ``cumsum``/``reduceat`` of up to
#: :data:`NUMPY_THREAD_ROWS` rows but not through 1-d calls; below this length the per-row
#: calls would cost more than their work.
ROW_LOOP_MIN = 1 << 13
#: Rows above which NumPy's own 2-d accumulate or reduceat along the rows releases the lock.
NUMPY_THREAD_ROWS = 500

_local = threading.local()


def _mark() -> None:
    _local.worker = True


def worker_pool(max_workers: int) -> ThreadPoolExecutor:
    """A :class:`~concurrent.futures.ThreadPoolExecutor` whose threads :func:`in_worker`
    recognises.

    Examples
    --------
    >>> with worker_pool(2) as pool:
    ...     list(pool.map(lambda _: in_worker(), range(2)))
    [True, True]
    >>> in_worker()
    False
    """
    return ThreadPoolExecutor(max_workers=max_workers, initializer=_mark,
                              thread_name_prefix="calnotes-worker")


def in_worker() -> bool:
    """Whether the calling thread is a thread of a :func:`worker_pool`."""
    return getattr(_local, "worker", False)


def cumsum_rows(a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``np.cumsum(a, axis=1, out=out)`` for a 2-d ``a``, one row at a time where there are
    at most :data:`NUMPY_THREAD_ROWS` rows of at least :data:`ROW_LOOP_MIN` entries, so that
    threads doing it run at once.  The same sequential sums, so the same numbers, bit for
    bit.

    Examples
    --------
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> cumsum_rows(a, np.empty((2, 3))).tolist()
    [[0.0, 1.0, 3.0], [3.0, 7.0, 12.0]]
    """
    if not _by_row(a):
        return np.cumsum(a, axis=-1, out=out)
    for r in range(a.shape[0]):
        np.cumsum(a[r], out=out[r])
    return out


def reduceat_rows(a: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``np.add.reduceat(a, indices, axis=1)`` for a 2-d ``a``, one row at a time where
    :func:`cumsum_rows` would.  Each row's
    sums are those of the 2-d call, bit for bit (tests/test_pool.py checks it on the
    installed NumPy).

    Examples
    --------
    >>> reduceat_rows(np.arange(8.0).reshape(2, 4), np.array([0, 1])).tolist()
    [[0.0, 6.0], [4.0, 18.0]]
    """
    if not _by_row(a) or a.shape[0] == 0:
        return np.add.reduceat(a, indices, axis=1)
    first = np.add.reduceat(a[0], indices)
    out = np.empty((a.shape[0], first.shape[0]), dtype=first.dtype)
    out[0] = first
    for r in range(1, a.shape[0]):
        out[r] = np.add.reduceat(a[r], indices)
    return out


def _by_row(a: np.ndarray) -> bool:
    return a.ndim == 2 and a.shape[0] <= NUMPY_THREAD_ROWS and a.shape[1] >= ROW_LOOP_MIN
