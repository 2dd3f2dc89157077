"""Brute-force reference implementations, written straight from the paper formulas.

Nothing here imports calnotes, and nothing is vectorised: plain Python loops over samples,
bins and classes.  Sums of predictions and outcomes are carried out in exact rational
arithmetic (:class:`fractions.Fraction` holds every float exactly; the O(n^2) KS loop uses
:func:`math.fsum`, which is just as exact), so the only rounding in a reference value is
the final conversion to float and, for non-integer exponents, one ``**`` per bin.  The tests compare calnotes against these values with tolerances that
cover calnotes' own float64 summation.

Sources
-------
* truthfulness paper (papers/000): Def 2.4 (ECE), eq. (1) (equal-mass bins), Def 2.5
  (l1/l2-QECE), Def 2.7 (class-wise), Def 2.8 (confidence, ``r_p = argmax``);
* proper-calibration-errors paper (papers/003): Def C.1 (TCE_p, CWCE_p), Def C.2 (KS).

Conventions (the ones documented in ``calnotes.core.binning``)
---------------------------------------------------------
* equal width: edges ``e_j = j / m`` (one Python float division); ``v`` is in bin ``j``
  iff ``e_j <= v < e_{j+1}``; ``1.0`` is in the last bin;
* equal mass: stable sort by prediction; the 1-indexed sorted position ``i`` goes to bin
  ``ceil(i m / n)``; ties either keep input order (``ties="position"``) or, by default
  (``ties="average"``), every arrangement of the outcomes inside a tie group is equally likely
  and the measure is averaged over them (:func:`bin_laws`, checked by :func:`patterns_average`);
* argmax: the first maximal index.

All bin numbers returned here are 0-indexed, in input order.
"""

from __future__ import annotations

import math
from fractions import Fraction

# --------------------------------------------------------------------------- helpers


def _floats(values):
    return [float(v) for v in values]


def _ints(values):
    return [int(v) for v in values]


def _F(x) -> Fraction:
    """Exact rational value of a float (or int)."""
    return Fraction(x)


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for positive integers, in integer arithmetic."""
    return -((-a) // b)


def first_argmax(row) -> int:
    """Index of the first maximal entry (strict ``>`` while scanning left to right)."""
    best = 0
    for r in range(1, len(row)):
        if row[r] > row[best]:
            best = r
    return best


def column(P, r):
    return [float(row[r]) for row in P]


# --------------------------------------------------------------------------- binning


def equal_width_edges(m: int):
    """``[0/m, 1/m, ..., m/m]``, each one Python float division."""
    return [j / m for j in range(m + 1)]


def equal_width_bins(p, m: int):
    """Bin ``j`` iff ``e_j <= v < e_{j+1}``; ``v == 1.0`` goes to the last bin."""
    edges = equal_width_edges(m)
    out = []
    for v in _floats(p):
        found = None
        if v == 1.0:
            found = m - 1
        else:
            for j in range(m):
                if edges[j] <= v < edges[j + 1]:
                    found = j
                    break
        assert found is not None, f"value {v!r} not in [0, 1]"
        out.append(found)
    return out


def equal_mass_bin_sizes(n: int, m: int):
    """``|B_j|`` from eq. (1): the number of integers ``i`` with ``(j-1)n/m < i <= jn/m``.

    Counted one by one (no floor formula), in exact integer arithmetic:
    ``(j-1) n < i m <= j n``.
    """
    sizes = []
    for j in range(1, m + 1):
        sizes.append(sum(1 for i in range(1, n + 1) if (j - 1) * n < i * m <= j * n))
    return sizes


def equal_mass_bins(p, m: int):
    """Eq. (1): stable sort by prediction, 1-indexed position ``i`` -> bin ``ceil(i m / n)``."""
    p = _floats(p)
    n = len(p)
    order = sorted(range(n), key=lambda i: p[i])  # Python's sort is stable
    out = [None] * n
    for pos0, idx in enumerate(order):
        i = pos0 + 1
        out[idx] = ceil_div(i * m, n) - 1
    return out


def bins(p, m: int, binning: str):
    if binning == "width":
        return equal_width_bins(p, m)
    if binning == "mass":
        return equal_mass_bins(p, m)
    raise ValueError(binning)


# --------------------------------------------------------------------------- bin sums


def bin_sums(y, p, m: int, binning: str):
    """Exact per-bin (count, sum of p, sum of y) as lists of int / Fraction / int.

    Equal-mass bins here order ties by input position (``ties="position"``).
    """
    y, p = _ints(y), _floats(p)
    b = bins(p, m, binning)
    count = [0] * m
    sp = [Fraction(0)] * m
    sy = [0] * m
    for i in range(len(p)):
        count[b[i]] += 1
        sp[b[i]] += _F(p[i])
        sy[b[i]] += y[i]
    return count, sp, sy


def _tie_groups(p):
    """Sorted positions ``[a, e)`` of each run of equal values in the stable sorted order."""
    vals = sorted(_floats(p))
    groups, a = [], 0
    for i in range(1, len(vals) + 1):
        if i == len(vals) or vals[i] != vals[a]:
            groups.append((a, i))
            a = i
    return groups


def bin_laws(y, p, m: int, binning: str, ties: str = "average"):
    """Per bin: count, exact sum of p, and the law of its positive count.

    The law is a list of ``(weight, positives)`` pairs (Fraction weights summing to one).  For
    equal-width bins and for ``ties="position"`` it is the single observed count.  For
    equal-mass bins with ``ties="average"``, every order of each group of equal predictions is
    equally likely, so the positive outcomes of a group of ``N`` with ``K`` positives take
    ``K`` of its ``N`` sorted positions, each of the ``C(N, K)`` choices equally likely; a bin
    holding ``o`` of the group's positions then gets ``t`` of its positives in
    ``C(o, t) C(N - o, K - t)`` of them.  Counted with :func:`math.comb`, convolved over the
    groups a bin meets (groups are ordered independently).
    """
    count, sp, sy = bin_sums(y, p, m, binning)
    if binning != "mass" or ties == "position":
        return count, sp, [[(Fraction(1), sy[j])] for j in range(m)]
    assert ties == "average", ties
    y, p = _ints(y), _floats(p)
    n = len(p)
    order = sorted(range(n), key=lambda i: p[i])
    y_sorted = [y[i] for i in order]
    bin_of = [ceil_div((pos + 1) * m, n) - 1 for pos in range(n)]
    laws = [[(Fraction(1), 0)] for _ in range(m)]
    for a, e in _tie_groups(p):
        N, K = e - a, sum(y_sorted[a:e])
        for j in sorted(set(bin_of[a:e])):
            o = sum(1 for pos in range(a, e) if bin_of[pos] == j)
            part = [(Fraction(math.comb(o, t) * math.comb(N - o, K - t), math.comb(N, K)), t)
                    for t in range(0, min(o, K) + 1) if 0 <= K - t <= N - o]
            laws[j] = [(w1 * w2, t1 + t2) for w1, t1 in laws[j] for w2, t2 in part]
    return count, sp, laws


def reliability(y, p, m: int, binning: str = "width", ties: str = "average"):
    """Per-bin counts, mean predictions and mean outcomes (None for an empty bin)."""
    count, sp, laws = bin_laws(y, p, m, binning, ties)
    mean_p = [float(sp[j] / count[j]) if count[j] else None for j in range(m)]
    mean_y = [float(sum(w * t for w, t in laws[j]) / count[j]) if count[j] else None
              for j in range(m)]
    return count, mean_p, mean_y


def patterns_average(inner, y, p, m: int):
    """Mean of ``inner(y', p_sorted)`` over every arrangement of the outcomes inside each tie
    group (each group's ``C(N, K)`` choices equally likely), the samples in sorted order.

    The slow definition of ``ties="average"``, to check :func:`bin_laws` on small inputs;
    ``inner`` is evaluated with ``ties="position"`` semantics on sorted data.
    """
    import itertools

    y, p = _ints(y), _floats(p)
    n = len(p)
    order = sorted(range(n), key=lambda i: p[i])
    ps = [p[i] for i in order]
    ys = [y[i] for i in order]
    choices = []
    for a, e in _tie_groups(p):
        K = sum(ys[a:e])
        choices.append([(a, e, c) for c in itertools.combinations(range(a, e), K)])
    total, count = Fraction(0), 0
    for pick in itertools.product(*choices):
        yy = [0] * n
        for a, e, c in pick:
            for pos in c:
                yy[pos] = 1
        total += Fraction(inner(yy, ps, m))
        count += 1
    return total / count


# --------------------------------------------------------------------------- binary measures


def _mean_abs_power(sp, law, power, exact: bool):
    if exact:
        return sum(w * abs(sp - t) ** int(power) for w, t in law)
    return sum(float(w) * float(abs(sp - t)) ** power for w, t in law)


def _ece_inner(y, p, m: int, power, binning: str, ties: str):
    """``sum_{j: |B_j|>0} |B_j|/n E|pbar_j - ybar_j|^power``: a Fraction for power 1 or 2."""
    count, sp, laws = bin_laws(y, p, m, binning, ties)
    n = len(_floats(p))
    exact = power == 1 or power == 2
    total = Fraction(0) if exact else 0.0
    for j in range(m):
        if count[j]:
            # |B_j|/n |S_j/|B_j||^power = |B_j|^(1-power) |S_j|^power / n
            moment = _mean_abs_power(sp[j], laws[j], power, exact)
            if exact:
                total += moment / (Fraction(count[j]) ** (int(power) - 1) * n)
            else:
                total += count[j] ** (1.0 - power) * moment / n
    return total


def _root(total, power) -> float:
    if power == 1:
        return float(total)
    if power == 2:
        return math.sqrt(float(total))
    return total ** (1.0 / power)


def binned_ece(y, p, m: int, power: float = 1, binning: str = "width",
               ties: str = "average") -> float:
    """``( sum_{j: |B_j|>0} |B_j|/n * E|pbar_j - ybar_j|^power )^(1/power)``.

    The expectation is over the law of each bin's positives (:func:`bin_laws`): a single value
    unless ties are averaged.
    """
    return _root(_ece_inner(y, p, m, power, binning, ties), power)


def max_calibration_error(y, p, m: int, binning: str = "width",
                          ties: str = "average") -> float:
    """``max_{j: |B_j|>0} E|pbar_j - ybar_j|``."""
    count, sp, laws = bin_laws(y, p, m, binning, ties)
    best = Fraction(0)
    for j in range(m):
        if count[j]:
            best = max(best, _mean_abs_power(sp[j], laws[j], 1, True) / count[j])
    return float(best)


def l1_qece(y, p, m: int, ties: str = "average") -> float:
    """Def 2.5, right-hand form: ``1/n sum_j | sum_i I[i in B_j] (p_i - y_i) |``.

    With ``ties="average"``: its mean over the orders of tied predictions (:func:`bin_laws`).
    """
    if ties == "position":
        y, p = _ints(y), _floats(p)
        n = len(p)
        b = equal_mass_bins(p, m)
        total = Fraction(0)
        for j in range(m):
            s = Fraction(0)
            for i in range(n):
                if b[i] == j:
                    s += _F(p[i]) - y[i]
            total += abs(s)
        return float(total / n)
    count, sp, laws = bin_laws(y, p, m, "mass", ties)
    n = len(_floats(p))
    return float(sum(_mean_abs_power(sp[j], laws[j], 1, True) for j in range(m)) / n)


def l2_qece(y, p, m: int, ties: str = "average") -> float:
    """Def 2.5: ``1/n^2 sum_j ( sum_i I[i in B_j] (p_i - y_i) )^2`` (mean over tie orders)."""
    if ties == "position":
        y, p = _ints(y), _floats(p)
        n = len(p)
        b = equal_mass_bins(p, m)
        total = Fraction(0)
        for j in range(m):
            s = Fraction(0)
            for i in range(n):
                if b[i] == j:
                    s += _F(p[i]) - y[i]
            total += s * s
        return float(total / (n * n))
    count, sp, laws = bin_laws(y, p, m, "mass", ties)
    n = len(_floats(p))
    return float(sum(_mean_abs_power(sp[j], laws[j], 2, True) for j in range(m)) / (n * n))


def ks_calibration_error(y, p) -> float:
    """``max_sigma | 1/n sum_{i: p_i <= sigma} (p_i - y_i) |`` over all real sigma.

    The partial sum is a step function of sigma that only changes at the p_i, so the
    maximum is attained at sigma in {below every p_i (the empty sum)} U {p_1, ..., p_n}.
    Each partial sum is :func:`math.fsum` of the floats p_i and -y_i: the correctly
    rounded exact sum (as good as a Fraction sum rounded once, and O(n^2) stays fast).
    """
    y, p = _ints(y), _floats(p)
    n = len(p)
    best = 0.0  # the empty sum, sigma < min p
    for sigma in p:
        terms = []
        for i in range(n):
            if p[i] <= sigma:
                terms.append(p[i])
                terms.append(-float(y[i]))
        best = max(best, abs(math.fsum(terms)))
    return best / n


def unbinned_ece(y, p) -> float:
    """Def 2.4: ``1/n sum_i |p_i - ybar_{p_i}|``, ybar_p the mean outcome over ``p_j == p``."""
    y, p = _ints(y), _floats(p)
    n = len(p)
    total = Fraction(0)
    for i in range(n):
        num = 0
        den = 0
        for j in range(n):
            if p[j] == p[i]:
                num += y[j]
                den += 1
        total += abs(_F(p[i]) - Fraction(num, den))
    return float(total / n)


# --------------------------------------------------------------------------- multi-class


def one_vs_rest(y, r):
    return [1 if int(v) == r else 0 for v in y]


def classwise(measure, y, P, **kwargs) -> float:
    """Def 2.7: ``1/k sum_r CAL(p^(r); 1[y = r])``."""
    k = len(P[0])
    values = classwise_values(measure, y, P, **kwargs)
    return sum(values) / k


def classwise_values(measure, y, P, **kwargs):
    k = len(P[0])
    return [measure(one_vs_rest(y, r), column(P, r), **kwargs) for r in range(k)]


def confidence_scores(y, P):
    """(top probability, first-argmax class, 1 if that class is the label)."""
    conf, pred, correct = [], [], []
    for row, label in zip(P, _ints(y)):
        row = _floats(row)
        r = first_argmax(row)
        conf.append(row[r])
        pred.append(r)
        correct.append(1 if r == label else 0)
    return conf, pred, correct


def confidence(measure, y, P, **kwargs) -> float:
    """Def 2.8: CAL on (p^(r_p), y^(r_p)), r_p the first argmax."""
    conf, _, correct = confidence_scores(y, P)
    return measure(correct, conf, **kwargs)


def tce(y, P, m: int, power: float = 1, binning: str = "width", ties: str = "average") -> float:
    """Def C.1 (paper 003), binned plug-in estimate of TCE_p."""
    return confidence(binned_ece, y, P, m=m, power=power, binning=binning, ties=ties)


def cwce(y, P, m: int, power: float = 1, binning: str = "width", ties: str = "average") -> float:
    """Def C.1 (paper 003): ``( sum_r sum_j |B_rj|/n |pbar_rj - ybar_rj|^p )^(1/p)``.

    A sum over classes (no 1/k) with one root outside.
    """
    k = len(P[0])
    total = sum(_ece_inner(one_vs_rest(y, r), column(P, r), m, power, binning, ties)
                for r in range(k))
    return _root(total, power)


# --------------------------------------------------------------------------- proper losses


def log_loss(p, y: int) -> float:
    """``-log p_y`` (inf where ``p_y = 0``)."""
    return math.inf if p[y] == 0 else -math.log(p[y])


def brier_loss(p, y: int) -> float:
    """``||p - e_y||^2``."""
    return sum((p[r] - (1.0 if r == y else 0.0)) ** 2 for r in range(len(p)))


def spherical_loss(p, y: int) -> float:
    """``1 - p_y / ||p||_2``."""
    return 1.0 - p[y] / math.sqrt(sum(v * v for v in p))


def zero_one_loss(p, y: int) -> float:
    """0 if the first argmax is the label, else 1."""
    return 0.0 if first_argmax(p) == y else 1.0


LOSSES = {
    "log": log_loss,
    "brier": brier_loss,
    "spherical": spherical_loss,
    "zero_one": zero_one_loss,
}


def as_rows(P):
    """Binary ``(n,)`` probabilities as rows ``[1 - p, p]``; ``(n, k)`` as lists."""
    rows = []
    for row in P:
        if isinstance(row, (list, tuple)) or getattr(row, "ndim", 0) == 1:
            rows.append(_floats(row))
        else:
            rows.append([1.0 - float(row), float(row)])
    return rows


def mean_loss(loss: str, y, P) -> float:
    rows = as_rows(P)
    return sum(LOSSES[loss](row, int(label)) for row, label in zip(rows, y)) / len(rows)


def expected_loss(q, p, loss: str) -> float:
    """``sum_y q_y l(p, y)``, terms with ``q_y = 0`` dropped."""
    return sum(q[y] * LOSSES[loss](p, y) for y in range(len(q)) if q[y] > 0)


def entropy(q, loss: str) -> float:
    return expected_loss(q, q, loss)


def divergence(q, p, loss: str) -> float:
    """``E_q l(p, Y) - H(q)``."""
    return expected_loss(q, p, loss) - entropy(q, loss)


def kl(q, p) -> float:
    """``sum_y q_y log(q_y / p_y)`` with ``0 log 0 = 0``; inf if some ``p_y = 0 < q_y``."""
    total = 0.0
    for qy, py in zip(q, p):
        if qy > 0:
            if py == 0:
                return math.inf
            total += qy * math.log(qy / py)
    return total


def squared_euclidean(q, p) -> float:
    return sum((a - b) ** 2 for a, b in zip(q, p))


def score_decomposition(weights, F, T, loss: str) -> dict:
    """Entropy / sharpness / calibration terms of a finite-valued predictor, by brute force.

    Atoms with equal predictions (exact tuple equality) are pooled: C is the mass-weighted
    mean of their truths.  pi is the label marginal.  Atoms of zero weight carry no mass
    and contribute nothing.
    """
    F, T = as_rows(F), as_rows(T)
    k = len(F[0])
    pi = [sum(w * t[y] for w, t in zip(weights, T)) for y in range(k)]
    groups: dict = {}
    for w, f, t in zip(weights, F, T):
        key = tuple(f)
        mass, acc = groups.get(key, (0.0, [0.0] * k))
        groups[key] = (mass + w, [a + w * t[y] for y, a in enumerate(acc)])
    score = sum(w * expected_loss(t, f, loss) for w, f, t in zip(weights, F, T))
    sharp = 0.0
    calib = 0.0
    for key, (mass, acc) in groups.items():
        if mass == 0:
            continue
        C = [a / mass for a in acc]
        sharp += mass * divergence(C, pi, loss)
        calib += mass * divergence(C, list(key), loss)
    return {"score": score, "entropy": entropy(pi, loss), "sharpness": sharp,
            "calibration": calib}
