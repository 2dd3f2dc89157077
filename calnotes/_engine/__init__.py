"""The private engine behind :func:`calnotes.evaluate`: sorted-once columns, bin statistics,
ties, Poisson-binomial laws, the rows' references, null draws and bootstrap, out of core.

``README.md`` beside this file states what the engine guarantees and where its benchmarks live.
The core measures (:mod:`calnotes.core`) and the report (:mod:`calnotes.evaluation`) call its
modules directly; the papers' theory (:mod:`calnotes.theory`) uses it only through the names
below (tests/test_package_layout.py checks it).
"""

from .pool import NUMPY_THREAD_ROWS, cumsum_rows, worker_pool
from .row_sort import finish_stable_order, stable_row_order, take_rows
from .sorted_columns import available_workers
from .utility_two_class import TwoColumns

__all__ = ["NUMPY_THREAD_ROWS", "cumsum_rows", "worker_pool", "finish_stable_order",
           "stable_row_order", "take_rows", "available_workers", "TwoColumns"]
