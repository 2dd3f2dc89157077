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

    Brier is the multi-class ``||p - e_y||^2 = 2 (p - y)^2``, matching :mod:`calnotes.core.scores`.

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


# --------------------------------------------------------------------------- Table 1 (paper 000)
#
# Sec. 4 and App. D of the truthfulness paper.  Cells are named "<predictor>.<measure>" with
# predictors f1..f4 and measures l1_conf, l1_cw, l2_conf, l2_cw (calnotes.theory.table1.CELLS).

__all__ += [
    "TABLE1_THETA",
    "table1_symbols",
    "table1_printed",
    "FoldedNormalMean",
    "folded_normal_mean",
    "calibrated_bin_l1_constant",
    "table1_active_groups",
    "table1_derived",
    "table1_theta_constants",
    "table1_printed_with_constants",
    "folded_normal_additive_ratio",
]

#: The Theta(.) of Table 1, kept symbolic: ``TABLE1_THETA(u)`` renders as ``\Theta(u)``.
TABLE1_THETA = sp.Function("Theta")

_T1_PREDICTORS = ("f1", "f2", "f3", "f4")
_T1_MEASURES = ("l1_conf", "l1_cw", "l2_conf", "l2_cw")


def table1_symbols() -> dict:
    """The symbols of Table 1: ``k, n, m`` (positive integers) and ``eps1, eps2, eps3`` (positive).

    Examples
    --------
    >>> sorted(table1_symbols())
    ['eps1', 'eps2', 'eps3', 'k', 'm', 'n']
    """
    k, n, m = sp.symbols("k n m", positive=True, integer=True)
    e1, e2, e3 = sp.symbols("varepsilon_1 varepsilon_2 varepsilon_3", positive=True)
    return {"k": k, "n": n, "m": m, "eps1": e1, "eps2": e2, "eps3": e3}


def table1_printed() -> dict:
    r"""The 16 cells of Table 1 exactly as printed, ``{cell: sympy expression}``.

    ``Theta(u)`` stays an undefined function (:data:`TABLE1_THETA`); "+ above" is the cell
    above (``f1`` for ``f2``, ``f3`` for ``f4``) added to the printed bias term, so that, e.g.,
    ``"f2.l1_cw"`` is ``eps2/k + Theta(sqrt((1-eps1) eps1 m/n)/k)``.

    Examples
    --------
    >>> t = table1_printed()
    >>> t["f3.l2_cw"]
    (1 - 1/k)/(k*n)
    >>> t["f2.l1_cw"]
    Theta(sqrt(m)*sqrt(varepsilon_1)*sqrt(1 - varepsilon_1)/(k*sqrt(n))) + varepsilon_2/k
    """
    s = table1_symbols()
    k, n, m, e1, e2, e3 = (s[x] for x in ("k", "n", "m", "eps1", "eps2", "eps3"))
    T = TABLE1_THETA
    v1, v3 = (1 - e1) * e1, (1 - 1 / k) / k
    cells = {
        "f1.l1_conf": T(sp.sqrt(v1 * m / n)),
        "f1.l1_cw": T(sp.sqrt(v1 * m / n) / k),
        "f1.l2_conf": v1 / n,
        "f1.l2_cw": 2 * v1 / (k * n),
        "f3.l1_conf": T(sp.sqrt(v3 * m / n)),
        "f3.l1_cw": T(sp.sqrt(v3 * m / n) / k),
        "f3.l2_conf": v3 / n,
        "f3.l2_cw": (1 - 1 / k) / (k * n),
    }
    bias = {
        "f2.l1_conf": e2, "f2.l1_cw": e2 / k, "f2.l2_conf": e2 ** 2 / m,
        "f2.l2_cw": 2 * e2 ** 2 / (k * m),
        "f4.l1_conf": (k - 1) * e3, "f4.l1_cw": 2 * (k - 1) * e3 / k,
        "f4.l2_conf": (k - 1) ** 2 * e3 ** 2 / m, "f4.l2_cw": (k - 1) * e3 ** 2 / m,
    }
    for cell, term in bias.items():
        above = ("f1" if cell.startswith("f2") else "f3") + cell[2:]
        cells[cell] = term + cells[above]
    return {f"{f}.{mm}": cells[f"{f}.{mm}"] for f in _T1_PREDICTORS for mm in _T1_MEASURES}


_FN_CACHE: dict = {}


class FoldedNormalMean(sp.Function):
    r"""``FoldedNormalMean(mu, sigma)``: :math:`\mathbb E|N(\mu, \sigma^2)|`, unevaluated.

    Renders as :math:`\mathbb E|N(\mu, \sigma^2)|`; ``.doit()`` (or
    :func:`folded_normal_mean`) gives the closed form.
    """

    nargs = 2

    def doit(self, deep=True, **hints):
        mu, sigma = (a.doit(deep=deep, **hints) if deep else a for a in self.args)
        return folded_normal_mean(mu, sigma)

    def _latex(self, printer):
        mu, sigma = (printer._print(a) for a in self.args)
        return r"\mathbb{E}\left|N\!\left(%s,\ \left(%s\right)^{2}\right)\right|" % (mu, sigma)


_FN_CACHE: dict = {}


def folded_normal_mean(mu=None, sigma=None):
    r"""``E|X|`` for ``X ~ N(mu, sigma^2)``, derived by integrating ``|x|`` against the density.

    .. math::
        \mathbb E|X| = \sigma\sqrt{2/\pi}\,e^{-\mu^2/(2\sigma^2)}
        + \mu\,\operatorname{erf}\!\big(\mu/(\sqrt2\,\sigma)\big)

    It lies between :math:`\max(|\mu|, \sigma\sqrt{2/\pi})` and :math:`|\mu| + \sigma\sqrt{2/\pi}`
    (Jensen; convexity and symmetry in :math:`\mu`; the triangle inequality).  Called without
    arguments it returns the expression in the symbols ``mu`` and ``sigma``; with arguments it
    substitutes them (no simplification).

    Examples
    --------
    >>> folded_normal_mean(0, sp.Symbol("s", positive=True))
    sqrt(2)*s/sqrt(pi)
    """
    if "expr" not in _FN_CACHE:
        x = sp.Symbol("x", real=True)
        mu_s = sp.Symbol("mu", real=True)
        sig_s = sp.Symbol("sigma", positive=True)
        density = sp.exp(-(x - mu_s) ** 2 / (2 * sig_s ** 2)) / (sp.sqrt(2 * sp.pi) * sig_s)
        value = (sp.integrate(x * density, (x, 0, sp.oo))
                 - sp.integrate(x * density, (x, -sp.oo, 0)))
        value = sp.simplify(value.rewrite(sp.erf))
        _FN_CACHE["expr"] = (value, mu_s, sig_s)
    value, mu_s, sig_s = _FN_CACHE["expr"]
    if mu is None and sigma is None:
        return value
    return value.subs({mu_s: mu if mu is not None else mu_s,
                       sig_s: sigma if sigma is not None else sig_s}, simultaneous=True)


def calibrated_bin_l1_constant():
    r"""``lim E|S_b| / sqrt(b p (1-p))`` for a calibrated bin of ``b`` i.i.d. ``Ber(p)`` outcomes.

    ``S_b = sum_{i in B} (p - y_i)`` has mean 0 and variance ``b p (1-p)``; by the CLT
    ``S_b / sqrt(b p (1-p)) -> Z ~ N(0, 1)`` and (uniform integrability) the limit is
    :math:`\mathbb E|Z| = \int |z|\,\varphi(z)\,dz = \sqrt{2/\pi}`.

    Examples
    --------
    >>> calibrated_bin_l1_constant()
    sqrt(2)/sqrt(pi)
    """
    z = sp.Symbol("z", real=True)
    return sp.integrate(sp.Abs(z) * sp.exp(-z ** 2 / 2) / sp.sqrt(2 * sp.pi), (z, -sp.oo, sp.oo))


def table1_active_groups() -> dict:
    r"""The binary problems behind each aggregation of each predictor, as sympy data.

    ``{(predictor, aggregation): [(weight, fraction, delta, variance), ...]}``: the measure is
    the ``weight``-average over the listed class columns (class-wise: ``1/k`` per class;
    confidence: one column of weight 1) of a column in which a ``fraction`` of the samples is
    *active* -- prediction off its truth by ``delta`` per sample, outcome variance
    ``variance`` -- and the rest have prediction = truth = 0 (no bias, no variance).

    Reading Sec. 4 (classes ``0..k-1``, ``y = x`` w.p. ``1 - eps1``, else ``x + 1``):

    * ``f1``, confidence: confidence ``1 - eps1`` on every sample, truth ``1 - eps1``.
    * ``f1``, class ``r``: the ``x = r - 1`` rows predict ``eps1`` (truth ``eps1``), the ``x = r``
      rows ``1 - eps1``: a fraction ``2/k`` active, in their own bins (they sort above the zeros
      and below each other); ``2m/k`` active bins when ``k | 2m``.
    * ``f2``: the same rows, bias ``+eps2`` (low group) and ``-eps2`` (high group).
    * ``f3``: every class column is ``1/k`` against a ``Ber(1/k)`` outcome (over ``x``), all
      active; confidence picks class 0, the same problem.
    * ``f4``: class 0 predicts ``1/k + (k-1) eps3``, the others ``1/k - eps3``; outcomes
      ``Ber(1/k)``; confidence picks class 0.

    Examples
    --------
    >>> g = table1_active_groups()
    >>> g[("f1", "cw")]
    [(1, 2/k, 0, varepsilon_1*(1 - varepsilon_1))]
    """
    s = table1_symbols()
    k, e1, e2, e3 = s["k"], s["eps1"], s["eps2"], s["eps3"]
    v1, v3 = e1 * (1 - e1), (1 / k) * (1 - 1 / k)
    return {
        ("f1", "conf"): [(1, 1, 0, v1)],
        ("f1", "cw"): [(1, 2 / k, 0, v1)],
        ("f2", "conf"): [(1, 1, e2, v1)],
        ("f2", "cw"): [(1, 2 / k, e2, v1)],
        ("f3", "conf"): [(1, 1, 0, v3)],
        ("f3", "cw"): [(1, 1, 0, v3)],
        ("f4", "conf"): [(1, 1, (k - 1) * e3, v3)],
        ("f4", "cw"): [(1 / k, 1, (k - 1) * e3, v3), ((k - 1) / k, 1, e3, v3)],
    }


def table1_derived(evaluate: bool = True) -> dict:
    r"""Our derivation of the 16 cells, ``{cell: sympy expression}`` (bins of ``b = n/m`` samples).

    For a column whose active samples (a fraction ``a``) sit in bins of ``b = n/m`` samples,
    each with bias ``delta`` and outcome variance ``v``, the bin sum ``S`` has mean ``b delta``
    and variance ``b v``, and there are ``a m`` such bins.  Hence

    * l2 (exact, Thm 2.6's bias-variance split):
      :math:`\frac{am}{n^2}\,(b^2\delta^2 + bv) = a\,(\delta^2/m + v/n)`;
    * l1 (CLT per bin, :math:`S \approx N(b\delta, bv)`):
      :math:`\frac{am}{n}\,\mathbb E|N(b\delta, bv)| = a\,\mathbb E|N(\delta, vm/n)|`, the
      folded-normal mean (:func:`folded_normal_mean`), by homogeneity.

    The aggregation averages the columns (:func:`table1_active_groups`).  Exact for the l2 cells
    when ``m | n``, except ``f2.l2_cw`` (bins straddling the low/high or zero/low boundary make
    it an upper bound, off by at most ``2 eps2^2/m^2``); the l1 cells are asymptotic
    (``n/m -> oo``, ``k | m``).

    Parameters
    ----------
    evaluate : bool, default True
        ``False`` keeps :class:`FoldedNormalMean` unevaluated (for display).

    Examples
    --------
    >>> d = table1_derived()
    >>> d["f3.l1_cw"] == d["f3.l1_conf"]
    True
    >>> table1_derived(evaluate=False)["f2.l1_conf"]
    FoldedNormalMean(varepsilon_2, sqrt(m)*sqrt(varepsilon_1)*sqrt(1 - varepsilon_1)/sqrt(n))
    """
    s = table1_symbols()
    n, m = s["n"], s["m"]
    groups = table1_active_groups()
    out = {}
    for f in _T1_PREDICTORS:
        for agg in ("conf", "cw"):
            terms = groups[(f, agg)]
            l1 = sp.Add(*[w * a * FoldedNormalMean(delta, sp.sqrt(v * m / n))
                          for w, a, delta, v in terms])
            if evaluate:
                l1 = l1.replace(lambda e: isinstance(e, FoldedNormalMean), lambda e: e.doit())
            out[f"{f}.l1_{agg}"] = l1
            out[f"{f}.l2_{agg}"] = sp.Add(*[w * a * (delta ** 2 / m + v / n)
                                            for w, a, delta, v in terms])
    return {f"{f}.{mm}": out[f"{f}.{mm}"] for f in _T1_PREDICTORS for mm in _T1_MEASURES}


def table1_theta_constants() -> dict:
    r"""The constant each ``Theta`` of Table 1 hides, derived: ``{cell: sympy expression}``.

    For the four calibrated l1 cells the derived value (:func:`table1_derived`) divided by the
    printed ``Theta`` argument: :math:`\sqrt{2/\pi}` for ``f1``, ``f3`` confidence,
    :math:`2\sqrt{2/\pi}` for ``f1`` class-wise (``2m/k`` active bins per class), but
    :math:`k\sqrt{2/\pi}` for ``f3`` class-wise: **not a constant** -- the printed
    :math:`\Theta(\frac1k\sqrt{\cdots})` is too small by the factor ``k``.

    Examples
    --------
    >>> c = table1_theta_constants()
    >>> c["f1.l1_cw"], c["f3.l1_cw"]
    (2*sqrt(2)/sqrt(pi), sqrt(2)*k/sqrt(pi))
    """
    printed, derived = table1_printed(), table1_derived()
    out = {}
    for cell in ("f1.l1_conf", "f1.l1_cw", "f3.l1_conf", "f3.l1_cw"):
        (argument,) = printed[cell].args
        out[cell] = sp.simplify(derived[cell] / argument)
    return out


def table1_printed_with_constants(constants: dict | None = None) -> dict:
    r"""The printed cells with each ``Theta(u)`` replaced by ``c u``: ``{cell: sympy expression}``.

    ``constants`` maps the four ``Theta`` cells to ``c``; the default uses the derived constants
    of :func:`table1_theta_constants` for ``f1`` and for ``f3`` confidence, and for ``f3``
    class-wise the constant :math:`2\sqrt{2/\pi}` of ``f1`` class-wise (App. D.3 writes the same
    ``2/k`` factor in front of ``Theta`` as D.1), since no ``k``-free constant exists.  The
    "+ above" cells inherit the constant of the cell above.

    Examples
    --------
    >>> t = table1_printed_with_constants()
    >>> s = table1_symbols()
    >>> sp.simplify(t["f3.l1_cw"] / t["f3.l1_conf"])
    2/k
    """
    if constants is None:
        constants = table1_theta_constants()
        constants["f3.l1_cw"] = constants["f1.l1_cw"]
    printed = table1_printed()
    return {cell: _apply_theta(expr, constants.get(_above(cell))) for cell, expr in printed.items()}


def _above(cell: str) -> str:
    if cell[:2] in ("f1", "f3"):
        return cell
    return ("f1" if cell[:2] == "f2" else "f3") + cell[2:]


def _apply_theta(expr, constant):
    """Replace every ``Theta(u)`` in ``expr`` by ``constant * u`` (no-op without Theta)."""
    if constant is None:
        return expr
    return expr.replace(lambda e: isinstance(e, TABLE1_THETA), lambda e: constant * e.args[0])


def folded_normal_additive_ratio():
    r"""``(|mu| + sigma sqrt(2/pi)) / E|N(mu, sigma^2)|`` as a function of ``z = mu / sigma >= 0``.

    The "+ above" of Table 1's l1 cells adds the bias to the calibrated value: the triangle
    inequality's upper bound.  The ratio is 1 at ``z = 0`` and as ``z -> oo`` and below 2
    everywhere (``E|X| >= max(|mu|, sigma sqrt(2/pi)) >= half the sum``).

    Examples
    --------
    >>> r = folded_normal_additive_ratio()
    >>> r.subs(sp.Symbol("z", nonnegative=True), 0)
    1
    """
    z = sp.Symbol("z", nonnegative=True)
    c = calibrated_bin_l1_constant()
    return sp.simplify((z + c) / folded_normal_mean(z, 1))
