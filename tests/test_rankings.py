"""Dominance chains and agreement counts (calnotes.theory.rankings), against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import calnotes
from calnotes.theory import rankings


def _brute_longest_chain_length(L):
    n = L.shape[0]
    best = 1
    for size in range(2, n + 1):
        for subset in itertools.combinations(range(n), size):
            ordered = sorted(subset, key=lambda i: L[i, 0])
            if all(np.all(L[a] < L[b]) for a, b in zip(ordered, ordered[1:])):
                best = size
    return best


@pytest.mark.parametrize("seed", range(30))
def test_longest_chain_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    # correlated losses, with ties, so that chains of several lengths occur
    base = rng.integers(0, 6, size=(n, 1))
    L = base + rng.integers(0, 3, size=(n, 3))
    chain = rankings.longest_dominance_chain(L)
    assert len(chain) == _brute_longest_chain_length(L.astype(float))
    for a, b in zip(chain, chain[1:]):
        assert np.all(L[a] < L[b])  # best first, each dominates the next


def test_chain_agreement_and_flips_count_pairs():
    chain = [3, 1, 0, 2]
    values = np.array([0.3, 0.2, 0.1, 0.05])  # order 3 < 2 < 1 < 0 by value
    agree = rankings.chain_agreement(chain, values)
    # chain values 0.05, 0.2, 0.3, 0.1: pairs agreeing = (3,1),(3,0),(3,2),(1,0) = 4 of 6
    assert (agree.agreeing, agree.pairs) == (4, 6)
    assert (agree.adjacent_agreeing, agree.adjacent_pairs) == (2, 3)
    assert not agree.preserved
    assert rankings.rank_flips([1, 2, 3, 4], [4, 3, 2, 1]) == 6
    assert rankings.rank_flips([1, 2, 3, 4], [1, 2, 3, 4]) == 0


def test_tables_use_the_library_measures():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=(2, 60))
    y = rng.integers(0, 3, size=60)
    losses = rankings.loss_table(y, P)
    assert losses[1, 0] == calnotes.log_loss(y, P[1])
    assert losses[0, 3] == calnotes.zero_one_loss(y, P[0])
    table = rankings.measure_table(y, P, [5, 60], ["l2-QECE cw", "ECE conf"])
    assert table[0, 1, 1] == calnotes.classwise(calnotes.l2_qece, y, P[1], n_bins=60)
    assert table[1, 0, 0] == calnotes.confidence(calnotes.binned_ece, y, P[0], n_bins=5)


def test_bad_inputs():
    with pytest.raises(ValueError, match="probs: expected shape"):
        rankings.loss_table([0, 1], [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="measures: unknown"):
        rankings.measure_table([0], [[[0.5, 0.5]]], [1], ["nope"])
    with pytest.raises(ValueError, match="losses: contains NaN"):
        rankings.dominance_matrix([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="values_a, values_b"):
        rankings.rank_flips([1, 2], [1, 2, 3])
