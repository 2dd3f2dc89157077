"""Thread pools of the library's parallel parts, whose threads know they are pool threads.

A part that splits its own NumPy or SciPy calls over threads (the batched FFTs of
:mod:`calnotes.poisson_binomial`) asks :func:`in_worker` first: on a thread of one of these
pools the cores are already shared out, and a call that starts threads of its own there
oversubscribes them: on two cores the exact laws and references of the 50,000 x 2 report
took 0.49-0.52 s on two threads whose FFTs took two threads each, 0.43 s with one FFT thread
each.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["worker_pool", "in_worker"]

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
