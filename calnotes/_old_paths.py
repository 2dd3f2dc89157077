"""Old import paths of the modules that moved into the package's groups.

``calnotes.measures`` is now ``calnotes.core.measures``, ``calnotes._evalrows`` is
``calnotes._engine.rows``, and so on (:data:`MOVED`).  For one release the old paths keep
working: ``import calnotes.measures``, ``from calnotes import measures`` and
``from calnotes.measures import l2_qece`` give the moved module itself -- the same object, so
patching it patches the module.  :class:`OldPaths` is the import hook that reads the table;
``calnotes/__init__.py`` installs it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: Old module name under ``calnotes`` -> its new name under ``calnotes``.
MOVED = {
 "binning": "core.binning", "measures": "core.measures", "scores": "core.scores",
 "expectation": "core.expectation", "kernel": "core.kernel", "reliability": "core.reliability",
 "plotting": "core.plotting", "_measure_spec": "core.measure_spec",
 "population": "theory.population", "decisions": "theory.decisions",
 "sharpness": "theory.sharpness", "utility": "theory.utility", "patching": "theory.patching",
 "skce": "theory.skce", "estimators": "theory.estimators", "symbolic": "theory.symbolic",
 "table1": "theory.table1", "rankings": "theory.rankings",
 "_sorted": "_engine.sorted_columns", "_evalrows": "_engine.rows", "_binstats": "_engine.bin_stats",
 "_ties": "_engine.ties", "_pool": "_engine.pool", "_rowsort": "_engine.row_sort",
 "_uc_two": "_engine.utility_two_class", "poisson_binomial": "_engine.poisson_binomial",
 "significance": "_engine.significance", "scale": "_engine.out_of_core",
 "inputs": "evaluation.inputs", "coverage": "evaluation.coverage",
 "chapters": "book.chapters", "notebook_markdown": "book.notebook_markdown",
 "exercises": "book.exercises", "coursework": "book.coursework", "tables": "book.tables",
 "claims": "book.claims", "_answers": "book._answers",
 "_notebook_worker": "book._notebook_worker", "_sandbox": "book._sandbox",
}


def new_name(fullname: str) -> str:
    """The new dotted name of ``fullname`` (itself when it did not move).

    Examples
    --------
    >>> new_name("calnotes.claims.status"), new_name("calnotes.evaluation")
    ('calnotes.book.claims.status', 'calnotes.evaluation')
    """
    parts = fullname.split(".")
    if len(parts) < 2 or parts[0] != "calnotes" or parts[1] not in MOVED:
        return fullname
    return ".".join(["calnotes", *MOVED[parts[1]].split("."), *parts[2:]])


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module at its new name (imported first if need be)."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec        # the import system set the alias's spec on it


class OldPaths(importlib.abc.MetaPathFinder):
    """Finds ``calnotes.<old name>[.<submodule>]`` as the moved module (before the file system
    is searched, so that a moved package's submodules are never loaded twice)."""

    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new == fullname:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put :class:`OldPaths` first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, OldPaths())
