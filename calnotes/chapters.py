"""Find the book's chapters, read their ``parameters`` cells, and rerun one with new values.

A chapter is a MyST markdown notebook listed in ``_toc.yml``; its first code cell tagged
``parameters`` holds ``name = literal  # comment`` lines.  :func:`run_chapter` converts the
chapter with jupytext and executes it with papermill, which injects the new values after
that cell -- the same mechanism as ``papermill in.ipynb out.ipynb -p name value``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Chapter", "find_book_root", "list_chapters", "get_chapter", "parse_value",
           "run_chapter"]


@dataclass(frozen=True)
class Chapter:
    """A chapter of the book."""

    name: str          #: short name: the file stem (``measures``)
    docname: str       #: path below the book root without suffix (``book/foundations/measures``)
    path: Path         #: the ``.md`` (or ``.ipynb``) file
    title: str         #: first ``# `` heading
    parameters: dict   #: ``{name: (value, comment)}`` from the parameters cell


def find_book_root(start: str | Path | None = None) -> Path:
    """The folder holding ``_toc.yml``: searched upwards from ``start`` (default: the current
    directory), then next to the installed package (an editable install in the repository).
    """
    candidates = []
    here = Path(start or Path.cwd()).resolve()
    candidates.extend([here, *here.parents])
    candidates.append(Path(__file__).resolve().parent.parent)
    for folder in candidates:
        if (folder / "_toc.yml").is_file():
            return folder
    raise FileNotFoundError(
        "no _toc.yml found above the current directory or next to the calnotes package;"
        " run from inside the calnotes repository or pass --book DIR"
    )


def _toc_files(root: Path) -> list[str]:
    files = re.findall(r"^\s*-?\s*(?:file|root):\s*(\S+)\s*$", (root / "_toc.yml").read_text(),
                       flags=re.MULTILINE)
    return files


def _code_cells(text: str):
    """(tags line, source) of each ```{code-cell} block of a MyST notebook."""
    pattern = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
    for match in pattern.finditer(text):
        body = match.group(1)
        options, source = [], []
        lines = body.splitlines()
        i = 0
        while i < len(lines) and lines[i].startswith(":"):
            options.append(lines[i])
            i += 1
        source = "\n".join(lines[i:])
        yield "\n".join(options), source


def parse_parameters(source: str) -> dict:
    """``{name: (value, comment)}`` from a parameters cell of literal assignments.

    Examples
    --------
    >>> parse_parameters("n = 200  # samples\\nseed = 0")
    {'n': (200, 'samples'), 'seed': (0, '')}
    """
    out = {}
    tree = ast.parse(source)
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                value = ast.get_source_segment(source, node.value)
            line = lines[node.lineno - 1]
            comment = line.split("#", 1)[1].strip() if "#" in line else ""
            out[node.targets[0].id] = (value, comment)
    return out


def _read_chapter(root: Path, docname: str) -> Chapter | None:
    for suffix in (".md", ".ipynb"):
        path = root / (docname + suffix)
        if path.is_file():
            break
    else:
        return None
    if path.suffix != ".md":
        return None
    text = path.read_text()
    title_match = re.search(r"^# (.+)$", text, flags=re.MULTILINE)
    parameters = {}
    for options, source in _code_cells(text):
        if re.search(r"tags:.*\bparameters\b", options):
            parameters = parse_parameters(source)
            break
    return Chapter(name=path.stem, docname=docname, path=path,
                   title=title_match.group(1).strip() if title_match else path.stem,
                   parameters=parameters)


def list_chapters(root: str | Path | None = None) -> list[Chapter]:
    """Every executable chapter in ``_toc.yml`` order."""
    root = find_book_root(root)
    chapters = []
    for docname in _toc_files(root):
        chapter = _read_chapter(root, docname.removesuffix(".md"))
        if chapter is not None and chapter.parameters:
            chapters.append(chapter)
    return chapters


def get_chapter(name: str, root: str | Path | None = None) -> Chapter:
    """A chapter by short name (``measures``) or docname (``book/foundations/measures``)."""
    chapters = list_chapters(root)
    for chapter in chapters:
        if name in (chapter.name, chapter.docname):
            return chapter
    raise ValueError(
        f"CHAPTER: no chapter {name!r}; choose one of {[c.name for c in chapters]}"
    )


def parse_value(text: str):
    """A command-line value: a Python literal when it parses as one, else the string.

    Examples
    --------
    >>> parse_value("20"), parse_value("0.5"), parse_value("True"), parse_value("runs/x.npz")
    (20, 0.5, True, 'runs/x.npz')
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def run_chapter(name: str, parameters: dict, out_dir: str | Path, *, force: bool = False,
                root: str | Path | None = None, kernel: str = "python3") -> Path:
    """Execute one chapter with new parameter values; return the executed notebook's path.

    Parameters
    ----------
    name : str
        Chapter short name or docname (see :func:`list_chapters`).
    parameters : dict
        New values; every name must exist in the chapter's parameters cell.
    out_dir : path
        Folder for ``<name>.ipynb`` (created if missing).
    force : bool
        Overwrite an existing output notebook.

    Raises
    ------
    ValueError
        Unknown chapter or parameter name.
    FileExistsError
        The output exists and ``force`` is false.
    RuntimeError
        A cell of the chapter failed (the message names the cell and the error).
    """
    chapter = get_chapter(name, root)
    unknown = sorted(set(parameters) - set(chapter.parameters))
    if unknown:
        raise ValueError(
            f"-p: chapter {chapter.name!r} has no parameter(s) {unknown};"
            f" its parameters are {sorted(chapter.parameters)}"
        )
    out_dir = Path(out_dir)
    target = out_dir / f"{chapter.name}.ipynb"
    if target.exists() and not force:
        raise FileExistsError(f"--out: {target} exists; pass --force to overwrite it")
    try:
        import jupytext
        import papermill
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"running a chapter needs the book toolchain ({exc.name}); install calnotes[book]"
        ) from None
    # The chapter runs in its own folder: pass files named relative to here as absolute paths.
    parameters = {key: str(Path(value).resolve())
                  if isinstance(value, str) and Path(value).exists() else value
                  for key, value in parameters.items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    notebook = jupytext.read(chapter.path)
    notebook.metadata["kernelspec"] = {"name": kernel, "display_name": "Python 3",
                                       "language": "python"}
    source = out_dir / f".{chapter.name}.input.ipynb"
    jupytext.write(notebook, source)
    try:
        papermill.execute_notebook(str(source), str(target), parameters=parameters,
                                   kernel_name=kernel, cwd=str(chapter.path.parent),
                                   progress_bar=False)
    except papermill.PapermillExecutionError as exc:
        raise RuntimeError(
            f"chapter {chapter.name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
            f" (the notebook up to the failure is {target})") from None
    finally:
        source.unlink(missing_ok=True)
    return target
