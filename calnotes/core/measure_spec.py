"""The binned measures, each specified once: the one place that says what a binned measure is.

A binned measure of a binary column problem is a function of its bins' signed sums
``S_j = sum_{i in B_j} (p_i - y_i)``.  The binned measures of :func:`calnotes.evaluate`'s rows
and of :func:`calnotes.binned_ece`, :func:`calnotes.l1_qece` and :func:`calnotes.l2_qece` are
each one of two forms of the bins' absolute moments ``E|S_j|^p`` (``E`` the exact mean over the
orders of tied predictions where ``ties="average"`` splits a tie group; otherwise just
``|S_j|^p``):

* the ``lp``-QECE form (truthfulness paper, Def 2.5), :meth:`BinnedMeasure.qece`:
  ``sum_j E|S_j|^p / n^p``;
* the ``lp`` binned ECE, :meth:`BinnedMeasure.lp_ece`:
  ``(sum_j |B_j|^(1-p) E|S_j|^p / n)^(1/p)`` -- the bins' gaps ``|S_j| / |B_j|`` weighted by
  their sizes (empty bins add nothing).

With ``p = 1`` both are ``sum_j E|S_j| / n``.  A :class:`BinnedMeasure` holds the form, the
binning and the exponent, and from them states everything the evaluation engine needs:

* its value from bin statistics (:meth:`BinnedMeasure.of_stats`) and from the positive counts
  of the calibrated null's draws (:meth:`BinnedMeasure.value`, the same formula): the public
  functions of :mod:`calnotes.core.measures`, the rows, the null, the bootstrap and the
  out-of-core pass all call these;
* its calibrated reference (:attr:`BinnedMeasure.reference`): ``"exact-abs"`` (``p = 1``: the
  exact sums of ``E|a_j - K_j|`` over Poisson-binomial laws, or their folded-normal
  approximation beyond a work budget), ``"exact-variance"`` (the ``l2``-QECE: ``E S_j = 0``, so
  its mean is ``sum_i p_i (1 - p_i) / n^2``) or ``"monte-carlo"`` (every other measure: the
  mean of the calibrated null's draws -- a power mean such as the ``l3`` ECE has no exact
  reference);
* its p-value: the exact bracket of a sum of independent bin terms
  (:meth:`BinnedMeasure.exact_sum_form`; every measure here is, or is a monotone function of,
  such a sum) where the engine has independent bins (one column, no straddling tie groups),
  else Monte Carlo; and whether a Chernoff bound (:attr:`BinnedMeasure.chernoff`: Bennett for
  ``p = 1``, Hoeffding for the ``l2``-QECE) may decide it first.

:data:`BINNED_MEASURES` is the table of the measures :func:`calnotes.evaluate` reports, by row
name.  Adding an entry adds a row everywhere; an entry that is not a :class:`BinnedMeasure` is
refused by :func:`measure_spec` with its name.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["BinnedMeasure", "BINNED_MEASURES", "measure_spec"]

_REFERENCES = ("exact-abs", "exact-variance", "monte-carlo")


@dataclass(frozen=True)
class BinnedMeasure:
    """One binned calibration measure: its form, binning and exponent, and what follows.

    Build one with :meth:`qece` or :meth:`lp_ece`; they choose :attr:`reference` and
    :attr:`chernoff` from the form, and the constructor refuses a strategy the form does not
    support (naming the measure).

    Attributes
    ----------
    name : str
        The row's name in the report.
    binning : {"width", "mass"}
        Equal-width or equal-mass bins (:mod:`calnotes.core.binning`).
    power : int or float
        The exponent ``p >= 1``.
    size_weighted : bool
        ``True``: the ``lp`` binned ECE ``(sum_j |B_j|^(1-p) E|S_j|^p / n)^(1/p)``;
        ``False``: the ``lp``-QECE form ``sum_j E|S_j|^p / n^p``.
    reference : {"exact-abs", "exact-variance", "monte-carlo"}
        How the calibrated reference (the measure's mean under the calibrated null) is found.
    chernoff : bool
        Whether :func:`calnotes._engine.significance.tail_bound` bounds this measure's tail (Bennett
        for ``p = 1``, Hoeffding for the ``l2``-QECE).
    exact_p_value : bool, default True
        Whether a one-column row without straddling tie groups gets the exact p-value bracket
        of :meth:`exact_sum_form`; otherwise (and for every other row) the p-value is Monte
        Carlo.

    Examples
    --------
    >>> l3 = BinnedMeasure.lp_ece("l3-ECE", 3, "mass")
    >>> l3.reference, l3.chernoff
    ('monte-carlo', False)
    >>> # two bins of 2 rows, S = (1, -0.5), n = 4: ((1 + 0.125) / 2 ** 2 / 4) ** (1 / 3)
    >>> float(round(l3.value(np.array([[1.0, 0.125]]), np.array([[2.0, 2.0]]), 4)[0], 12))
    0.412740906112
    """

    name: str
    binning: str
    power: int | float
    size_weighted: bool
    reference: str
    chernoff: bool
    exact_p_value: bool = True

    def __post_init__(self):
        where = f"binned measure {self.name!r}"
        if self.binning not in ("width", "mass"):
            raise ValueError(f"{where}: binning must be 'width' or 'mass', got {self.binning!r}")
        p = self.power
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not np.isfinite(p) \
                or p < 1:
            raise ValueError(f"{where}: power must be a number >= 1, got {p!r}")
        if self.reference not in _REFERENCES:
            raise ValueError(f"{where}: reference must be one of {_REFERENCES},"
                             f" got {self.reference!r}")
        if self.reference == "exact-abs" and p != 1:
            raise ValueError(f"{where}: the exact-abs reference (sums of E|a - K|) needs"
                             f" power 1, got {p!r}")
        if self.reference == "exact-variance" and (p != 2 or self.size_weighted):
            raise ValueError(f"{where}: the exact-variance reference (sum p (1 - p) / n^2)"
                             " holds for the l2-QECE form only (power 2, not size-weighted)")
        if self.chernoff and not (p == 1 or (p == 2 and not self.size_weighted)):
            raise ValueError(f"{where}: a Chernoff tail bound exists for power 1 (Bennett) and"
                             " the l2-QECE form (Hoeffding) only")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def qece(cls, name: str, power, binning: str = "mass") -> "BinnedMeasure":
        """The ``lp``-QECE form ``sum_j E|S_j|^p / n^p`` (exact references for ``p = 1, 2``).

        Examples
        --------
        >>> BinnedMeasure.qece("l2-QECE", 2).reference
        'exact-variance'
        """
        power = _exponent(power)
        reference = {1: "exact-abs", 2: "exact-variance"}.get(power, "monte-carlo")
        return cls(name, binning, power, False, reference, power in (1, 2))

    @classmethod
    def lp_ece(cls, name: str, power, binning: str) -> "BinnedMeasure":
        """The ``lp`` binned ECE ``(sum_j |B_j|^(1-p) E|S_j|^p / n)^(1/p)`` (an exact reference
        for ``p = 1`` only: for ``p > 1`` the root of a sum has no exact mean).

        Examples
        --------
        >>> BinnedMeasure.lp_ece("ECE", 1, "width").reference
        'exact-abs'
        """
        power = _exponent(power)
        return cls(name, binning, power, True, "exact-abs" if power == 1 else "monte-carlo",
                   power == 1)

    # ------------------------------------------------------------------ the formula
    def bin_terms(self, moments: np.ndarray, count: np.ndarray) -> np.ndarray:
        """Each bin's term: ``E|S_j|^p`` (``moments``), times ``|B_j|^(1-p)`` for a size-weighted
        measure with ``p != 1`` (0 for an empty bin); ``count`` broadcasts against ``moments``."""
        if not self.size_weighted or self.power == 1:
            return moments
        filled = count > 0
        size = np.where(filled, count, 1.0)
        return np.where(filled, size ** (1.0 - self.power) * moments, 0.0)

    def from_sum(self, total: np.ndarray, n: int) -> np.ndarray:
        """The value from the sum over bins of :meth:`bin_terms`."""
        p = self.power
        if not self.size_weighted:
            return total / n ** p if p != 1 else total / n
        return total / n if p == 1 else (total / n) ** (1.0 / p)

    def value(self, moments: np.ndarray, count: np.ndarray, n: int, bin_sum=None) -> np.ndarray:
        """The measure from its bins' moments ``E|S_j|^p`` (bins on the last axis): the one
        formula of every path.  ``bin_sum`` sums over the bins (default ``sum(axis=-1)``).

        Examples
        --------
        >>> BinnedMeasure.qece("l2-QECE", 2).value(np.array([[4.0, 1.0]]), None, 10).tolist()
        [0.05]
        """
        terms = self.bin_terms(moments, count)
        total = terms.sum(axis=-1) if bin_sum is None else bin_sum(terms)
        return self.from_sum(total, n)

    def of_stats(self, stats, first: np.ndarray | None = None) -> np.ndarray:
        """The measure of every column of ``stats`` (a :class:`calnotes._engine.bin_stats.BinStats`),
        shape ``(columns,)``; ``first``, where given, is ``stats.abs_moment(1)`` computed
        already (used when ``power`` is 1)."""
        if self.power == 1 and first is not None:
            moments = first
        else:
            moments = stats.abs_moment(self.power)
        return self.value(moments, stats.count, stats.n)

    def exact_sum_form(self, t: float, count: np.ndarray, n: int) -> tuple:
        """``(threshold, weights)`` with ``value >= t`` exactly when
        ``sum_j w_j |S_j|^p / n^p >= threshold`` (``w_j = weights[j]``, all 1 where ``weights``
        is ``None``), for :func:`calnotes._engine.significance.exact_tail_bounds`: the measure is, or
        is an increasing function of, a sum of independent bin terms.  ``count``: the bins'
        sizes of one column.

        Examples
        --------
        >>> t, w = BinnedMeasure.lp_ece("l3-ECE", 3, "mass").exact_sum_form(0.5, np.array([2., 4.]), 6)
        >>> t, w.tolist()
        (0.125, [9.0, 2.25])
        """
        p = self.power
        if not self.size_weighted or p == 1:
            return t, None
        count = np.asarray(count, dtype=np.float64)
        filled = count > 0
        weights = np.where(filled, (n / np.where(filled, count, 1.0)) ** (p - 1.0), 0.0)
        return t ** p, weights


def _exponent(p):
    """``p`` as an ``int`` where it is a whole number (``n ** 2`` stays an exact integer)."""
    if isinstance(p, numbers.Real) and not isinstance(p, bool) and float(p).is_integer():
        return int(p)
    return p


#: The measures of the one-column problems' rows of :func:`calnotes.evaluate`, by name.
ECE = BinnedMeasure.lp_ece("ECE", 1, "width")
L1_QECE = BinnedMeasure.qece("l1-QECE", 1)
L2_QECE = BinnedMeasure.qece("l2-QECE", 2)

#: The binned measures of :func:`calnotes.evaluate`'s rows, in the report's order, by name.
BINNED_MEASURES = {spec.name: spec for spec in (ECE, L1_QECE, L2_QECE)}


def measure_spec(name: str) -> BinnedMeasure:
    """The :class:`BinnedMeasure` of row ``name`` in :data:`BINNED_MEASURES`, checked.

    Examples
    --------
    >>> measure_spec("l1-QECE").binning
    'mass'
    """
    try:
        spec = BINNED_MEASURES[name]
    except KeyError:
        raise KeyError(f"measure {name!r}: not in BINNED_MEASURES"
                       f" (known: {sorted(BINNED_MEASURES)})") from None
    if not isinstance(spec, BinnedMeasure):
        raise TypeError(f"measure {name!r}: BINNED_MEASURES entries must be BinnedMeasure"
                        f" (BinnedMeasure.qece or BinnedMeasure.lp_ece), got {spec!r}")
    return spec
