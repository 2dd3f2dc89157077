"""environment.yml (conda) must list the same dependencies as pyproject.toml.

Checked: ``project.dependencies`` and the ``book``, ``test`` and ``data`` extras, each with the same
version specifier, and nothing else (apart from python, pip and the editable install of the
package itself).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("book", "test", "data")
# environment.yml entries that are not dependencies of the package
NOT_DEPENDENCIES = {"python", "pip"}

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?$")


def _normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _normalize_spec(spec: str) -> str:
    parts = [p for p in re.sub(r"\s+", "", spec).split(",") if p]
    return ",".join(sorted(parts))


def _parse(requirement: str) -> tuple[str, str]:
    match = _REQ.match(requirement)
    assert match, f"cannot parse requirement {requirement!r}"
    return _normalize_name(match.group(1)), _normalize_spec(match.group(2))


def _pyproject() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project.get("dependencies", []))
    for extra in EXTRAS:
        requirements += project["optional-dependencies"][extra]
    deps: dict[str, str] = {}
    for req in requirements:
        name, spec = _parse(req)
        assert deps.get(name, spec) == spec, (
            f"{name}: pyproject.toml gives two different specifiers, {deps[name]!r} and {spec!r}"
        )
        deps[name] = spec
    return deps


def _environment() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    entries: list[str] = []
    for item in env["dependencies"]:
        if isinstance(item, dict):
            entries += [e for e in item["pip"] if not e.startswith("-")]  # skip `-e .`
        else:
            entries.append(item)
    deps: dict[str, str] = {}
    for entry in entries:
        name, spec = _parse(entry)
        if name in NOT_DEPENDENCIES:
            continue
        assert name not in deps, f"{name}: listed twice in environment.yml"
        deps[name] = spec
    return deps


PYPROJECT = _pyproject()
ENVIRONMENT = _environment()


@pytest.mark.parametrize("name", sorted(PYPROJECT))
def test_pyproject_dependency_is_in_environment_yml(name: str) -> None:
    assert name in ENVIRONMENT, f"{name}: in pyproject.toml but missing from environment.yml"
    assert ENVIRONMENT[name] == PYPROJECT[name], (
        f"{name}: environment.yml has {ENVIRONMENT[name]!r}, "
        f"pyproject.toml has {PYPROJECT[name]!r}"
    )


@pytest.mark.parametrize("name", sorted(ENVIRONMENT))
def test_environment_yml_dependency_is_in_pyproject(name: str) -> None:
    assert name in PYPROJECT, (
        f"{name}: in environment.yml but not a dependency of pyproject.toml "
        f"(project.dependencies or the {' / '.join(EXTRAS)} extras)"
    )


def test_environment_yml_pins_python_311() -> None:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]
