"""scripts/course.py loaded as a module, once, for the tests that use its functions."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def course_script():
    """scripts/course.py as a module (registered in sys.modules: its dataclasses need it)."""
    spec = importlib.util.spec_from_file_location("calnotes_course_script",
                                                  ROOT / "scripts" / "course.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
