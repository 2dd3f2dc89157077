"""Bin assignment: the one convention of calnotes.core.binning, by hand and against brute force.

Convention (calnotes/core/binning.py module docstring):
* equal width: edges j/m (one float division), bins [e_j, e_{j+1}), a value on an interior
  edge goes UP, 0 in the first bin, 1 in the last;
* equal mass (eq. (1) of paper 000): stable sort, 1-indexed sorted position i -> bin
  ceil(i m / n); sizes floor(jn/m) - floor((j-1)n/m); ties ordered by input position.
"""

import math

import numpy as np
import pytest

import brute
import calnotes as cn
from calnotes.core.binning import quantile_bin_of_position

# ----------------------------------------------------------------------------- equal width


def test_equal_width_edges_are_decimal_divisions():
    # e_j = j / m as one correctly rounded division; for m = 10 the edge 3 is the double
    # nearest to 0.3, i.e. the literal 0.3 -- linspace gives 0.30000000000000004 instead.
    edges = cn.equal_width_edges(10)
    assert edges.tolist() == [j / 10 for j in range(11)]
    assert edges[3] == 0.3
    assert np.linspace(0, 1, 11)[3] != 0.3
    assert cn.equal_width_edges(1).tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    "values, m, expected",
    [
        # 0.3 is exactly the edge 3/10: it goes UP into bin 3 (0-indexed).
        ([0.3], 10, [3]),
        # 0.5 is the only interior edge for m = 2: it goes UP into bin 1.
        ([0.5], 2, [1]),
        # 0 in the first bin, 1 in the last (closed) bin.
        ([0.0, 1.0], 10, [0, 9]),
        ([0.0, 1.0], 1, [0, 0]),
        # Interior points and every edge of m = 4 (all exact in binary).
        ([0.0, 0.1, 0.25, 0.26, 0.5, 0.74, 0.75, 0.99, 1.0], 4, [0, 0, 1, 1, 2, 2, 3, 3, 3]),
        # 1/3 and 2/3 as Python divides them: the edges of m = 3; they go up.
        ([1 / 3, 2 / 3], 3, [1, 2]),
        # The docstring example.
        ([0.0, 0.1, 0.3, 0.35, 0.999, 1.0], 10, [0, 1, 3, 3, 9, 9]),
    ],
)
def test_equal_width_bins_by_hand(values, m, expected):
    assert cn.equal_width_bins(values, m).tolist() == expected
    assert brute.equal_width_bins(values, m) == expected  # the reference agrees by hand


@pytest.mark.parametrize("m", range(1, 41))
def test_equal_width_every_edge_and_its_neighbours(m):
    # For every edge j/m: the edge itself goes to bin j, the next double below it to bin
    # j - 1, the next double above to bin j.  This is where floor(v * m) (one rounding in
    # the product) can be off by one, so every m up to 40 is checked exactly.
    for j in range(1, m):
        e = j / m
        below = math.nextafter(e, 0.0)
        above = math.nextafter(e, 1.0)
        got = cn.equal_width_bins([e, below, above], m).tolist()
        assert got == [j, j - 1, j], (m, j)
    # The last bin is closed: 1.0 and the double just below it are both in bin m - 1.
    assert cn.equal_width_bins([1.0, math.nextafter(1.0, 0.0)], m).tolist() == [m - 1, m - 1]
    # Smallest positive subnormal is in bin 0.
    assert cn.equal_width_bins([5e-324], m).tolist() == [0]


def test_linspace_edge_value_goes_up_not_down():
    # The value 0.30000000000000004 (= linspace's edge 3 for m = 10) is *above* the edge
    # 3/10 = 0.3, so it is in bin 3 too; 0.29999999999999993 (next double below 0.3) is in 2.
    lin = float(np.linspace(0, 1, 11)[3])
    assert lin == math.nextafter(0.3, 1.0)
    assert cn.equal_width_bins([lin, 0.3, math.nextafter(0.3, 0.0)], 10).tolist() == [3, 3, 2]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("m", [1, 2, 3, 5, 7, 10, 15, 20, 33])
def test_equal_width_bins_match_brute(seed, m):
    rng = np.random.default_rng(seed)
    # Continuous values, values on the decimal grids (ties and edges), and the endpoints.
    p = np.concatenate([rng.random(40), np.round(rng.random(40), 1),
                        np.round(rng.random(40), 2), [0.0, 1.0],
                        np.arange(m + 1) / m])
    rng.shuffle(p)
    assert cn.equal_width_bins(p, m).tolist() == brute.equal_width_bins(p, m)


# ----------------------------------------------------------------------------- equal mass


@pytest.mark.parametrize(
    "n, m, sizes",
    [
        (10, 3, [3, 3, 4]),  # floor(10/3)=3, floor(20/3)-3=3, 10-6=4
        (10, 4, [2, 3, 2, 3]),  # 2, 5-2, 7-5, 10-7
        (7, 7, [1] * 7),
        (7, 1, [7]),
        (5, 2, [2, 3]),  # floor(5/2)=2, 5-2=3
        (12, 5, [2, 2, 3, 2, 3]),  # 2, 4-2, 7-4, 9-7, 12-9
    ],
)
def test_equal_mass_bin_sizes_by_hand(n, m, sizes):
    assert cn.equal_mass_bin_sizes(n, m).tolist() == sizes
    assert brute.equal_mass_bin_sizes(n, m) == sizes


@pytest.mark.parametrize("n", range(1, 31))
def test_equal_mass_sizes_floor_formula_all_m(n):
    # |B_j| = floor(jn/m) - floor((j-1)n/m): positive, differ by at most one, sum to n.
    for m in range(1, n + 1):
        got = cn.equal_mass_bin_sizes(n, m).tolist()
        assert got == [(j * n) // m - ((j - 1) * n) // m for j in range(1, m + 1)]
        assert got == brute.equal_mass_bin_sizes(n, m)
        assert min(got) >= 1 and max(got) - min(got) <= 1 and sum(got) == n


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 31])
def test_quantile_bin_of_position_is_ceil(n):
    for m in range(1, n + 1):
        got = quantile_bin_of_position(np.arange(n), n, m).tolist()
        assert got == [brute.ceil_div((i + 1) * m, n) - 1 for i in range(n)]


def test_equal_mass_bins_by_hand_ties_straddle():
    # Docstring example: p = [0.9, 0.1, 0.5, 0.5, 0.2, 0.5], m = 2, n = 6 -> sizes 3, 3.
    # Stable sort: 0.1 (idx 1), 0.2 (idx 4), 0.5 (idx 2), 0.5 (idx 3), 0.5 (idx 5), 0.9 (idx 0).
    # Positions 1..3 -> bin 0: idx 1, 4, 2.  Positions 4..6 -> bin 1: idx 3, 5, 0.
    # The three 0.5s straddle the boundary; the FIRST given (idx 2) is the one below.
    p = [0.9, 0.1, 0.5, 0.5, 0.2, 0.5]
    assert cn.equal_mass_bins(p, 2).tolist() == [1, 0, 0, 1, 0, 1]


def test_equal_mass_bins_m_not_dividing_n_by_hand():
    # n = 5, m = 2: sizes floor(5/2) = 2 and 3.  p already sorted -> bins [0, 0, 1, 1, 1].
    assert cn.equal_mass_bins([0.1, 0.2, 0.3, 0.4, 0.5], 2).tolist() == [0, 0, 1, 1, 1]
    # n = 5, m = 3: positions 1..5 -> ceil(3i/5) = 1, 2, 2, 3, 3 -> sizes 1, 2, 2.
    assert cn.equal_mass_bins([0.5, 0.4, 0.3, 0.2, 0.1], 3).tolist() == [2, 2, 1, 1, 0]


def test_equal_mass_bins_all_tied_follow_input_order():
    # All equal: the bins are just the input positions cut by eq. (1).
    n, m = 7, 3  # ceil(3i/7) for i = 1..7: 1, 1, 2, 2, 3, 3, 3
    assert cn.equal_mass_bins([0.4] * n, m).tolist() == [0, 0, 1, 1, 2, 2, 2]


def test_equal_mass_bins_with_zero_and_one():
    # 0 and 1 are ordinary values for equal-mass bins: 0 sorts first, 1 last.
    assert cn.equal_mass_bins([1.0, 0.0, 0.5, 0.0], 2).tolist() == [1, 0, 1, 0]


def test_equal_mass_negative_zero_ties_with_zero():
    # -0.0 == 0.0: they are a tie group, ordered by input position (stable).
    assert cn.equal_mass_bins([0.0, -0.0, 0.5, 0.7], 4).tolist() == [0, 1, 2, 3]
    assert cn.equal_mass_bins([-0.0, 0.0, 0.5, 0.7], 4).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n", [1, 2, 3, 10, 37, 101])
@pytest.mark.parametrize("decimals", [None, 1, 2])
def test_equal_mass_bins_match_brute(seed, n, decimals):
    rng = np.random.default_rng(1000 + seed)
    p = rng.random(n)
    if decimals is not None:
        p = np.round(p, decimals)  # heavy ties
    for m in sorted({1, 2, 3, 7, n // 2 or 1, n}):
        if m <= n:
            assert cn.equal_mass_bins(p, m).tolist() == brute.equal_mass_bins(p, m), m


def test_assign_bins_dispatch():
    p = [0.9, 0.1, 0.5, 0.5, 0.2, 0.5]
    assert cn.assign_bins(p, 2, "width").tolist() == [1, 0, 1, 1, 0, 1]
    assert cn.assign_bins(p, 2, "mass").tolist() == [1, 0, 0, 1, 0, 1]
    assert cn.assign_bins(p, 2).tolist() == [1, 0, 1, 1, 0, 1]  # default is width
