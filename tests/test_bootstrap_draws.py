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


def test_offsets_switch_to_int64_before_overflow():
    n = 2 ** 30
    draws = np.array([[n - 1], [n - 1], [n - 1]], dtype=np.int32)
    out = _evalrows._offset_rows(draws, n)
    assert out.dtype == np.int64
    assert out[:, 0].tolist() == [n - 1, 2 * n - 1, 3 * n - 1]
    small = _evalrows._offset_rows(np.array([[1, 2], [0, 1]], dtype=np.int32), 3)
    assert small.dtype == np.int32 and small.tolist() == [[1, 2], [3, 4]]    # fits: int32
