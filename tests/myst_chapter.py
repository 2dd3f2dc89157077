"""A chapter for the tests' small books: the header jupytext and myst-nb read a MyST notebook
by, then the chapter's own Markdown and code cells."""

from __future__ import annotations

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def myst_chapter(body: str) -> str:
    """``body`` (a title, then cells) as the text of a MyST notebook file."""
    return HEADER + "\n" + body
