"""The box that opens each chapter: its claims' status and the command that reruns it.

:func:`chapter_status` counts the registered claims a chapter asserts (those that agree with
their paper and the errata: claims registered as disagreeing) and builds the exact
``calnotes run`` command for the chapter.  In a notebook the result displays as a small box
linking to the verification ledger and the errata page; the chapter's own cells assert every
claim, so a built book shows only statuses that held when it was built.  A chapter without
registered claims has no claims line; a figure page (``*/figures/*``) gets a one-line rerun
hint instead of the box, and the book's first page (``root:`` in ``_toc.yml``) none at all.
"""

from __future__ import annotations

import html
import posixpath
from dataclasses import dataclass

from ._registry import all_claims

__all__ = ["ChapterStatus", "chapter_status"]

_LEDGER = "book/appendix/ledger"
_ERRATA = "book/appendix/errata"


@dataclass(frozen=True)
class ChapterStatus:
    """Claims of one chapter and its rerun command.

    Attributes
    ----------
    docname : str
        The chapter's path below the book root without suffix (``book/foundations/measures``).
    agree, errata : int
        Claims the chapter asserts that are verified (agree with their paper, each with a
        rejected negative control), and errata (disagree with the printed text).
    illustrations, findings : int
        Claims that agree without a control that could fail (illustrations), and results on
        our substitute data (findings).
    command : str
        The ``calnotes run`` command that reruns the chapter with a new parameter value.
    parameters : tuple of str
        The names of the chapter's parameters.
    kind : str
        ``"chapter"`` (the full box), ``"figure"`` (a figure page, ``*/figures/*``: one line,
        the rerun command and the download link) or ``"root"`` (the book's first page: no
        box at all).
    """

    docname: str
    agree: int
    errata: int
    command: str
    parameters: tuple
    illustrations: int = 0
    findings: int = 0
    kind: str = "chapter"

    def _counts(self) -> list:
        parts = [(self.agree, "verified", "verified"), (self.illustrations, "illustration",
                                                        "illustrations"),
                 (self.errata, "erratum", "errata"), (self.findings, "finding on our data",
                                                      "findings on our data")]
        return [f"{n} {one if n == 1 else many}" for n, one, many in parts if n]

    def _link(self, target: str) -> str:
        return posixpath.relpath(target, posixpath.dirname(self.docname)) + ".html"

    def text(self) -> str:
        """One plain-text line per fact (what the box shows; empty on the root page)."""
        if self.kind == "root":
            return ""
        counts = self._counts()
        lines = ["claims checked here: " + ", ".join(counts)] if counts else []
        return "\n".join(lines + [f"rerun with new parameters: {self.command}"])

    def _repr_html_(self) -> str:
        """The box: the claims' counts (a chapter with none has no such line), the rerun
        command with the parameters' names and the notebook download; on a figure page the
        rerun command and the download in one line; on the root page nothing."""
        if self.kind == "root":
            return ""
        command = f"<code>{html.escape(self.command)}</code>"
        download = (f'<a href="{self._notebook_link()}" download>download it as a'
                    " notebook</a>")
        if self.kind == "figure":
            return (f'<p class="chapter-rerun">Rerun this figure page: {command}, or'
                    f" {download}.</p>")
        counts = self._counts()
        claims = (f"<p>Claims checked in this chapter: {', '.join(counts)} (see the"
                  f' <a href="{self._link(_LEDGER)}">verification ledger</a> and the'
                  f' <a href="{self._link(_ERRATA)}">errata</a>).</p>') if counts else ""
        params = ", ".join(f"<code>{html.escape(p)}</code>" for p in self.parameters)
        return ('<div class="admonition note chapter-box">'
                '<p class="admonition-title">This chapter</p>'
                f"{claims}"
                f"<p>Rerun it with new parameters: {command} (parameters: {params}), or"
                f" {download} (numbers of this build filled in; runs in plain Jupyter).</p>"
                "</div>")

    def _ipython_display_(self):
        """Shown as :meth:`_repr_html_` (and :meth:`text` in plain text); nothing at all on
        the root page, where a notebook cell then has no output."""
        if self.kind == "root":
            return
        from IPython.display import display
        display({"text/plain": self.text(), "text/html": self._repr_html_()}, raw=True)

    def _notebook_link(self) -> str:
        """Where the build puts this chapter as a plain Jupyter notebook (book/_ext/calnotes_html.py)."""
        return posixpath.relpath(f"_notebooks/{self.docname}.ipynb",
                                 posixpath.dirname(self.docname))


def _example(chapter) -> str:
    params = chapter.parameters
    if "predictions" in params:
        return "-p predictions my_predictions.npz"
    if "seed" in params:
        return "-p seed 1"
    name, (value, _) = next(iter(params.items()))
    return f"-p {name} {value}"


def chapter_status(docname: str, root=None) -> ChapterStatus:
    """Status box of chapter ``docname`` (its path below the book root, no suffix).

    Examples
    --------
    >>> status = chapter_status("book/truthfulness/table1")
    >>> status.command
    'calnotes run table1 --out runs/table1 -p seed 1'
    >>> status.agree > 0 and status.errata > 0
    True
    >>> [chapter_status(d).kind for d in ("book/intro", "book/truthfulness/figures/table1_grid")]
    ['root', 'figure']
    """
    from ..chapters import list_chapters

    chapters = {c.docname: c for c in list_chapters(root)}
    if docname not in chapters:
        raise ValueError(f"docname: {docname!r} is not a chapter of the book; chapters:"
                         f" {sorted(chapters)}")
    chapter = chapters[docname]
    mine = [c for c in all_claims() if c.chapter == docname]
    def count(expect):
        return sum(c.expect == expect for c in mine)

    command = f"calnotes run {chapter.name} --out runs/{chapter.name} {_example(chapter)}"
    kind = ("root" if docname == _toc_root(root) else
            "figure" if "/figures/" in f"/{docname}" else "chapter")
    return ChapterStatus(docname=docname, agree=count("agrees"), errata=count("disagrees"),
                         command=command, parameters=tuple(chapter.parameters),
                         illustrations=count("illustrates"), findings=count("finding"),
                         kind=kind)


def _toc_root(root=None) -> str | None:
    """The docname of the book's first page (``root:`` in ``_toc.yml``)."""
    import re

    from ..chapters import find_book_root

    text = (find_book_root(root) / "_toc.yml").read_text()
    found = re.search(r"^root:\s*(\S+)\s*$", text, flags=re.MULTILINE)
    return found.group(1).removesuffix(".md") if found else None
