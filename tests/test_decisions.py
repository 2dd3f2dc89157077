"""Finite decision problems and their induced losses (calnotes.theory.decisions, Thm B.3)."""

import doctest
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import calnotes.theory.decisions as decisions
from calnotes.core import scores
from calnotes.theory.decisions import DecisionProblem, random_decision_problem, simplex_grid


def test_doctests():
    result = doctest.testmod(decisions, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 20 and result.failed == 0


# --------------------------------------------------------------------------- hand cases

def test_two_action_threshold_problem():
    # act (1): costs a = 1 if y = 0; do not act (0): costs b = 3 if y = 1; threshold 1/4
    dp = DecisionProblem([[0, 3], [1, 0]])
    q = np.array([0.0, 0.1, 0.2499, 0.25, 0.2501, 0.9, 1.0])
    assert dp.best_response(q).tolist() == [0, 0, 0, 0, 1, 1, 1]   # the tie at 1/4 -> action 0
    np.testing.assert_allclose(dp.bayes_risk(q), np.minimum(3 * q, 1 - q), atol=1e-15)
    y = np.array([1, 1, 1, 1, 0, 0, 1])
    assert dp.induced_loss(q, y).tolist() == [3.0, 3.0, 3.0, 3.0, 1.0, 1.0, 0.0]
    # divergence (a + b) |p - tau| when p and q are on opposite sides, else 0
    p = np.array([0.1, 0.1, 0.6, 0.6])
    r = np.array([0.2, 0.6, 0.1, 0.9])
    d = scores.divergence(p, r, dp.proper_loss())
    np.testing.assert_allclose(d, [0.0, 4 * 0.15, 4 * 0.35, 0.0], atol=1e-15)


def test_coin_problem_is_the_zero_one_loss_including_ties():
    rng = np.random.default_rng(0)
    for k in (2, 3, 5):
        coin = DecisionProblem(1 - np.eye(k))
        P = rng.dirichlet(np.ones(k), size=200)
        P[:20] = 1.0 / k                                    # all tied
        P[20:40] = simplex_grid(k, 4)[rng.integers(math.comb(4 + k - 1, k - 1), size=20)]
        assert np.array_equal(coin.loss_matrix(P), scores.ZERO_ONE.matrix(P))


def test_ties_go_to_the_smallest_index():
    dp = DecisionProblem([[2, 2], [1, 3], [1, 3], [3, 1]])
    # at q = 1/2 all four actions cost 2 -> action 0; at q = 1/4 actions 1, 2 cost 1.5 -> 1
    assert dp.best_response([0.5, 0.25, 0.75]).tolist() == [0, 1, 3]
    dup = DecisionProblem([[1, 1], [1, 1]])
    assert dup.best_response(np.linspace(0, 1, 11)).tolist() == [0] * 11


def test_single_action_problem():
    dp = DecisionProblem([[0.5, 2.0, 1.0]])
    P = np.random.default_rng(1).dirichlet(np.ones(3), size=5)
    assert dp.best_response(P).tolist() == [0] * 5
    np.testing.assert_allclose(dp.bayes_risk(P), P @ [0.5, 2.0, 1.0])


def test_bayes_risk_is_the_entropy_of_the_induced_loss_and_concave():
    rng = np.random.default_rng(2)
    dp = random_decision_problem(6, 4, rng)
    P, Q = rng.dirichlet(np.ones(4), size=(2, 300))
    np.testing.assert_allclose(dp.bayes_risk(P), scores.entropy(P, dp.proper_loss()), atol=1e-15)
    mid = dp.bayes_risk((P + Q) / 2)
    assert np.all(mid >= (dp.bayes_risk(P) + dp.bayes_risk(Q)) / 2 - 1e-15)


def test_induced_loss_matches_the_loss_matrix_and_the_proper_loss():
    rng = np.random.default_rng(3)
    dp = random_decision_problem(5, 3, rng)
    P = rng.dirichlet(np.ones(3), size=50)
    y = rng.integers(3, size=50)
    per = dp.induced_loss(P, y)
    assert np.array_equal(per, dp.loss_matrix(P)[np.arange(50), y])
    loss = dp.proper_loss("mine")
    assert loss.name == "mine" and not loss.strict
    assert loss(y, P) == pytest.approx(per.mean(), abs=1e-15)


def test_risks_are_summed_in_one_order_for_every_action():
    # rows that agree on the support of q give identical floats, whatever the values
    dp = DecisionProblem([[0.1, 0.7, 0.3, 5.0], [0.1, 0.7, 0.3, 9.0]])
    q = [[0.1, 0.2, 0.7, 0.0]]
    r = dp.risks(q)
    assert r[0, 0] == r[0, 1] and dp.best_response(q)[0] == 0


# --------------------------------------------------------------------------- properness

@given(st.integers(1, 7), st.integers(2, 5), st.integers(0, 2 ** 32 - 1))
def test_induced_loss_is_proper(n_actions, k, seed):
    rng = np.random.default_rng(seed)
    dp = random_decision_problem(n_actions, k, rng)
    P = rng.dirichlet(np.full(k, 0.5), size=100)
    Q = rng.dirichlet(np.full(k, 0.5), size=100)
    assert scores.divergence(P, Q, dp.proper_loss()).min() >= -1e-12


@given(arrays(np.int64, st.tuples(st.integers(1, 5), st.just(3)), elements=st.integers(0, 4)),
       st.integers(0, 2 ** 32 - 1))
def test_induced_loss_is_proper_with_exact_ties(losses, seed):
    rng = np.random.default_rng(seed)
    dp = DecisionProblem(losses)
    grid = simplex_grid(3, 6)
    P = grid[rng.integers(len(grid), size=200)]
    Q = grid[rng.integers(len(grid), size=200)]
    assert scores.divergence(P, Q, dp.proper_loss()).min() >= -1e-12


@pytest.mark.parametrize("name", ["log", "brier", "spherical"])
@pytest.mark.parametrize("k, N", [(2, 30), (3, 12), (4, 6)])
def test_proper_loss_is_induced_exactly_at_grid_points(name, k, N):
    grid = simplex_grid(k, N, interior=(name == "log"))
    dp = DecisionProblem.from_proper_loss(name, grid)
    assert np.array_equal(dp.best_response(grid), np.arange(len(grid)))
    assert np.array_equal(dp.loss_matrix(grid), scores.get_loss(name).matrix(grid))


def test_grid_excess_of_the_brier_loss_is_the_squared_distance_to_the_grid():
    rng = np.random.default_rng(4)
    grid = simplex_grid(3, 7)
    dp = DecisionProblem.from_proper_loss("brier", grid)
    q = rng.dirichlet(np.ones(3), size=200)
    excess = scores.expected_loss(q, q, dp.proper_loss()) - scores.entropy(q, "brier")
    nearest = ((q[:, None, :] - grid[None]) ** 2).sum(axis=2).min(axis=1)
    np.testing.assert_allclose(excess, nearest, atol=1e-14)
    assert excess.max() <= 2 / 3 / 7 ** 2 + 1e-14


def test_simplex_grid():
    for k, N in [(2, 1), (2, 5), (3, 4), (5, 3)]:
        g = simplex_grid(k, N)
        assert g.shape == (math.comb(N + k - 1, k - 1), k)
        np.testing.assert_allclose(g.sum(axis=1), 1.0, atol=1e-15)
        assert len(np.unique(np.round(g * N).astype(int), axis=0)) == len(g)
    gi = simplex_grid(4, 7, interior=True)
    assert gi.shape == (math.comb(6, 3), 4) and gi.min() == pytest.approx(1 / 7)
    assert simplex_grid(3, 3, interior=True).shape == (1, 3)


# --------------------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("losses, message", [
    ([[0, 1], [-0.5, 0]], r"losses: negative loss -0.5 at index \[1, 0\]"),
    ([[0, np.nan], [1, 0]], r"losses: non-finite loss nan at index \[0, 1\]"),
    ([[0, np.inf]], r"losses: non-finite loss inf at index \[0, 1\]"),
    ([0, 1, 2], r"losses: expected a 2-d array .* got shape \(3,\)"),
    (np.zeros((0, 2)), r"losses: a decision problem needs at least one action"),
    ([[1], [2]], r"losses: a decision problem needs at least two outcomes"),
])
def test_bad_loss_matrices(losses, message):
    with pytest.raises(ValueError, match=message):
        DecisionProblem(losses)


def test_non_numeric_losses():
    with pytest.raises(TypeError, match="losses: could not convert"):
        DecisionProblem([["a", "b"]])


def test_bad_beliefs_and_labels():
    dp = DecisionProblem(1 - np.eye(3))
    with pytest.raises(ValueError, match="q: has 2 outcomes per row but the decision problem has 3"):
        dp.best_response([[0.5, 0.5]])
    with pytest.raises(ValueError, match=r"1-d q is binary"):
        dp.risks([0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="q: row 0 sums to"):
        dp.bayes_risk([[0.5, 0.5, 0.5]])
    with pytest.raises(ValueError, match=r"q: non-finite value nan at index \[0, 1\]"):
        dp.best_response([[0.5, np.nan, 0.5]])
    with pytest.raises(ValueError, match="y: label 3 at index 0 is out of range"):
        dp.induced_loss([[0.2, 0.3, 0.5]], [3])
    with pytest.raises(ValueError, match="y: has 2 labels but the predictions have 1 rows"):
        dp.induced_loss([[0.2, 0.3, 0.5]], [0, 1])


def test_from_proper_loss_refuses_infinite_losses():
    with pytest.raises(ValueError, match=r"actions: the log loss is not finite at action 0.*interior=True"):
        DecisionProblem.from_proper_loss("log", simplex_grid(3, 4))
    with pytest.raises(ValueError, match="loss: expected a ProperLoss"):
        DecisionProblem.from_proper_loss("hinge", simplex_grid(3, 4))


@pytest.mark.parametrize("args, message", [
    ((0, 3, 0), "n_actions: expected an integer >= 1"),
    ((2, 1, 0), "n_outcomes: expected an integer >= 2"),
    ((2.5, 3, 0), "n_actions: expected an integer >= 1"),
    ((True, 3, 0), "n_actions: expected an integer >= 1"),
])
def test_bad_random_problem_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        random_decision_problem(*args)


def test_random_problem_needs_a_seeded_rng():
    with pytest.raises(TypeError, match="rng: expected a numpy.random.Generator"):
        random_decision_problem(2, 2, None)
    a = random_decision_problem(3, 2, 7).losses
    b = random_decision_problem(3, 2, np.random.default_rng(7)).losses
    assert np.array_equal(a, b)


@pytest.mark.parametrize("args, kwargs, message", [
    ((1, 3), {}, "n_classes: expected an integer >= 2"),
    ((3, 0), {}, "resolution: expected an integer >= 1"),
    ((3, 2), {"interior": True}, "resolution: an interior grid on 3 classes needs N >= 3"),
])
def test_bad_grids(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        simplex_grid(*args, **kwargs)


def test_losses_are_read_only():
    dp = DecisionProblem([[0, 1], [1, 0]])
    with pytest.raises(ValueError):
        dp.losses[0, 0] = 5.0
