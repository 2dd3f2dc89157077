"""calnotes.theory.patching: Algorithm 1 / Prop 4.4 of paper 001 (utility-calibration patching).

References are written here: a bisection simplex projection and the projection's optimality
(KKT / variational-inequality) condition, the per-class utilities from the paper's formulas
(class-wise ``e_c``; top-K ``1{rank <= K}`` averaged over tie positions in closed form), the
UC supremum by brute force over all intervals, and an independent replay of every patching
step.  Prop 4.4: with ``eta = err / C`` the Brier score drops by ``>= err^2 / C`` per step,
hence at most ``L(f_0) C / eps^2`` steps.
"""

import math

import numpy as np
import pytest
from sklearn.base import clone

from calnotes.theory import population as pop
from calnotes.theory.patching import UtilityPatching, comb_class, patch_population, project_simplex
from calnotes.recalibrate import DegenerateFitWarning
from calnotes.theory.utility import (classwise, decision, population_uc, sample_linear, top_k,
                                     utility_calibration)

# --------------------------------------------------------------------------- references


def ref_project(V):
    """Projection onto the simplex by bisection on the threshold tau of x = max(v - tau, 0)
    (sum_j max(v_j - tau, 0) is decreasing in tau and equals 1 at the projection)."""
    V = np.atleast_2d(np.asarray(V, dtype=float))
    lo = V.min(axis=1) - 1.0
    hi = V.max(axis=1)
    for _ in range(200):
        mid = (lo + hi) / 2
        big = np.maximum(V - mid[:, None], 0).sum(axis=1) > 1
        lo = np.where(big, mid, lo)
        hi = np.where(big, hi, mid)
    return np.maximum(V - ((lo + hi) / 2)[:, None], 0.0)


def ref_ubar(fam, m, F):
    """Per-class utilities of utility m of fam at every row of F (n, C), from the formulas:
    linear a_j; rank theta averaged over the positions lo..hi-1 of j's tie group, with
    lo = #{i : p_i > p_j}, hi = #{i : p_i >= p_j} (for top-K: (min(hi,K) - min(lo,K)) / (hi-lo))."""
    F = np.asarray(F, dtype=float)
    n, C = F.shape
    prm = fam.params[m]
    if fam.kind == "linear":
        return np.tile(prm, (n, 1))
    assert fam.kind == "rank"
    lo = (F[:, None, :] > F[:, :, None]).sum(axis=2)
    hi = (F[:, None, :] >= F[:, :, None]).sum(axis=2)
    out = np.empty((n, C))
    for i in range(n):
        for j in range(C):
            out[i, j] = math.fsum(prm[lo[i, j]:hi[i, j]]) / (hi[i, j] - lo[i, j])
    return out


def ref_uc(V, R, tol):
    """sup over intervals of |sum of R over the atoms with V in the interval|, where predicted
    values closer than tol to their sorted neighbour count as one value (the documented tie
    rule, tol = 4 C eps: patched predictions that are equal in exact arithmetic can differ by
    an ulp, e.g. 0.266353459531612 vs 0.26635345953161205).  Intervals run from the first value
    of one tie group to the last value of a later (or the same) group."""
    vals = sorted(set(V.tolist()))
    groups = [[vals[0]]]
    for x in vals[1:]:
        if x - groups[-1][-1] <= tol:
            groups[-1].append(x)
        else:
            groups.append([x])
    best, arg = 0.0, None
    for i, ga in enumerate(groups):
        for gb in groups[i:]:
            s = math.fsum(R[(V >= ga[0]) & (V <= gb[-1])].tolist())
            if abs(s) > best:
                best, arg = abs(s), (ga[0], gb[-1], s)
    return best, arg


def ref_state(fams, F, T, w):
    """For every utility: (family, index, V, R, UC) with V = <F, ubar> (fsum: exactly rounded,
    so rows with the same multiset of products get the same V) and R = w <T - F, ubar>."""
    out = []
    tol = 4 * F.shape[1] * np.finfo(float).eps
    for fam in fams:
        for m in range(len(fam)):
            ub = ref_ubar(fam, m, F)
            V = np.array([math.fsum(F[a] * ub[a]) for a in range(F.shape[0])])
            R = np.array([w[a] * math.fsum((T[a] - F[a]) * ub[a]) for a in range(F.shape[0])])
            out.append((fam, m, ub, V, R, ref_uc(V, R, tol)[0]))
    return out


def ref_brier(F, T, w):
    """E ||Y - f||^2 with E[Y | atom] = T: ||T - f||^2 + 1 - ||T||^2 per atom."""
    return math.fsum(w[a] * (math.fsum((T[a] - F[a]) ** 2) + 1 - math.fsum(T[a] ** 2))
                     for a in range(F.shape[0]))


def _by_name(fams, name):
    hits = [(f, m) for f in fams for m in range(len(f)) if f.names[m] == name]
    assert len(hits) == 1
    return hits[0]


def _populations(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        C = int(rng.integers(2, 5))
        yield C, pop.random_finite_distribution(rng, n_atoms=int(rng.integers(6, 10)),
                                                n_classes=C)


# =========================================================================== projection


def _test_points(rng):
    yield rng.normal(0, 3, size=(200, 5))
    yield rng.dirichlet(np.ones(4), size=100)                       # already in the simplex
    yield rng.dirichlet(np.ones(3), size=100) + rng.normal(0, 5, size=(100, 1))   # shifted
    yield np.round(rng.normal(0, 1, size=(200, 4)), 1)               # ties
    yield rng.normal(0, 1, size=(50, 2)) * 1e3
    yield np.array([[0.5, 0.5], [1.2, -0.1], [0.3, 0.3], [0.0, 0.0], [-1.0, -1.0]])


def test_projection_lands_in_the_simplex_and_is_optimal():
    """Variational characterisation of the Euclidean projection x of v onto the simplex:
    (v - x) . (z - x) <= 0 for every simplex point z (checked at 50 random points and every
    vertex; tolerance 1e-12 times the scale of v); and agreement with a bisection reference."""
    rng = np.random.default_rng(0)
    for V in _test_points(rng):
        X = project_simplex(V)
        C = V.shape[1]
        assert X.shape == V.shape and np.all(X >= 0)
        np.testing.assert_allclose(X.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        Z = np.vstack([rng.dirichlet(np.ones(C), size=50), np.eye(C)])
        for v, x in zip(V, X):
            scale = 1.0 + np.abs(v).max()
            assert np.all((Z - x) @ (v - x) <= 1e-12 * scale)
        np.testing.assert_allclose(X, ref_project(V), rtol=0,
                                   atol=1e-12 * (1 + np.abs(V).max()))


def test_projection_is_idempotent_and_has_closed_forms():
    rng = np.random.default_rng(1)
    S = rng.dirichlet(np.full(6, 0.3), size=200)
    np.testing.assert_allclose(project_simplex(S), S, rtol=0, atol=1e-15)
    X = project_simplex(rng.normal(size=(100, 6)))
    np.testing.assert_allclose(project_simplex(X), X, rtol=0, atol=1e-15)
    # adding a constant to every coordinate does not move the projection of a simplex point
    np.testing.assert_allclose(project_simplex(S + 7.5), S, rtol=0, atol=1e-14)
    # a dominant coordinate: the vertex; two equal coordinates above the rest by > 1: the
    # midpoint of the edge
    assert project_simplex([[10.0, 0.0, -3.0]]).tolist() == [[1.0, 0.0, 0.0]]
    np.testing.assert_allclose(project_simplex([[2.0, 2.0, 0.5]]), [[0.5, 0.5, 0.0]],
                               atol=1e-15)


# =========================================================================== patch_population


def _replay_population(d, fams, eps, step, trace, patched):
    """Re-run Algorithm 1 independently along the library's choices and check every number."""
    w, T = d.weights, d.truth
    F = np.array(d.prediction, dtype=float)
    C = F.shape[1]
    for st in trace.steps:
        state = ref_state(fams, F, T, w)
        err = max(s[-1] for s in state)
        assert st.err == pytest.approx(err, abs=1e-12)             # the worst witness
        assert st.err > eps
        assert st.brier_before == pytest.approx(ref_brier(F, T, w), abs=1e-12)
        fam, m = _by_name(fams, st.utility)
        _, _, ub, V, R, uc = next(s for s in state if s[0] is fam and s[1] == m)
        assert uc == pytest.approx(err, abs=1e-12)                  # the chosen one is worst
        inside = (V >= st.lower - 1e-12) & (V <= st.upper + 1e-12)
        s = math.fsum(R[inside].tolist())
        assert abs(s) == pytest.approx(err, abs=1e-12) and st.sign == (1 if s > 0 else -1)
        assert st.mass == pytest.approx(math.fsum(w[inside].tolist()), abs=1e-12)
        wsq = math.fsum((w[inside] * (ub[inside] ** 2).sum(axis=1)).tolist())
        assert st.witness_sq == pytest.approx(wsq, abs=1e-12)
        assert st.eta == pytest.approx(err / C if step == "theory" else err / wsq, rel=1e-9)
        F = F.copy()
        F[inside] = ref_project(F[inside] + st.eta * st.sign * ub[inside])
        assert st.brier_after == pytest.approx(ref_brier(F, T, w), abs=1e-12)
    np.testing.assert_allclose(patched.prediction, F, rtol=0, atol=1e-10)
    final = max(s[-1] for s in ref_state(fams, F, T, w))
    assert final <= eps + 1e-12
    assert trace.final_err == pytest.approx(final, abs=1e-12)


@pytest.mark.parametrize("step", ["theory", "optimal"])
def test_patch_population_follows_algorithm_1(step):
    """Every step of patch_population, replayed independently on 6 random populations: the
    witness is the worst (utility, interval) of U_comb, eta is err / C (or err / E||w||^2), the
    update is the projected step inside the interval, and the Brier scores are right."""
    for C, d in _populations(10 if step == "theory" else 11, 6):
        patched, trace = patch_population(d, comb_class(C), eps=0.05, step=step)
        assert trace.converged and trace.n_steps >= 1
        np.testing.assert_array_equal(patched.truth, d.truth)
        np.testing.assert_array_equal(patched.weights, d.weights)
        _replay_population(d, comb_class(C), 0.05, step, trace, patched)


@pytest.mark.parametrize("step", ["theory", "optimal"])
def test_prop_4_4_guarantees(step):
    """Prop 4.4 on 25 random populations (eps = 0.03): the Brier score never increases; each
    theory step decreases it by >= err^2 / C, each optimal step by >= err^2 / E||w||^2
    (>= err^2 / C); steps <= L(f_0) C / eps^2; at termination the population UC over U_comb,
    recomputed with population_uc, is <= eps."""
    eps = 0.03
    n_steps = 0
    for C, d in _populations(20 if step == "theory" else 21, 25):
        patched, trace = patch_population(d, comb_class(C), eps=eps, step=step)
        assert trace.converged
        L0 = ref_brier(np.asarray(d.prediction), d.truth, d.weights)
        assert trace.n_steps <= L0 * C / eps ** 2
        for st in trace.steps:
            drop = st.brier_before - st.brier_after
            assert drop >= -1e-12
            assert st.witness_sq <= C + 1e-12
            bound = st.err ** 2 / C if step == "theory" else st.err ** 2 / st.witness_sq
            assert drop >= bound - 1e-12
            assert drop >= st.err ** 2 / C - 1e-12
        assert population_uc(patched, comb_class(C)).max <= eps + 1e-12
        assert trace.final_brier == pytest.approx(
            ref_brier(patched.prediction, d.truth, d.weights), abs=1e-12)
        n_steps += trace.n_steps
    assert n_steps > 100


def test_patch_population_other_classes_and_max_iter():
    """Any class with utilities in [-1, 1] (here linear and decision utilities): the Brier score
    still drops by >= err^2 / C per theory step; max_iter stops early without converging."""
    rng = np.random.default_rng(30)
    d = pop.random_finite_distribution(rng, n_atoms=9, n_classes=3)
    fams = [sample_linear(3, 5, rng=rng), decision(rng.uniform(-1, 1, size=(3, 3, 4)))]
    patched, trace = patch_population(d, fams, eps=0.02, step="theory")
    assert trace.converged
    for st in trace.steps:
        assert st.brier_before - st.brier_after >= st.err ** 2 / 3 - 1e-12
    assert population_uc(patched, fams).max <= 0.02 + 1e-12
    assert trace.n_steps >= 2
    one, short = patch_population(d, fams, eps=0.02, step="theory", max_iter=1)
    assert short.n_steps == 1 and not short.converged
    # final_err is the UC of the returned (once patched) population
    assert short.final_err == pytest.approx(population_uc(one, fams).max, abs=1e-12)
    assert short.final_err > 0.02
    # already calibrated: recalibrated population (T = F) needs no step
    cal = pop.FiniteDistribution(d.weights, d.prediction, d.prediction)
    _, none = patch_population(cal, comb_class(3), eps=0.01)
    assert none.converged and none.n_steps == 0 and none.final_err <= 1e-12


def test_patch_population_bad_arguments():
    d = pop.FiniteDistribution([0.5, 0.5], [[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5]] * 2)
    for bad in (0, 2, -0.1, True, "0.1"):
        with pytest.raises(ValueError, match="eps"):
            patch_population(d, comb_class(2), eps=bad)
    with pytest.raises(ValueError, match="step"):
        patch_population(d, comb_class(2), step="greedy")
    with pytest.raises(TypeError, match="utilities"):
        patch_population(d, "comb")
    with pytest.raises(ValueError, match="predictions: have 2 classes"):
        patch_population(d, comb_class(3))


# =========================================================================== UtilityPatching


def _overconfident(seed, n, C=3):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C), size=n)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)       # y ~ P: P calibrated
    Q = P ** 2 / (P ** 2).sum(axis=1, keepdims=True)                 # overconfident
    return P, Q, y


def _replay_patches(patches, F):
    """Apply the fitted patches with the reference utilities and projection."""
    F = np.array(F, dtype=float)
    for fam, m, lower, upper, sign, eta in patches:
        ub = ref_ubar(fam, m, F)
        v = (F * ub).sum(axis=1)
        inside = (v >= lower - 1e-12) & (v <= upper + 1e-12)
        F[inside] = ref_project(F[inside] + eta * sign * ub[inside])
    return F


def test_utility_patching_fit_and_transform():
    """Full-data mode on an overconfident model: each patch's err is the estimated UC over
    U_comb of the current predictions (utility_calibration), the empirical Brier score drops by
    >= err^2 / E||w||^2, transform = the patches replayed, and the transformed fit data have
    UC_hat <= eps."""
    _, Q, y = _overconfident(0, 1500)
    eps = 0.015
    pat = UtilityPatching(eps=eps).fit(Q, y)
    assert pat.trace_.converged and len(pat.patches_) == pat.trace_.n_steps >= 2
    cur = Q.copy()
    for st, patch in zip(pat.trace_.steps, pat.patches_):
        assert st.err == pytest.approx(utility_calibration(y, cur, comb_class(3)).max,
                                       abs=1e-12)
        assert st.brier_before - st.brier_after >= st.err ** 2 / st.witness_sq - 1e-12
        cur = _replay_patches([patch], cur)
    out = pat.transform(Q)
    np.testing.assert_allclose(out, cur, rtol=0, atol=1e-10)
    assert np.all(out >= 0)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert utility_calibration(y, out, comb_class(3)).max <= eps + 1e-12
    assert utility_calibration(y, Q, comb_class(3)).max > 3 * eps
    assert pat.trace_.final_err == pytest.approx(
        utility_calibration(y, out, comb_class(3)).max, abs=1e-12)
    # the map applies to new data too (rows in the simplex)
    _, Q2, _ = _overconfident(1, 300)
    out2 = pat.transform(Q2)
    np.testing.assert_allclose(out2, _replay_patches(pat.patches_, Q2), rtol=0, atol=1e-10)


def test_utility_patching_theory_steps():
    _, Q, y = _overconfident(2, 800)
    pat = UtilityPatching("cwe", eps=0.03, step="theory", max_iter=500).fit(Q, y)
    assert pat.trace_.converged
    for st in pat.trace_.steps:
        assert st.eta == pytest.approx(st.err / 3, rel=1e-12)
        assert st.brier_before - st.brier_after >= st.err ** 2 / 3 - 1e-12
    assert utility_calibration(y, pat.transform(Q), classwise(3)).max <= 0.03 + 1e-12
    assert all(fam.label == "U_CWE" for fam, *_ in pat.patches_)


def test_fresh_samples_use_disjoint_blocks_and_stop_when_they_run_out():
    """samples_per_iteration = N: iteration t uses rows order[tN:(t+1)N] of the permutation
    drawn from rng (checked: each step's err is UC_hat over U_comb on exactly that block of the
    current predictions); with n = 1050, N = 100 there are 10 blocks, so 10 patches and a
    DegenerateFitWarning (eps = 1e-4 is never reached on 100 samples)."""
    _, Q, y = _overconfident(3, 1050)
    pat = UtilityPatching(eps=1e-4, samples_per_iteration=100, rng=7, max_iter=1000)
    with pytest.warns(DegenerateFitWarning, match="exhausted|stopped"):
        pat.fit(Q, y)
    assert len(pat.patches_) == 10 and not pat.trace_.converged
    order = np.random.default_rng(7).permutation(1050)
    cur = Q.copy()
    for t, (st, patch) in enumerate(zip(pat.trace_.steps, pat.patches_)):
        block = order[100 * t:100 * (t + 1)]
        assert st.err == pytest.approx(
            utility_calibration(y[block], cur[block], comb_class(3)).max, abs=1e-12)
        # and not the UC of a different block (the blocks are genuinely different samples)
        other = order[100 * ((t + 1) % 10):100 * ((t + 1) % 10 + 1)]
        assert abs(st.err - utility_calibration(y[other], cur[other], comb_class(3)).max) > 1e-9
        cur = _replay_patches([patch], cur)
    np.testing.assert_allclose(pat.transform(Q), cur, rtol=0, atol=1e-10)
    # a generous eps is met on the first block: no patch, no warning (warnings are errors)
    easy = UtilityPatching(eps=1.5, samples_per_iteration=100).fit(Q, y)
    assert easy.trace_.converged and easy.patches_ == []
    np.testing.assert_array_equal(easy.transform(Q), Q)
    with pytest.raises(ValueError, match="samples_per_iteration"):
        UtilityPatching(samples_per_iteration=2000).fit(Q, y)


def test_max_iter_warns_and_caps_the_patches():
    _, Q, y = _overconfident(4, 600)
    with pytest.warns(DegenerateFitWarning, match="max_iter"):
        pat = UtilityPatching(eps=0.001, max_iter=3).fit(Q, y)
    assert len(pat.patches_) == 3
    with pytest.warns(DegenerateFitWarning):
        zero = UtilityPatching(eps=0.001, max_iter=0).fit(Q, y)
    np.testing.assert_array_equal(zero.transform(Q), Q)


def test_clone_logits_and_parameters():
    est = UtilityPatching([classwise(3), top_k(3)], eps=0.02, step="theory", max_iter=50,
                          samples_per_iteration=200, rng=3, inputs="logits")
    twin = clone(est)
    assert twin is not est and twin.get_params().keys() == est.get_params().keys()
    for k, v in est.get_params().items():
        if k != "utilities":
            assert twin.get_params()[k] == v
    assert [f.names for f in twin.utilities] == [f.names for f in est.utilities]
    # logits: softmax(log Q + row constant) = Q, so the fit and the output agree with probs
    _, Q, y = _overconfident(5, 1000)
    Z = np.log(Q) + np.random.default_rng(0).normal(size=(1000, 1))
    a = UtilityPatching(eps=0.02, inputs="logits").fit(Z, y)
    b = UtilityPatching(eps=0.02).fit(Q, y)
    assert len(a.patches_) == len(b.patches_) >= 1
    np.testing.assert_allclose(a.transform(Z), b.transform(Q), rtol=0, atol=1e-9)
    with pytest.raises(RuntimeError, match="fit"):
        UtilityPatching().transform(Q)
    with pytest.raises(ValueError, match="utilities"):
        UtilityPatching(classwise(4)).fit(Q, y)


def test_utility_patching_bad_parameters():
    for bad in (0, 2, -1, True, "0.1"):
        with pytest.raises(ValueError, match="eps"):
            UtilityPatching(eps=bad)
    with pytest.raises(ValueError, match="step"):
        UtilityPatching(step="fast")
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="max_iter"):
            UtilityPatching(max_iter=bad)
    for bad in (0, 1.5, True, -3):
        with pytest.raises(ValueError, match="samples_per_iteration"):
            UtilityPatching(samples_per_iteration=bad)
    with pytest.raises(ValueError, match="utilities"):
        UtilityPatching("all")
    with pytest.raises(TypeError, match="utilities"):
        UtilityPatching(3)
    with pytest.raises(ValueError, match="inputs"):
        UtilityPatching(inputs="scores")
    with pytest.raises(ValueError, match="eps"):
        UtilityPatching().set_params(eps=5)


def test_comb_class():
    fams = comb_class(5)
    assert [f.label for f in fams] == ["U_CWE", "U_topK"]
    assert fams[0].names == tuple(f"class {c}" for c in range(5))
    assert fams[1].params.tolist() == [[1.0 if r < K else 0.0 for r in range(5)]
                                       for K in range(1, 5)]
