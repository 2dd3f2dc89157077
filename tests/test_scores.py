"""Proper losses, entropies, divergences and the calibration decomposition.

Tolerances: a loss, expected loss or divergence here is a sum of k <= 7 float64 terms of
size <= ~20 (|log p| for p >= 1e-8), so rounding is below k * 20 * 2^-53 < 2e-14; we use
``TOL`` = 1e-12.  Hand-computed values use the same bound.
"""

import math

import numpy as np
import pytest

import brute
import calnotes as cn

TOL = 1e-12
LOSS_NAMES = ["log", "brier", "spherical", "zero_one"]


def close(a, b, tol=TOL):
    # a == b covers equal infinities (log loss of an impossible outcome), where a - b is NaN
    return a == b or abs(a - b) <= tol


# ============================================================================= hand values


def _spherical_within_rounding(loss, P, y) -> bool:
    """``loss`` (per-sample spherical losses) against ``1 - p_y / ||p||`` with the norm from a
    correctly rounded sum of squares (``math.fsum``): a float64 sum of ``k`` squares, in any
    order, is within ``gamma_k ~ k eps`` of the exact sum (Higham, Thm 4.4 / eq. (3.5)), the
    square root halves that and adds ``eps / 2``, the quotient and the subtraction add ``eps``
    each: ``|loss - ref| <= (p_y / ||p||) (k / 2 + 2) eps + 2 eps`` (``eps = 2^-52``)."""
    eps = np.finfo(float).eps
    k = P.shape[1]
    norm = np.array([math.sqrt(math.fsum(float(v) * float(v) for v in row)) for row in P])
    ratio = P[np.arange(len(y)), y] / norm
    return bool(np.all(np.abs(loss - (1.0 - ratio)) <= ratio * (k / 2 + 2) * eps + 2 * eps))


@pytest.mark.parametrize("k", [2, 3, 10, 100, 1000, 5000])
def test_spherical_loss_is_within_rounding_of_the_correctly_rounded_norm(k):
    """The spherical loss takes ``||p||`` from the row sums of squares the Brier loss uses
    (``np.einsum``), not ``np.linalg.norm`` (which builds an ``(n, k)`` temporary); the loss is
    within the stated rounding bound of one from a correctly rounded norm, at every ``k`` and for
    flat, peaked and one-hot rows.  Control: a norm summed in float32 is caught."""
    rng = np.random.default_rng(k)
    P = np.vstack([rng.dirichlet(np.full(k, a), size=60) for a in (0.05, 1.0, 50.0)]
                  + [np.eye(k)[:3], np.full((1, k), 1.0 / k)])
    y = rng.integers(0, k, P.shape[0])
    loss = cn.spherical_loss(y, P, per_sample=True)
    assert _spherical_within_rounding(loss, P, y)
    # the report's per-sample losses are the public function's, bit for bit
    from calnotes.core.scores import _losses_at_labels
    assert np.array_equal(_losses_at_labels(y, P)["spherical"], loss)
    # and whatever the memory layout (a DataFrame's values are often column-major)
    assert np.array_equal(cn.spherical_loss(y, np.asfortranarray(P), per_sample=True), loss)
    assert np.array_equal(_losses_at_labels(y, np.asfortranarray(P))["spherical"], loss)
    # control: the same check rejects a norm summed in single precision
    sq32 = np.einsum("ij,ij->i", P.astype(np.float32), P.astype(np.float32)).astype(float)
    coarse = 1.0 - P[np.arange(len(y)), y] / np.sqrt(sq32)
    assert not _spherical_within_rounding(coarse, P, y)


def test_log_loss_by_hand():
    assert close(cn.log_loss([1], [0.5]), math.log(2))
    assert close(cn.log_loss([2], [[0.2, 0.5, 0.3]]), -math.log(0.3))
    # mean over samples: (-log 0.8 - log 0.4) / 2 for binary p = [0.8, 0.6], y = [1, 0]
    assert close(cn.log_loss([1, 0], [0.8, 0.6]), (-math.log(0.8) - math.log(0.4)) / 2)
    per = cn.log_loss([1, 0], [0.8, 0.6], per_sample=True)
    assert per.shape == (2,)
    assert close(per[0], -math.log(0.8)) and close(per[1], -math.log(0.4))


def test_log_loss_of_impossible_outcome_is_inf_without_warning():
    # p_y = 0 -> -log 0 = inf (no RuntimeWarning: pytest turns warnings into errors).
    assert cn.log_loss([0], [[0.0, 1.0]]) == math.inf
    assert cn.log_loss([1], [0.0]) == math.inf
    # The other class of the same row is fine: -log 1 = 0.
    assert cn.log_loss([1], [[0.0, 1.0]]) == 0.0


def test_brier_loss_by_hand():
    # binary p = 0.75: [0.25, 0.75] vs e_1 = [0, 1]: 0.0625 + 0.0625 = 0.125 = 2 (p - y)^2
    assert close(cn.brier_loss([1], [0.75]), 0.125)
    assert close(cn.brier_loss([0], [0.75]), 2 * 0.75**2)
    # [0.2, 0.5, 0.3]: y = 0 -> 0.64 + 0.25 + 0.09 = 0.98 ; y = 1 -> 0.04 + 0.25 + 0.09 = 0.38
    assert close(cn.brier_loss([0], [[0.2, 0.5, 0.3]]), 0.98)
    assert close(cn.brier_loss([1], [[0.2, 0.5, 0.3]]), 0.38)
    assert close(cn.brier_loss([0, 1], [[0.2, 0.5, 0.3]] * 2), (0.98 + 0.38) / 2)


def test_spherical_loss_by_hand():
    # [0.2, 0.8] has norm sqrt(0.04 + 0.64) = sqrt(0.68)
    assert close(cn.spherical_loss([1], [[0.2, 0.8]]), 1 - 0.8 / math.sqrt(0.68))
    assert close(cn.spherical_loss([0], [0.8]), 1 - 0.2 / math.sqrt(0.68))
    # [0.2, 0.5, 0.3] has norm sqrt(0.38)
    assert close(cn.spherical_loss([2], [[0.2, 0.5, 0.3]]), 1 - 0.3 / math.sqrt(0.38))
    # [0.5, 0.5]: norm 1/sqrt2 -> 1 - 0.5 sqrt2
    assert close(cn.spherical_loss([1], [0.5]), 1 - 0.5 * math.sqrt(2))
    assert cn.spherical_loss([0], [[1.0, 0.0]]) == 0.0
    assert cn.spherical_loss([1], [[1.0, 0.0]]) == 1.0


def test_zero_one_loss_by_hand_first_argmax():
    assert cn.zero_one_loss([0], [[0.5, 0.5]]) == 0.0  # tie: class 0 predicted
    assert cn.zero_one_loss([1], [[0.5, 0.5]]) == 1.0
    assert cn.zero_one_loss([1], [0.5]) == 1.0  # binary 0.5 -> [0.5, 0.5] -> class 0
    assert cn.zero_one_loss([1], [[0.4, 0.4, 0.2]]) == 1.0
    assert cn.zero_one_loss([1], [[0.2, 0.5, 0.3]]) == 0.0
    # argmax 1 for every row: losses 1, 0, 1, 0
    assert cn.zero_one_loss([0, 1, 2, 1], [[0.2, 0.5, 0.3]] * 4) == 0.5


def test_expected_loss_entropy_divergence_by_hand():
    # E_{[.5,.5]} brier([.5,.5]) : ||p||^2 = .5, each y: .5 - 1 + 1 = .5
    assert close(cn.expected_loss([[0.5, 0.5]], [[0.5, 0.5]], "brier")[0], 0.5)
    assert close(cn.entropy([[0.5, 0.5]], "log")[0], math.log(2))
    # brier entropy 1 - ||q||^2 ; spherical 1 - ||q|| ; zero-one 1 - max q
    q = [[0.2, 0.5, 0.3]]
    assert close(cn.entropy(q, "brier")[0], 1 - 0.38)
    assert close(cn.entropy(q, "spherical")[0], 1 - math.sqrt(0.38))
    assert close(cn.entropy(q, "zero_one")[0], 0.5)
    # d_brier([.5,.5], [.75,.25]) = 0.25^2 + 0.25^2 = 0.125
    assert close(cn.divergence([[0.5, 0.5]], [[0.75, 0.25]], "brier")[0], 0.125)
    # d_log([1, 0], [.5, .5]) = log 2 ; the q_y = 0 term contributes nothing (no NaN)
    assert close(cn.divergence([[1.0, 0.0]], [[0.5, 0.5]], "log")[0], math.log(2))
    assert cn.expected_loss([[1.0, 0.0]], [[1.0, 0.0]], "log")[0] == 0.0
    # d_log([.5, .5], [1, 0]) = inf
    assert cn.divergence([[0.5, 0.5]], [[1.0, 0.0]], "log")[0] == math.inf


def test_loss_registry():
    assert set(cn.PROPER_LOSSES) == set(LOSS_NAMES)
    assert cn.get_loss("log") is cn.LOG and cn.get_loss(cn.BRIER) is cn.BRIER
    assert cn.LOG.strict and cn.BRIER.strict and cn.SPHERICAL.strict
    assert not cn.ZERO_ONE.strict


# ============================================================================= brute force


def _simplex(rng, n, k, alpha=1.0, floor=1e-6):
    """Dirichlet rows kept away from 0 (so log terms stay finite), renormalised."""
    P = rng.dirichlet(np.full(k, alpha), size=n) + floor
    return P / P.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("loss", LOSS_NAMES)
@pytest.mark.parametrize("k", [2, 3, 5, 7])
@pytest.mark.parametrize("grid", [None, 4])
def test_mean_loss_matches_brute(loss, k, grid):
    rng = np.random.default_rng([k, len(loss), grid or 0])
    if grid is None:
        P = _simplex(rng, 40, k)
    else:  # rows count/4: ties for the argmax (first index wins) and exact zeros
        P = rng.multinomial(grid, np.full(k, 1 / k), size=40) / grid
    y = rng.integers(0, k, 40)
    ours = cn.get_loss(loss)(y, P)
    assert close(ours, brute.mean_loss(loss, y, P))
    per = cn.get_loss(loss)(y, P, per_sample=True)
    assert all(close(per[i], brute.LOSSES[loss](P[i].tolist(), int(y[i]))) for i in range(40))


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_binary_vector_is_two_column_matrix(loss):
    # (n,) input means rows [1 - p, p].
    rng = np.random.default_rng(4)
    p = rng.random(30)
    y = rng.integers(0, 2, 30)
    M = np.column_stack([1 - p, p])
    f = cn.get_loss(loss)
    assert f(y, p) == f(y, M)
    assert close(f(y, p), brute.mean_loss(loss, y, p))
    q = rng.random(30)
    Q = np.column_stack([1 - q, q])
    assert np.array_equal(cn.expected_loss(q, p, loss), cn.expected_loss(Q, M, loss))
    assert np.array_equal(cn.divergence(q, p, loss), cn.divergence(Q, M, loss))


def test_binary_brier_is_twice_squared_error():
    rng = np.random.default_rng(8)
    p = rng.random(50)
    y = rng.integers(0, 2, 50)
    per = cn.brier_loss(y, p, per_sample=True)
    assert np.all(np.abs(per - 2 * (p - y) ** 2) <= TOL)


@pytest.mark.parametrize("loss", LOSS_NAMES)
@pytest.mark.parametrize("k", [2, 3, 6])
def test_expected_loss_entropy_divergence_match_brute(loss, k):
    rng = np.random.default_rng([k, 17, len(loss)])
    Q, P = _simplex(rng, 25, k), _simplex(rng, 25, k, alpha=0.5)
    Q[0] = 0.0
    Q[0, 0] = 1.0  # a degenerate truth: zero entries must contribute nothing
    e = cn.expected_loss(Q, P, loss)
    h = cn.entropy(Q, loss)
    d = cn.divergence(Q, P, loss)
    for i in range(25):
        q, p = Q[i].tolist(), P[i].tolist()
        assert close(e[i], brute.expected_loss(q, p, loss))
        assert close(h[i], brute.entropy(q, loss))
        assert close(d[i], brute.divergence(q, p, loss))


@pytest.mark.parametrize("k", [2, 3, 4, 7])
def test_log_divergence_is_kl_and_brier_divergence_is_squared_euclidean(k):
    rng = np.random.default_rng([k, 23])
    Q, P = _simplex(rng, 50, k), _simplex(rng, 50, k, alpha=0.3)
    Q[1] = 0.0
    Q[1, -1] = 1.0  # q with zeros: 0 log 0 = 0
    d_log = cn.divergence(Q, P, "log")
    d_brier = cn.divergence(Q, P, "brier")
    b_kl = cn.bregman_divergence(Q, P, cn.NEG_ENTROPY)
    b_sq = cn.bregman_divergence(Q, P, cn.SQUARED_NORM)
    for i in range(50):
        q, p = Q[i].tolist(), P[i].tolist()
        assert close(d_log[i], brute.kl(q, p)), i
        assert close(b_kl[i], brute.kl(q, p)), i
        assert close(d_brier[i], brute.squared_euclidean(q, p)), i
        assert close(b_sq[i], brute.squared_euclidean(q, p)), i


def test_bregman_neg_entropy_with_zero_in_p():
    # p_y = 0 < q_y: KL = inf (the gradient log p is -inf there), without warnings;
    # p_y = 0 = q_y: that coordinate contributes nothing.
    assert cn.bregman_divergence([[0.5, 0.5]], [[1.0, 0.0]], cn.NEG_ENTROPY)[0] == math.inf
    got = cn.bregman_divergence([[0.5, 0.5, 0.0]], [[0.25, 0.75, 0.0]], cn.NEG_ENTROPY)[0]
    assert close(got, 0.5 * math.log(2) + 0.5 * math.log(0.5 / 0.75))


# ============================================================================= properness


@pytest.mark.parametrize("loss", LOSS_NAMES)
@pytest.mark.parametrize("k", [2, 3, 5])
def test_properness(loss, k):
    # For a truth q, E_q l(p, Y) >= E_q l(q, Y) for every p (Def. of a proper loss);
    # 300 random p per q, 20 random q.  Rounding tolerance TOL (k terms).
    rng = np.random.default_rng([k, 31, len(loss)])
    for _ in range(20):
        q = _simplex(rng, 1, k, alpha=0.7)
        P = np.vstack([_simplex(rng, 300, k, alpha=a) for a in (0.2, 1.0, 5.0)])
        P[0] = np.roll(q[0], 1)  # a permuted truth, often a near miss
        Q = np.repeat(q, P.shape[0], axis=0)
        gap = cn.expected_loss(Q, P, loss) - cn.entropy(q, loss)[0]
        assert gap.min() >= -TOL, (loss, q, P[gap.argmin()])
        if cn.get_loss(loss).strict:
            # strictly proper: p far from q loses by a positive margin
            far = np.abs(P - q).sum(axis=1) > 0.1
            assert np.all(gap[far] > 0)


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_divergence_nonnegative_and_zero_on_diagonal(loss):
    rng = np.random.default_rng(len(loss) + 101)
    for k in (2, 4, 7):
        Q, P = _simplex(rng, 200, k), _simplex(rng, 200, k, alpha=0.4)
        assert cn.divergence(Q, P, loss).min() >= -TOL
        # d(q, q): E_q l(q) - H(q) is the same float computation twice -> exactly 0.
        assert np.all(cn.divergence(Q, Q, loss) == 0.0)
    # the 0-1 divergence vanishes whenever the argmax agrees (not strictly proper)
    assert cn.divergence([[0.6, 0.4]], [[0.9, 0.1]], "zero_one")[0] == 0.0


# ============================================================================= decomposition


def test_score_decomposition_brier_by_hand():
    # Two atoms, weight 1/2 each, both predicting 0.8 (pooled), truths 0.9 and 0.5.
    #   C = 0.7 (one pooled group), pi = 0.7 -> sharpness d(C, pi) = 0
    #   calibration = d_brier([.3,.7], [.2,.8]) = 2 * 0.1^2 = 0.02
    #   entropy = 1 - (0.3^2 + 0.7^2) = 0.42
    #   score: brier([.2,.8]) = 1.28 (y=0), 0.08 (y=1);
    #          0.5 (0.1*1.28 + 0.9*0.08) + 0.5 (0.5*1.28 + 0.5*0.08) = 0.1 + 0.34 = 0.44
    d = cn.score_decomposition([0.5, 0.5], [0.8, 0.8], [0.9, 0.5], "brier")
    assert close(d["score"], 0.44)
    assert close(d["entropy"], 0.42)
    assert close(d["sharpness"], 0.0)
    assert close(d["calibration"], 0.02)


def test_score_decomposition_log_calibrated_by_hand():
    # Calibrated binary predictor (truth = prediction), atoms 0.2 and 0.8 with weight 1/2:
    #   calibration 0 ; pi = 0.5 -> entropy log 2 ;
    #   sharpness = KL([.8,.2] || [.5,.5]) = 0.8 log 1.6 + 0.2 log 0.4 (same for the 0.2 atom)
    #   score = Shannon entropy of 0.2 = -(0.2 log 0.2 + 0.8 log 0.8)
    d = cn.score_decomposition([0.5, 0.5], [0.2, 0.8], [0.2, 0.8], "log")
    h = -(0.2 * math.log(0.2) + 0.8 * math.log(0.8))
    assert close(d["calibration"], 0.0)
    assert close(d["entropy"], math.log(2))
    assert close(d["sharpness"], 0.8 * math.log(1.6) + 0.2 * math.log(0.4))
    assert close(d["score"], h)


def _population(rng, s, k, pooled):
    w = rng.dirichlet(np.ones(s))
    F = _simplex(rng, s, k)
    T = _simplex(rng, s, k, alpha=0.8)
    for a, b in pooled:  # equal predictions for different truths
        F[b] = F[a]
    return w, F, T


@pytest.mark.parametrize("loss", LOSS_NAMES)
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("seed", range(3))
def test_score_decomposition_matches_brute(loss, k, seed):
    rng = np.random.default_rng([seed, k, len(loss)])
    w, F, T = _population(rng, 7, k, pooled=[(0, 3), (0, 5), (1, 6)])
    d = cn.score_decomposition(w, F, T, loss)
    ref = brute.score_decomposition(w.tolist(), F.tolist(), T.tolist(), loss)
    for key in ("score", "entropy", "sharpness", "calibration"):
        assert close(d[key], ref[key]), key
    # Lemma 4.1: score = entropy - sharpness + calibration (up to rounding)
    assert close(d["score"], d["entropy"] - d["sharpness"] + d["calibration"])


def test_score_decomposition_binary_vector_input():
    rng = np.random.default_rng(12)
    w = rng.dirichlet(np.ones(5))
    f = np.array([0.3, 0.7, 0.3, 0.9, 0.1])  # atoms 0 and 2 pooled
    t = rng.random(5)
    for loss in LOSS_NAMES:
        a = cn.score_decomposition(w, f, t, loss)
        b = cn.score_decomposition(w, np.column_stack([1 - f, f]), np.column_stack([1 - t, t]),
                                   loss)
        assert a == b
        ref = brute.score_decomposition(w.tolist(), f, t, loss)
        assert all(close(a[key], ref[key]) for key in ref)


def test_score_decomposition_zero_weight_atom_is_ignored():
    # The docstring allows non-negative weights.  An atom of weight 0 carries no mass: the
    # decomposition must equal the one without it.  (Its pooled group has mass 0, so no
    # C = P(Y | f(X)) exists there; it must simply not contribute.)
    F = [[0.2, 0.8], [0.6, 0.4], [0.9, 0.1]]
    T = [[0.1, 0.9], [0.5, 0.5], [0.3, 0.7]]
    for loss in LOSS_NAMES:
        with_zero = cn.score_decomposition([0.5, 0.5, 0.0], F, T, loss)
        without = cn.score_decomposition([0.5, 0.5], F[:2], T[:2], loss)
        for key in without:
            assert close(with_zero[key], without[key]), (loss, key)
