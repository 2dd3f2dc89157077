"""sympy derivations the chapters render and the tests evaluate.

Each function returns sympy objects (expressions, equations, sets), never printed text;
chapters display them with ``IPython.display`` / ``sympy.latex`` and claims evaluate them.
"""

from __future__ import annotations

import sympy as sp

__all__ = [
    "binary_loss",
    "pooled_decomposition_residual",
    "lq_hessian_cross_derivative",
    "lq_bregman_exponents",
]

_LOSSES = ("log", "brier", "spherical")


def binary_loss(name: str, p, y: int):
    """Binary proper loss ``l(p, y)`` of prediction ``P(Y=1) = p`` as a sympy expression.

    Brier is the multi-class ``||p - e_y||^2 = 2 (p - y)^2``, matching :mod:`calnotes.scores`.

    Examples
    --------
    >>> p = sp.Symbol("p", positive=True)
    >>> binary_loss("brier", p, 1)
    2*(p - 1)**2
    """
    if name == "log":
        return -sp.log(p) if y == 1 else -sp.log(1 - p)
    if name == "brier":
        return 2 * (p - y) ** 2
    if name == "spherical":
        return 1 - (p if y == 1 else 1 - p) / sp.sqrt(p ** 2 + (1 - p) ** 2)
    raise ValueError(f"name: expected one of {_LOSSES}, got {name!r}")


def _expected(name, q, p):
    return q * binary_loss(name, p, 1) + (1 - q) * binary_loss(name, p, 0)


def _div(name, q, p):
    return _expected(name, q, p) - _expected(name, q, q)


def pooled_decomposition_residual(name: str):
    r"""``score - (entropy - sharpness + calibration)`` for a symbolic two-value predictor.

    The population: with weights ``w1, w2, w3`` (``w3 = 1 - w1 - w2``) the true
    probability of ``Y = 1`` is ``q1, q2, q3``; the predictor says ``a`` on the first two
    atoms (they are *pooled*: its calibrated conditional there is
    ``c = (w1 q1 + w2 q2) / (w1 + w2)``) and ``b`` on the third.  The function returns the
    simplified difference between the expected loss and the three terms of Lemma 4.1; the
    decomposition holds identically iff it is ``0``.

    Returns
    -------
    residual : sympy.Expr
    terms : dict of sympy.Expr
        ``score``, ``entropy``, ``sharpness``, ``calibration`` before simplification.

    Examples
    --------
    >>> pooled_decomposition_residual("brier")[0]
    0
    """
    w1, w2, q1, q2, q3, a, b = sp.symbols("w1 w2 q1 q2 q3 a b", positive=True)
    w3 = 1 - w1 - w2
    c = (w1 * q1 + w2 * q2) / (w1 + w2)
    pi = w1 * q1 + w2 * q2 + w3 * q3
    score = w1 * _expected(name, q1, a) + w2 * _expected(name, q2, a) + w3 * _expected(name, q3, b)
    terms = {
        "score": score,
        "entropy": _expected(name, pi, pi),
        "sharpness": (w1 + w2) * _div(name, c, pi) + w3 * _div(name, q3, pi),
        "calibration": (w1 + w2) * _div(name, c, a) + w3 * _div(name, q3, b),
    }
    residual = terms["score"] - (terms["entropy"] - terms["sharpness"] + terms["calibration"])
    residual = sp.simplify(sp.expand(sp.expand_log(residual, force=True)))
    return residual, terms


def lq_hessian_cross_derivative(q):
    r"""``d/dy d^2/dx^2 (x - y)^q`` for ``x > y``: zero iff the Hessian in ``x`` is free of ``y``.

    A Bregman divergence ``d_phi(x, y) = phi(x) - phi(y) - phi'(y)(x - y)`` has second
    derivative ``phi''(x)`` in its first argument, whatever ``y`` is; the per-coordinate
    ``L^q`` error ``|x - y|^q`` can only be one if this cross derivative vanishes.

    Examples
    --------
    >>> lq_hessian_cross_derivative(2)
    0
    >>> lq_hessian_cross_derivative(3)
    -6
    """
    x, y = sp.symbols("x y", real=True)
    t = sp.Symbol("t", positive=True)  # t = x - y > 0
    expr = sp.diff(sp.diff((x - y) ** q, x, 2), y)
    return sp.simplify(expr.subs(x, y + t))


def lq_bregman_exponents():
    r"""Integer exponents ``q >= 1`` whose ``L^q`` error has a ``y``-free Hessian, and why 1 fails.

    Solves ``d/dy d^2/dx^2 (x-y)^q = -q (q-1) (q-2) (x-y)^{q-3} = 0`` for integers ``q >= 1``
    (Prop 4.4 of the reassessing paper).  ``q = 1`` solves it but ``|x - y|`` is not
    differentiable at ``x = y`` while a Bregman divergence of a ``C^1`` generator is; so
    ``q = 2`` is the only one.

    Returns
    -------
    candidates : sympy.Set
        Integer solutions ``q >= 1`` of the cross-derivative equation.
    bregman : sympy.Set
        Those that also pass the differentiability test: ``{2}``.

    Examples
    --------
    >>> lq_bregman_exponents()[1]
    {2}
    """
    q = sp.Symbol("q", integer=True, positive=True)
    x, y = sp.symbols("x y", real=True)
    t = sp.Symbol("t", positive=True)
    cross = sp.diff(sp.diff((x - y) ** q, x, 2), y).subs(x, y + t)
    coefficient = sp.factor(sp.simplify(cross / t ** (q - 3)))
    candidates = sp.FiniteSet(*sp.solve(coefficient, q))
    # A C^1 generator gives d(x, y) differentiable in x at x = y: the one-sided derivatives
    # q * t**(q-1) at t -> 0+ and t -> 0- must agree (both zero), which needs q > 1.
    bregman = sp.FiniteSet(*[c for c in candidates
                             if sp.limit(c * t ** (c - 1), t, 0, "+") == 0])
    return candidates, bregman
