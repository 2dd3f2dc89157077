"""Exact population calibration errors (calnotes.theory.population) against naive loops, hand-worked
examples and the identities of papers 003 (Gruber & Buettner) and 004 (Reassessing).

Tolerances: exact (``==`` on Fractions) for rational quantities; ``1e-12`` relative (with a
``1e-15`` absolute floor for values that are zero) for float sums of a few hundred terms.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction as Fr

import numpy as np
import pytest

from calnotes import BRIER, LOG, NEG_ENTROPY, SPHERICAL, SQUARED_NORM, ZERO_ONE
from calnotes import score_decomposition
from calnotes.theory.population import (CONDITIONING, KS_READINGS, FiniteDistribution,
                                        bregman_decomposition, calibration_error_proper, ce_p,
                                        collision_counts,
                                        conditional_expectation, confidence_calibration_error, cwce,
                                        expected_score, kce, ks_error, mmce, random_finite_distribution,
                                        skce, tce)

RTOL = 1e-12
ATOL = 1e-15


def close(a, b, rtol=RTOL, atol=ATOL):
    return math.isclose(float(a), float(b), rel_tol=rtol, abs_tol=atol)


def random_dists(seed, count, *, k_range=(2, 6), n_range=(6, 16), **kwargs):
    rng = np.random.default_rng(seed)
    return [random_finite_distribution(rng, n_atoms=int(rng.integers(*n_range)),
                                       n_classes=int(rng.integers(*k_range)), **kwargs)
            for _ in range(count)]


# --------------------------------------------------------------------------- naive references
# Pure-Python loops over atoms, written from the definitions without the module's grouping.

def first_argmax(row):
    best = 0
    for j, v in enumerate(row):
        if v > row[best]:
            best = j
    return best


def as_lists(d):
    w, T, F = d.exact
    return list(w), [list(r) for r in T], [list(r) for r in F]


def naive_mean(w, keys, values, i):
    """E[value | key = key_i] by a loop over all atoms."""
    num = den = Fr(0)
    for j in range(len(w)):
        if keys[j] == keys[i]:
            num += w[j] * values[j]
            den += w[j]
    return num / den


def naive_conditional(d, on):
    w, T, F = as_lists(d)
    N, k = len(w), len(T[0])
    C = [first_argmax(F[i]) for i in range(N)]
    if on == "canonical":
        keys = [tuple(F[i]) for i in range(N)]
        return [[naive_mean(w, keys, [T[j][r] for j in range(N)], i) for r in range(k)]
                for i in range(N)]
    if on == "classwise":
        return [[naive_mean(w, [F[j][r] for j in range(N)], [T[j][r] for j in range(N)], i)
                 for r in range(k)] for i in range(N)]
    hits = [T[j][C[j]] for j in range(N)]
    if on == "top_label":
        keys = [F[j][C[j]] for j in range(N)]
    else:
        keys = [(C[j], F[j][C[j]]) for j in range(N)]
    return [naive_mean(w, keys, hits, i) for i in range(N)]


def naive_errors(d):
    """CE_2^2, CE_1, CWCE_1, CWCE_2^2, TCE_1, TCE_2^2 (given the confidence) by loops."""
    w, T, F = as_lists(d)
    N, k = len(w), len(T[0])
    can, cw = naive_conditional(d, "canonical"), naive_conditional(d, "classwise")
    top = naive_conditional(d, "top_label")
    out = dict.fromkeys(["ce2", "ce1", "cw1", "cw2", "tce1", "tce2"], Fr(0))
    for i in range(N):
        c = first_argmax(F[i])
        for r in range(k):
            out["ce2"] += w[i] * (F[i][r] - can[i][r]) ** 2
            out["ce1"] += w[i] * abs(F[i][r] - can[i][r])
            out["cw1"] += w[i] * abs(F[i][r] - cw[i][r])
            out["cw2"] += w[i] * (F[i][r] - cw[i][r]) ** 2
        out["tce1"] += w[i] * abs(F[i][c] - top[i])
        out["tce2"] += w[i] * (F[i][c] - top[i]) ** 2
    return out


def naive_ks(d, reading):
    """KS by enumerating every threshold sigma in {0} U {values}."""
    w, T, F = as_lists(d)
    N, k = len(w), len(T[0])
    C = [first_argmax(F[i]) for i in range(N)]
    conf = [F[i][C[i]] for i in range(N)]
    cw, top = naive_conditional(d, "classwise"), naive_conditional(d, "top_label")

    def sup(atoms, score, resid):
        sigmas = {Fr(0)} | {score[i] for i in atoms}
        return max(abs(sum((resid[i] for i in atoms if score[i] <= s), Fr(0))) for s in sigmas)

    if reading == "definition":
        total = Fr(0)
        for r in range(k):
            pr = sum((w[i] for i in range(N) if C[i] == r), Fr(0))
            score = [F[i][r] for i in range(N)]
            resid = [w[i] * (F[i][r] - cw[i][r]) for i in range(N)]
            total += pr * sup(range(N), score, resid)
        return total
    resid = [w[i] * (conf[i] - top[i]) for i in range(N)]
    if reading == "confidence":
        return sup(range(N), conf, resid)
    return sum((sup([i for i in range(N) if C[i] == r], conf, resid) for r in set(C)), Fr(0))


def naive_mmce2(d, bandwidth=0.4):
    """MMCE^2 over pairs of atoms with the per-atom residual f_C - 1{Y = C} (tower form)."""
    w, T, F = d.weights, d.truth, d.prediction
    C = F.argmax(axis=1)
    r = F[np.arange(len(w)), C]
    e = r - T[np.arange(len(w)), C]
    return sum(w[i] * w[j] * e[i] * e[j] * math.exp(-abs(r[i] - r[j]) / bandwidth)
               for i in range(len(w)) for j in range(len(w)))


def naive_skce(d, bandwidth=1.0):
    """SKCE over pairs of atoms with the per-atom residual f - P(Y | X) (tower form)."""
    w, T, F = d.weights, d.truth, d.prediction
    return sum(w[i] * w[j] * float((F[i] - T[i]) @ (F[j] - T[j]))
               * math.exp(-np.linalg.norm(F[i] - F[j]) / bandwidth)
               for i in range(len(w)) for j in range(len(w)))


# --------------------------------------------------------------------------- hand-worked

def hand_example():
    """k = 3, four atoms of weight 1/4, every confidence 1/2 (worked out in the comments)."""
    q = Fr(1, 4)
    h = Fr(1, 2)
    F = [[h, q, q], [h, q, q], [q, h, q], [q, q, h]]
    T = [[1, 0, 0], [0, 1, 0], [0, 1, 0], [h, 0, h]]
    return FiniteDistribution([q] * 4, [[Fr(x) for x in r] for r in T], F)


def test_hand_worked_example_exact():
    d = hand_example()
    # canonical: atoms 0, 1 pooled -> (1/2, 1/2, 0); classwise: class 1 at 1/4 -> 1/3
    assert conditional_expectation(d, exact=True)[0].tolist() == [Fr(1, 2), Fr(1, 2), 0]
    assert conditional_expectation(d, "classwise", exact=True)[:, 1].tolist() == \
        [Fr(1, 3), Fr(1, 3), 1, Fr(1, 3)]
    # all four atoms have confidence 1/2: accuracy (1 + 0 + 1 + 1/2) / 4 = 5/8
    assert conditional_expectation(d, "top_label", exact=True).tolist() == [Fr(5, 8)] * 4
    assert conditional_expectation(d, "top_label_class", exact=True).tolist() == \
        [Fr(1, 2), Fr(1, 2), 1, Fr(1, 2)]
    assert calibration_error_proper(d, "brier", exact=True) == Fr(3, 16)
    assert ce_p(d, 1, exact=True) == Fr(5, 8)
    assert ce_p(d, 2, exact=True, powered=True) == Fr(3, 16)
    assert cwce(d, 1, exact=True) == Fr(3, 8)
    assert cwce(d, 2, exact=True, powered=True) == Fr(11, 96)
    assert tce(d, 1, exact=True) == Fr(1, 8)
    assert tce(d, 2, exact=True, powered=True) == Fr(1, 64)
    assert tce(d, 2, given="class_and_confidence", exact=True, powered=True) == Fr(1, 16)
    assert tce(d, 1, given="classwise", exact=True) == Fr(1, 8)
    assert ks_error(d, reading="confidence", exact=True) == Fr(1, 8)
    assert ks_error(d, reading="proof", exact=True) == Fr(1, 8)
    assert ks_error(d, reading="definition", exact=True) == Fr(3, 32)
    assert expected_score(d, "brier", exact=True) == Fr(9, 16)
    r = bregman_decomposition(d, "squared_norm", exact=True)
    assert (r["total"], r["phi_truth"], r["phi_conditional"]) == (Fr(7, 16), Fr(7, 8), Fr(5, 8))
    assert (r["sharpness_gap"], r["calibration"]) == (Fr(1, 4), Fr(3, 16))
    assert confidence_calibration_error(d, exact=True) == Fr(1, 64)
    # one confidence value: MMCE = |1/2 - 5/8| sqrt(k(1/2, 1/2)) = 1/8
    assert close(mmce(d), 1 / 8)
    # SKCE: the three distinct predictions are sqrt(2)/4 apart (worked out by hand)
    assert close(skce(d), 1 / 16 + math.exp(-math.sqrt(2) / 4) / 128)
    assert close(kce(d), math.sqrt(1 / 16 + math.exp(-math.sqrt(2) / 4) / 128))


def test_hand_worked_example_float_path_agrees():
    d = hand_example()
    assert close(calibration_error_proper(d, "brier"), 3 / 16)
    assert close(calibration_error_proper(d, SQUARED_NORM), 3 / 16)
    assert close(cwce(d, 2), math.sqrt(11 / 96))
    assert close(tce(d, 2), 1 / 8)
    assert close(ks_error(d), 3 / 32)
    assert close(bregman_decomposition(d)["sharpness_gap"], 1 / 4)


def test_log_loss_by_hand():
    # CE_log = E[KL(E[Y | f] || f)]: pooled truth (3/4, 1/4) against (1/2, 1/2)
    d = FiniteDistribution([0.5, 0.5], [[1.0, 0.0], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5]])
    kl = 0.75 * math.log(1.5) + 0.25 * math.log(0.5)
    assert close(calibration_error_proper(d, "log"), kl)
    assert close(calibration_error_proper(d, NEG_ENTROPY), kl)
    # binary KL of the confidence problem: accuracy 3/4 at confidence 1/2 (first argmax: class 0)
    assert close(confidence_calibration_error(d, "log"), kl)
    # zero probability on a class that occurs: infinite, without a warning
    e = FiniteDistribution([0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [0.5, 0.5]])
    assert calibration_error_proper(e, "log") == math.inf
    assert confidence_calibration_error(e, "log") == math.inf


# --------------------------------------------------------------------------- naive loops

@pytest.mark.parametrize("on", CONDITIONING)
def test_conditional_expectation_matches_naive_loop(on):
    for d in random_dists(1, 40):
        got = conditional_expectation(d, on, exact=True)
        assert got.tolist() == naive_conditional(d, on)
        flt = conditional_expectation(d, on)
        assert np.allclose(flt, got.astype(float), rtol=RTOL, atol=ATOL)


def test_lp_errors_match_naive_loops():
    for d in random_dists(2, 40):
        ref = naive_errors(d)
        assert ce_p(d, 2, exact=True, powered=True) == ref["ce2"]
        assert calibration_error_proper(d, "brier", exact=True) == ref["ce2"]
        assert ce_p(d, 1, exact=True) == ref["ce1"]
        assert cwce(d, 1, exact=True) == ref["cw1"]
        assert cwce(d, 2, exact=True, powered=True) == ref["cw2"]
        assert tce(d, 1, exact=True) == ref["tce1"]
        assert tce(d, 2, exact=True, powered=True) == ref["tce2"]
        assert close(cwce(d, 2), math.sqrt(ref["cw2"]))
        assert close(tce(d, 2), math.sqrt(ref["tce2"]))
        assert close(ce_p(d, 3), float(ce_p(d, 3, exact=True, powered=True)) ** (1 / 3))


@pytest.mark.parametrize("reading", KS_READINGS)
def test_ks_matches_naive_threshold_enumeration(reading):
    for d in random_dists(3, 40):
        assert ks_error(d, reading=reading, exact=True) == naive_ks(d, reading)
        assert close(ks_error(d, reading=reading), naive_ks(d, reading))


def test_kernel_errors_match_naive_double_loops():
    # the module sums over pooled groups with the conditional; the reference over atoms with
    # the per-atom residual: equal by the tower property
    for d in random_dists(4, 25):
        assert close(mmce(d, squared=True), naive_mmce2(d))
        assert close(mmce(d), math.sqrt(naive_mmce2(d)))
        assert close(skce(d), naive_skce(d))
        assert skce(d) >= 0.0


def test_kernel_choices():
    d = random_dists(5, 1, k_range=(3, 4))[0]
    lap = lambda a, b: np.exp(-np.abs(a - b) / 0.4)          # noqa: E731
    assert close(mmce(d, lap), mmce(d))
    gauss = lambda a, b: np.exp(-((a - b) ** 2).sum(axis=-1) / 2)  # noqa: E731
    assert close(skce(d, gauss), skce(d, "gaussian", bandwidth=1.0))
    # an explicit matrix-valued kernel kappa(p, q) I_k gives the same number
    k = d.n_classes

    def matrix_kernel(a, b):
        kappa = np.exp(-np.sqrt(((a - b) ** 2).sum(axis=-1)))
        return kappa[:, :, None, None] * np.eye(k)

    assert close(skce(d, matrix_kernel), skce(d))
    assert close(kce(d) ** 2, skce(d))


# --------------------------------------------------------------------------- identities

def test_exact_identities_on_200_random_distributions():
    dists = random_dists(6, 200)
    kinds = {"same_prediction": 0, "same_coordinate": 0, "same_confidence_other_class": 0}
    for d in dists:
        for key, value in collision_counts(d).items():
            kinds[key] += value > 0
        # 004 Lemma 4.1 (Brier): total = sharpness gap + calibration, exactly
        r = bregman_decomposition(d, "squared_norm", exact=True)
        assert r["total"] == r["sharpness_gap"] + r["calibration"]
        assert r["sharpness_gap"] >= 0 and r["calibration"] >= 0
        # CE for Brier = squared-L2 calibration error summed over classes (003 eq. (12) (ii))
        ce = calibration_error_proper(d, "brier", exact=True)
        assert ce == r["calibration"] == ce_p(d, 2, exact=True, powered=True)
        assert ce == calibration_error_proper(d, SQUARED_NORM, exact=True)
        # 003 Lemma D.1: CE_S = E S(f(X), Y) - E g_S(P_{Y|f(X)}), g_Brier(q) = 1 - ||q||^2
        can = conditional_expectation(d, exact=True)
        w = d.exact[0]
        assert ce == expected_score(d, "brier", exact=True) - sum(
            wi * (1 - (c * c).sum()) for wi, c in zip(w, can))
        # 004: the Brier confidence calibration error is TCE_2^2
        assert confidence_calibration_error(d, exact=True) == tce(d, 2, exact=True,
                                                                   powered=True)
        # pooling: idempotent, and every quantity conditioning on f(X) is unchanged
        p = d.pooled()
        assert p.pooled().exact[0].tolist() == p.exact[0].tolist()
        assert p.pooled().exact[1].tolist() == p.exact[1].tolist()
        assert p.pooled().exact[2].tolist() == p.exact[2].tolist()
        assert calibration_error_proper(p, "brier", exact=True) == ce
        assert cwce(p, 2, exact=True, powered=True) == cwce(d, 2, exact=True, powered=True)
        # the canonical recalibration is calibrated: zero error, exactly
        g = d.recalibrated()
        assert calibration_error_proper(g, "brier", exact=True) == 0
        assert cwce(g, 1, exact=True) == 0 and tce(g, 1, exact=True) == 0
    assert kinds["same_prediction"] == kinds["same_confidence_other_class"] == 200
    assert kinds["same_coordinate"] > 100            # forced for k >= 3, by chance for k = 2


def test_float_identities_and_hierarchy_on_200_random_distributions():
    for d in random_dists(7, 200, positive=True):
        n = d.n_classes
        # 004 Lemma 4.1 for both generators
        for gen in (SQUARED_NORM, NEG_ENTROPY):
            r = bregman_decomposition(d, gen)
            assert close(r["total"], r["sharpness_gap"] + r["calibration"])
            assert close(r["calibration"], calibration_error_proper(d, gen))
        # agreement with calnotes.core.scores.score_decomposition (003 Lemma 4.1)
        for loss in (LOG, BRIER, SPHERICAL):
            sd = score_decomposition(d.weights, d.prediction, d.truth, loss)
            assert close(calibration_error_proper(d, loss), sd["calibration"])
            assert close(expected_score(d, loss), sd["score"])
        # 003 Thm 3.1, the statements that hold for every reading
        bs = expected_score(d, "brier")
        assert bs <= 2 + 1e-12
        for p in (1, 1.5, 2, 3):
            cep, cw = ce_p(d, p), cwce(d, p)
            if p <= 2:
                assert n ** (1 / p - 1 / 2) * math.sqrt(bs) >= cep * (1 - RTOL)
            assert cep >= cw * (1 - RTOL)
            assert cw >= tce(d, p, given="classwise") * (1 - RTOL)    # proof's reading
            assert cep >= tce(d, p) * (1 - RTOL)                       # canonical => top-label
            assert cw ** p <= 2 + 1e-12                                # CWCE_p <= 2^(1/p)
            assert tce(d, p) >= tce(d, 1) * (1 - RTOL)
        t1 = tce(d, 1)
        assert t1 >= ks_error(d, reading="proof") * (1 - RTOL)
        assert ks_error(d, reading="proof") >= ks_error(d, reading="confidence") * (1 - RTOL)
        assert cwce(d, 1) >= ks_error(d, reading="definition") * (1 - RTOL)
        assert mmce(d) <= t1 * (1 + RTOL)                 # c = 1 for the Laplacian kernel
        # 004 Lemma 4.6 and Cor 4.7, at every confidence value
        for pair in ("brier", "log"):
            r = confidence_calibration_error(d, pair, per_confidence=True)
            assert np.all(r["full"] >= r["confidence_error"] * (1 - RTOL) - ATOL)
            assert close(r["mass"] @ r["confidence_error"], confidence_calibration_error(d, pair))


def test_lemma_4_6_exactly():
    for d in random_dists(8, 60):
        r = confidence_calibration_error(d, exact=True, per_confidence=True)
        assert all(f >= e for f, e in zip(r["full"], r["confidence_error"]))
        assert sum(m * f for m, f in zip(r["mass"], r["full"])) == \
            calibration_error_proper(d, "brier", exact=True)


def test_hierarchy_exactly():
    # the inequalities of 003 Thm 3.1 that hold, checked with Fractions (p = 1, 2)
    for d in random_dists(9, 60):
        for p in (1, 2):
            ce_ = ce_p(d, p, exact=True, powered=True)
            cw = cwce(d, p, exact=True, powered=True)
            assert ce_ >= cw >= tce(d, p, given="classwise", exact=True, powered=True)
            assert ce_ >= tce(d, p, exact=True, powered=True)
        assert tce(d, 1, exact=True) >= ks_error(d, reading="proof", exact=True)


def test_calibrated_predictor_has_zero_error_for_every_loss():
    for d in random_dists(10, 40):
        g = d.recalibrated()
        for loss in ("log", "brier", "spherical", "zero_one", NEG_ENTROPY, SQUARED_NORM):
            # float pooling of equal rows may be off by an ulp: an absolute 1e-12
            assert abs(calibration_error_proper(g, loss)) <= 1e-12
        assert calibration_error_proper(g, "zero_one", exact=True) == 0
        for p in (1, 2):
            assert ce_p(g, p, exact=True, powered=True) == 0
            assert cwce(g, p, exact=True, powered=True) == 0
            for given in ("confidence", "class_and_confidence", "classwise"):
                assert tce(g, p, given=given, exact=True, powered=True) == 0
        for reading in KS_READINGS:
            assert ks_error(g, reading=reading, exact=True) == 0
        assert mmce(g) <= 1e-12 and skce(g) <= 1e-24
        assert confidence_calibration_error(g, exact=True) == 0
        # and the recalibration is a fixed point
        assert g.recalibrated().exact[2].tolist() == g.exact[2].tolist()


def test_zero_weight_atoms_change_nothing():
    base = hand_example()
    w, T, F = base.exact
    # an atom of weight zero: shares the confidence 1/2, has its own prediction and truth
    extra = FiniteDistribution([*w, 0], [*T.tolist(), [0, 0, 1]],
                               [*F.tolist(), [Fr(1, 2), 0, Fr(1, 2)]])
    assert calibration_error_proper(extra, "brier", exact=True) == \
        calibration_error_proper(base, "brier", exact=True)
    assert tce(extra, 1, exact=True) == tce(base, 1, exact=True)
    assert cwce(extra, 2, exact=True, powered=True) == cwce(base, 2, exact=True, powered=True)
    for reading in KS_READINGS:
        assert ks_error(extra, reading=reading, exact=True) == \
            ks_error(base, reading=reading, exact=True)
    assert close(skce(extra), skce(base)) and close(mmce(extra), mmce(base))
    # a null group's conditional is the plain mean of its truths, in the simplex
    assert conditional_expectation(extra, exact=True)[-1].tolist() == [0, 0, 1]
    # and zero weight suppresses an infinite divergence (no warning either)
    inf_atom = FiniteDistribution([*w, 0], [*T.tolist(), [0, 1, 0]],
                                  [*F.tolist(), [Fr(1, 2), 0, Fr(1, 2)]])
    assert math.isfinite(calibration_error_proper(inf_atom, "log"))


# --------------------------------------------------------------------------- the generator

@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_generator_forces_the_three_collisions(k):
    rng = np.random.default_rng(11 + k)
    for _ in range(30):
        d = random_finite_distribution(rng, n_atoms=int(rng.integers(6, 12)), n_classes=k)
        counts = collision_counts(d)
        assert counts["same_prediction"] >= 1
        assert counts["same_confidence_other_class"] >= 1
        if k >= 3:
            assert counts["same_coordinate"] >= 1
        w, T, F = d.exact
        grid = 4 * k
        assert sum(w) == 1 and all(x > 0 for x in w)
        assert all((v * grid).denominator == 1 for v in F.ravel())
        assert all((v * grid).denominator == 1 for v in T.ravel())


def test_generator_makes_the_conditionings_differ():
    dists = random_dists(12, 100, k_range=(3, 6))
    differ = {"top_vs_canonical": 0, "classwise_vs_canonical": 0, "top_vs_class": 0}
    for d in dists:
        F = d.exact[2]
        C = np.argmax(F, axis=1)
        rows = np.arange(d.n_atoms)
        can = conditional_expectation(d, exact=True)
        top = conditional_expectation(d, "top_label", exact=True)
        differ["top_vs_canonical"] += bool(np.any(top != can[rows, C]))
        differ["classwise_vs_canonical"] += bool(np.any(
            conditional_expectation(d, "classwise", exact=True) != can))
        differ["top_vs_class"] += bool(np.any(
            top != conditional_expectation(d, "top_label_class", exact=True)))
    assert all(v >= 90 for v in differ.values()), differ


def test_generator_options_and_reproducibility():
    a = random_finite_distribution(3, n_atoms=10, n_classes=4, grid=7, positive=True)
    b = random_finite_distribution(3, n_atoms=10, n_classes=4, grid=7, positive=True)
    assert a.exact[2].tolist() == b.exact[2].tolist()
    assert all(v >= Fr(1, 7) for v in a.exact[2].ravel())
    assert all((v * 7).denominator == 1 for v in a.exact[2].ravel())
    c = random_finite_distribution(0, n_atoms=3, n_classes=3, collisions=False, grid=1000)
    assert c.n_atoms == 3 and c.is_exact
    with pytest.raises(ValueError, match="at least 6 atoms"):
        random_finite_distribution(0, n_atoms=5, n_classes=3)
    with pytest.raises(ValueError, match="at least 4 atoms"):
        random_finite_distribution(0, n_atoms=3, n_classes=2)
    with pytest.raises(ValueError, match="grid > n_classes"):
        random_finite_distribution(0, n_atoms=6, n_classes=3, grid=3, positive=True)
    with pytest.raises(ValueError, match="n_classes"):
        random_finite_distribution(0, n_atoms=6, n_classes=1)
    with pytest.raises(ValueError, match="grid"):
        random_finite_distribution(0, n_atoms=6, n_classes=3, grid=0)
    with pytest.raises(TypeError, match="rng"):
        random_finite_distribution(None, n_atoms=6, n_classes=3)


# --------------------------------------------------------------------------- the papers' claims

def test_classwise_calibrated_but_not_top_label_calibrated():
    # 003 Thm 3.1 / eq. (9) claim CWCE_p = 0 => TCE_p = 0 and CWCE_p >= TCE_p.  Two atoms share
    # f_0 = 3/8 (top only for the first) and f_1 = 1/8 with compensating truths: every class is
    # calibrated, yet the only atom of confidence 3/8 is right with probability 1/2.
    e = FiniteDistribution([Fr(1, 2)] * 2,
                           [[Fr(4, 8), 0, Fr(2, 8), Fr(2, 8)], [Fr(2, 8), Fr(2, 8), Fr(4, 8), 0]],
                           [[Fr(3, 8), Fr(1, 8), Fr(2, 8), Fr(2, 8)],
                            [Fr(3, 8), Fr(1, 8), Fr(4, 8), 0]])
    assert cwce(e, 1, exact=True) == 0
    assert tce(e, 1, exact=True) == Fr(1, 16)
    assert tce(e, 1, given="class_and_confidence", exact=True) == Fr(1, 16)
    assert tce(e, 1, given="classwise", exact=True) == 0       # the proof's reading
    assert ce_p(e, 1, exact=True) > 0                           # not canonically calibrated


def test_ks_definition_is_not_below_tce():
    # Binary, both atoms of confidence 3/4, accuracies 1 and 1/2: top-label calibrated
    # (TCE = 0) but class 0 alone is not calibrated: Def C.2 read literally gives 1/4 > TCE_1.
    d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1, 2), Fr(1, 2)]],
                           [[Fr(3, 4), Fr(1, 4)], [Fr(1, 4), Fr(3, 4)]])
    assert tce(d, 1, exact=True) == 0
    assert ks_error(d, reading="definition", exact=True) == Fr(1, 4)
    assert ks_error(d, reading="proof", exact=True) == 0
    assert ks_error(d, reading="confidence", exact=True) == 0


def test_mmce_bound_direction():
    # ||k(r, .)||_H = sqrt(k(r, r)) gives MMCE <= c TCE_1; 003 Thm 3.1 prints TCE_1 >= c MMCE,
    # false once c > 1: a single atom with a kernel of diagonal 4 (c = 2)
    d = FiniteDistribution([1.0], [[1.0, 0.0]], [[0.75, 0.25]])
    scaled = lambda a, b: 4.0 * np.exp(-np.abs(a - b) / 0.4)      # noqa: E731
    c = 2.0
    assert close(mmce(d, scaled), c * 0.25)
    assert mmce(d, scaled) <= c * tce(d, 1) * (1 + RTOL)
    assert not tce(d, 1) >= c * mmce(d, scaled)


def test_binary_brier_is_the_wrong_varphi_for_lemma_4_6():
    # 004 pairs phi = ||x||^2 with varphi(x) = x^2: d_phi(x, y) >= (x_i - y_i)^2.  The binary
    # Brier divergence 2 (x_i - y_i)^2 is not dominated for k >= 3:
    d = FiniteDistribution([Fr(1)], [[Fr(1, 4), Fr(3, 8), Fr(3, 8)]],
                           [[Fr(1, 2), Fr(1, 4), Fr(1, 4)]])
    r = confidence_calibration_error(d, exact=True, per_confidence=True)
    assert r["full"][0] == Fr(6, 64) and r["confidence_error"][0] == Fr(4, 64)
    assert r["full"][0] < 2 * r["confidence_error"][0]


# --------------------------------------------------------------------------- bad input

def test_weights_are_checked_with_clear_messages():
    T = F = [[0.5, 0.5], [0.5, 0.5]]
    with pytest.raises(ValueError, match="weights: negative weight -0.5 at index 1"):
        FiniteDistribution([1.5, -0.5], T, F)
    with pytest.raises(ValueError, match="weights: the atom probabilities sum to 0.9"):
        FiniteDistribution([0.5, 0.4], T, F)
    with pytest.raises(ValueError, match="weights: non-finite weight nan at index 0"):
        FiniteDistribution([np.nan, 0.5], T, F)
    with pytest.raises(ValueError, match="weights: expected a non-empty 1-d array"):
        FiniteDistribution([[0.5, 0.5]], T, F)
    tiny = Fr(1, 10 ** 14)    # passes the float tolerance, not the exact check
    with pytest.raises(ValueError, match="exact atom probabilities sum to 100000000000001/10"):
        FiniteDistribution([Fr(1, 2), Fr(1, 2) + tiny], [[Fr(1, 2)] * 2] * 2,
                           [[Fr(1, 2)] * 2] * 2)


def test_probabilities_are_checked_with_clear_messages():
    w = [0.5, 0.5]
    with pytest.raises(ValueError, match="truth: row 1 sums to 1.1"):
        FiniteDistribution(w, [[0.5, 0.5], [0.5, 0.6]], [[0.5, 0.5]] * 2)
    with pytest.raises(ValueError, match=r"prediction: value 1.5 at index \[0, 0\] is outside"):
        FiniteDistribution(w, [[0.5, 0.5]] * 2, [[1.5, -0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="shapes differ"):
        FiniteDistribution(w, [[0.5, 0.5]] * 2, [[0.2, 0.3, 0.5]] * 2)
    with pytest.raises(ValueError, match="3 rows .* weights has 2"):
        FiniteDistribution(w, [[0.5, 0.5]] * 3, [[0.5, 0.5]] * 3)
    tiny = Fr(1, 10 ** 6)     # passes the float tolerance, not the exact check
    with pytest.raises(ValueError, match="prediction: row 0 sums to 1000001/1000000"):
        FiniteDistribution([Fr(1)], [[Fr(1, 2)] * 2], [[Fr(1, 2), Fr(1, 2) + tiny]])


def test_distribution_is_immutable_and_binary_input_is_accepted():
    d = FiniteDistribution([0.25, 0.75], [0.0, 1.0], [0.5, 0.5])
    assert d.truth.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.weights = np.array([1.0])
    with pytest.raises(ValueError, match="read-only"):
        d.prediction[0, 0] = 1.0
    assert not d.is_exact
    with pytest.raises(ValueError, match="exact=True needs a FiniteDistribution built from"):
        cwce(d, exact=True)


def test_bad_options_are_refused():
    d = hand_example()
    with pytest.raises(ValueError, match="on: expected one of"):
        conditional_expectation(d, "topl")
    with pytest.raises(ValueError, match="reading: expected one of"):
        ks_error(d, reading="paper")
    with pytest.raises(ValueError, match="given: expected one of"):
        tce(d, given="label")
    with pytest.raises(ValueError, match="pair: expected one of"):
        confidence_calibration_error(d, "spherical")
    with pytest.raises(ValueError, match="p: expected a number >= 1"):
        cwce(d, 0.5)
    with pytest.raises(ValueError, match="integer p"):
        tce(d, 1.5, exact=True, powered=True)
    with pytest.raises(ValueError, match="powered=True"):
        tce(d, 2, exact=True)
    with pytest.raises(ValueError, match="not rational"):
        calibration_error_proper(d, "log", exact=True)
    with pytest.raises(ValueError, match="only the squared norm"):
        bregman_decomposition(d, "log", exact=True)
    with pytest.raises(ValueError, match="only the 'brier' pair"):
        confidence_calibration_error(d, "log", exact=True)
    with pytest.raises(ValueError, match="loss: expected"):
        calibration_error_proper(d, "hinge")
    with pytest.raises(ValueError, match="generator: expected"):
        bregman_decomposition(d, "hinge")
    with pytest.raises(ValueError, match="kernel: expected"):
        mmce(d, "cosine")
    with pytest.raises(ValueError, match="bandwidth: expected a positive number"):
        skce(d, bandwidth=0)
    with pytest.raises(ValueError, match="finite"):
        skce(d, lambda a, b: np.ones(3))
    with pytest.raises(TypeError, match="FiniteDistribution"):
        cwce((d.weights, d.truth, d.prediction))
    assert ZERO_ONE.name == "zero_one"      # the 0-1 loss is exact too:
    assert calibration_error_proper(d, "zero_one", exact=True) >= 0
