"""Two-class utility calibration from two running sums (calnotes._uc_two, issue 20).

The fast path answers a utility only where its certificate proves that the general engine's
tie groups (predicted utilities within ``4 C eps``, decided on the matrix product's rounding)
are the blocks it uses; the others go to the general engine.  Checked here:

- against the estimate by definition (tie groups from exactly summed predicted utilities,
  every interval enumerated, ``math.fsum``) on small problems from ``n = 1`` up, and against
  the general engine (the fast path switched off) on larger ones, including the inputs that
  stress the certificate: exact ties, probabilities near 0 and 1 (gaps of a few ulp),
  ``p_0 = p_1``, rows summing to one only within 1e-6, float32 models, labels flipped among
  the tiniest probabilities;
- tolerance, derived in tests/test_utility_fast.py for the general engine: ``(2 n + C) eps``
  between an engine and the exact sums (the fast path's two running sums of terms of at most
  ``1 / n`` each add ``(n - 1) eps / 2`` of rounding, weighted by ``|w| <= 1``: within the same
  bound), so two engines are within twice that;
- negative controls: the same comparisons reject a fast path that ignores ties between
  nearly equal probabilities, and the certificate refuses a utility whose tie decision sits
  at the tolerance.
"""

import numpy as np
import pytest

from calnotes import _uc_two, utility as ut
from calnotes.utility import linear, rank, sample_linear, sample_rank

from test_utility_fast import definition_values, reference_uc, sup_over_intervals, tol

EPS = float(np.finfo(np.float64).eps)


def general(y, P, fams, monkeypatch):
    """The general engine: the fast path answers nothing."""
    with monkeypatch.context() as m:
        m.setattr(ut._Calibration, "_two_columns",
                  lambda self, fam: _uc_two.TwoColumnResult(len(fam)))
        return ut._uc_families(y, P, fams, chunk=16, workers=1)


def answered(y, P, fams):
    calc = ut._Calibration(y, P, fams, 16)
    return [calc.two[f].ok for f in range(len(fams))]


def binary(p1, y):
    P = np.column_stack([1.0 - p1, p1])
    return np.asarray(y, dtype=np.int64), P


def cases():
    """(name, y, P): two-class problems from one sample up."""
    rng = np.random.default_rng(20)
    for n in (1, 2, 3, 5, 17):
        p = rng.uniform(0, 1, n)
        yield f"uniform n={n}", *binary(p, rng.random(n) < p)
    p = np.round(rng.uniform(0, 1, 60), 1)                        # exact ties
    yield "rounded", *binary(p, rng.random(60) < p)
    p = rng.choice([0.5, 0.25, 0.75], 40)                         # p_0 = p_1 (rank ties)
    yield "halves", *binary(p, rng.random(40) < 0.5)
    z = 40 * rng.standard_normal(60)                              # near 0 and 1: ulp gaps
    p = 1 / (1 + np.exp(-z))
    yield "saturated", *binary(p, rng.random(60) < p)
    tiny = np.sort(rng.uniform(1, 9, 30)) * 1e-30                 # tied in v, distinct in p_1
    p = np.concatenate([tiny, rng.uniform(0.2, 0.8, 30)])
    yield "tiny, flipped", *binary(p, np.r_[np.ones(15), np.zeros(15), rng.random(30) < 0.5])
    p = np.r_[np.full(20, 0.3), np.full(20, np.nextafter(0.3, 1)), np.full(20, 0.5)]
    yield "ulp block", *binary(p, np.r_[np.ones(20), np.zeros(20), np.ones(10), np.zeros(10)])
    P32 = rng.dirichlet([0.3, 0.3], 60).astype(np.float32).astype(np.float64)
    yield "float32", rng.integers(0, 2, 60), P32
    P = rng.dirichlet([1, 1], 60)
    P[:, 0] *= 1 + rng.uniform(-1e-6, 1e-6, 60)                   # rows off one by 1e-6
    yield "row sums 1 +- 1e-6", rng.integers(0, 2, 60), P


CASES = list(cases())


def families(seed):
    return [sample_linear(2, 12, rng=seed), sample_rank(2, 12, rng=seed + 1),
            linear([[0.0, 1.0], [1.0, -1.0], [0.5, 0.5]]), rank([[1.0, -1.0]])]


@pytest.mark.parametrize("name, y, P", CASES, ids=[c[0] for c in CASES])
def test_fast_path_matches_the_definition(name, y, P):
    fams = families(len(name))
    n = y.size
    took = 0
    for fam, res, ok in zip(fams, ut._uc_families(y, P, fams, chunk=16, workers=1),
                            answered(y, P, fams)):
        took += int(ok.sum())
        np.testing.assert_allclose(res.values[ok], reference_uc(fam, y, P)[ok], rtol=0,
                                   atol=tol(n, 2), err_msg=f"{name}, {fam.label}")
    # rows off one by 1e-6 or float32's 3e-8: only a = (0, 1) (no weight on p_0); else most
    assert took >= (1 if name in ("float32", "row sums 1 +- 1e-6") else 14)


@pytest.mark.parametrize("name, y, P", CASES, ids=[c[0] for c in CASES])
def test_fast_interval_is_attained(name, y, P):
    """The fast path's worst interval holds a deviation equal to its value (by definition)."""
    fams = families(len(name) + 7)
    n = y.size
    tt = ut.utility_tie_tolerance(2)
    import math

    for fam, res, ok in zip(fams, ut._uc_families(y, P, fams, chunk=16, workers=1),
                            answered(y, P, fams)):
        V, U = definition_values(fam, y, P)
        for m in np.flatnonzero(ok):
            if res.values[m] == 0.0:
                assert np.isnan(res.lower[m]) and res.sign[m] == 0 and res.mass[m] == 0
                continue
            inside = [i for i in range(n) if res.lower[m] - tt <= V[m, i] <= res.upper[m] + tt]
            dev = math.fsum((U[m, i] - V[m, i]) / n for i in inside)
            assert abs(abs(dev) - res.values[m]) <= tol(n, 2) + 2 * tt, (name, fam.label, m)
            assert np.sign(dev) == res.sign[m]
            assert len(inside) == round(res.mass[m] * n)


def test_answers_the_common_inputs():
    """The path is taken: every sampled utility of continuous and rounded probabilities away
    from 0 and 1, and of the ties p_0 = p_1."""
    rng = np.random.default_rng(1)
    p = rng.uniform(0.01, 0.99, 3000)
    for P in (binary(p, 0)[1], binary(np.round(p, 2), 0)[1], binary(np.full(50, 0.5), 0)[1]):
        y = rng.integers(0, 2, P.shape[0])
        fams = [sample_linear(2, 50, rng=2), sample_rank(2, 50, rng=3)]
        assert all(ok.all() for ok in answered(y, P, fams))


@pytest.mark.parametrize("n, scale, decimals, least", [
    (4000, 2.0, None, 400), (4000, 2.0, 2, 400),
    (20000, 8.0, None, 200),          # ulp gaps near 0 and 1: some utilities go to the engine
    (4000, 12.0, None, 0)])           # saturated (p = 1 exactly): none answered
def test_fast_path_matches_the_general_engine(n, scale, decimals, least, monkeypatch):
    """Values within twice the bound of either engine; the worst interval the same (its mass
    and sign; its ends to the tie tolerance).  ``least``: utilities (of 400) the fast path
    answered at least (measured: 400, 400, 292 and 0)."""
    rng = np.random.default_rng(n + int(scale))
    p = 1 / (1 + np.exp(-scale * rng.standard_normal(n)))
    if decimals is not None:
        p = np.round(p, decimals)
    y, P = binary(p, rng.random(n) < 1 / (1 + np.exp(-0.7 * scale * rng.standard_normal(n))))
    fams = [sample_linear(2, 200, rng=5), sample_rank(2, 200, rng=6)]
    fast = ut._uc_families(y, P, fams, chunk=16, workers=1)
    slow = general(y, P, fams, monkeypatch)
    took = 0
    for a, b, ok in zip(fast, slow, answered(y, P, fams)):
        took += int(ok.sum())
        np.testing.assert_allclose(a.values, b.values, rtol=0, atol=2 * tol(n, 2))
        assert np.array_equal(a.mass, b.mass) and np.array_equal(a.sign, b.sign)
        tt = ut.utility_tie_tolerance(2)
        np.testing.assert_allclose(a.lower, b.lower, rtol=0, atol=2 * tt)
        np.testing.assert_allclose(a.upper, b.upper, rtol=0, atol=2 * tt)
    assert took >= least


def test_ignoring_near_ties_is_caught(monkeypatch):
    """Negative control: a fast path that takes every distinct p_1 as a boundary (no tie
    tolerance) splits the block of two values 1 ulp apart (labels 1 below, 0 above: with the
    split, the worst interval holds 14 |D| / 60 instead of 8 |D| / 60), and the definition
    check above rejects its values."""
    name, y, P = next(c for c in CASES if c[0] == "ulp block")
    fams = [sample_linear(2, 12, rng=3)]
    ref = reference_uc(fams[0], y, P)
    with monkeypatch.context() as m:
        real = _uc_two.TwoColumns.__init__

        def every_gap_a_boundary(self, *args):
            real(self, *args)
            self.sorted_gaps = np.full(self.gaps.size, np.inf)     # no gap is ever a tie

        m.setattr(_uc_two.TwoColumns, "__init__", every_gap_a_boundary)
        assert answered(y, P, fams)[0].all()
        res = ut._uc_families(y, P, fams, chunk=16, workers=1)[0]
    assert np.abs(res.values - ref).max() > 1000 * tol(y.size, 2)
    assert np.abs(ut._uc_families(y, P, fams, chunk=16, workers=1)[0].values - ref).max() \
        <= tol(y.size, 2)


def test_certificate_refuses_a_tie_at_the_tolerance():
    """Two probabilities ``tie_tol`` apart under ``a = (0, 1)``: whether the product's rounding
    joins them is not decided by the certificate, so the utility goes to the general engine;
    ten times further apart, or 0 apart, it is answered."""
    tt = ut.utility_tie_tolerance(2)
    for step, expect in ((tt, False), (10 * tt, True), (0.0, True)):
        p = 0.25 + np.array([0.0, step, 0.5])
        y, P = binary(p, [1, 0, 1])
        two = _uc_two.TwoColumns(P[:, 1], P[:, 0], (y == 1) * 1.0,
                                 np.argsort(P[:, 1], kind="stable"))
        assert bool(two.scan(np.array([1.0]), np.array([0.0]), tt).ok[0]) is expect, step
        if expect:
            V, U = linear([[0.0, 1.0]]).values(y, P)
            ref = sup_over_intervals(V[0], U[0], tt)
            got = ut._uc_families(y, P, [linear([[0.0, 1.0]])], chunk=2, workers=1)[0]
            assert abs(got.values[0] - ref) <= tol(3, 2)
