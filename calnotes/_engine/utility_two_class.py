"""Utility calibration of many two-class utilities from two running sums.

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
estimate (Lemma 3.4 of paper 001, :func:`calnotes.theory.utility.uc_from_values`) is then the
largest minus the smallest ``S_j`` over its tie-group boundaries, found among the few ``j``
where ``X_j`` is near its extremes: ``O(log n)`` per utility after ``O(n log n)`` once,
instead of a matrix product, an order and a scan of ``n`` values each.

The general engine (:class:`calnotes.theory.utility._Calibration`) decides ties on the predicted
utilities it computes, ``fl(fl(w_x x) + fl(w_z z))`` elementwise for two classes (values within
``tie_tol = 4 C eps`` are one), and scans a utility in the order of ``x`` where that order
sorts it.  This module answers a utility only where it can *prove* that the engine takes that
order and has the same tie groups; every other utility is left to the engine (``ok`` false).
Where it answers, the value differs from the engine's only by the rounding of the two ways of
summing (each within ``(2 n + 2) eps`` of the exact sums: tests/test_uc_two.py), and the
worst interval is the engine's unless two intervals' deviations are equal to that rounding.

The proof, for a utility with ``D = w_x - w_z != 0`` (``D = 0``: a constant predicted utility,
left to the engine).  Let ``delta`` bound the rows' defects ``|x + z - 1|`` (computed exactly,
by Knuth's two-sum) and ``e_V = gamma_2 max(|w_x|, |w_z|) (1 + delta)`` bound the rounding of
one predicted utility.  Two samples' computed predicted utilities then differ from
``D (x' - x)`` by at most ``eta = 2 e_V + 2 |w_z| delta``.  For each gap ``g = x_{r+1} - x_r``
between neighbours in the order of ``x`` (the subtraction's own rounding allowed for):

- ``|D| g > eta``: the computed values increase in the direction of ``D``; identical rows
  (both columns equal) give equal values; the other gaps below ``eta / |D|`` are checked on
  the computed values.  So the order of ``x`` (reversed if ``D < 0``) sorts the utility, and
  the engine takes it;
- ``|D| g > tie_tol + eta``: a boundary between tie groups; ``|D| g < tie_tol - eta``: not
  one; in between (*at the tolerance*), the computed values decide, as in the engine.

Each utility's extremes of ``S`` are found among the boundaries whose ``X`` is within a
window of ``X``'s extreme over the sure boundaries (``S_j`` is within ``|w_z| max|X + Z|``
plus rounding of ``D X_j``), and among its boundaries at the tolerance, compared directly.
The gaps to check are found by binary search in the gaps sorted once; a utility with more
than :data:`MAX_CHECKED` of them, or more than :data:`MAX_CANDIDATES` boundaries in a
window, goes to the engine.
"""

from __future__ import annotations

import numpy as np

_U = float(np.finfo(np.float64).eps) / 2           # unit roundoff
_GAMMA2 = 2 * _U / (1 - 2 * _U)

#: Gaps checked on the computed predicted utilities at most, per utility (more: the engine).
MAX_CHECKED = 4096

#: Boundaries near a running sum's extreme evaluated per utility at most (more: the engine;
#: it takes many boundaries with equal running sums, rare with continuous data).
MAX_CANDIDATES = 64

#: Positions kept at each end of the order of ``X`` (where the extremes are searched).
_END = 8192

#: Positions per run of :attr:`TwoColumns.run_max`.
_RUN = 256


class TwoColumns:
    """The shared running sums of one pair of columns, in the order ``hint`` of ``x``.

    Parameters
    ----------
    x, z : ndarray, shape (n,)
        The two columns in input order.
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
        self.Emax = float(np.abs(self.X + self.Z).max()) * (1 + 4 * _U)   # >= |X_j + Z_j|
        self.Bmax = float(max(np.abs(self.X).max(), np.abs(self.Z).max()))
        # G[j]: the gap before position j (between rows j - 1 and j); the ends always count
        self.G = np.full(n + 1, np.inf)
        self.G[1:n] = np.diff(xs)
        same = (xs[1:] == xs[:-1]) & (zs[1:] == zs[:-1])      # identical rows: equal values
        self.checkable = np.flatnonzero(~same) + 1
        # the largest gap of each run of _RUN positions: with them, the nearest gap above a
        # threshold is found in O(_RUN + distance / _RUN) (see _sure)
        pad = np.full(-(-(n + 1) // _RUN) * _RUN, -np.inf)
        pad[:n + 1] = self.G
        self.run_max = pad.reshape(-1, _RUN).max(axis=1)
        # the positions that can be boundaries (a gap of 0 never is: its rows' values differ
        # by at most eta < tie_tol) with the largest and the smallest X, each end in order
        # from the extreme, and the running maximum of their gaps (the first sure boundary
        # from either end is one binary search)
        can = np.flatnonzero(self.G > 0)
        self.ends = [self._end(can, top) for top in (True, False)]
        self.Xscale = float(np.abs(self.X).max())

    def _end(self, can, top: bool):
        """``(positions, X, gaps, running maximum of the gaps, beyond)``: the ``_END``
        positions of ``can`` with the largest (``top``) or smallest ``X``, from the extreme
        inwards; every position of ``can`` left out has a key (``-X`` at the top, ``X`` at the
        bottom) at least ``beyond``."""
        key = -self.X[can] if top else self.X[can]
        if can.size > _END:
            part = np.argpartition(key, _END - 1)[:_END]
            beyond = float(np.max(key[part]))
            can = can[part]
            key = key[part]
        else:
            beyond = np.inf
        order = np.argsort(key, kind="stable")
        pos = can[order]
        gaps = self.G[pos]
        return pos, self.X[pos], gaps, np.maximum.accumulate(gaps), beyond

    def scan(self, wx, wz, tie_tol: float) -> "TwoColumnResult":
        """The estimate of each utility ``(wx[m], wz[m])`` that the proof admits."""
        M, n = wx.size, self.n
        D = wx - wz
        absD = np.abs(D)
        wmax = np.maximum(np.abs(wx), np.abs(wz))
        eta = (2 * _GAMMA2 * wmax * (1 + self.delta) + 2 * np.abs(wz) * self.delta) \
            * (1 + 2 * _U)
        res = TwoColumnResult(M)
        ok = (absD > 0) & (eta < tie_tol)
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return res
        wx, wz, D, absD, eta = wx[idx], wz[idx], D[idx], absD[idx], eta[idx]
        sure = (tie_tol + eta) / (absD * (1 - _U)) * (1 + 4 * _U)     # gap above: a boundary
        tied = (tie_tol - eta) / (absD * (1 + _U)) * (1 - 4 * _U)     # gap at most: no boundary
        order_sure = eta / (absD * (1 - _U)) * (1 + 4 * _U)           # gap above: in order
        # the gaps that need a check (below ``sure``, rows not identical), sorted
        small = self.checkable[self.G[self.checkable] <= sure.max()]
        check_pos = small[np.argsort(self.G[small], kind="stable")]
        gaps = self.G[check_pos]
        c_order = np.searchsorted(gaps, order_sure, "right")
        c_tied = np.searchsorted(gaps, tied, "right")
        c_sure = np.searchsorted(gaps, sure, "right")
        checks = c_order + np.maximum(c_sure - np.maximum(c_tied, c_order), 0)
        up = D > 0
        rho = np.abs(wz) * self.Emax + 3 * _U * (np.abs(wx) + np.abs(wz)) * self.Bmax
        window = 2 * rho / absD * (1 + 8 * _U) + 4 * _U * self.Xscale
        top, top_ok = self._extreme_sure(sure, window, wx, wz, up, from_top=True)
        bottom, bottom_ok = self._extreme_sure(sure, window, wx, wz, up, from_top=False)
        jmax = np.where(up, top, bottom)
        jmin = np.where(up, bottom, top)
        good = top_ok & bottom_ok & (checks <= MAX_CHECKED)
        for r in np.flatnonzero(good & (checks > 0)).tolist():
            pos = np.concatenate([check_pos[:c_order[r]],
                                  check_pos[max(c_tied[r], c_order[r]):c_sure[r]]])
            found = self._checked(pos, wx[r], wz[r], bool(up[r]), tied[r], sure[r], tie_tol)
            if found is None:
                good[r] = False
            elif found.size:                            # boundaries at the tolerance
                S = wx[r] * self.X[found] + wz[r] * self.Z[found]
                hit_max, hit_min = found[S == S.max()], found[S == S.min()]
                first = (lambda hit: int(hit.min())) if up[r] else (lambda hit: int(hit.max()))
                jmax[r] = self._better(wx[r], wz[r], first(hit_max), jmax[r], bool(up[r]), True)
                jmin[r] = self._better(wx[r], wz[r], first(hit_min), jmin[r], bool(up[r]), False)
        keep = np.flatnonzero(good)
        members = idx[keep]
        wx, wz, up, jmax, jmin = wx[keep], wz[keep], up[keep], jmax[keep], jmin[keep]
        smax = wx * self.X[jmax] + wz * self.Z[jmax]
        smin = wx * self.X[jmin] + wz * self.Z[jmin]
        values = smax - smin
        empty = values <= 0
        lo = np.where(empty, 0, np.minimum(jmax, jmin))
        hi = np.where(empty, 0, np.maximum(jmax, jmin))
        first = np.minimum(lo, n - 1)                   # the interval's ends in the order of x
        last = np.maximum(hi - 1, 0)
        at_lo = np.where(up, first, last)               # ...and in the order of v
        at_hi = np.where(up, last, first)
        lower = wx * self.xs[at_lo] + wz * self.zs[at_lo]
        upper = wx * self.xs[at_hi] + wz * self.zs[at_hi]
        res.ok[members] = True
        res.values[members] = np.maximum(values, 0.0)
        res.lower[members] = np.where(empty, np.nan, lower)
        res.upper[members] = np.where(empty, np.nan, upper)
        res.sign[members] = np.where(empty, 0, np.where(jmax > jmin, 1, -1))
        res.lo[members] = lo
        res.hi[members] = hi
        return res

    def _extreme_sure(self, sure, window, wx, wz, up, from_top: bool):
        """Per utility, the position of ``S``'s extreme among its sure boundaries (gap above
        ``sure``) at ``X``'s top (``from_top``) or bottom: the largest ``S`` where that end
        holds the maximum (``D > 0`` at the top, ``D < 0`` at the bottom), else the smallest;
        and whether the window held at most :data:`MAX_CANDIDATES` positions."""
        pos_end, X_end, G_end, reach, beyond = self.ends[0 if from_top else 1]
        N = pos_end.size
        key = -X_end if from_top else X_end             # ascending from the extreme inwards
        first = np.searchsorted(reach, sure, "right")   # the first sure boundary
        found = first < N
        first = np.minimum(first, N - 1)
        limit = key[first] + window                     # the window: key up to this
        width = np.searchsorted(key, limit, "right") - first
        found &= limit < beyond                         # ...held entirely by this end
        steps = np.arange(int(min(width.max(), MAX_CANDIDATES)))
        at = np.minimum(first[:, None] + steps[None, :], N - 1)
        valid = (steps[None, :] < width[:, None]) & (G_end[at] > sure[:, None])
        pos = pos_end[at]
        S = wx[:, None] * self.X[pos] + wz[:, None] * self.Z[pos]
        largest = up == from_top
        S = np.where(valid, S, np.where(largest, -np.inf, np.inf)[:, None])
        best = np.where(largest, S.max(axis=1), S.min(axis=1))
        hit = valid & (S == best[:, None])
        # equal extremes: the first in the order of v, as the engine's argmax / argmin
        chosen = np.where(up, np.where(hit, pos, np.iinfo(np.int64).max).min(axis=1),
                          np.where(hit, pos, -1).max(axis=1))
        return chosen, found & (width <= MAX_CANDIDATES)

    def _checked(self, pos, wx, wz, up: bool, tied: float, sure: float, tie_tol: float):
        """The positions ``pos`` (sorted by gap) checked on the computed predicted utilities
        (the engine's arithmetic): the positions at the tolerance whose step in the direction
        of ``D`` exceeds ``tie_tol`` (the extra boundaries), or ``None`` where that cannot be
        decided this way.

        A step against the direction of ``D`` (the rows' defects outweigh a gap below
        ``eta / |D|``) is at most ``eta < tie_tol`` long.  The engine, whose order check then
        fails, sorts the utility; its groups are the same sets: the blocks between sure
        boundaries do not interleave, and a block whose steps are all within ``tie_tol`` is
        one group in any order.  A block that holds both such a step and an extra boundary
        is sorted here as the engine sorts it (:meth:`_block_splits`)."""
        below = wx * self.xs[pos - 1] + wz * self.zs[pos - 1]
        above = wx * self.xs[pos] + wz * self.zs[pos]
        step = above - below if up else below - above
        extra = step > tie_tol
        if np.any(extra & (self.G[pos] <= tied)):      # the bound says no: do not answer
            return None
        found = np.sort(pos[extra])
        back = np.sort(pos[step < 0])
        if not (found.size and back.size):
            return found
        blocks = {}
        for r in back.tolist():
            first = self._sure(r - 1, sure, -1)
            if first in blocks:
                continue
            last = self._sure(r + 1, sure, +1)
            if last - first > MAX_CHECKED:
                return None
            lo, hi = np.searchsorted(found, [first + 1, last]).tolist()
            if lo < hi:                                 # an extra boundary in the block
                blocks[first] = (last, lo, hi)
        parts, at = [], 0
        for first in sorted(blocks):
            last, lo, hi = blocks[first]
            splits = self._block_splits(first, last, wx, wz, up, tie_tol)
            if splits is None:
                return None
            parts += [found[at:lo], splits]
            at = hi
        parts.append(found[at:])
        return np.concatenate(parts)

    def _sure(self, p: int, sure: float, direction: int) -> int:
        """The first position from ``p`` on in ``direction`` whose gap exceeds ``sure`` (the
        ends' gaps are infinite), skipping whole runs of :attr:`run_max`."""
        G, n = self.G, self.n
        while True:
            if G[p] > sure:
                return p
            run = p // _RUN
            if self.run_max[run] <= sure:               # nothing in this run: jump over it
                p = run * _RUN - 1 if direction < 0 else (run + 1) * _RUN
            else:
                p += direction
            p = min(max(p, 0), n)

    def _block_splits(self, first, last, wx, wz, up, tie_tol):
        """The tie-group boundaries of the rows ``first .. last - 1`` as the engine finds them
        (their computed values sorted, split where a step exceeds ``tie_tol``), as positions,
        or ``None`` where a group is not a run of the order of ``x``."""
        V = wx * self.xs[first:last] + wz * self.zs[first:last]
        if not up:
            V = -V                                      # exact: ascending = the order of x
        order = np.argsort(V, kind="stable")
        cut = np.flatnonzero(np.diff(V[order]) > tie_tol) + 1
        # a cut after k sorted values is a run of the order of x iff they are its first k rows
        if np.any(np.maximum.accumulate(order)[cut - 1] != cut - 1):
            return None
        return first + cut

    def _better(self, wx, wz, j, k, up: bool, largest: bool) -> int:
        """``j`` or ``k``, whichever holds the larger (``largest``) or smaller ``S``; equal:
        the first in the order of v (the smaller position if ``D > 0``)."""
        sj = wx * self.X[j] + wz * self.Z[j]
        sk = wx * self.X[k] + wz * self.Z[k]
        if sj != sk:
            return j if (sj > sk) == largest else k
        return min(j, k) if up else max(j, k)


class TwoColumnResult:
    """What :meth:`TwoColumns.scan` found: per utility whether it answered (``ok``) and the
    arrays of :func:`calnotes.theory.utility._scan_sorted` (``lo, hi`` are positions in the order of
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
