"""The library's worker pools and the FFT thread rule (calnotes._pool, poisson_binomial.fft_workers).

A batched FFT splits its rows over threads only where that pays: more than one row, at least
FFT_THREAD_MIN elements, and not on a thread of a pool that already shares the cores out.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from calnotes import _evalrows, poisson_binomial
from calnotes._pool import in_worker, worker_pool


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
