r"""Answer checkers for the book's exercises: feedback without printing the solution.

``check(label, answer)`` compares a student's answer to an exercise of the book (its
``:label:``) with the right answer and returns a :class:`Verdict`: right or not yet, with a
hint for every part that is wrong.  The verdict never contains the right answer, and the right
answers are not stored in this file: each is *computed* when first needed, from the library
(``calnotes.l2_qece``, ``calnotes.expected_qece``, ``calnotes.theory.symbolic``, ...) applied to the
exercise's data, or by sympy from the exercise's setting.  (A determined reader can of course
call the private functions below; the checker is for feedback, not for exams.)

Kinds of answers, and how they are compared
    *numbers*: relative tolerance :data:`RTOL` (answers rounded to three significant digits
    pass); an exact zero with the absolute tolerance stated at the exercise.  *Integers*:
    exactly.  *Expressions*: a sympy expression, or a string that sympy parses, in the
    symbols the exercise names; equal if ``sympy.simplify(a - b) == 0``, else compared at
    seeded random points of the exercise's domain with :data:`EXPR_RTOL` (this also settles
    ``Abs`` and integer divisibility, where ``simplify`` gives up).  *Arrays*: ``np.allclose``
    with the tolerance stated at the exercise.  A few exercises ask for a *construction* (a
    counterexample, a population attaining a bound): the checker verifies the property of the
    student's construction, so any valid one is right.

An exercise with several parts takes a tuple in the order :func:`describe` gives, or a dict
with some of the part names (the other parts are reported as not checked).

Exercises whose answer is a proof or an explanation have no checker; :data:`NO_CHECKER` lists
them with the reason.  The course edition of the book (``make course``) replaces every
solution by a box that shows the call for the exercise (:func:`describe`).

Examples
--------
>>> from calnotes.book.exercises import check, labels
>>> "ex-001-projection" in labels()
True
>>> v = check("ex-001-projection", [0.8, 0.3, 0.2])
>>> bool(v)
False
>>> print(v)                                      # doctest: +ELLIPSIS
ex-001-projection: not yet. Hint: this is p + eta e_c itself; it sums to 1.3, ...
"""

from __future__ import annotations

import itertools
import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Callable

import numpy as np
import sympy as sp

from ._answers import parse_expression

__all__ = ["check", "labels", "describe", "note", "Verdict", "NO_CHECKER", "RTOL", "EXPR_RTOL",
           "CHECKER"]

#: Relative tolerance for numbers.  Rounding to ``d`` significant digits moves a number by at
#: most ``5 * 10**-d`` of itself, so 5e-3 accepts an answer given to three significant digits
#: (the book's exercises mostly ask for hand computations); the plausible wrong answers of
#: every exercise (a forgotten factor 1/n, a swapped pair, an off-by-one bound) are off by
#: 10% or more, so they are never accepted.
RTOL = 5e-3

#: Relative tolerance when an expression is compared numerically at random points.  Both
#: sides are evaluated in float64 from the same inputs (rounding error about 1e-15 for the
#: short expressions of the book); an inequivalent expression differs by O(1) at generic
#: random points, so 1e-9 separates the two by six orders of magnitude either way.
EXPR_RTOL = 1e-9

#: Points at which expressions are compared (fixed seed: the same verdict every time).
_N_POINTS = 12
_SEED = 20260


# ---------------------------------------------------------------------------------------------
# verdicts
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """The result of :func:`check`: right or not, with hints; never the right answer.

    Attributes
    ----------
    label : str
        The exercise.
    correct : bool
        Every part given and right.  ``bool(verdict)`` is the same.
    parts : dict
        ``{part name: True (right) / False (wrong) / None (not given)}``.
    hints : dict
        ``{part name: hint}`` for the parts that are wrong or not given.
    problem : str
        Why the answer could not be read (a string where a tuple of parts was asked, a tuple
        of the wrong length, an unknown part name); empty otherwise.
    """

    label: str
    correct: bool
    parts: dict
    hints: dict
    problem: str = ""

    def __bool__(self) -> bool:
        return self.correct

    @property
    def status(self) -> str:
        """``"right"``, ``"not yet"`` (some part wrong), ``"not answered"`` (no part given) or
        ``"unreadable"`` (the answer, or a part of it, has the wrong form: a string that is
        not a number or does not parse, a tuple of the wrong length; :attr:`problem` says
        why)."""
        if self.correct:
            return "right"
        if self.problem:
            return "unreadable"
        if all(v is None for v in self.parts.values()):
            return "not answered"
        return "not yet"

    def __str__(self) -> str:
        head = f"{self.label}: {'right' if self.correct else 'not yet'}."
        if self.problem:
            text = f"{head} Could not read your answer: {self.problem}"
            read = [f"  {name}: {'right' if ok else 'wrong'}"
                    + (f" -- {self.hints[name]}" if name in self.hints else "")
                    for name, ok in self.parts.items() if ok is not None and
                    (ok or self.hints.get(name, "") not in self.problem)]
            return "\n".join([text] + read) if len(self.parts) > 1 else text
        if len(self.parts) == 1:
            (name,) = self.parts
            return head if self.correct else f"{head} Hint: {self.hints[name]}"
        lines = [head]
        for name, ok in self.parts.items():
            state = {True: "right", False: "wrong", None: "not checked"}[ok]
            line = f"  {name}: {state}"
            if name in self.hints:
                line += f" -- {self.hints[name]}"
            lines.append(line)
        return "\n".join(lines)

    __repr__ = __str__


# ---------------------------------------------------------------------------------------------
# parts: each turns an answer into (right?, hint)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Part:
    name: str
    give: str                                   # what to give (shown in the course edition)
    judge: Callable[[object], tuple[bool, str]]


@dataclass(frozen=True)
class _Exercise:
    label: str
    parts: tuple
    note: str = ""                              # what the checker does not check


def _as_number(answer):
    """A float from an int, float, Fraction, numpy or sympy number, or a string sympy parses."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, str):
        answer = parse_expression(answer)
        if answer is None:
            return None
    if isinstance(answer, sp.Basic):
        if answer.free_symbols:
            return None
        try:
            value = complex(answer.evalf())
        except (TypeError, ValueError, OverflowError):
            return None
        if not (math.isfinite(value.real) and abs(value.imag) < 1e-300):
            return None                 # complex, or beyond float (10**400)
        return value.real
    if isinstance(answer, np.ndarray) and answer.size == 1:
        answer = answer.item()
    if isinstance(answer, (numbers.Real, Fraction)):
        try:
            value = float(answer)
        except OverflowError:           # 10**400: a number, but beyond float
            return None
        return value if math.isfinite(value) else None
    return None


def _close(x: float, y: float, rtol: float, atol: float) -> bool:
    return abs(x - y) <= atol + rtol * abs(y)


def _number(name, give, expected, hint, *, rtol=RTOL, atol=0.0, mistakes=()):
    """A number part: ``expected()`` computes the value; ``mistakes``: ``(value(), hint)``."""
    def judge(answer):
        x = _as_number(answer)
        if x is None:
            return None, f"give a number ({give})"
        if _close(x, expected(), rtol, atol):
            return True, ""
        for wrong, why in mistakes:
            if _close(x, wrong(), rtol, atol):
                return False, why
        return False, hint
    return _Part(name, give, judge)


def _integer(name, give, expected, hint, *, mistakes=()):
    def judge(answer):
        if isinstance(answer, np.ndarray) and answer.size == 1:
            answer = answer.item()
        if isinstance(answer, str):
            parsed = parse_expression(answer)
            if isinstance(parsed, sp.Integer):
                answer = int(parsed)
        if isinstance(answer, numbers.Integral) and not isinstance(answer, bool):
            x = int(answer)             # exact, however large (10**400 is "not yet")
        else:
            x = _as_number(answer)
            if x is None:
                return None, f"give an integer ({give})"
            if x != int(x):
                return False, f"give an integer ({give})"
        if int(x) == expected():
            return True, ""
        for wrong, why in mistakes:
            if int(x) == wrong():
                return False, why
        return False, hint
    return _Part(name, give, judge)


def _array(name, give, expected, hint, *, atol, mistakes=()):
    def judge(answer):
        try:
            x = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError):
            return None, f"give an array of numbers ({give})"
        want = expected()
        if x.shape != want.shape:
            return False, f"give an array of shape {want.shape} ({give})"
        if np.allclose(x, want, rtol=0, atol=atol):
            return True, ""
        for wrong, why in mistakes:
            if np.allclose(x, wrong(), rtol=0, atol=atol):
                return False, why
        return False, hint
    return _Part(name, give, judge)


def _as_expression(answer, symbols: dict):
    """A sympy expression in the exercise's symbols (matched by name or alias), or None."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, str):
        answer = parse_expression(answer, symbols)
        if answer is None:
            return None
    elif isinstance(answer, (numbers.Real, Fraction)):
        answer = sp.nsimplify(answer) if isinstance(answer, Fraction) else sp.sympify(answer)
    if not isinstance(answer, sp.Expr):
        return None
    rename = {s: symbols[s.name] for s in answer.free_symbols if s.name in symbols}
    return answer.xreplace(rename)


def _unparsed(answer, hint: str) -> str:
    """The hint for an expression answer that is not one; a string that does not parse is
    named as such (an unclosed bracket, a stray operator)."""
    if isinstance(answer, str):
        return (f"could not read {answer!r} as an expression (check the brackets and the"
                f" operators: ** for powers, * for products); {hint}")
    return hint


def _evaluate(expr, point: dict):
    try:
        value = complex(expr.xreplace(point).evalf())
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if not (math.isfinite(value.real) and abs(value.imag) <= 1e-12 * max(1.0, abs(value.real))):
        return None
    return value.real


def _expression(name, give, symbols, reference, sample, hint, *, mistakes=()):
    """An expression part.

    ``symbols``: ``{name or alias: Symbol}``; ``reference()``: a sympy expression in them, or
    a function ``point -> float`` (computed by the library); ``sample(rng)``: a point of the
    exercise's domain, ``{Symbol: value}`` (other keys are extra data for the reference);
    ``mistakes``: ``(reference-like(), hint)`` pairs for known wrong answers.
    """
    allowed = set(symbols.values())

    def target_value(target, point):
        if isinstance(target, sp.Expr):
            return _evaluate(target, _sympy_point(point))
        return float(target(point))

    def agree(expr, target, transform=lambda v: v):
        rng = np.random.default_rng(_SEED)
        for _ in range(_N_POINTS):
            point = sample(rng)
            mine, want = _evaluate(expr, _sympy_point(point)), target_value(target, point)
            if mine is None or want is None \
                    or not _close(transform(mine), transform(want), EXPR_RTOL, 1e-13):
                return False
        return True

    def judge(answer):
        expr = _as_expression(answer, symbols)
        if expr is None:
            return None, _unparsed(answer, f"give a sympy expression or a string sympy can"
                                            f" parse ({give})")
        if expr.has(sp.pi) and "pi" in symbols:
            return False, ("your expression contains the constant sympy.pi; use the symbol"
                           " sympy.Symbol('pi') (in a string, 'pi' is the symbol)")
        stray = sorted(s.name for s in expr.free_symbols - allowed)
        if stray:
            names = sorted({s.name for s in allowed})
            return False, f"unknown symbol(s) {stray}: use only {names}"
        ref = reference()
        if isinstance(ref, sp.Expr) and sp.simplify(expr - ref) == 0:
            return True, ""
        if agree(expr, ref):
            return True, ""
        for wrong, why in mistakes:
            if agree(expr, wrong()):
                return False, why
        if agree(expr, ref, transform=abs):
            return False, "right up to sign: check where your expression is negative"
        return False, hint
    return _Part(name, give, judge)


def _sympy_point(point: dict) -> dict:
    """The symbol entries of a sample point as sympy numbers (integers stay integers)."""
    return {s: sp.Integer(int(v)) if isinstance(v, (int, np.integer)) else sp.Float(float(v))
            for s, v in point.items() if isinstance(s, sp.Symbol)}


def _custom(name, give, judge):
    return _Part(name, give, judge)


# ---------------------------------------------------------------------------------------------
# the exercises' data and their right answers (computed, cached)
# ---------------------------------------------------------------------------------------------
# ex-qece-by-hand (Foundations, The measures)
_QH_P = np.array([0.1, 0.2, 0.4, 0.6, 0.7, 0.9])
_QH_Y = np.array([0, 0, 1, 0, 1, 1])


@cache
def _qece_by_hand():
    from ..core.measures import binned_ece, l2_qece
    qece = l2_qece(_QH_Y, _QH_P, 2)
    ece2_sq = binned_ece(_QH_Y, _QH_P, 2, p=2, binning="mass") ** 2
    return qece, ece2_sq, ece2_sq / qece


# ex-ties-by-outcome: four predictions 1/2, fair coins, m = 2
def _exact_expectation(measure, p_true, m):
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=len(p_true)):
        y = np.array(outcome)
        weight = float(np.prod(np.where(y == 1, p_true, 1 - p_true)))
        total += weight * measure(y, p_true, m)
    return total


@cache
def _ties_by_outcome():
    from ..core.measures import l2_qece
    p = np.full(4, 0.5)

    def stable(y, p, m):
        return l2_qece(y, p, m, ties="position")

    def by_outcome(y, p, m):
        order = np.lexsort((y, p))                 # by prediction, then zeros first
        return l2_qece(y[order], p[order], m, ties="position")

    return _exact_expectation(stable, p, 2), _exact_expectation(by_outcome, p, 2)


# ex-constant-qece: truths i/10, n = 10, m = 1
_CQ_T = np.arange(1, 11) / 10


def _constant_qece(c):
    from ..core.expectation import expected_qece
    return expected_qece(np.full(_CQ_T.size, c), _CQ_T, 1, ties="position")


@cache
def _constant_qece_best():
    from scipy.optimize import minimize_scalar
    res = minimize_scalar(_constant_qece, bounds=(0.0, 1.0), method="bounded",
                          options={"xatol": 1e-10})
    return float(res.x), float(_constant_qece(res.x))


# ex-smallest-k: n = 60 coin-flip truths on the first two classes, m = 3, eta = 0.001
def _coin_flip_truth(n, k):
    truth = np.zeros((n, k))
    truth[:, :2] = 0.5
    return truth


def _near_uniform_report(n, k, eta):
    report = np.full((n, k), (1 - (1 / k + eta)) / (k - 1))
    report[:, -1] = 1 / k + eta
    return report


@cache
def _smallest_k():
    from ..core.expectation import expected_qece
    n, m, eta = 60, 3, 1e-3
    for k in range(3, 200):
        truth, lie = _coin_flip_truth(n, k), _near_uniform_report(n, k, eta)
        if (expected_qece(lie, truth, m, aggregation="confidence")
                < expected_qece(truth, truth, m, aggregation="confidence")):
            return k
    raise RuntimeError("no k below 200")           # pragma: no cover


# dom-ex-threshold: act (1) costs a if y = 0, not acting (0) costs b if y = 1
_A, _B = sp.symbols("a b", positive=True)
_P, _Q = sp.symbols("p q", real=True)
_THRESHOLD_SYMBOLS = {"a": _A, "b": _B, "p": _P, "q": _Q}


@cache
def _threshold():
    """tau solving R(0; q) = R(1; q), the risks read off the loss matrix."""
    q = sp.Symbol("q_", positive=True)
    L = sp.Matrix([[0, _B], [_A, 0]])                 # L[action, y]
    risk = [L[act, 0] * (1 - q) + L[act, 1] * q for act in (0, 1)]
    (tau,) = sp.solve(sp.Eq(risk[0], risk[1]), q)
    return sp.simplify(tau)


def _threshold_point(rng):
    a, b = rng.uniform(0.2, 5.0, size=2)
    tau = a / (a + b)
    p = rng.uniform(0.02, 0.98)
    while abs(p - tau) < 0.02:
        p = rng.uniform(0.02, 0.98)
    q = rng.uniform(tau, 1.0) if p <= tau else rng.uniform(0.0, tau)
    return {_A: float(a), _B: float(b), _P: float(p), _Q: float(q)}


def _threshold_divergence(point):
    """d(p, q) of the induced loss, from calnotes.theory.decisions (p, q on different sides)."""
    from ..theory.decisions import DecisionProblem
    from ..core.scores import divergence
    a, b, p, q = (point[s] for s in (_A, _B, _P, _Q))
    loss = DecisionProblem([[0.0, b], [a, 0.0]]).proper_loss()
    return float(divergence(np.array([p]), np.array([q]), loss)[0])


@cache
def _coin_loss_name():
    """The loss of calnotes.core.scores equal to the induced loss of a = b = 1, ties included."""
    from ..theory.decisions import DecisionProblem
    from ..core.scores import PROPER_LOSSES
    p = np.concatenate([np.linspace(0, 1, 101), [0.5, 0.5]])
    P = np.column_stack([1 - p, p])
    induced = DecisionProblem([[0, 1], [1, 0]]).loss_matrix(P)
    (name,) = [n for n, loss in PROPER_LOSSES.items()
               if np.array_equal(np.asarray(loss.matrix(P), dtype=float), induced)]
    return name


def _loss_key(text: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    key = key.removesuffix("loss")
    return {"01": "zero_one", "zeroone": "zero_one", "misclassification": "zero_one",
            "misclassificationerror": "zero_one", "logarithmic": "log", "squared": "brier",
            "quadratic": "brier"}.get(key, key)


def _judge_loss(answer):
    from ..core.scores import PROPER_LOSSES, ProperLoss
    if isinstance(answer, ProperLoss):
        name = answer.name
    elif isinstance(answer, str):
        name = _loss_key(answer)
    else:
        return None, "give a loss of calnotes.core.scores (e.g. calnotes.LOG) or its name"
    if name == _coin_loss_name():
        return True, ""
    if name in PROPER_LOSSES:
        return False, ("with a = b = 1 the induced loss takes only the values 0 and 1;"
                       " which loss of the book does that?")
    return False, f"name one of the losses of calnotes.core.scores: {sorted(PROPER_LOSSES)}"


# dom-ex-miscalibrated: constant c, y ~ Ber(pi), m | n
_C, _PI = sp.symbols("c pi", real=True)
_N, _M = sp.symbols("n m", positive=True, integer=True)
_MISC_SYMBOLS = {"c": _C, "pi": _PI, "π": _PI, "n": _N, "m": _M}


def _misc_point(rng):
    n = int(rng.choice([2, 3, 4, 6, 8, 9, 10, 12]))
    divisors = [m for m in range(1, n + 1) if n % m == 0]
    c, pi = rng.uniform(0.05, 0.95, size=2)
    return {_C: float(c), _PI: float(pi), _N: n, _M: int(rng.choice(divisors))}


def _misc_expectation(point):
    from ..core.expectation import expected_qece
    n, m = int(point[_N]), int(point[_M])
    return expected_qece(np.full(n, point[_C]), np.full(n, point[_PI]), m)


def _misc_agree_m(point):
    """The bin count m at which E[l2-QECE_m] equals (1/n) E[(c - y)^2], found by search."""
    from ..core.expectation import expected_qece
    n, c, pi = int(point[_N]), 0.3, 0.5
    lemma = ((c - pi) ** 2 + pi * (1 - pi)) / n
    hits = [m for m in range(1, n + 1)
            if abs(expected_qece(np.full(n, c), np.full(n, pi), m) - lemma) < 1e-12]
    (m,) = hits
    return m


def _misc_agree_point(rng):
    return {_N: int(rng.integers(2, 13))}


# t1-ex-f4: class-wise l2 cell of f4 (Table 1), from calnotes.theory.symbolic
def _t1_symbols():
    from ..theory.symbolic import table1_symbols
    s = table1_symbols()
    out = {"k": s["k"], "m": s["m"], "n": s["n"]}
    for alias in ("eps3", "epsilon3", "epsilon_3", "varepsilon3", "varepsilon_3", "e3", "ε3",
                  "ε_3", "eps_3"):
        out[alias] = s["eps3"]
    return out


@cache
def _f4_cell():
    from ..theory.symbolic import table1_derived
    return table1_derived()["f4.l2_cw"]


def _f4_point(rng):
    s = _t1_symbols()
    k = int(rng.integers(2, 9))
    return {s["k"]: k, s["m"]: int(rng.integers(1, 20)), s["n"]: int(rng.integers(20, 400)),
            s["eps3"]: float(rng.uniform(0.001, 1 / (k * (k - 1))))}


def _f4_slip():
    s = _t1_symbols()
    k, m, n, e = s["k"], s["m"], s["n"], s["eps3"]
    return 2 * (k - 1) * e ** 2 / (k * m) + (1 - 1 / k) / (k * n)


def _f4_confidence():
    s = _t1_symbols()
    k, m, n, e = s["k"], s["m"], s["n"], s["eps3"]
    return (k - 1) ** 2 * e ** 2 / m + (1 - 1 / k) / (k * n)


# ex-003-mmce-constant: one confidence value, gap delta, kernel a exp(-|r - s| / 0.4)
_KA = sp.Symbol("a", positive=True)
_DELTA = sp.Symbol("delta", real=True)
_MMCE_SYMBOLS = {"a": _KA, "delta": _DELTA, "δ": _DELTA}


def _one_confidence(r, gap):
    """Binary population with one atom: confidence r on class 0, gap r - P(Y = 0) = gap."""
    from ..theory.population import FiniteDistribution
    return FiniteDistribution([1.0], [[r - gap, 1 - (r - gap)]], [[r, 1 - r]])


def _scaled_laplacian(a):
    return lambda A, B: a * np.exp(-np.abs(A - B) / 0.4)


def _mmce_point(rng):
    r = rng.uniform(0.55, 0.95)
    delta = rng.uniform(max(r - 1, -0.4), min(r, 0.4))
    return {_KA: float(rng.uniform(0.05, 6.0)), _DELTA: float(delta), "r": float(r)}


def _mmce_value(point):
    from ..theory.population import mmce
    return mmce(_one_confidence(point["r"], point[_DELTA]), _scaled_laplacian(point[_KA]))


@cache
def _mmce_a_max():
    """Largest a with TCE_1 >= sqrt(max k(r, r)) MMCE (003 Thm 3.1 as printed), by bisection."""
    from ..theory.population import mmce, tce
    dist = _one_confidence(0.75, -0.25)
    tce1 = tce(dist, 1)

    def holds(a):
        return tce1 - math.sqrt(a) * mmce(dist, _scaled_laplacian(a)) >= 0

    lo, hi = 1e-3, 1e3
    assert holds(lo) and not holds(hi)
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    return lo


# ex-001-uc-constant: U_CWE of the constant label-marginal forecast
@cache
def _uc_constant_at_marginal():
    from ..theory import utility as ut
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 1000)
    marginal = np.bincount(y, minlength=3) / y.size
    return float(ut.utility_calibration(y, np.tile(marginal, (y.size, 1)),
                                        ut.classwise(3)).values.max())


# ex-001-uc-ties: forecasts (0.2, 0.2, 0.6), gaps (+0.3, -0.3, +0.1)
_UT_V = np.array([0.2, 0.2, 0.6])
_UT_GAP = np.array([0.3, -0.3, 0.1])


@cache
def _uc_ties():
    from ..theory.utility import uc_from_values
    uc = float(uc_from_values(_UT_V, _UT_V + _UT_GAP).values[0])
    order = np.argsort(_UT_V, kind="stable")            # the position rule: every prefix
    s = np.concatenate([[0.0], np.cumsum(_UT_GAP[order])]) / _UT_V.size
    return uc, float(s.max() - s.min())


# ex-001-binned-bound-tight: the student's population and partition
_BOUND_TOL = 1e-9     # float sums over a few atoms: rounding ~1e-16; a miss is ~the gap itself


def _judge_tight_bound(answer):
    from ..theory.population import FiniteDistribution
    try:
        dist, edges = answer
    except (TypeError, ValueError):
        return None, "give a pair (FiniteDistribution, bin_edges)"
    if isinstance(dist, (tuple, list)) and len(dist) == 3:
        try:
            dist = FiniteDistribution(*dist)
        except ValueError as err:
            return False, f"not a valid population: {err}"
    if not isinstance(dist, FiniteDistribution):
        return False, "the first item must be a calnotes.theory.population.FiniteDistribution"
    if dist.n_classes < 2 or dist.truth.ndim != 2:
        return False, "give the population with (N, k) truth and prediction arrays, k >= 2"
    try:
        edges = np.asarray(edges, dtype=np.float64)
    except (TypeError, ValueError):
        return False, "bin_edges must be three numbers 0 = e0 < e1 < e2 = 1"
    if edges.shape != (3,) or edges[0] != 0 or edges[-1] != 1 or not np.all(np.diff(edges) > 0):
        return False, "m = 2 bins: bin_edges must be three numbers 0 = e0 < e1 < e2 = 1"
    from ..theory import utility as ut
    from .claims.utility import binned_top_and_classwise
    tce_bin, _ = binned_top_and_classwise(dist, edges)
    uc = float(ut.population_uc(dist, ut.top_class(dist.n_classes)).max)
    if uc <= _BOUND_TOL:
        return False, ("UC(f, U_TCE) = 0 here: both sides vanish; the bound is interesting only"
                       " for a miscalibrated population")
    if abs(tce_bin - 2 * uc) <= _BOUND_TOL:
        return True, ""
    return False, (f"here TCE^bin = {tce_bin:.4g} and 2 UC = {2 * uc:.4g}; the bound is"
                   " attained only if each bin contributes as much as the best interval while"
                   " no interval can collect both bins' contributions")


# ex-001-dkw-m: DKW band half-width 0.02 at delta = 0.05; M = 1500
@cache
def _dkw():
    from ..theory.utility import dkw_halfwidth
    M = max(1, math.ceil(math.log(2 / 0.05) / (2 * 0.02 ** 2)) - 2)
    while dkw_halfwidth(M, 0.05) > 0.02:              # the smallest M, by the library's formula
        M += 1
    return M, dkw_halfwidth(1500, 0.05)


# ex-001-projection: p = (0.5, 0.3, 0.2), eta = 0.3 on the first class
_PR_V = np.array([0.5 + 0.3, 0.3, 0.2])


@cache
def _projection():
    from ..theory.patching import project_simplex
    return project_simplex(_PR_V[None, :])[0]


# ex-noise-floor: the rate of the calibrated model's UC estimate in n
_NF_N = sp.Symbol("n", positive=True)


@cache
def _noise_floor_ratio():
    """How the Lemma 3.4 deviation bound changes from n to 4n (the rate of the noise floor)."""
    from .claims.utility import lemma34_bound
    return lemma34_bound(4000, 0.05) / lemma34_bound(1000, 0.05)


def _judge_rate(answer):
    expr = _as_expression(answer, {"n": _NF_N})
    if expr is None:
        return None, _unparsed(answer, "give a sympy expression in n (or a string), e.g."
                                        " 'n**2' for quadratic growth")
    if _NF_N not in expr.free_symbols:
        return False, "your expression does not depend on n: does the estimate not shrink?"
    others = sorted(expr.free_symbols - {_NF_N}, key=lambda s: s.name)
    rng = np.random.default_rng(_SEED)
    want = _noise_floor_ratio()
    for _ in range(_N_POINTS):
        point = {s: sp.Float(rng.uniform(0.5, 3.0)) for s in others}
        n = sp.Integer(int(rng.integers(50, 10 ** 6)))
        small, large = (_evaluate(expr, {**point, _NF_N: v}) for v in (n, 4 * n))
        if small is None or large is None or small == 0:
            return False, "your expression cannot be evaluated for large n"
        ratio = large / small
        if not _close(ratio, want, 1e-6, 0.0):
            if _close(ratio, want ** 2, 1e-6, 0.0):
                return False, ("that rate is too fast: the estimator is the largest partial sum"
                               " of n centred terms divided by n; how does such a sum grow?")
            return False, ("the estimator is the largest absolute partial sum of n independent"
                           " centred terms, divided by n")
    return True, ""


# ex-spherical-bregman: the student's asymmetric pair
_ASYM_TOL = 1e-9      # divergences are O(0.1) sums of a few products: rounding ~1e-16


def _judge_asymmetry(answer):
    from ..core.scores import divergence
    try:
        q, p = (np.asarray(v, dtype=np.float64) for v in answer)
    except (TypeError, ValueError):
        return None, "give a pair (q, p) of probability vectors"
    if q.ndim != 1 or q.shape != p.shape or q.size < 2:
        return False, "q and p must be probability vectors of the same length k >= 2"
    for v in (q, p):
        if np.any(v < 0) or abs(v.sum() - 1) > 1e-9:
            return False, "q and p must be probability vectors: non-negative, summing to one"
    d_qp = float(divergence(q[None, :], p[None, :], "spherical")[0])
    d_pq = float(divergence(p[None, :], q[None, :], "spherical")[0])
    if abs(d_qp - d_pq) > _ASYM_TOL:
        return True, ""
    if np.allclose(q, p):
        return False, "with q = p both divergences are zero; take two different points"
    return False, ("these two give equal divergences in both orders (pairs related by a"
                   " symmetry do); try two points of different Euclidean norm")


# ---------------------------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------------------------
def _first(f):
    return lambda: f()[0]


def _second(f):
    return lambda: f()[1]


def _third(f):
    return lambda: f()[2]


_EXERCISES = (
    _Exercise("ex-qece-by-hand", (
        _number("l2_qece", "the value of l2-QECE_2", _first(_qece_by_hand),
                "form the two bins of three, sum p_i - y_i in each, and divide the sum of the"
                " squared bin sums by n^2",
                mistakes=[(_second(_qece_by_hand),
                           "that is ECE_2^2: l2-QECE divides the squared bin sums by n^2")]),
        _number("ece2_squared", "the value of ECE_2^2", _second(_qece_by_hand),
                "ECE_2^2 = sum_j |B_j|/n (S_j/|B_j|)^2 with S_j the bin sum of p_i - y_i",
                mistakes=[(_first(_qece_by_hand),
                           "that is l2-QECE_2: ECE_2^2 weighs bin j by |B_j|/n")]),
        _number("factor", "ECE_2^2 / l2-QECE_2", _third(_qece_by_hand),
                "compare the denominators n^2 and n |B_j|",
                mistakes=[(lambda: 1 / _qece_by_hand()[2],
                           "that is l2-QECE_2 / ECE_2^2; the factor asked is ECE_2^2 / l2-QECE_2")]),
    )),
    _Exercise("ex-ties-by-outcome", (
        _number("stable", "(a) E[l2-QECE_2] in the stable order", _first(_ties_by_outcome),
                "the bins are fixed positions; each bin sum is a sum of independent centred terms",
                mistakes=[(_second(_ties_by_outcome), "that is the value of (b), not (a)"),
                          (lambda: 16 * _ties_by_outcome()[0],
                           "l2-QECE divides the squared bin sums by n^2 = 16")]),
        _number("by_outcome", "(b) E[l2-QECE_2] with ties ordered by outcome",
                _second(_ties_by_outcome),
                "condition on the number K of positives: they sit last; average over K",
                mistakes=[(_first(_ties_by_outcome), "that is the value of (a), not (b)"),
                          (lambda: 16 * _ties_by_outcome()[1],
                           "l2-QECE divides the squared bin sums by n^2 = 16")]),
    ), note="The last question (which one agrees with Theorem 2.6) is not checked."),
    _Exercise("ex-spherical-bregman", (
        _custom("counterexample", "a pair (q, p) of probability vectors with d(q, p) != d(p, q)",
                _judge_asymmetry),
    ), note="Checks your counterexample; the Bregman identity is a proof and is not checked."),
    _Exercise("ex-constant-qece", (
        _number("c", "the constant c minimising E[l2-QECE_1] for p*_i = i/10, n = 10",
                _first(_constant_qece_best),
                "with m = 1 the bias term is (c n - sum_i p*_i)^2 / n^2",
                mistakes=[(lambda: 0.5, "1/2 is not the best constant in general: minimise the"
                           " bias term over c")]),
        _number("minimum", "the minimum of E[l2-QECE_1] for p*_i = i/10, n = 10",
                _second(_constant_qece_best),
                "at the best c the bias term vanishes; what remains is the variance term",
                mistakes=[(lambda: 10 * _constant_qece_best()[1],
                           "Theorem 2.6's variance term divides by n^2, not n"),
                          (lambda: 100 * _constant_qece_best()[1],
                           "Theorem 2.6's variance term divides by n^2")]),
    ), note="The general formula for E[l2-QECE_m] is not checked; its m = 1 consequences are."),
    _Exercise("ex-smallest-k", (
        _integer("k", "the smallest number of classes k", _smallest_k,
                 "compare the report's expectation (bias only, 3 bins of 20) with the truth's"
                 " (variance only) and solve for k",
                 mistakes=[(lambda: _smallest_k() - 1,
                            "at that k the report still loses: check the inequality exactly,"
                            " with b = 1/k + eta")]),
    ), note="Why eta must be positive is an explanation and is not checked."),
    _Exercise("dom-ex-threshold", (
        _expression("threshold", "(a) the threshold tau above which acting is best, in a and b",
                    _THRESHOLD_SYMBOLS, _threshold, _threshold_point,
                    "compare the expected costs b q of not acting and a (1 - q) of acting"),
        _expression("divergence", "(b) d(p, q) when p and q fall on different sides of tau,"
                    " in a, b and p", _THRESHOLD_SYMBOLS, lambda: _threshold_divergence,
                    _threshold_point,
                    "the two beliefs lead to different actions: d(p, q) is the difference of"
                    " the two actions' risks under p"),
        _custom("loss", "(c) the loss of the book for a = b = 1: a calnotes.core.scores loss or its"
                " name", _judge_loss),
    ), note="That the loss is proper but not strictly proper is an argument, not checked."),
    _Exercise("dom-ex-miscalibrated", (
        _expression("expectation", "E[l2-QECE_m] for m dividing n, in c, pi, n and m",
                    _MISC_SYMBOLS, lambda: _misc_expectation, _misc_point,
                    "each bin sum of c - y_i has mean |B_j| (c - pi) and variance"
                    " |B_j| pi (1 - pi); square, sum over bins, divide by n^2",
                    mistakes=[(lambda: ((_C - _PI) ** 2 + _PI * (1 - _PI)) / _N,
                               "that is (1/n) E[(c - y)^2]: the biases within a bin add up"
                               " before squaring")]),
        _expression("agree_m", "the number of bins m for which the two agree, in n",
                    {"n": _N}, lambda: lambda point: _misc_agree_m(point), _misc_agree_point,
                    "compare sum_j |B_j|^2 with n for positive integers |B_j| summing to n"),
    )),
    _Exercise("t1-ex-f4", (
        _expression("cell", "the class-wise l2 cell of f4 (m | n), in k, m, n and eps3",
                    _t1_symbols(), _f4_cell, _f4_point,
                    "average over the k class columns of delta^2/m + v/n, with each column's"
                    " own bias per sample delta",
                    mistakes=[(_f4_slip, "that is App. D.4's intermediate slip: square class"
                               " 1's bias (k - 1) eps3 in full"),
                              (_f4_confidence, "that is the confidence cell; the class-wise"
                               " measure averages the k class columns")]),
    ), note="Where App. D.4 goes wrong is an explanation and is not checked."),
    _Exercise("ex-003-mmce-constant", (
        _expression("mmce", "MMCE in a and the gap delta", _MMCE_SYMBOLS,
                    lambda: _mmce_value, _mmce_point,
                    "with one confidence value r, MMCE^2 = delta^2 k(r, r)"),
        _number("a_max", "the largest a for which the printed TCE_1 >= c MMCE holds",
                _mmce_a_max, "c = sqrt(max_r k(r, r)); write both sides in terms of |delta|"),
    )),
    _Exercise("ex-001-uc-constant", (
        _number("uc_cwe", "UC(f, U_CWE) when p is the label marginal", _uc_constant_at_marginal,
                "for u_c the forecast utility is p_c and the realized one P(Y = c)",
                atol=1e-9),    # the value is 0; float sums of 1000 terms are off by ~1e-16
    ), note="The identity UC(f, u) = |E u(p, Y) - v_u(p)| is a proof and is not checked."),
    _Exercise("ex-001-uc-ties", (
        _number("uc", "the estimate UC-hat", _first(_uc_ties),
                "samples with equal forecasts form one block that an interval holds entirely"
                " or not at all",
                mistakes=[(lambda: 3 * _uc_ties()[0], "UC-hat is an average: divide by n = 3"),
                          (_second(_uc_ties), "that is what the position rule reports")]),
        _number("position_rule", "what the position rule reports", _second(_uc_ties),
                "take max minus min of the prefix sums over every position of the sorted order",
                mistakes=[(lambda: 3 * _uc_ties()[1], "divide the prefix sums by n = 3"),
                          (_first(_uc_ties), "that is the tie-pooled estimate")]),
    )),
    _Exercise("ex-001-binned-bound-tight", (
        _custom("construction", "a pair (FiniteDistribution, bin_edges) with m = 2 bins",
                _judge_tight_bound),
    )),
    _Exercise("ex-001-dkw-m", (
        _integer("M", "the number of sampled utilities for half-width 0.02 at delta = 0.05",
                 _first(_dkw), "solve sqrt(ln(2/delta) / (2M)) <= 0.02 for M",
                 mistakes=[(lambda: _dkw()[0] - 1, "round up: M must be an integer at least"
                            " the bound"),
                           (lambda: math.ceil(math.log(1 / 0.05) / (2 * 0.02 ** 2)),
                            "the DKW-Massart band is two-sided: ln(2/delta)")]),
        _number("halfwidth", "the half-width for M = 1500", _second(_dkw),
                "the half-width is sqrt(ln(2/delta) / (2M))",
                mistakes=[(lambda: math.sqrt(math.log(1 / 0.05) / 3000),
                           "the DKW-Massart band is two-sided: ln(2/delta)")]),
    )),
    _Exercise("ex-001-projection", (
        _array("projection", "the projection of p + eta e_1 onto the simplex, an array of 3",
               _projection, "subtract the same tau from every coordinate so that the result"
               " sums to one (and check that none turns negative)",
               atol=1e-6,   # exact one-decimal values; 1e-6 allows any float rounding only
               mistakes=[(lambda: _PR_V.copy(),
                          "this is p + eta e_c itself; it sums to 1.3, so project it"),
                         (lambda: _PR_V / _PR_V.sum(),
                          "dividing by the sum is not the Euclidean projection")]),
    ), note="That the projection subtracts one amount from every kept coordinate is a proof."),
    _Exercise("ex-noise-floor", (
        _custom("rate", "an expression in n proportional to the size of the estimate (other"
                " symbols allowed as constants)", _judge_rate),
    ), note="The simulation is not checked; the rate it should show is."),
)

_REGISTRY = {ex.label: ex for ex in _EXERCISES}

#: Exercises without a checker, and why: their answers are proofs or explanations.
NO_CHECKER = {
    "ex-murphy": "a derivation (Murphy's decomposition from the decomposition lemma); the "
                 "solution's numerical check is part of the derivation",
    "ex-conf-two-classes": "a proof (truthfulness for k = 2) and a search that finds nothing",
    "dom-ex-garbling": "a proof (the Brier gap of a garbling is E||f - g||^2)",
    "t1-ex-f3": "a proof without computation (two cells of Table 1 are equal) and an explanation",
    "ex-003-binary-hierarchy": "a proof (CWCE_p = CE_p for two classes)",
    "ex-004-log-sharp": "a proof (the log-loss pair attains Lemma 4.6 with equality)",
    "ex-004-band-offset": "a proof (the offset of the sample band is 1 - ||pi||^2)",
    "ex-ucomb-max": "an explanation (a supremum over a union; averaging inequalities)",
}


def labels() -> list:
    """The labels of the exercises that have a checker, sorted.

    Examples
    --------
    >>> "ex-smallest-k" in labels() and "ex-murphy" not in labels()
    True
    """
    return sorted(_REGISTRY)


def _get(label: str) -> _Exercise:
    if label in _REGISTRY:
        return _REGISTRY[label]
    if label in NO_CHECKER:
        raise ValueError(f"exercise {label!r} has no checker: its answer is "
                         f"{NO_CHECKER[label]}")
    raise ValueError(f"unknown exercise label {label!r}; exercises with a checker: "
                     f"{', '.join(labels())}")


def describe(label: str) -> str:
    """What :func:`check` expects as the answer to an exercise (one line per part).

    Examples
    --------
    >>> print(describe("ex-smallest-k"))
    k: the smallest number of classes k
    >>> describe("ex-nope")
    Traceback (most recent call last):
        ...
    ValueError: unknown exercise label 'ex-nope'; exercises with a checker: ...
    """
    ex = _get(label)
    lines = [f"{part.name}: {part.give}" for part in ex.parts]
    return "\n".join(lines)


def note(label: str) -> str:
    """What the checker of an exercise does not check (empty if it checks everything).

    Examples
    --------
    >>> note("ex-smallest-k")
    'Why eta must be positive is an explanation and is not checked.'
    >>> note("ex-001-uc-ties")
    ''
    """
    return _get(label).note


def check(label: str, answer) -> Verdict:
    """Is ``answer`` right for the exercise ``label``?  A :class:`Verdict`, with hints.

    Parameters
    ----------
    label : str
        The exercise's label in the book (``ex-qece-by-hand``, ...); :func:`labels` lists them.
    answer
        One value for a one-part exercise; for several parts a tuple in the order
        :func:`describe` lists them, or a dict with some of the part names.  Numbers, sympy
        expressions (or strings sympy parses), arrays, as :func:`describe` says.  ``...``
        (Ellipsis), the placeholder of the student notebooks' check cells, is a part not
        given.  An answer of the wrong form (a string for several parts, a tuple of the wrong
        length, an unknown part name) is a verdict "could not read your answer" saying what
        to give, not an error.

    Returns
    -------
    Verdict
        Prints as ``label: right.`` or ``label: not yet.`` with a hint per wrong part; it
        never contains the right answer.

    Raises
    ------
    ValueError
        For an unknown label (the message lists the labels) or an exercise without a checker.

    Notes
    -----
    While ``calnotes check-notebook`` runs a notebook (the environment variable
    :data:`CHECKER` is ``1``), each call also shows the *answer*, encoded as data
    (:mod:`calnotes.book._answers`), as a display output the checker reads; the checker computes
    the verdict again itself, so nothing the notebook prints or writes can make a wrong answer
    right.

    Examples
    --------
    >>> v = check("ex-001-dkw-m", (4000, 0.2))
    >>> v.correct, v.parts
    (False, {'M': False, 'halfwidth': False})
    >>> print(check("ex-001-dkw-m", "4612"))
    ex-001-dkw-m: not yet. Could not read your answer: give a tuple of 2 answers in the order ['M', 'halfwidth'], or a dict with some of these keys
    >>> check("ex-murphy", 0)
    Traceback (most recent call last):
        ...
    ValueError: exercise 'ex-murphy' has no checker: its answer is a derivation ...
    """
    ex = _get(label)
    names = [part.name for part in ex.parts]
    problem = ""
    given = {}
    if len(ex.parts) == 1:
        if isinstance(answer, dict) and set(answer) - {names[0]}:
            problem = (f"unknown part(s) {sorted(map(str, set(answer) - {names[0]}))}; the"
                       f" only part is {names[0]!r}")
        else:
            given = dict(answer) if isinstance(answer, dict) else {names[0]: answer}
    elif isinstance(answer, dict):
        unknown = sorted(map(str, set(answer) - set(names)))
        if unknown:
            problem = f"unknown part(s) {unknown}; the parts are {names}"
        given = dict(answer)
    elif isinstance(answer, (tuple, list, np.ndarray)) and len(answer) == len(names):
        given = dict(zip(names, answer))
    elif answer is not Ellipsis:
        problem = (f"give a tuple of {len(names)} answers in the order {names}, or a dict with"
                   " some of these keys")
    given = {name: value for name, value in given.items() if value is not Ellipsis}
    parts, hints, unread = {}, {}, []
    for part in ex.parts:
        if problem or part.name not in given:
            parts[part.name], hints[part.name] = None, f"give {part.give}"
            continue
        ok, hint = part.judge(given[part.name])     # ok None: not of the part's form
        parts[part.name] = bool(ok)
        if not ok:
            hints[part.name] = hint
        if ok is None:
            unread.append(hint if len(ex.parts) == 1 else f"{part.name}: {hint}")
    problem = problem or "; ".join(unread)
    verdict = Verdict(label, not problem and all(v is True for v in parts.values()), parts,
                      hints, problem)
    _report_answer(label, answer, verdict)
    return verdict


#: Environment variable set to ``1`` by ``calnotes check-notebook`` in the kernels that run
#: submissions: :func:`check` then shows each answer as a display output the checker reads.
CHECKER = "CALNOTES_CHECKER"


def _report_answer(label: str, answer, verdict: Verdict) -> None:
    import os
    if os.environ.get(CHECKER) != "1":
        return
    from . import _answers
    try:
        from IPython.display import display
    except ImportError:              # pragma: no cover - the checker always runs IPython
        return
    display({_answers.MIME: {"label": label, "answer": _answers.encode(answer)},
             "text/plain": f"(answer to {label} recorded for the checker: {verdict.status})"},
            raw=True)
