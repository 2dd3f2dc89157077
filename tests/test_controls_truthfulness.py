"""The instance builders, search and false neighbours behind the negative controls of paper 000
(Example 1.1, Thm 2.6, Thm 3.1, Obs 3.2, Table 1): calnotes/book/claims/truthfulness.py, table1.py."""

import numpy as np
import pytest

from calnotes.book.claims import table1 as t1c
from calnotes.book.claims import truthfulness as tc


@pytest.mark.parametrize("size", ["smoke", "full"])
def test_edge_binary_instances_reach_the_ends_of_the_range(size):
    inst = tc.edge_binary_instances(size)
    ns = [p.shape[0] for p, _ in inst]
    assert min(ns) == 1 and max(ns) >= 30
    assert any(m == 1 and p.shape[0] > 1 for p, m in inst)            # one bin
    assert any(m == p.shape[0] > 1 for p, m in inst)                  # one sample per bin
    assert any(p.shape[0] % m and m > 1 for p, m in inst)              # m not dividing n
    assert any(np.all(np.isin(p, (0.0, 1.0))) and p.size > 1 for p, _ in inst)  # point masses
    assert any(np.unique(p).size == 1 and p.size > m for p, m in inst)  # all tied
    assert all(1 <= m <= p.shape[0] for p, m in inst)


def test_edge_multiclass_instances_start_at_two_classes():
    inst = tc.edge_multiclass_instances("smoke")
    assert min(P.shape[1] for P, _ in inst) == 2
    assert any(P.shape[0] == 1 for P, _ in inst)
    assert any(np.all(np.isin(P, (0.0, 1.0))) for P, _ in inst)
    for P, m in inst:
        assert np.allclose(P.sum(axis=1), 1) and 1 <= m <= P.shape[0]


def test_paper_formula_and_its_false_neighbours():
    p = np.array([0.1, 0.3, 0.5, 0.9])
    assert tc._paper_formula(p, 2) == pytest.approx((0.09 + 0.21 + 0.25 + 0.09) / 16)
    assert tc._paper_formula(p, 2, "n^-1") == pytest.approx((0.09 + 0.21 + 0.25 + 0.09) / 4)
    # bins {0.1, 0.3} and {0.5, 0.9}: means 0.2 and 0.7
    assert tc._paper_formula(p, 2, "binomial bins") == pytest.approx(
        (2 * 0.2 * 0.8 + 2 * 0.7 * 0.3) / 16)
    # one truth per bin: the neighbour coincides with the theorem
    assert tc._paper_formula(p, 4, "binomial bins") == pytest.approx(tc._paper_formula(p, 4))
    assert tc._paper_formula(p, 3, "0.99") == pytest.approx(0.99 * tc._paper_formula(p, 3))


def test_local_search_descends():
    target = np.array([0.2, 0.7, 0.4])
    rng = np.random.default_rng(0)
    found = tc.local_search(lambda x: float(np.sum((x - target) ** 2)), np.full(3, 0.5), rng,
                            40, tc._binary_move)
    assert found < 0.01 < float(np.sum((0.5 - target) ** 2))


def test_simplex_move_stays_on_the_simplex():
    rng = np.random.default_rng(1)
    P = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    for _ in range(50):
        P = tc._simplex_move(P, 0.2, rng)
        assert np.allclose(P.sum(axis=1), 1) and P.min() >= 0


def test_gap_is_relative_or_scaled_by_the_largest_value():
    assert tc._gap(1.5, 1.0, 4) == 0.5
    assert tc._gap(0.01, 0.0, 5) == pytest.approx(0.01 * 20)


@pytest.mark.parametrize("size", ["smoke", "full"])
def test_table1_checkpoints(size):
    g = t1c.CELL_GRID[size]
    for cell in ("f1.l1_conf", "f3.l1_conf", "f1.l1_cw"):
        ns = {pt[1] for pt in t1c.checkpoints(cell, size)}
        assert {g["n"], 4 * g["n"]} <= ns                     # a rate needs two sample sizes
    l2 = t1c.checkpoints("f2.l2_cw", size)
    assert any(pt[0] == 2 and pt[2] == 1 for pt in l2)       # k = 2, one bin
    assert any(pt[2] == pt[1] for pt in l2)                  # m = n
    for cell in ("f1.l1_cw", "f2.l2_cw", "f4.l2_conf"):
        assert all(pt[1] % pt[2] == 0 for pt in t1c.checkpoints(cell, size))


def test_rate_neighbour_is_fitted_at_the_first_checkpoint():
    cell = "f1.l1_conf"
    first = t1c.checkpoints(cell, "smoke")[0]
    exact = t1c._values(first)[cell]["exact"]
    assert t1c._rate_m_over_n(cell, first, None, "smoke") == pytest.approx(exact, rel=1e-12)
    k, n, m = first[:3]
    quadrupled = (k, 4 * n, m) + first[3:]
    assert t1c._rate_m_over_n(cell, quadrupled, None, "smoke") == pytest.approx(exact / 4)


def test_obs32_binary_instance_is_the_exhibited_one_without_its_third_class():
    three, two = tc.obs32_instance(), tc.obs32_binary_instance()
    assert two["k"] == 2 and (two["n"], two["m"]) == (three["n"], three["m"])
    assert np.array_equal(two["truth"], three["truth"][:, :2])
    assert np.allclose(two["truth"].sum(axis=1), 1)
    # the report moves the argmax to the less likely class
    assert np.all(two["report"].argmax(axis=1) == 1)
    assert np.all(two["truth"][:, 0] >= two["truth"][:, 1])


def test_one_bin_of_example_11_the_constant_never_wins():
    # n - K has the law of K - 1 (K = sum Ber(i/n)): with one bin the constant 1/2 ties with the
    # truth's mean (n + 1)/(2n) for even n (no lattice point between them), and loses for odd n
    from calnotes.core import expectation as ex
    for n in (2, 3, 5, 10, 11):
        t = tc.example11_truth(n)
        constant = ex.expected_binned_ece(np.full(n, 0.5), t, 1)
        truthful = ex.expected_binned_ece(t, t, 1)
        if n % 2 == 0:
            assert constant == pytest.approx(truthful, abs=1e-14)
        else:
            assert constant > truthful + 1e-3


def test_conclusion_margin_tightens_every_inequality():
    plain = t1c.conclusion_statements(3, "smoke")
    tight = t1c.conclusion_statements(3, "smoke", margin=0.95)
    assert len(plain) == len(tight) and all(row[3] for row in plain)
    assert not all(row[3] for row in tight)
    # a tightened statement fails only where the plain one holds by less than 5%
    assert all(a[3] or not b[3] for a, b in zip(plain, tight))
