"""The Monte Carlo engines on an executor: the same numbers in-process, on threads and on Dask.

Every engine cuts its work into tasks whose randomness is fixed before anything is submitted
(child seeds of one ``SeedSequence``, or draws made in the calling process), so where a task
runs must not change a single bit.  The Dask executor is ``Client.get_executor()`` of a
``LocalCluster`` of two worker *processes*: the task functions and their arguments travel by
pickle and are imported by name in the workers.

Each comparison wraps the executor in :class:`Counting`, which checks that the work really was
submitted (several tasks), not run in this process.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from calnotes.theory import table1 as t1  # noqa: E402
from calnotes.theory import utility as ut  # noqa: E402
from calnotes.book.claims import utility as cu  # noqa: E402
from calnotes.book.claims import utility_experiments as ue  # noqa: E402
from calnotes.data import simulate_logistic_normal  # noqa: E402
from calnotes.core.expectation import simulate_qece  # noqa: E402

T1 = (3, 24, 4, 0.1, 0.05, 0.02)           # k, n, m, eps1, eps2, eps3: small and fast


class Counting:
    """An executor that passes every task on to ``inner`` and counts them."""

    def __init__(self, inner):
        self.inner = inner
        self.submitted = 0

    def submit(self, fn, *args, **kwargs):
        self.submitted += 1
        return self.inner.submit(fn, *args, **kwargs)


@pytest.fixture(scope="module")
def dask_executor():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client.get_executor()
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="module")
def thread_executor():
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield pool


@pytest.fixture(params=["thread", "dask"])
def executor(request):
    """A fresh counting wrapper around each kind of executor."""
    return Counting(request.getfixturevalue(f"{request.param}_executor"))


# --------------------------------------------------------------------------- simulate_qece

def test_simulate_qece_is_the_same_on_every_executor(executor):
    p = np.linspace(0.05, 0.95, 30)
    q = np.clip(p + 0.05, 0.0, 1.0)
    kwargs = dict(n_bins=5, n_reps=500, p=1, chunk_reps=90)
    here = simulate_qece(p, q, rng=7, **kwargs)
    there = simulate_qece(p, q, rng=7, executor=executor, **kwargs)
    assert executor.submitted == 6                      # ceil(500 / 90) chunks
    assert np.array_equal(there.values, here.values)
    assert there.mean == here.mean and there.se == here.se
    other = simulate_qece(p, q, rng=8, **kwargs)
    assert not np.array_equal(other.values, here.values)


# --------------------------------------------------------------------------- Table 1

def _same_estimate(a, b):
    assert a.mean == b.mean and a.se == b.se and a.n_draws == b.n_draws
    assert a.values.keys() == b.values.keys()
    for cell, v in a.values.items():
        assert np.array_equal(v, b.values[cell]), cell


def test_simulate_table1_is_the_same_on_every_executor(executor):
    here = t1.simulate_table1(*T1, n_reps=12, rng=3)
    there = t1.simulate_table1(*T1, n_reps=12, rng=3, executor=executor, chunk_reps=5)
    assert executor.submitted == 3
    _same_estimate(there, here)
    assert here.se["f2.l1_cw"] > 0                      # a sampled cell, not a constant


def test_simulate_table1_depends_on_the_seed_and_not_on_the_chunks():
    base = t1.simulate_table1(*T1, n_reps=8, rng=3)
    other = t1.simulate_table1(*T1, n_reps=8, rng=4)
    assert not np.array_equal(base.values["f2.l1_cw"], other.values["f2.l1_cw"])
    # replication i has its own seed: a shorter run is a prefix, whatever the task size
    short = t1.simulate_table1(*T1, n_reps=5, rng=3, executor=Counting(_Inline()),
                               chunk_reps=2)
    for cell in t1.CELLS:
        assert np.array_equal(short.values[cell], base.values[cell][:5]), cell


class _Inline:
    """A minimal executor running each task at once (for the chunking check above)."""

    def submit(self, fn, *args):
        from concurrent.futures import Future

        future = Future()
        future.set_result(fn(*args))
        return future


def test_expected_table1_is_the_same_on_every_executor(executor):
    for method, tasks in (("reference", 6), ("fast", 1)):
        executor.submitted = 0
        here = t1.expected_table1(*T1, n_draws=6, rng=5, method=method)
        there = t1.expected_table1(*T1, n_draws=6, rng=5, method=method, executor=executor)
        assert executor.submitted == tasks
        _same_estimate(there, here)
        other = t1.expected_table1(*T1, n_draws=6, rng=6, method=method)
        assert not np.array_equal(other.values["f2.l1_cw"], here.values["f2.l1_cw"])


# --------------------------------------------------------------------------- Part IV sweeps

def _comparison(rng, executor=None):
    sim = simulate_logistic_normal(400, 4, rng=1)
    methods = {k: v for k, v in ue.default_methods(4).items() if k in ("TS", "HB")}
    fams = [ut.sample_linear(4, 12, rng=2)]
    return ue.run_comparison(sim.logits / 0.5, sim.labels, n_splits=3, methods=methods,
                             ecdf_families=fams, extra_rows={"truth": sim.true_prob},
                             rng=rng, executor=executor)


def _same_splits(a, b):
    assert len(a) == len(b)
    for x, z in zip(a, b):
        assert x.rows == z.rows and x.warnings == z.warnings
        assert np.array_equal(x.y_test, z.y_test)
        assert x.ecdf_errors.keys() == z.ecdf_errors.keys()
        for m, per_family in x.ecdf_errors.items():
            for label, errors in per_family.items():
                assert np.array_equal(errors, z.ecdf_errors[m][label]), (m, label)
        assert x.test_predictions.keys() == z.test_predictions.keys()
        for m, P in x.test_predictions.items():
            assert np.array_equal(P, z.test_predictions[m]), m


def test_run_comparison_is_the_same_on_every_executor(executor):
    here = _comparison(0)
    there = _comparison(0, executor)
    assert executor.submitted == 3                      # one task per split
    _same_splits(there, here)
    other = _comparison(1)
    assert other[0].rows["TS"] != here[0].rows["TS"]    # other splits, other fits


def test_finite_n_coverage_is_the_same_on_every_executor(executor):
    kwargs = dict(n=150, M=40, seeds=5)
    here = cu.finite_n_coverage(**kwargs)
    there = cu.finite_n_coverage(**kwargs, executor=executor, chunk_seeds=2)
    assert executor.submitted == 3
    assert there == here
    assert 0.0 <= here["plain"] <= 1.0 and here["seeds"] == 5


def test_finite_n_coverage_draws_from_its_seed(monkeypatch):
    """The frequencies are coarse; the seed's effect is checked on the samples drawn."""
    drawn = []
    original = cu.population_sample

    def recording(d, n, rng):
        F, y = original(d, n, rng)
        drawn.append(y.copy())
        return F, y

    monkeypatch.setattr(cu, "population_sample", recording)
    runs = {}
    for seed in (11, 11, 12):
        drawn.clear()
        cu.finite_n_coverage(n=60, M=10, seeds=2, seed=seed)
        runs.setdefault(seed, []).append(np.concatenate(drawn))
    assert np.array_equal(runs[11][0], runs[11][1])
    assert not np.array_equal(runs[11][0], runs[12][0])
