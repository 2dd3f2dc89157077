"""Answers to the book's exercises as plain data: a safe parser for typed expressions and a
pickle-free encoding that carries an answer out of a student's kernel.

``calnotes check-notebook`` never trusts a verdict computed in a student's kernel: the kernel
only reports the *answer* it was given (:func:`encode`, a JSON value), and the checker decodes
it (:func:`decode`) and computes the verdict itself.  Both directions build values only from
an explicit list of types, so decoding an answer runs no code of the student's:

* numbers (``int`` of any size as text, ``float`` by ``repr``, ``Fraction``, ``complex``),
  ``bool``, ``None``, ``...``, strings, tuples, lists, dicts with string keys;
* numeric NumPy arrays (shape and values);
* sympy expressions as a tree of symbols, numbers, the constants in :data:`_CONSTANTS` and the
  functions in :data:`_FUNCTIONS`.

Anything else becomes an :class:`Unsupported` value, which every checker reads as an answer
of the wrong form.  :func:`parse_expression` is the one way a *string* answer becomes a sympy
expression: Python syntax checked node by node (numbers, names, arithmetic and calls of the
functions in :data:`_FUNCTIONS`; no attributes, subscripts, strings or keywords) before sympy
reads it, because sympy's own parser evaluates its input with ``eval``.

Examples
--------
>>> import sympy as sp
>>> x = sp.Symbol("x")
>>> decode(encode((3, 0.5, sp.sqrt(x) / 2, ...)))
(3, 0.5, sqrt(x)/2, Ellipsis)
>>> parse_expression("__import__('os').getcwd()") is None
True
>>> parse_expression("sqrt(x)/2 + 1")
sqrt(x)/2 + 1
"""

from __future__ import annotations

import ast
import math
import numbers
from fractions import Fraction

import numpy as np
import sympy as sp

__all__ = ["encode", "decode", "parse_expression", "Unsupported", "MIME", "MAX_TEXT",
           "MAX_ITEMS"]

#: The MIME type of the display output by which :func:`calnotes.book.exercises.check` reports an
#: answer while ``calnotes check-notebook`` runs the notebook.
MIME = "application/vnd.calnotes.answer+json"

#: Longest string or integer (characters) carried: the book's answers are short expressions;
#: a longer one is reported as unsupported rather than parsed.
MAX_TEXT = 10_000

#: Most numbers, items or tree nodes in one answer: the largest array an exercise asks for
#: has a few hundred entries.
MAX_ITEMS = 100_000

_FUNCTIONS = {name: getattr(sp, name) for name in (
    "Add", "Mul", "Pow", "Abs", "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "Max", "Min", "floor", "ceiling", "sign", "factorial",
    "binomial", "gamma", "Rational", "Integer", "Float", "re", "im", "Mod", "erf", "Heaviside",
    "LambertW", "root", "cbrt")}
_CONSTANTS = {"pi": sp.pi, "E": sp.E, "oo": sp.oo, "-oo": -sp.oo, "zoo": sp.zoo,
              "nan": sp.nan, "I": sp.I}


class Unsupported:
    """An answer the encoding does not carry (its type is kept for the hint)."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return f"<an answer of type {self.what}, which the checker cannot read>"


class _Budget:
    def __init__(self):
        self.left = MAX_ITEMS

    def spend(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise _TooBig


class _TooBig(Exception):
    pass


# ------------------------------------------------------------------------------- encoding
def encode(answer) -> object:
    """``answer`` as a JSON value (see the module docstring); never raises.

    Examples
    --------
    >>> encode(2 ** 70)
    {'int': '1180591620717411303424'}
    >>> encode(object())
    {'unsupported': 'object'}
    """
    try:
        return _encode(answer, _Budget())
    except _TooBig:
        return {"unsupported": f"{type(answer).__name__} (too large)"}
    except Exception as exc:  # noqa: BLE001 - a student's object may raise anything
        return {"unsupported": f"{type(answer).__name__} ({type(exc).__name__})"}


def _encode(value, budget):
    budget.spend()
    if value is None or isinstance(value, bool):
        return value
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise _TooBig
        return {"str": value}
    if isinstance(value, numbers.Integral) and not isinstance(value, sp.Basic):
        text = str(int(value))
        if len(text) > MAX_TEXT:
            raise _TooBig
        return {"int": text}
    if isinstance(value, Fraction):
        return {"frac": [str(value.numerator), str(value.denominator)]}
    if isinstance(value, float) or isinstance(value, np.floating):
        return {"float": repr(float(value))}
    if isinstance(value, (complex, np.complexfloating)):
        return {"complex": [repr(float(value.real)), repr(float(value.imag))]}
    if isinstance(value, sp.Basic):
        return {"sympy": _tree(value, budget)}
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [_encode(v, budget) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return {"unsupported": "dict with keys that are not strings"}
        return {"dict": [[k, _encode(v, budget)] for k, v in value.items()]}
    if not isinstance(value, np.ndarray) and hasattr(value, "__array__"):
        value = np.asarray(value)         # a pandas Series, a tensor: its numbers
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            return {"unsupported": f"array of dtype {value.dtype}"}
        budget.spend(value.size)
        flat = [repr(float(v)) if value.dtype.kind == "f" else int(v)
                for v in value.ravel().tolist()]
        return {"array": {"kind": "f" if value.dtype.kind == "f" else "i",
                          "shape": list(value.shape), "values": flat}}
    return {"unsupported": type(value).__name__}


def _tree(expr, budget):
    budget.spend()
    if isinstance(expr, sp.Symbol):
        return {"symbol": expr.name}
    if isinstance(expr, sp.Integer):
        return {"int": str(int(expr))}
    if isinstance(expr, sp.Rational):
        return {"frac": [str(expr.p), str(expr.q)]}
    if isinstance(expr, sp.Float):
        return {"float": repr(float(expr))}
    for name, constant in _CONSTANTS.items():
        if expr == constant:
            return {"constant": name}
    name = type(expr).__name__
    if name not in _FUNCTIONS or not expr.args:
        raise ValueError(f"sympy {name}")
    return {"call": name, "args": [_tree(arg, budget) for arg in expr.args]}


# ------------------------------------------------------------------------------- decoding
def decode(data) -> object:
    """The answer :func:`encode` encoded; what cannot be read is :class:`Unsupported`.

    Examples
    --------
    >>> decode({"int": "12"}), decode({"array": {"kind": "f", "shape": [2],
    ...                                          "values": ["0.5", "1.0"]}})
    (12, array([0.5, 1. ]))
    >>> decode({"call": "eval"})
    <an answer of type a malformed answer, which the checker cannot read>
    """
    try:
        return _decode(data, _Budget())
    except (_TooBig, ValueError, TypeError, KeyError, IndexError, OverflowError,
            ZeroDivisionError, RecursionError):
        return Unsupported("a malformed answer")


def _decode(data, budget):
    budget.spend()
    if data is None or isinstance(data, bool):
        return data
    if not isinstance(data, dict) or len(data) != 1:
        raise ValueError("not an encoded answer")
    (tag, value), = data.items()
    if tag == "ellipsis":
        return Ellipsis
    if tag == "str":
        return _text(value)
    if tag == "int":
        return int(_text(value))
    if tag == "frac":
        return Fraction(int(_text(value[0])), int(_text(value[1])))
    if tag == "float":
        return float(_text(value))
    if tag == "complex":
        return complex(float(_text(value[0])), float(_text(value[1])))
    if tag in ("tuple", "list"):
        items = [_decode(v, budget) for v in _sequence(value)]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        return {_text(k): _decode(v, budget) for k, v in _sequence(value)}
    if tag == "array":
        shape = [int(n) for n in _sequence(value["shape"])]
        budget.spend(math.prod(shape))
        if value["kind"] == "f":
            flat = np.array([float(_text(v)) for v in _sequence(value["values"])])
        else:
            flat = np.array([int(v) for v in _sequence(value["values"])], dtype=np.int64)
        return flat.reshape(shape)
    if tag == "sympy":
        return _expression(value, budget)
    if tag == "unsupported":
        return Unsupported(_text(value))
    raise ValueError(f"unknown tag {tag!r}")


def _text(value) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise ValueError("not a short string")
    return value


def _sequence(value) -> list:
    if not isinstance(value, list):
        raise ValueError("not a list")
    return value


def _expression(node, budget):
    budget.spend()
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise ValueError("not an expression node")
    if "symbol" in node:
        return sp.Symbol(_text(node["symbol"]))
    if "int" in node:
        return sp.Integer(int(_text(node["int"])))
    if "frac" in node:
        return sp.Rational(int(_text(node["frac"][0])), int(_text(node["frac"][1])))
    if "float" in node:
        return sp.Float(float(_text(node["float"])))
    if "constant" in node:
        return _CONSTANTS[_text(node["constant"])]
    function = _FUNCTIONS[_text(node["call"])]
    return function(*[_expression(arg, budget) for arg in _sequence(node["args"])])


# ------------------------------------------------------------------------- typed expressions
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd, ast.Mod,
              ast.FloorDiv)


def _safe(node) -> bool:
    """Only numbers, names, arithmetic and calls of :data:`_FUNCTIONS` by name."""
    if isinstance(node, ast.Expression):
        return _safe(node.body)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, complex)) and not isinstance(node.value,
                                                                                   bool)
    if isinstance(node, ast.Name):
        return not node.id.startswith("_")
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _OPERATORS) and _safe(node.left) and _safe(node.right)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, _OPERATORS) and _safe(node.operand)
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
                and not node.keywords and all(_safe(arg) for arg in node.args))
    return False


class _SympyNumbers(ast.NodeTransformer):
    """Numbers as sympy numbers (``1/2`` is a Rational, as sympy's own parser reads it)."""

    def visit_Constant(self, node):
        return ast.Call(func=ast.Name(id="_number", ctx=ast.Load()), args=[node], keywords=[])


def _sympy_number(value):
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, float):
        return sp.Float(repr(value))
    return sp.sympify(value)                      # complex: a + b*I


def parse_expression(text: str, symbols: dict | None = None):
    """The sympy expression a typed answer spells, or ``None`` where it is not one.

    Parameters
    ----------
    text : str
        Python syntax: numbers, names (symbols), ``+ - * / ** %``, brackets and calls of the
        functions in :data:`_FUNCTIONS` (``sqrt``, ``log``, ``Abs``, ...).
    symbols : dict, optional
        ``{name: sympy object}`` for names that mean something other than a plain symbol.

    Examples
    --------
    >>> parse_expression("2*(1 - p)**2", {})
    2*(1 - p)**2
    >>> parse_expression("open('f').read()") is None
    True
    """
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    if not _safe(tree):
        return None
    tree = ast.fix_missing_locations(_SympyNumbers().visit(tree))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} - {"_number"}
    local = {name: sp.Symbol(name) for name in names}
    local.update({k: v for k, v in _CONSTANTS.items() if k in names and k.isidentifier()})
    local.update({k: v for k, v in (symbols or {}).items() if k in names})
    local.update({k: _FUNCTIONS[k] for k in names if k in _FUNCTIONS})
    local["_number"] = _sympy_number
    try:
        value = eval(compile(tree, "<answer>", "eval"), {"__builtins__": {}}, local)  # noqa: S307
    except Exception:  # noqa: BLE001 - arithmetic on a typed answer may fail in many ways
        return None
    if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
        value = sp.sympify(value)
    return value if isinstance(value, sp.Basic) else None
