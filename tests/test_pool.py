"""The library's worker pools, row sums and FFT thread rule (calnotes._engine.pool,
poisson_binomial.fft_workers).

A batched FFT splits its rows over threads only where that pays: more than one row, at least
FFT_THREAD_MIN elements, and not on a thread of a pool that already shares the cores out.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from calnotes._engine import rows as _evalrows, poisson_binomial
from calnotes._engine.pool import in_worker, worker_pool


def test_pool_threads_know_they_are_pool_threads():
    """Every thread of a worker pool (more tasks than threads, so threads are reused) says so;
    the calling thread and a fresh thread do not.  Control: the threads of a plain
    ThreadPoolExecutor are not taken for the library's."""
    with worker_pool(3) as pool:
        assert all(pool.map(lambda _: in_worker(), range(12)))
    assert not in_worker()
    seen = []
    t = threading.Thread(target=lambda: seen.append(in_worker()))
    t.start()
    t.join()
    assert seen == [False]
    with ThreadPoolExecutor(max_workers=3) as plain:               # control
        assert not any(plain.map(lambda _: in_worker(), range(12)))


@pytest.mark.parametrize("workers", [1, 2, 8])
def test_fft_workers_splits_only_large_batches_outside_pools(workers, monkeypatch):
    """Over the boundary of each condition: one row (however long), a batch one element
    below and at FFT_THREAD_MIN, and the same large batch inside a worker pool."""
    monkeypatch.setattr(poisson_binomial, "FFT_WORKERS", workers)
    least = poisson_binomial.FFT_THREAD_MIN
    rule = poisson_binomial.fft_workers
    assert rule(1, 64 * least) == 1
    assert rule(2, least // 2 - 1) == 1
    assert rule(2, least // 2) == workers
    assert rule(least, 1) == workers
    with worker_pool(2) as pool:
        assert pool.submit(rule, 2, least).result() == 1
    with ThreadPoolExecutor(max_workers=2) as plain:               # control: not a pool thread
        assert plain.submit(rule, 2, least).result() == workers


def test_plans_on_threads_give_the_same_laws_and_ffts_stay_serial(monkeypatch):
    """The plans' exact laws computed on a worker pool (with FFT batches above the thread
    minimum) are the laws computed one by one, bit for bit, and no FFT inside the pool asked
    for more than one thread.  Control: the same batches on the calling thread do."""
    rng = np.random.default_rng(3)
    qs = [rng.random(L) for L in (70, 300, 1500, 4000)] * 3
    monkeypatch.setattr(poisson_binomial, "FFT_THREAD_MIN", 1)
    asked = []
    rule = poisson_binomial.fft_workers

    def spy(rows, nfft):
        got = rule(rows, nfft)
        asked.append((in_worker(), got))
        return got

    monkeypatch.setattr(poisson_binomial, "fft_workers", spy)
    monkeypatch.setattr(poisson_binomial, "FFT_WORKERS", 2)
    alone = [poisson_binomial.pmfs([q])[0] for q in qs]
    assert any(got == 2 for inside, got in asked if not inside)      # control
    asked.clear()
    monkeypatch.setattr(_evalrows, "_PLAN_THREAD_ROWS", 1)
    pooled = _evalrows._map_plans(lambda q: poisson_binomial.pmfs([q])[0], qs, 10 ** 6, 3)
    assert asked and all(inside and got == 1 for inside, got in asked)
    assert all(np.array_equal(a, b) for a, b in zip(alone, pooled))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64])
def test_cumsum_rows_is_numpys_row_sums_bit_for_bit(dtype):
    """Rows shorter than, at and beyond ROW_LOOP_MIN, up to and beyond NUMPY_THREAD_ROWS rows
    (both paths), one row, no rows, and an
    ``out`` that is a view into a wider array (as the bootstrap writes after a zero column).
    Control: the same sums taken from the other end of each row, which round differently,
    are told apart by the same comparison."""
    from calnotes._engine.pool import NUMPY_THREAD_ROWS, ROW_LOOP_MIN, cumsum_rows

    rng = np.random.default_rng(7)
    for rows, length in ((3, ROW_LOOP_MIN - 1), (3, ROW_LOOP_MIN), (2, ROW_LOOP_MIN + 5),
                         (1, 3 * ROW_LOOP_MIN), (0, ROW_LOOP_MIN), (4, 1),
                         (NUMPY_THREAD_ROWS, ROW_LOOP_MIN), (NUMPY_THREAD_ROWS + 1, ROW_LOOP_MIN)):
        a = (rng.random((rows, length)) * 10 ** 3).astype(dtype)
        wide = np.zeros((rows, length + 1), dtype=dtype)
        got = cumsum_rows(a, wide[:, 1:])
        assert rows == 0 or np.shares_memory(got, wide)             # out is returned
        assert np.array_equal(wide[:, 1:], np.cumsum(a, axis=1)), (rows, length)
    a = rng.random((2, ROW_LOOP_MIN + 5))
    other_end = a.sum(axis=1)[:, None] - np.cumsum(a[:, ::-1], axis=1)[:, ::-1] + a
    assert not np.array_equal(cumsum_rows(a, np.empty_like(a)), other_end)      # control


@pytest.mark.parametrize("dtype", [np.float64, np.int32, bool])
def test_reduceat_rows_is_numpys_bit_for_bit(dtype):
    """Bins of every size from one entry to longer than NumPy's buffer, on rows shorter than,
    at and beyond ROW_LOOP_MIN, up to and beyond NUMPY_THREAD_ROWS rows, one row and no
    rows; the same values and the same type as the 2-d call.  Control: a second bin starting one entry later is told apart."""
    from calnotes._engine.pool import NUMPY_THREAD_ROWS, ROW_LOOP_MIN, reduceat_rows

    rng = np.random.default_rng(11)
    for rows, length in ((3, ROW_LOOP_MIN - 1), (3, ROW_LOOP_MIN), (2, 5 * ROW_LOOP_MIN + 3),
                         (1, 2 * ROW_LOOP_MIN), (0, ROW_LOOP_MIN), (2, 7),
                         (NUMPY_THREAD_ROWS, ROW_LOOP_MIN), (NUMPY_THREAD_ROWS + 1, ROW_LOOP_MIN)):
        a = (rng.random((rows, length)) * 10 ** 3).astype(dtype)
        idx = np.unique(np.r_[0, 1, rng.integers(0, length, size=5), length - 1])
        got, want = reduceat_rows(a, idx), np.add.reduceat(a, idx, axis=1)
        assert got.dtype == want.dtype and np.array_equal(got, want), (rows, length)
    a = rng.random((2, 3 * ROW_LOOP_MIN))
    idx = np.array([0, ROW_LOOP_MIN])
    off_by_one = np.add.reduceat(a, idx + [0, 1], axis=1)
    assert not np.array_equal(reduceat_rows(a, idx), off_by_one)                # control
