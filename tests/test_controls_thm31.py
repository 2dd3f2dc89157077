"""The instances and kernels behind the negative controls of 003 Thm 3.1
(:mod:`calnotes.book.claims._thm31`): each builder does what its control relies on."""

from fractions import Fraction as Fr

import numpy as np
import pytest

from calnotes.theory import population as pop
from calnotes.book.claims import _thm31 as t31
from calnotes.book.claims import proper


def _gaps(d):
    """Atom-wise top-label gaps f_C - P(Y = C | x), their confidences and weights (by hand)."""
    w, T, F = d.exact
    out = []
    for wi, t, f in zip(w, T, F):
        c = max(range(len(f)), key=lambda j: (f[j], -j))
        out.append((wi, f[c], f[c] - t[c]))
    return out


def test_small_grid_is_every_small_population():
    grid = t31.small_grid("smoke")
    # binary grid 1/2: 3 points, 9 single atoms, 81 two-atom populations; 3 classes: 6 points
    assert len(grid) == 9 + 81 + 36
    assert all(d.is_exact for d in grid)
    assert len(t31.small_grid("full")) == 25 + 2 * 25 ** 2 + 100
    one_atom = {(tuple(d.exact[2][0]), tuple(d.exact[1][0])) for d in grid
                if d.n_atoms == 1 and d.n_classes == 2}
    assert ((Fr(1), Fr(0)), (Fr(0), Fr(1))) in one_atom            # point mass, BS = 2
    assert ((Fr(1, 2), Fr(1, 2)), (Fr(1), Fr(0))) in one_atom      # a tie


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_retruth_zero_is_top_label_calibrated_with_several_confidences(seed):
    rng = np.random.default_rng(seed)
    traded = 0
    for d in proper._family("smoke", 900 + seed):
        e = t31.retruth(d, rng, "zero")
        traded += any(g != 0 for _, _, g in _gaps(e))
        assert all((e.prediction == d.prediction).ravel())
        pooled = {}
        for w, r, g in _gaps(e):
            pooled[r] = pooled.get(r, 0) + w * g
        assert all(v == 0 for v in pooled.values())
        assert pop.tce(e, exact=True) == 0
    assert traded >= 10                  # atoms individually miscalibrated, gaps compensating
    # the family has several confidence values, and some atoms are individually miscalibrated
    e = t31.retruth(next(iter(proper._family("smoke", 900))), rng, "zero")
    assert len({r for _, r, _ in _gaps(e)}) > 1


@pytest.mark.parametrize("mode, moment", [("mean", lambda r: 1), ("linear", lambda r: r)])
def test_retruth_mean_and_linear_hide_the_gap_from_one_moment(mode, moment):
    rng = np.random.default_rng(5)
    built = 0
    for d in proper._family("smoke", 901):
        e = t31.retruth(d, rng, mode)
        if e is None:
            continue
        built += 1
        assert sum(w * g * moment(r) for w, r, g in _gaps(e)) == 0
        assert pop.tce(e, exact=True) > 0
        assert pop.mmce(e) > 1e-6                       # the characteristic kernel sees it
    assert built >= 10


def test_shrunk_is_miscalibrated_with_the_right_mean():
    for d in proper._family("smoke", 902):
        s = t31.shrunk(d)
        w, T, F = s.exact
        mean = [sum(wi * f[j] for wi, f in zip(w, F)) for j in range(s.n_classes)]
        assert mean == list(d.label_marginal(exact=True))
        assert pop.ce_p(s, 2, exact=True, powered=True) > 0
        assert pop.skce(s, t31.constant_matrix_kernel) < 1e-15
        assert pop.skce(s) > 1e-12


def test_kernels_are_positive_semidefinite_and_not_characteristic():
    x = np.linspace(0, 1, 7)
    for kernel in (t31.constant_kernel, t31.linear_kernel):
        K = kernel(x[:, None], x[None, :])
        assert K.shape == (7, 7) and np.linalg.eigvalsh(K).min() > -1e-12
        assert np.linalg.matrix_rank(K) == 1                   # not characteristic
    P = np.random.default_rng(0).dirichlet(np.ones(3), size=5)
    assert t31.constant_matrix_kernel(P[:, None, :], P[None, :, :]).shape == (5, 5)


def test_fixed_instances_are_what_they_say():
    d = t31.linear_mmce_blind()
    assert pop.tce(d, exact=True) == Fr(3, 16)
    assert pop.mmce(d, t31.linear_kernel) < 1e-12
    d = t31.ks_definition_instance()
    assert pop.tce(d, exact=True) == 0
    assert pop.ks_error(d, reading="definition", exact=True) == Fr(1, 4)
    d = t31.cwce_proof_sharp()
    assert pop.cwce(d, exact=True) == Fr(1, 4) == pop.tce(d, given="classwise", exact=True)
    assert pop.tce(d, exact=True) == 0
    d = t31.norm_order_sharp()
    assert pop.ce_p(d, 1, exact=True) == 1 and pop.ce_p(d, 2, exact=True, powered=True) == Fr(1, 4)


@pytest.mark.parametrize("claim_id", sorted(proper._SIDES))
def test_every_eq6_inequality_is_attained_with_positive_sides(claim_id):
    """What makes each 'constant tightened by 1%' control fail: an equality L = R > 0."""
    tight = [(L, R) for L, R in proper._t31_sides(claim_id, "smoke")
             if R > 0 and abs(L - R) <= 1e-12 * max(1.0, abs(float(R)))]
    assert tight, claim_id
