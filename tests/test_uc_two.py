"""Two-class utility calibration from two running sums (calnotes._engine.utility_two_class).

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
- ties at the tolerance (``|D| g`` within ``eta`` of ``4 C eps``) decided as the engine
  decides them, on its elementwise predicted utilities, and rows whose defects put them out
  of the order of ``p_1`` grouped as the engine's sort groups them;
- negative controls, false neighbours of the fast path that the same checks reject: every
  near tie split, no tie at the tolerance checked, rows out of order split in the order of
  ``p_1``.
"""

import numpy as np
import pytest

from calnotes._engine import utility_two_class as _uc_two
from calnotes.theory import utility as ut
from calnotes.theory.utility import linear, rank, sample_linear, sample_rank

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


@pytest.mark.parametrize("n, scale, decimals", [
    (4000, 2.0, None), (4000, 2.0, 2),
    (20000, 8.0, None),               # gaps of a few ulp near 0 and 1, ties at the tolerance
    (4000, 12.0, None)])              # saturated: p = 0 and 1 exactly
def test_fast_path_matches_the_general_engine(n, scale, decimals, monkeypatch):
    """Values within twice the bound of either engine; the worst interval the same (its mass
    and sign; its ends within the tie tolerance); every utility answered (rows sum to one
    within an ulp)."""
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
        # the ends: one of the end groups' predicted utilities (the engine, where rows out of
        # the order of p_1 make it sort, may start a group at another of its rows)
        tt = ut.utility_tie_tolerance(2)
        np.testing.assert_allclose(a.lower, b.lower, rtol=0, atol=tt)
        np.testing.assert_allclose(a.upper, b.upper, rtol=0, atol=tt)
    assert took == 400


def at_the_tolerance(ulps):
    """20 rows at 0.3 labelled 1 and 20 rows ``ulps`` ulp above labelled 0, then 20 at 0.5
    (10 of each).  Under ``a = (0, 1/2)`` the predicted utility is ``p_1 / 2`` exactly (``a =
    (0, 1)`` would be a class-wise utility, computed elsewhere), so the two values are one tie
    group iff ``ulps / 2`` ulp of 0.3 are at most ``tie_tol = 32`` ulp of 0.3.  Split, the worst
    interval holds 7 / 60 (20 residuals of 0.35); joined, 4 / 60."""
    hi = 0.3 + ulps * np.spacing(0.3)
    p = np.r_[np.full(20, 0.3), np.full(20, hi), np.full(20, 0.5)]
    return binary(p, np.r_[np.ones(20), np.zeros(20), np.ones(10), np.zeros(10)])


def reversed_block():
    """Rows whose defects put them out of order: ``(x, z)`` = ``(0.25, 0.75)`` and one ulp
    above with ``z`` four ulp lower (its predicted utility under ``(w_z, w_x) = (1/2, 1)`` is
    the smaller), then ``x`` 60 ulp above with ``z = 1 - x``: 20 rows each of the first two
    (label 1), 20 of the third (label 0), 20 at 0.5.  In the order of ``x`` the third row's
    step from the second exceeds ``tie_tol``; sorted, its step from the first does not (the
    engine: one group, 12.5 / 80; split in the order of ``x``: 15 / 80)."""
    s = np.spacing
    x = np.r_[np.full(20, 0.25), np.full(20, np.nextafter(0.25, 1)),
              np.full(20, 0.25 + 60 * s(0.25)), np.full(20, 0.5)]
    z = np.r_[np.full(20, 0.75), np.full(20, 0.75 - 4 * s(0.75)), 1 - x[40:]]
    y = np.r_[np.ones(40), np.zeros(20), np.ones(10), np.zeros(10)].astype(np.int64)
    return y, np.column_stack([z, x])


def test_ties_at_the_tolerance_are_the_engines(monkeypatch):
    """At the tolerance the fast path decides on the computed predicted utilities, as the
    engine does: values 62 and 64 ulp apart one group, 66 ulp two (4 / 60 and 7 / 60); and
    the rows out of order are sorted as the engine sorts them."""
    fam = [linear([[0.0, 0.5]])]
    for ulps, expect in ((62, 4 / 60), (64, 4 / 60), (66, 7 / 60)):
        y, P = at_the_tolerance(ulps)
        assert answered(y, P, fam)[0].all()
        got = ut._uc_families(y, P, fam, chunk=2, workers=1)[0].values[0]
        assert abs(got - expect) <= tol(60, 2), ulps
        assert abs(got - general(y, P, fam, monkeypatch)[0].values[0]) <= 2 * tol(60, 2)
    y, P = reversed_block()
    fam = [linear([[0.5, 1.0]])]
    assert answered(y, P, fam)[0].all()
    got = ut._uc_families(y, P, fam, chunk=2, workers=1)[0]
    ref = general(y, P, fam, monkeypatch)[0]
    assert abs(got.values[0] - ref.values[0]) <= 2 * tol(80, 2)
    assert got.mass[0] == ref.mass[0]


def test_controls_are_caught(monkeypatch):
    """Negative controls, each a false neighbour of the fast path run through the checks
    above, each rejected:

    - every checked gap a boundary (no tie tolerance): splits the block 1 ulp apart;
    - no gap at the tolerance checked (only sure boundaries): joins the rows 66 ulp apart;
    - the rows out of order split in the order of ``x``: splits the reversed block."""
    name, y, P = next(c for c in CASES if c[0] == "ulp block")
    fams = [sample_linear(2, 12, rng=3)]
    ref = reference_uc(fams[0], y, P)
    with monkeypatch.context() as m:
        m.setattr(_uc_two.TwoColumns, "_checked",
                  lambda self, pos, *args: np.sort(pos[self.G[pos] > 0]))
        res = ut._uc_families(y, P, fams, chunk=16, workers=1)[0]
    assert np.abs(res.values - ref).max() > 1000 * tol(y.size, 2)

    y, P = at_the_tolerance(66)
    fam = [linear([[0.0, 0.5]])]
    with monkeypatch.context() as m:
        m.setattr(_uc_two.TwoColumns, "_checked", lambda self, pos, *args: pos[:0])
        wrong = ut._uc_families(y, P, fam, chunk=2, workers=1)[0].values[0]
    assert abs(wrong - 7 / 60) > 1000 * tol(60, 2)

    y, P = reversed_block()
    fam = [linear([[0.5, 1.0]])]

    def in_the_order_of_x(self, first, last, wx, wz, up, tie_tol):
        V = wx * self.xs[first:last] + wz * self.zs[first:last]
        return first + np.flatnonzero(np.diff(V if up else -V) > tie_tol) + 1

    with monkeypatch.context() as m:
        m.setattr(_uc_two.TwoColumns, "_block_splits", in_the_order_of_x)
        wrong = ut._uc_families(y, P, fam, chunk=2, workers=1)[0].values[0]
    right = general(y, P, fam, monkeypatch)[0].values[0]
    assert abs(wrong - right) > 1000 * tol(80, 2)


@pytest.mark.parametrize("decimals", [None, 2])
def test_row_order_does_not_matter(decimals):
    """Permuting the input rows moves the fast path's values by summation rounding only (its
    tie groups are sets of rows; the running sums add the rows of a group in another order)
    and leaves the worst intervals' masses and signs as they are, continuous and rounded.
    Control: permuting the labels alone (another problem) changes the values."""
    rng = np.random.default_rng(31)
    n = 3000
    p = 1 / (1 + np.exp(-3 * rng.standard_normal(n)))
    if decimals is not None:
        p = np.round(p, decimals)
    y, P = binary(p, rng.random(n) < p ** 0.8)
    fams = [sample_linear(2, 100, rng=7), sample_rank(2, 100, rng=8)]
    base = ut._uc_families(y, P, fams, chunk=16, workers=1)
    perm = rng.permutation(n)
    moved = ut._uc_families(y[perm], P[perm], fams, chunk=16, workers=1)
    assert all(ok.all() for ok in answered(y[perm], P[perm], fams))
    for a, b in zip(base, moved):
        np.testing.assert_allclose(a.values, b.values, rtol=0, atol=2 * tol(n, 2))
        assert np.array_equal(a.mass, b.mass) and np.array_equal(a.sign, b.sign)
    shuffled = ut._uc_families(y[perm], P, fams, chunk=16, workers=1)
    assert np.abs(shuffled[0].values - base[0].values).max() > 1000 * tol(n, 2)
