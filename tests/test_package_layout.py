"""The package's layout: groups by role, old module paths kept for a release, and the theory
using the private engine only through its exported names."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import calnotes
from calnotes import _engine, _old_paths

PACKAGE = Path(calnotes.__file__).resolve().parent

#: The module paths the API page listed before the package was grouped.
OLD_API_PATHS = ["binning", "measures", "expectation", "poisson_binomial", "scores",
                 "decisions", "symbolic", "table1", "population", "kernel", "estimators",
                 "skce", "sharpness", "plotting", "tables", "claims", "recalibrate", "data",
                 "inputs", "evaluation", "reliability", "significance", "coverage", "scale",
                 "exercises", "coursework", "notebook_markdown", "rankings", "utility",
                 "patching"]


@pytest.mark.parametrize("old", OLD_API_PATHS)
def test_an_old_module_path_imports_the_moved_module(old):
    module = importlib.import_module(f"calnotes.{old}")
    new = _old_paths.new_name(f"calnotes.{old}")
    assert module is importlib.import_module(new)          # the same object: same names
    assert module.__name__ == new and module.__spec__.name == new
    public = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    assert public and all(hasattr(module, name) for name in public)
    # the attribute and the from-import forms as well
    assert getattr(calnotes, old) is module
    exec(f"from calnotes import {old} as alias", namespace := {})
    assert namespace["alias"] is module


def test_a_moved_packages_submodule_is_loaded_once():
    old = importlib.import_module("calnotes.claims.status")
    assert old is importlib.import_module("calnotes.book.claims.status")
    assert sys.modules["calnotes.claims.status"] is sys.modules["calnotes.book.claims.status"]
    from calnotes.claims.status import chapter_status
    assert chapter_status.__module__ == "calnotes.book.claims.status"


def test_an_unknown_name_is_still_an_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("calnotes.no_such_module")
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        calnotes.no_such_name  # noqa: B018


def test_the_top_level_shows_the_roles():
    """At most 15 modules and subpackages at the top of the package."""
    entries = [p for p in PACKAGE.iterdir()
               if (p.suffix == ".py" or (p / "__init__.py").is_file())]
    assert len(entries) <= 15, sorted(p.name for p in entries)
    for group in ("core", "theory", "evaluation", "_engine", "book", "data"):
        assert (PACKAGE / group / "__init__.py").is_file()


def engine_imports_outside_its_surface(source: str, package: str) -> list[str]:
    """Imports in ``source`` (a module of ``package``) of the engine's modules, or of names
    the engine does not export: the theory may use only ``calnotes._engine.__all__``."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [a.name for a in node.names]
            if target.startswith("calnotes._engine."):
                bad.append(f"from {target} import {', '.join(names)}")
            elif target == "calnotes._engine":
                bad += [f"from calnotes._engine import {n}" for n in names
                        if n not in _engine.__all__]
            elif target == "calnotes" and "_engine" in names:
                bad.append("from calnotes import _engine")
        elif isinstance(node, ast.Import):
            bad += [f"import {a.name}" for a in node.names
                    if a.name.startswith("calnotes._engine")]
    return bad


@pytest.mark.parametrize("path", sorted((PACKAGE / "theory").glob("*.py")), ids=lambda p: p.name)
def test_the_theory_uses_the_engine_only_through_its_exported_names(path):
    assert engine_imports_outside_its_surface(path.read_text(), "calnotes.theory") == []


@pytest.mark.parametrize("source", [
    "from .._engine.rows import binned_rows",
    "from .._engine import binned_rows",
    "from calnotes._engine.significance import tail_bound",
    "import calnotes._engine.pool",
    "def f():\n    from .. import _engine\n",
])
def test_the_layout_check_catches_an_engine_import(source):
    """The control: each of these reaches past the engine's exported names."""
    assert engine_imports_outside_its_surface(source, "calnotes.theory")


def test_import_calnotes_loads_neither_scipy_nor_the_claims():
    code = ("import sys, calnotes; "
            "print(any(m == 'scipy' or m.startswith('scipy.') for m in sys.modules), "
            "'calnotes.book.claims' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]
