"""Sphinx extension: let references to calnotes' flat public names resolve.

The API reference (book/appendix/api/*.md, one page per module) documents every function and class under the module
that defines it, e.g. ``calnotes.core.measures.l2_qece``. The package re-exports them flat, and the
book and docstrings may write ``{func}`calnotes.l2_qece``` (or ``calnotes.SomeClass.method``):
this handler resolves such a reference to the documented definition, also through a
subpackage's re-exports (``calnotes.data.build_suite`` is ``calnotes.data.suites.build_suite``).

A short name in a docstring (``:func:`evaluate```, ``:meth:`EvaluationReport.write```) is
looked up in the module the docstring belongs to, then in its package and the packages above
it, down through their submodules: ``evaluate`` in ``calnotes.evaluation.report`` is
``calnotes.evaluation.entry.evaluate``, the one documented ``evaluate`` of the package.  A
name that is neither documented nor re-exported, or documented more than once at the nearest
level, still fails the ``-n -W`` build.
"""

from __future__ import annotations

import importlib
import inspect


def _lookup(target: str):
    """The object a dotted calnotes name refers to, through re-exports, or None."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):  # the longest importable module prefix
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name, None)
            if obj is None:
                return None
        return obj
    return None


def _resolve_in_package(app, env, node, contnode):
    """A short target resolved in the nearest enclosing calnotes package that documents it
    exactly once (see the module docstring)."""
    target = node.get("reftarget", "").lstrip("~.")
    module = node.get("py:module") or ""
    if not module.startswith("calnotes") or target.startswith("calnotes."):
        return None
    domain = env.get_domain("py")
    kinds = set(domain.objtypes_for_role(node["reftype"]) or ())    # :func: -> functions
    names = [n for n, entry in domain.objects.items() if entry.objtype in kinds]
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut]) + "."
        found = [n for n in names if n.startswith(prefix) and n.endswith("." + target)]
        if len(found) == 1:
            return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"],
                                       found[0], node, contnode)
        if found:
            return None
    return None


def _resolve_flat_name(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if not target.startswith("calnotes."):
        return _resolve_in_package(app, env, node, contnode)
    head, dot, attribute = target, "", ""
    obj = _lookup(target)
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        head, dot, attribute = target.rpartition(".")  # calnotes.X.Class.method
        obj = _lookup(head)
        if not inspect.isclass(obj):
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
