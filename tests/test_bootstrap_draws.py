"""The bootstrap's drawn positions (calnotes._evalrows._bootstrap, issue 20).

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

from calnotes import _evalrows


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
