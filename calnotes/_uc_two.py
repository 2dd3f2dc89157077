"""Utility calibration of many two-class utilities from two running sums (issue 20).

With two classes, every linear utility ``a = (a_0, a_1)`` and every rank utility
``theta = (theta_1, theta_2)`` is a pair of weights ``(w_x, w_z)`` on two columns ``x`` and
``z`` of the samples: ``x = p_1, z = p_0`` (linear: ``w_x = a_1, w_z = a_0``) or ``x = max p,
z = min p`` (rank: ``w_x = theta_1, w_z = theta_2``).  The predicted utility is
``v = w_x x + w_z z`` and the realized one ``w_x i + w_z (1 - i)``, with ``i`` the label's
share of the ``x`` column (``1{y = 1}``; for rank utilities 1 if the label is the top class,
0 if not, 1/2 if the two probabilities are equal).  So in the order of ``x`` the residuals'
prefix sums are

    ``S_j = w_x X_j + w_z Z_j``,  ``X_j = sum_{r < j} (i_r - x_r) / n``,
    ``Z_j = sum_{r < j} (1 - i_r - z_r) / n``,

two running sums shared by every utility, and ``X_j + Z_j`` is the running sum of the rows'
defects ``(1 - x_r - z_r) / n``, zero up to rounding when rows sum to one.  Each utility's
estimate (Lemma 3.4 of paper 001, :func:`calnotes.utility.uc_from_values`) is then the
largest minus the smallest ``S_j`` over its tie-group boundaries, found among the few ``j``
where ``X_j`` is near its extremes: ``O(log n)`` per utility after ``O(n log n)`` once,
instead of a matrix product, an order and a scan of ``n`` values each.

The general engine (:class:`calnotes.utility._Calibration`) decides ties on the predicted
utilities as the matrix product rounds them (values within ``tie_tol = 4 C eps`` are one).
This module takes a utility only where it can *prove*, from bounds on that rounding, that
the product's tie groups are the blocks it uses; every other utility is left to the general
engine (``ok`` false).  Where it answers, the value differs from the general engine's only by
the rounding of the two ways of summing (each a running sum of ``n`` terms of at most
``2 / n``: at most ``2 (n + 2) eps`` apart in the worst case; measured: about ``1e-16``), and
the worst interval is the general engine's unless two intervals' deviations are equal to that
rounding.

The certificate, for a utility with ``D = w_x - w_z != 0`` (``D = 0``: constant predicted
utility, left to the general engine).  Let ``delta`` bound the rows' defects ``|x + z - 1|``
(computed exactly, by Knuth's two-sum) and ``e_V = gamma_2 max(|w_x|, |w_z|) (1 + delta)``
bound the rounding of one predicted utility (a two-term dot product, in whatever order or
fused form BLAS computes it).  Two samples' computed predicted utilities then differ from
``D (x' - x)`` by at most ``eta = 2 e_V + 2 |w_z| delta``.  In the order of ``x``:

- a gap ``x_{r+1} - x_r > (tie_tol + eta) / |D|`` is a boundary of the product's groups, and
  everything above it exceeds everything below it by more than ``tie_tol`` (so no sort by
  predicted utility can interleave the two sides);
- the runs between such gaps ("blocks") must each span at most ``(tie_tol - eta) / |D|`` in
  ``x``: then all their computed predicted utilities are within ``tie_tol`` of each other, so
  each block is exactly one tie group, whatever the order in which a sort leaves it.

Both are checked with the floating-point subtraction's own rounding allowed for.
"""

from __future__ import annotations

import numpy as np

_U = float(np.finfo(np.float64).eps) / 2           # unit roundoff
_GAMMA2 = 2 * _U / (1 - 2 * _U)

#: Distinct boundary sets (utilities whose tie tolerance, scaled by ``1 / |D|``, separates a
#: different number of gaps) computed at most; each costs a pass over the ``n`` samples.
#: Utilities of other sets go to the general engine.
MAX_BOUNDARY_SETS = 8

#: Boundaries near a running sum's extreme evaluated per utility at most (more: the general
#: engine; it takes ties in the running sum of many boundaries, rare with continuous data).
MAX_CANDIDATES = 64


class TwoColumns:
    """The shared running sums of one pair of columns, in the order ``hint`` of ``x``.

    Parameters
    ----------
    x, z : ndarray, shape (n,)
        The two columns in input order (``x`` sorted by ``hint``).
    share : ndarray, shape (n,)
        The label's share ``i`` of the ``x`` column (module docstring).
    hint : ndarray of int, shape (n,)
        ``np.argsort(x, kind="stable")``.

    Examples
    --------
    Three samples, one linear utility ``a = (0, 1)`` (the class-1 column): its estimate is the
    largest deviation over intervals of ``p_1``.

    >>> import numpy as np
    >>> p1 = np.array([0.2, 0.6, 0.9])
    >>> y = np.array([0, 1, 1])
    >>> two = TwoColumns(p1, 1 - p1, (y == 1).astype(float), np.argsort(p1, kind="stable"))
    >>> res = two.scan(np.array([1.0]), np.array([0.0]), 8 * np.finfo(float).eps)
    >>> bool(res.ok[0]), round(float(res.values[0]), 12)
    (True, 0.166666666667)
    """

    def __init__(self, x, z, share, hint):
        n = x.size
        self.n = n
        self.xs = xs = x[hint]
        self.zs = zs = z[hint]
        ix = share[hint]
        self.X = np.zeros(n + 1)
        np.cumsum((ix - xs) / n, out=self.X[1:])
        self.Z = np.zeros(n + 1)
        np.cumsum(((1.0 - ix) - zs) / n, out=self.Z[1:])
        s = xs + zs                                           # two-sum: s + err = x + z
        bp = s - xs
        err = (xs - (s - bp)) + (zs - bp)
        self.delta = float((np.abs(s - 1.0) + np.abs(err)).max(initial=0.0)) * (1 + 4 * _U)
        E = self.X + self.Z
        self.Emax = float(np.abs(E).max()) * (1 + 4 * _U)       # bounds |X_j + Z_j| exactly
        self.Bmax = float(max(np.abs(self.X).max(), np.abs(self.Z).max()))
        self.gaps = np.diff(xs)                                 # >= 0: xs ascending
        self.sorted_gaps = np.sort(self.gaps)

    def scan(self, wx, wz, tie_tol: float) -> "TwoColumnResult":
        """The estimate of each utility ``(wx[m], wz[m])`` that the certificate admits."""
        M, n = wx.size, self.n
        D = wx - wz
        absD = np.abs(D)
        wmax = np.maximum(np.abs(wx), np.abs(wz))
        eta = 2 * _GAMMA2 * wmax * (1 + self.delta) * (1 + 2 * _U) \
            + 2 * np.abs(wz) * self.delta * (1 + 2 * _U)
        ok = (absD > 0) & (eta < tie_tol)
        with np.errstate(divide="ignore", invalid="ignore"):
            boundary = (tie_tol + eta) / (absD * (1 - _U)) * (1 + 4 * _U)
            block = (tie_tol - eta) / (absD * (1 + _U)) * (1 - 4 * _U)
        res = TwoColumnResult(M)
        if n < 2:
            sets = np.zeros(M, dtype=np.int64)
        else:
            sets = np.searchsorted(self.sorted_gaps, np.where(ok, boundary, 0.0), "right")
        kinds, counts = np.unique(sets[ok], return_counts=True)
        for r in kinds[np.argsort(-counts, kind="stable")][:MAX_BOUNDARY_SETS]:
            members = np.flatnonzero(ok & (sets == r))
            self._scan_set(int(r), members, wx, wz, D, block, res)
        return res

    def _scan_set(self, r, members, wx, wz, D, block, res):
        """The utilities ``members``, whose boundaries are the gaps above the ``r`` smallest."""
        n, xs = self.n, self.xs
        if r == 0:
            J = np.arange(n + 1)
            span = 0.0
        else:
            inner = np.flatnonzero(self.gaps > self.sorted_gaps[r - 1]) + 1
            J = np.concatenate([[0], inner, [n]])
            span = float((xs[J[1:] - 1] - xs[J[:-1]]).max())
        members = members[span <= block[members]]
        if members.size == 0:
            return
        XJ, ZJ = self.X[J], self.Z[J]
        order = np.argsort(XJ, kind="stable")
        sortedX = XJ[order]
        w_x, w_z, d = wx[members], wz[members], D[members]
        # S_j = w_x X_j + w_z Z_j as computed lies within rho of D X_j: only j with D X_j
        # within 2 rho of its extreme can hold S's extreme
        rho = np.abs(w_z) * self.Emax + 3 * _U * (np.abs(w_x) + np.abs(w_z)) * self.Bmax
        window = 2 * rho / np.abs(d) * (1 + 8 * _U) + 4 * _U * np.abs(sortedX).max()
        top = np.searchsorted(sortedX, sortedX[-1] - window, "left")      # X's high end
        bottom = np.searchsorted(sortedX, sortedX[0] + window, "right")   # X's low end
        n_high, n_low = sortedX.size - top, bottom
        fits = (n_high <= MAX_CANDIDATES) & (n_low <= MAX_CANDIDATES)
        if not fits.any():
            return
        keep = np.flatnonzero(fits)
        members, w_x, w_z, d = members[keep], w_x[keep], w_z[keep], d[keep]
        top, n_high, n_low = top[keep], n_high[keep], n_low[keep]
        up = d > 0
        # candidates for S's maximum: X's high end if D > 0, else its low end; the minimum
        # the other way round
        jmax = self._extreme(order, XJ, ZJ, J, w_x, w_z, np.where(up, top, 0),
                             np.where(up, n_high, n_low), up, largest=True)
        jmin = self._extreme(order, XJ, ZJ, J, w_x, w_z, np.where(up, 0, top),
                             np.where(up, n_low, n_high), up, largest=False)
        smax = w_x * self.X[jmax] + w_z * self.Z[jmax]
        smin = w_x * self.X[jmin] + w_z * self.Z[jmin]
        values = smax - smin
        empty = values <= 0
        lo = np.where(empty, 0, np.minimum(jmax, jmin))
        hi = np.where(empty, 0, np.maximum(jmax, jmin))
        first = np.minimum(lo, n - 1)                   # the interval's ends in the order of x
        last = np.maximum(hi - 1, 0)
        at_lo = np.where(up, first, last)               # ...and in the order of v
        at_hi = np.where(up, last, first)
        lower = w_x * xs[at_lo] + w_z * self.zs[at_lo]
        upper = w_x * xs[at_hi] + w_z * self.zs[at_hi]
        res.ok[members] = True
        res.values[members] = np.maximum(values, 0.0)
        res.lower[members] = np.where(empty, np.nan, lower)
        res.upper[members] = np.where(empty, np.nan, upper)
        res.sign[members] = np.where(empty, 0, np.where(jmax > jmin, 1, -1))
        res.lo[members] = lo
        res.hi[members] = hi

    @staticmethod
    def _extreme(order, XJ, ZJ, J, w_x, w_z, start, count, up, largest):
        """Per utility, the sample position ``J[t]`` of the extreme of ``S`` among the
        candidates ``order[start:start + count]``.  Equal extremes: the first in the order of
        the predicted utility (the smallest position if ``D > 0``, else the largest), as
        ``argmax`` takes it in the general engine."""
        width = int(count.max())
        cols = np.arange(width)
        valid = cols[None, :] < count[:, None]
        t = order[np.minimum(start[:, None] + cols[None, :], order.size - 1)]
        S = w_x[:, None] * XJ[t] + w_z[:, None] * ZJ[t]
        if largest:
            S = np.where(valid, S, -np.inf)
            best = S.max(axis=1)
        else:
            S = np.where(valid, S, np.inf)
            best = S.min(axis=1)
        pos = J[t]
        chosen = np.where(up, np.where(valid & (S == best[:, None]), pos, np.iinfo(np.int64).max)
                          .min(axis=1),
                          np.where(valid & (S == best[:, None]), pos, -1).max(axis=1))
        return chosen


class TwoColumnResult:
    """What :meth:`TwoColumns.scan` found: per utility whether it answered (``ok``) and the
    arrays of :func:`calnotes.utility._scan_sorted` (``lo, hi`` are positions in the order of
    ``x``; only ``hi - lo`` is used)."""

    def __init__(self, M: int):
        self.ok = np.zeros(M, dtype=bool)
        self.values = np.zeros(M)
        self.lower = np.full(M, np.nan)
        self.upper = np.full(M, np.nan)
        self.sign = np.zeros(M, dtype=np.int64)
        self.lo = np.zeros(M, dtype=np.int64)
        self.hi = np.zeros(M, dtype=np.int64)

    def take(self, idx):
        """``(values, lower, upper, sign, lo, hi)`` of the utilities ``idx``."""
        return (self.values[idx], self.lower[idx], self.upper[idx], self.sign[idx],
                self.lo[idx], self.hi[idx])
