"""Output folders that calnotes refuses: its own sources.

A command that writes files (``calnotes run --out``, ``calnotes evaluate --out``,
``calnotes check-notebook --out``, a chapter's ``-p report_dir``) must not write into the
folders the repository is built from: an executed ``intro.ipynb`` beside ``book/intro.md``
makes Jupyter Book find two files for one page (and ``make book`` fails), and with
``--force`` a run into ``book/truthfulness/figures`` would replace a figure page's tracked
source notebook.  :func:`refuse_source_folder` is the one rule for all of them; ``--force``
does not lift it.

Refused, each after symbolic links and ``..`` are resolved (and compared by file identity
where the folder exists, so another spelling of the same folder is refused too):

* any folder at or below a folder of the book's sources: the top-level folders that hold
  the chapters listed in ``_toc.yml`` (``book/``); a chapter listed directly in the book
  root makes the book root itself refused (not the folders below it);
* the ``calnotes`` package folder and anything below it;
* in a source checkout of calnotes (a folder holding ``.git`` and a ``pyproject.toml``
  naming the project ``calnotes``, the book root or the folder above the package): the
  checkout's root itself, and anything at or below its ``tests/``, ``calnotes/`` and
  ``.git/``.

Other folders of the repository are allowed: ``runs/`` (git-ignored) is where the README's
examples write.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["refuse_source_folder", "source_folders"]


def _is_source_checkout(folder: Path) -> bool:
    """Whether ``folder`` is the root of a calnotes source checkout."""
    pyproject = folder / "pyproject.toml"
    if not (folder / ".git").exists() or not pyproject.is_file():
        return False
    try:
        text = pyproject.read_text(errors="replace")
    except OSError:
        return False
    return re.search(r"""^\s*name\s*=\s*["']calnotes["']""", text, flags=re.MULTILINE) \
        is not None


def _book_roots(root) -> list[Path]:
    """The book roots to protect: the one found from ``root`` (or the current folder) and
    the one next to the installed package (an editable install), where they exist."""
    from .book.chapters import find_book_root

    roots = []
    try:
        roots.append(find_book_root(root))
    except (FileNotFoundError, OSError):
        pass
    beside = Path(__file__).resolve().parent.parent
    if (beside / "_toc.yml").is_file():
        roots.append(beside)
    return list(dict.fromkeys(roots))


def source_folders(root: str | os.PathLike | None = None) -> list[tuple[Path, bool, str]]:
    """The protected folders, as ``(folder, below, what)`` triples.

    ``below`` is true where the folders below ``folder`` are protected too (false: only
    ``folder`` itself); ``what`` names the folder in a message.  ``root`` is the book root
    (the folder holding ``_toc.yml``; default: found from the current folder).

    Examples
    --------
    >>> import calnotes
    >>> from pathlib import Path
    >>> package = Path(calnotes.__file__).resolve().parent
    >>> (package, True, "the calnotes package") in source_folders()
    True
    """
    from .book.chapters import _toc_files

    found: list[tuple[Path, bool, str]] = []
    package = Path(__file__).resolve().parent
    found.append((package, True, "the calnotes package"))
    candidates = _book_roots(root)
    for book in candidates:
        try:
            entries = _toc_files(book)
        except OSError:
            entries = []
        for entry in entries:
            parts = Path(entry).parts
            if len(parts) > 1:
                found.append(((book / parts[0]).resolve(), True, "the book's sources"))
            elif parts:
                found.append((book.resolve(), False, "the book's root"))
    for checkout in [*candidates, package.parent]:
        if _is_source_checkout(checkout):
            checkout = checkout.resolve()
            found.append((checkout, False, "the root of the calnotes repository"))
            for name, what in (("tests", "the repository's tests"),
                               ("calnotes", "the calnotes package"),
                               (".git", "the repository's .git folder")):
                found.append((checkout / name, True, what))
    unique = {}
    for folder, below, what in found:
        key = (folder, below)
        unique.setdefault(key, (folder, below, what))
    return list(unique.values())


def _stat(path: Path):
    try:
        return os.stat(path)
    except OSError:
        return None


def refuse_source_folder(path: str | os.PathLike, argument: str = "out (command line: --out)",
                         *, root: str | os.PathLike | None = None) -> Path:
    """Refuse an output folder inside calnotes' own sources; return it resolved.

    Checked before anything is computed or written; ``force`` never lifts it (a forced run
    must not overwrite a tracked source).  The protected folders are listed in the module
    docstring (:func:`source_folders`).

    Parameters
    ----------
    path : str or path-like
        The output folder (it need not exist yet).
    argument : str
        How the message names the argument, e.g. ``"out (command line: --out)"`` (the
        default), ``"--out"`` or ``"-p report_dir"``.
    root : str or path-like, optional
        The book root (the folder holding ``_toc.yml``); default: found from the current
        folder, and the one next to the package in an editable install.

    Returns
    -------
    pathlib.Path
        ``path`` with ``~``, symbolic links and ``..`` resolved.

    Raises
    ------
    ValueError
        ``path`` is, or lies inside, a protected folder; the message names it.

    Examples
    --------
    >>> import calnotes, tempfile
    >>> from pathlib import Path
    >>> package = Path(calnotes.__file__).resolve().parent
    >>> refuse_source_folder(package / "figures")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: out (command line: --out): .../calnotes/figures is in the calnotes package (...); calnotes writes no outputs there, with or without --force; choose another folder, e.g. runs/NAME
    >>> out = Path(tempfile.mkdtemp()) / "report"
    >>> refuse_source_folder(out) == out.resolve()
    True
    """
    resolved = Path(path).expanduser().resolve()
    chain = [resolved, *resolved.parents]
    stats = [(folder, _stat(folder)) for folder in chain]
    for folder, below, what in source_folders(root):
        protected = _stat(folder)
        for place, st in stats:
            if place != resolved and not below:
                break
            same = place == folder or (st is not None and protected is not None
                                       and os.path.samestat(st, protected))
            if same:
                where = "is in" if below else "is"
                raise ValueError(
                    f"{argument}: {resolved} {where} {what} ({folder}); calnotes writes no"
                    " outputs there, with or without --force; choose another folder, e.g."
                    " runs/NAME")
    return resolved
