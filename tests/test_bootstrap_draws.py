"""The bootstrap's drawn positions (calnotes._engine.rows._bootstrap).

The positions are drawn as ``int32`` where ``n`` fits: NumPy draws integers below ``2^32`` of
both types by the same bounded 32-bit method from the same buffered stream, so they are the
positions of the ``int64`` call, and the reports those of the commits that drew ``int64``.
This checks that equality on the installed NumPy, over the block shapes the bootstrap uses
(several blocks in a row from one generator, whose buffered half-word carries between calls),
and the row offsets that turn a block into one ``bincount`` index, including the switch to
``int64`` where ``resamples x n`` passes ``2^31``.
"""

import numpy as np
import pytest

from calnotes._engine import rows as _evalrows


@pytest.mark.parametrize("n", [1, 2, 3, 7, 500, 50_000, 2 ** 31 - 1])
def test_int32_positions_are_the_int64_stream(n):
    shapes = [(3, 5), (1, 1), (4, 7), (2, 3)] if n > 50_000 else [(3, n), (1, n), (5, n)]
    a = np.random.default_rng(n)
    b = np.random.default_rng(n)
    kind = _evalrows._position_type(n)
    assert kind is np.int32
    for shape in shapes:                              # consecutive blocks, one generator
        wide = a.integers(0, n, size=shape)
        narrow = b.integers(0, n, size=shape, dtype=kind)
        assert narrow.dtype == np.int32 and np.array_equal(wide, narrow)
    assert a.random() == b.random()                   # the streams end at the same state


def test_other_integer_types_are_other_streams():
    """Negative control: the equality above is not vacuous: 16-bit draws (another bounded
    method) give other positions from the same seed."""
    a = np.random.default_rng(0).integers(0, 500, size=1000)
    b = np.random.default_rng(0).integers(0, 500, size=1000, dtype=np.int16)
    assert not np.array_equal(a, b)


def test_position_type_beyond_int32():
    assert _evalrows._position_type(2 ** 31) is np.int64


def test_row_counts_are_each_resamples_multiplicities():
    """_row_counts (one bincount per resample) against one bincount of the whole block with
    row offsets, and each count against a count by comparison; int32 output.  Control: the
    draws of a resample shifted by one position give other counts."""
    rng = np.random.default_rng(2)
    for n, B in ((1, 3), (2, 5), (7, 4), (500, 40)):
        draws = rng.integers(0, n, size=(B, n), dtype=np.int32)
        got = _evalrows._row_counts(draws, n)
        offsets = draws.astype(np.int64) + (np.arange(B) * n)[:, None]
        want = np.bincount(offsets.reshape(-1), minlength=B * n).reshape(B, n)
        assert got.dtype == np.int32 and np.array_equal(got, want), n
        assert got[-1, n - 1] == (draws[-1] == n - 1).sum()
        assert (got.sum(axis=1) == n).all()
        if n > 1:
            shifted = (draws + 1) % n
            assert not np.array_equal(_evalrows._row_counts(shifted, n), want)


def _tied_problem(rng, n, levels, rate):
    """A one-column problem with predictions on ``levels`` grid points (tie groups) and
    outcomes drawn at ``rate`` (``None``: ``P(y = 1) = x``), shuffled rows."""
    x = np.round(rng.integers(0, levels, size=n) / max(levels - 1, 1), 6)
    y = rng.random(n) < (x if rate is None else rate)
    prob = _evalrows.Problem("binary", x[:, None], [np.flatnonzero(y)])
    prob.prepare(1)
    return prob, x, y


@pytest.mark.parametrize("n,levels,rate", [(1, 1, 0.5), (2, 1, None), (9, 3, None),
                                           (40, 1, 0.5), (300, 7, None), (500, 101, None),
                                           (200, 200, None)])
def test_group_counts_are_the_groups_sums_of_the_multiplicities(n, levels, rate):
    """group_counts (one bincount of 2 u + y over the drawn canonical positions) against a
    count by comparison of each drawn row's prediction and outcome, and the bootstrap values
    from them (Resampler.weighted_values_groups) against those from the rows' multiplicities
    in sorted order (weighted_values_sorted): the same numbers, bit for bit.  Control: codes
    whose outcome bit is read in sorted instead of canonical order give other positives
    wherever the two orders put different outcomes at some position."""
    rng = np.random.default_rng(n + levels)
    prob, x, y = _tied_problem(rng, n, levels, rate)
    canon = _evalrows.canonical_order(prob.X, prob.outcome_key())
    res = _evalrows.Resampler(prob)
    bounds = res.tie_bounds()
    G = bounds.shape[0] - 1
    vu = res.sc.values[0][bounds[:-1]]
    B = 6
    draws = rng.integers(0, n, size=(B, n), dtype=np.int32)
    copies, positives = _evalrows.group_counts(draws, res.group_codes(canon), G)
    rows = canon[draws]                                     # the drawn input rows
    want_c = (x[rows][:, :, None] == vu[None, None, :]).sum(axis=1)
    want_p = ((x[rows][:, :, None] == vu[None, None, :]) & y[rows][:, :, None]).sum(axis=1)
    assert copies.dtype == np.int32 and np.array_equal(copies, want_c)
    assert np.array_equal(positives, want_p)
    assert (copies.sum(axis=1) == n).all()
    # the values, against the multiplicities of the sorted rows
    counts = _evalrows._row_counts(draws, n)
    rank = np.empty(n, dtype=np.int64)
    rank[canon] = np.arange(n)
    ws = counts[:, rank[res.order[0]]]
    specs = [(m, name) for m in (1, 2, 3) if m <= n for name in ("l1-QECE", "l2-QECE", "ECE")]
    if res.groups_are_units("average"):
        got = res.weighted_values_groups(copies, positives, specs, "average")
        want = res.weighted_values_sorted(ws, specs, "average")
        assert np.array_equal(got, want)
        # one resample at a time: the same numbers (the blocks' size is free)
        alone = np.concatenate([res.weighted_values_groups(copies[b:b + 1],
                                                           positives[b:b + 1], specs, "average")
                                for b in range(B)], axis=1)
        assert np.array_equal(alone, got)
    # control: the outcome bit of position p read in sorted order (the row at sorted
    # position p) instead of the canonical order (the row canon[p]); resample p draws
    # position p n times, so its positives are n times that one outcome
    unit = np.repeat(np.arange(G), np.diff(bounds))
    wrong = 2 * unit + res.sorted_outcome[0].astype(np.int64)
    single = np.repeat(np.arange(n, dtype=np.int32)[:, None], n, axis=1)
    right_p = _evalrows.group_counts(single, res.group_codes(canon), G)[1]
    assert np.array_equal(right_p.sum(axis=1), n * y[canon])
    differs = bool((res.sorted_outcome[0] != y[canon]).any())
    assert differs or n < 40        # shuffled mixed groups: the orders differ somewhere
    if differs:
        assert not np.array_equal(_evalrows.group_counts(single, wrong, G)[1], right_p)
