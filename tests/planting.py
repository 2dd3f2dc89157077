"""Planting a slip in the library, for the claims' power suite (tests/test_claim_power.py).

A :class:`Plant` names a library object (``"calnotes.core.measures.l2_qece"``), a function that
turns the original into a plausible slip of it (a constant 10% off, ``n`` for ``n - 1``, a
bin edge moved, a term dropped, arguments of an asymmetric divergence swapped), and the
registered claims that reach it. :func:`planted` installs the slip everywhere the library
holds the original object -- in every ``calnotes`` module that imported it by name, not
only where it is defined -- and clears the library's ``functools.lru_cache`` caches before and
after, so that no instance computed before the plant (or with it) survives.

A plant must be *silent*: the slipped library still runs and returns numbers; only a claim
that comes out other than registered (a check that disagrees, a control that is no longer
rejected) catches it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Plant:
    """One plausible slip, and the claims that should catch it.

    Attributes
    ----------
    name : str
        What the slip is, in a few words (``"l2_qece: mean over bins instead of weighted"``).
    target : str
        Dotted path of the object slipped: a module attribute (``"calnotes.core.scores.brier"``)
        or a class attribute (``"calnotes.core.kernel.NadarayaWatson.predict"``).
    make : callable
        ``make(original) -> slipped``: the slipped object (usually a wrapper, or a copy of the
        function with one line changed).
    claims : tuple of str
        Registered claims whose checks reach the target: the suite runs these (with their
        controls) at smoke size and requires at least one to come out other than registered.
    """

    name: str
    target: str
    make: Callable
    claims: tuple

    def __post_init__(self):
        object.__setattr__(self, "claims", tuple(self.claims))
        if not self.claims:
            raise ValueError(f"plant {self.name!r}: name the claims that reach {self.target}")


def _resolve(target: str):
    """``(owner, attribute name)`` of a dotted path: the longest importable module prefix,
    then attributes."""
    parts = target.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:-1]:
            owner = getattr(owner, name)
        if not hasattr(owner, parts[-1]):
            raise AttributeError(f"{target}: {owner!r} has no attribute {parts[-1]!r}")
        return owner, parts[-1]
    raise ImportError(f"{target}: no importable module prefix")


def clear_caches() -> None:
    """Clear every ``functools.lru_cache`` held at module level by a ``calnotes`` module."""
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("calnotes") or mod is None:
            continue
        for value in list(vars(mod).values()):
            if isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()


@contextlib.contextmanager
def planted(plant: Plant):
    """Install ``plant`` for the duration of the block (everywhere the library binds the
    original object), with the library's caches cleared on entry and on exit."""
    owner, attr = _resolve(plant.target)
    original = getattr(owner, attr)
    slipped = plant.make(original)
    if slipped is original:
        raise ValueError(f"plant {plant.name!r}: make() returned the original object")
    undo = [(owner, attr, original)]
    setattr(owner, attr, slipped)
    # Module-level functions (and classes) are often imported by name into other modules:
    # replace every binding of the very same object there too.
    if callable(original) and not isinstance(owner, type):
        for mod_name, mod in list(sys.modules.items()):
            if not mod_name.startswith("calnotes") or mod is None or mod is owner:
                continue
            for name, value in list(vars(mod).items()):
                if value is original:
                    undo.append((mod, name, value))
                    setattr(mod, name, slipped)
    clear_caches()
    try:
        yield slipped
    finally:
        for obj, name, value in reversed(undo):
            setattr(obj, name, value)
        clear_caches()


def wrap_result(transform: Callable) -> Callable:
    """``make`` for a slip of the returned value: ``transform(value, *args, **kwargs)``."""
    def make(original):
        @functools.wraps(original)
        def slipped(*args, **kwargs):
            return transform(original(*args, **kwargs), *args, **kwargs)
        return slipped
    return make


def scale_result(factor: float) -> Callable:
    """``make`` for a slip that multiplies the returned value by ``factor``."""
    return wrap_result(lambda value, *a, **k: value * factor)


def with_kwargs(**changes) -> Callable:
    """``make`` for a slip that calls the original with some keyword arguments changed
    (a default moved: ``with_kwargs(bandwidth=0.1)``)."""
    def make(original):
        @functools.wraps(original)
        def slipped(*args, **kwargs):
            return original(*args, **{**kwargs, **changes})
        return slipped
    return make
