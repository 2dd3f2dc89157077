"""Sphinx extension: let references to calnotes' flat public names resolve.

The API reference (book/appendix/api.md) documents every function and class under the module
that defines it, e.g. ``calnotes.measures.l2_qece``. The package re-exports them flat, and the
book and docstrings may write ``{func}`calnotes.l2_qece``` (or ``calnotes.SomeClass.method``):
this handler resolves such a reference to the documented definition. A name that is neither documented nor re-exported
still fails the ``-n -W`` build.
"""

from __future__ import annotations

import importlib
import inspect


def _resolve_flat_name(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    package, _, rest = target.partition(".")
    name, dot, attribute = rest.partition(".")  # calnotes.NAME or calnotes.Class.method
    if package != "calnotes" or not name:
        return None
    obj = getattr(importlib.import_module("calnotes"), name, None)
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return None
    canonical = f"{obj.__module__}.{obj.__qualname__}{dot}{attribute}"
    if canonical == target:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], canonical,
                               node, contnode)


def setup(app):
    app.connect("missing-reference", _resolve_flat_name)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
