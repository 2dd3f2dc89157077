"""Find the book's chapters, read their ``parameters`` cells, and rerun one with new values.

A chapter is a MyST markdown notebook listed in ``_toc.yml``; its first code cell tagged
``parameters`` holds ``name = literal  # comment`` lines.  :func:`run_chapter` converts the
chapter with jupytext and executes it with papermill, which injects the new values after
that cell -- the same mechanism as ``papermill in.ipynb out.ipynb -p name value``.

Parameter values
    are checked against the type of the default before anything runs
    (:func:`check_parameter`): an ``int`` default takes integers, a ``float`` default numbers
    (an integer is converted), a ``bool`` default ``True``/``False``, a ``str`` default any
    text (on the command line the text as typed: ``-p size 5`` is the string ``'5'``), a
    list default a list (a single value is wrapped: ``-p bins 10`` is ``[10]``) whose elements
    have the type of the default's elements, a tuple default a tuple of the same length.  A
    ``None`` default takes any value.
Ranges
    are checked next, from the parameter's name (:func:`check_range`): ``size`` and
    ``claim_size`` are ``"smoke"`` or ``"full"``, ``dataset`` names a shipped data set,
    ``seed`` is a non-negative integer, counts (``n``, ``k``, ``m``, ``n_*``, ``k_*``, ``m_*``,
    ``sim_*``, ``*_bins``, ``bins``, ...) are positive integers (class counts at least 2),
    ``*_fraction`` lies strictly between 0 and 1, noise levels and probabilities in [0, 1], and
    scales (bandwidth, temperature, overconfidence) are positive; a path parameter that names
    an input file must exist.  So a bad value fails in a second, before a kernel starts.
Paths
    The chapter runs in its own folder, so parameters that name files are made absolute:
    only parameters documented as paths (:func:`is_path_parameter`: ``predictions``,
    ``labels``, names ending in ``_file``, ``_path`` or ``_dir``), and only string values (or
    the strings of a list) that name an existing file or folder -- except ``_dir``
    parameters, output folders, which are always made absolute.  Any other string is passed
    as typed.
Outputs
    A run writes ``OUT/<chapter>.ipynb``, its markdown cells rewritten as plain Jupyter
    Markdown with this run's glued numbers filled in (:mod:`calnotes.notebook_markdown`); an
    existing one is kept unless ``force=True``.  A run
    whose cell fails writes ``OUT/<chapter>.failed.ipynb`` instead (replacing an earlier
    failed run's file) and leaves ``<chapter>.ipynb`` alone, so a rerun needs no ``force``.
Kernel
    The kernel talks to papermill over IPC sockets (POSIX) rather than TCP, which also keeps
    ipykernel's "running over TCP without encryption" warning off the terminal; on Windows
    the default (TCP) transport is used.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Chapter", "find_book_root", "list_chapters", "get_chapter", "parse_value",
           "check_parameter", "check_range", "is_path_parameter", "run_chapter", "RunSummary",
           "summarize_run"]

_UNSET = object()


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
    if start is not None and not Path(start).is_dir():
        raise FileNotFoundError(f"root (command line: --book): {start}: no such folder")
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


def _join(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def _read_chapter(root: Path, docname: str) -> Chapter | None:
    for suffix in (".md", ".ipynb"):
        path = root / (docname + suffix)
        if path.is_file():
            break
    else:
        return None
    parameters = {}
    if path.suffix == ".md":
        text = path.read_text()
        for options, source in _code_cells(text):
            if re.search(r"tags:.*\bparameters\b", options):
                parameters = parse_parameters(source)
                break
    else:                       # a figure page kept as a notebook (book/*/figures/*.ipynb)
        import json
        cells = json.loads(path.read_text()).get("cells", [])
        text = "\n\n".join(_join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        for cell in cells:
            if cell["cell_type"] == "code" \
                    and "parameters" in cell.get("metadata", {}).get("tags", []):
                parameters = parse_parameters(_join(cell["source"]))
                break
    title_match = re.search(r"^# (.+)$", text, flags=re.MULTILINE)
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


def parse_value(text: str, default=_UNSET):
    """A command-line value: a Python literal when it parses as one, else the string.

    With the parameter's ``default`` given, a ``str`` default keeps the text as typed (so
    ``-p size 5`` is ``'5'``, not the integer 5).

    Examples
    --------
    >>> parse_value("20"), parse_value("0.5"), parse_value("True"), parse_value("runs/x.npz")
    (20, 0.5, True, 'runs/x.npz')
    >>> parse_value("5", default="smoke")
    '5'
    """
    if isinstance(default, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


_KINDS = {bool: "True or False", int: "an integer", float: "a number", str: "a string"}


def _scalar_ok(value, kind) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


def _element_kind(default):
    kinds = {type(v) for v in default}
    return kinds.pop() if len(kinds) == 1 and next(iter(kinds)) in _KINDS else None


def check_parameter(name: str, value, default):
    """``value`` checked against the type of the parameter's ``default``; the value to inject.

    See the module docstring for the rules.  Returns the value, converted where the rule says
    so (an integer for a float default becomes a float, a scalar for a list default a
    one-element list, a list for a tuple default a tuple).

    Raises
    ------
    ValueError
        The value does not fit; the message names the parameter (``-p NAME``), the expected
        type and the default.

    Examples
    --------
    >>> check_parameter("bins", 10, [15, 20]), check_parameter("q", 1, 0.5)
    ([10], 1.0)
    >>> check_parameter("n_classes", "abc", 3)
    Traceback (most recent call last):
    ...
    ValueError: -p n_classes: expected an integer like the default 3, got 'abc'
    """
    if default is None:
        return value
    kind = type(default)
    if kind in _KINDS:
        if not _scalar_ok(value, kind):
            raise ValueError(f"-p {name}: expected {_KINDS[kind]} like the default {default!r},"
                             f" got {value!r}")
        return float(value) if kind is float else value
    if kind in (list, tuple):
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif kind is list:
            items = [value]
        else:
            raise ValueError(f"-p {name}: expected a tuple of {len(default)} values like the"
                             f" default {default!r}, got {value!r}")
        if kind is tuple:
            if len(items) != len(default):
                raise ValueError(f"-p {name}: expected {len(default)} values like the default"
                                 f" {default!r}, got {value!r}")
            kinds = [type(v) if type(v) in _KINDS else None for v in default]
        else:
            kinds = [_element_kind(default)] * len(items)
        out = []
        for item, item_kind in zip(items, kinds):
            if item_kind is not None and not _scalar_ok(item, item_kind):
                raise ValueError(f"-p {name}: element {item!r} of {value!r} is not"
                                 f" {_KINDS[item_kind]} like the default's {default!r}")
            out.append(float(item) if item_kind is float else item)
        return tuple(out) if kind is tuple else out
    return value


_CHOICES = {"size": ("smoke", "full"), "claim_size": ("smoke", "full"),
            "coverage_size": ("smoke", "full"),
            "dataset": ("mnist5k", "digits"), "kind": ("logits", "probs")}
_CLASS_COUNTS = ("k", "n_classes", "k_classes", "k_max", "sim_classes")
_UNIT_INTERVAL = ("q_demo", "eps", "eps1", "eps2", "eps3")
_POSITIVE_SCALES = ("bandwidth", "overconfidence", "saturation", "sim_temperature")


def _is_count(name: str) -> bool:
    return (name in ("n", "k", "m", "bins", "resolutions", "subsample", "milp_grid")
            or name.startswith(("n_", "k_", "m_", "sim_", "prior_", "max_"))
            or name.endswith("_bins"))


def check_range(name: str, value, root: str | Path | None = None) -> None:
    """Raise ``ValueError`` when a (type-checked) value is outside its parameter's range.

    The range comes from the parameter's name (see the module docstring); a name without a
    rule takes any value of its type.  ``root`` is where path parameters may also be found
    (the book root: chapter defaults such as ``benchmarks/results.json`` are relative to it).

    Examples
    --------
    >>> check_range("n_bins", 15), check_range("size", "full")
    (None, None)
    >>> check_range("n_bins", 0)
    Traceback (most recent call last):
    ...
    ValueError: -p n_bins: expected a positive integer, got 0
    >>> check_range("size", "huge")
    Traceback (most recent call last):
    ...
    ValueError: -p size: expected one of 'smoke', 'full', got 'huge'
    """
    if value is None:
        return
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            choices = ", ".join(repr(c) for c in _CHOICES[name])
            raise ValueError(f"-p {name}: expected one of {choices}, got {value!r}")
        return
    if is_path_parameter(name):
        if name.endswith("_dir"):
            return
        for item in items:
            if not isinstance(item, str) or not item:
                raise ValueError(f"-p {name}: expected a file name, got {item!r}")
            places = [Path(item).expanduser()]
            if root is not None and not Path(item).is_absolute():
                places.append(Path(root) / item)
            if not any(p.exists() for p in places):
                raise ValueError(f"-p {name}: no such file: {item} (relative names are read"
                                 " from the current folder)")
        return
    numbers = [v for v in items if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if name == "seed":
        if any(not isinstance(v, int) or v < 0 for v in numbers):
            raise ValueError(f"-p seed: expected a non-negative integer, got {value!r}")
    elif name in _CLASS_COUNTS:
        if any(v < 2 for v in numbers):
            raise ValueError(f"-p {name}: expected at least 2 classes, got {value!r}")
    elif name.endswith("_fraction"):
        if any(not 0 < v < 1 for v in numbers):
            raise ValueError(f"-p {name}: expected a share strictly between 0 and 1, "
                             f"got {value!r}")
    elif name in _UNIT_INTERVAL:
        if any(not 0 <= v <= 1 for v in numbers):
            raise ValueError(f"-p {name}: expected a value in [0, 1], got {value!r}")
    elif name in _POSITIVE_SCALES:
        if any(not v > 0 for v in numbers):
            raise ValueError(f"-p {name}: expected a positive number, got {value!r}")
    elif _is_count(name):
        if any(v < 1 for v in numbers):
            shown = value if isinstance(value, (list, tuple)) else value
            raise ValueError(f"-p {name}: expected a positive integer"
                             f"{'s' if len(items) > 1 else ''}, got {shown!r}")


def is_path_parameter(name: str) -> bool:
    """Whether a chapter parameter is documented as a path (resolved by :func:`run_chapter`).

    Examples
    --------
    >>> [is_path_parameter(n) for n in ("predictions", "results_file", "size", "report_dir")]
    [True, True, False, True]
    """
    return name in ("predictions", "labels") or name.endswith(("_file", "_path", "_dir"))


def _resolve_paths(name: str, value):
    if not is_path_parameter(name):
        return value
    always = name.endswith("_dir")

    def resolve(v):
        if isinstance(v, str) and v and (always or Path(v).expanduser().exists()):
            return str(Path(v).expanduser().resolve())
        return v

    if isinstance(value, list):
        return [resolve(v) for v in value]
    return resolve(value)


def _check_out_dir(out_dir: Path) -> None:
    """``--out`` must be, or become, a writable folder (checked before anything runs)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"--out: {out_dir} exists and is not a folder")
    folder = out_dir
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(f"--out: {folder} is a file, so {out_dir} cannot be a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"--out: cannot write in {folder} (permission denied)")


def _kernel_manager_class():
    """A kernel manager that uses IPC sockets on POSIX (``None``: nbclient's default)."""
    if os.name != "posix":  # pragma: no cover - IPC transport is POSIX only
        return None
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            super().__init__(**kwargs)

    return IPCKernelManager


def _python_translator():
    """papermill's Python translator with two changes (N8): a tuple is injected as a tuple
    literal (papermill writes unknown types with ``str()``, so ``(4, 60, 6)`` arrived as the
    string ``"(4, 60, 6)"``), and the parameters cell is read with :func:`parse_parameters`
    (papermill's line parser warns "Unable to parse line" on a comment holding ``=``)."""
    from papermill.models import Parameter
    from papermill.translators import PythonTranslator

    class Translator(PythonTranslator):
        @classmethod
        def translate(cls, val):
            if isinstance(val, tuple):
                items = ", ".join(cls.translate(v) for v in val)
                return f"({items}{',' if len(val) == 1 else ''})"
            return super().translate(val)

        @classmethod
        def inspect(cls, parameters_cell):
            found = parse_parameters(parameters_cell["source"])
            return [Parameter(name=key, inferred_type_name=type(value).__name__,
                              default=repr(value), help=comment)
                    for key, (value, comment) in found.items()]

    return Translator


def _register_translator(kernel: str) -> None:
    """Use :func:`_python_translator` for ``kernel`` (papermill looks the kernel name up
    before the language)."""
    from papermill.translators import papermill_translators
    papermill_translators.register(kernel, _python_translator())


def run_chapter(name: str, parameters: dict, out_dir: str | Path, *, force: bool = False,
                root: str | Path | None = None, kernel: str = "python3") -> Path:
    """Execute one chapter with new parameter values; return the executed notebook's path.

    Parameters
    ----------
    name : str
        Chapter short name or docname (see :func:`list_chapters`).
    parameters : dict
        New values; every name must exist in the chapter's parameters cell, and every value
        must fit the type of its default (:func:`check_parameter`).  Path parameters are
        made absolute (:func:`is_path_parameter`).
    out_dir : path
        Folder for ``<name>.ipynb`` (created if missing).
    force : bool
        Overwrite an existing output notebook.

    Returns
    -------
    pathlib.Path
        ``out_dir/<name>.ipynb``.

    Raises
    ------
    ValueError
        Unknown chapter or parameter name, or a value of the wrong type (before running).
    FileExistsError
        The output exists and ``force`` is false.
    NotADirectoryError, PermissionError
        ``out_dir`` is a file or cannot be written (before running).
    RuntimeError
        A cell of the chapter failed (the message names the cell, the error and the notebook
        up to the failure, ``out_dir/<name>.failed.ipynb``).
    """
    chapter = get_chapter(name, root)
    unknown = sorted(set(parameters) - set(chapter.parameters))
    if unknown:
        raise ValueError(
            f"-p: chapter {chapter.name!r} has no parameter(s) {unknown};"
            f" its parameters are {sorted(chapter.parameters)}"
        )
    parameters = {key: check_parameter(key, value, chapter.parameters[key][0])
                  for key, value in parameters.items()}
    book_root = chapter.path.parent
    while not (book_root / "_toc.yml").is_file() and book_root != book_root.parent:
        book_root = book_root.parent
    for key, value in parameters.items():
        check_range(key, value, book_root)
    out_dir = Path(out_dir)
    _check_out_dir(out_dir)
    target = out_dir / f"{chapter.name}.ipynb"
    failed = out_dir / f"{chapter.name}.failed.ipynb"
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
    parameters = {key: _resolve_paths(key, value) for key, value in parameters.items()}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise type(exc)(f"--out: cannot create the folder {out_dir} ({exc.strerror or exc})"
                        ) from None
    notebook = _read_notebook(chapter.path)
    notebook.metadata["kernelspec"] = {"name": kernel, "display_name": "Python 3",
                                       "language": "python"}
    # Executed into a hidden file, renamed when done: a failed run never replaces target.
    partial = out_dir / f".{chapter.name}.partial.ipynb"
    engine = {}
    _register_translator(kernel)
    manager = _kernel_manager_class()
    if manager is not None:
        engine["kernel_manager_class"] = manager
    try:
        papermill.execute_notebook(notebook, str(partial), parameters=parameters,
                                   kernel_name=kernel, cwd=str(chapter.path.parent),
                                   progress_bar=False, **engine)
    except papermill.PapermillExecutionError as exc:
        where = "no notebook was written"
        if partial.exists():
            os.replace(partial, failed)
            where = f"the notebook up to the failure is {failed}"
        raise RuntimeError(
            f"chapter {chapter.name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
            f" ({where})") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    try:
        _plain_markdown(partial, chapter, book_root)
    except Exception as exc:  # noqa: BLE001 - the run succeeded: keep it, as executed
        import warnings
        warnings.warn(f"{target}: the markdown was left as MyST ({type(exc).__name__}: {exc})",
                      RuntimeWarning, stacklevel=2)
    os.replace(partial, target)
    return target


def _read_notebook(path: Path):
    """A chapter as a notebook: a MyST markdown file through jupytext; a figure page's
    ``.ipynb`` as it is, given cell ids where its cells have none (older nbformat writers)."""
    import warnings

    import jupytext
    import nbformat

    from .notebook_markdown import _cell_ids
    if path.suffix != ".ipynb":
        return jupytext.read(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(nbformat.warnings, "MissingIDFieldWarning",
                                                UserWarning))
        notebook = nbformat.read(path, as_version=4)
    _cell_ids(notebook)
    return notebook


def _plain_markdown(notebook: Path, chapter: Chapter, book_root: Path) -> None:
    """Rewrite the markdown cells of an executed chapter for a plain Jupyter front end: the
    glued numbers of this run filled in, directives and references as plain Markdown
    (:mod:`calnotes.notebook_markdown`).  A glue key without a value (none in a successful
    run of the book's chapters) is marked in the text instead of failing the finished run."""
    import nbformat

    from . import notebook_markdown as nm
    nb = nbformat.read(notebook, as_version=4)
    glue = nm.glue_from_notebook(nb)
    new = nm.convert_notebook(nb, glue, nm.book_index(book_root), docname=chapter.docname,
                              missing="mark")
    nbformat.write(new, notebook)


@dataclass(frozen=True)
class RunSummary:
    """What a chapter run asserted and where its outputs are (printed by ``calnotes run``).

    Attributes
    ----------
    chapter : str
    size : str
        The size the chapter's claims ran at (its ``size``/``claim_size`` parameter).
    counts : dict
        Status -> number of the chapter's registered claims (``verified``, ``illustration``,
        ``erratum``, ``finding``); the run succeeded, so each came out as registered (a
        claim or control that does not stops the run with its message).
    controls : int
        Negative controls of those claims (every one rejected).
    notebook : pathlib.Path
    figures : tuple of pathlib.Path
        The figures of the executed notebook, written as PNG files next to it.
    """

    chapter: str
    size: str
    counts: dict
    controls: int
    notebook: Path
    figures: tuple

    def text(self) -> str:
        held = ", ".join(f"{n} {s}" for s, n in self.counts.items() if n)
        if held:
            lines = [f"claims of {self.chapter} at size {self.size!r}: {held}"]
        else:
            lines = [f"claims of {self.chapter} at size {self.size!r}: none registered to this"
                     " page (any claim it runs came out as registered: the run would have"
                     " stopped otherwise)"]
        if self.controls:
            lines.append(f"  every claim came out as registered and all {self.controls} "
                         "negative controls were rejected")
        elif sum(self.counts.values()):
            lines.append("  every claim came out as registered")
        lines.append(f"notebook: {self.notebook}")
        if self.figures:
            lines.append(f"figures: {len(self.figures)} PNG files in {self.figures[0].parent}")
        return "\n".join(lines)


def summarize_run(name: str, notebook: str | Path, parameters: dict | None = None,
                  root: str | Path | None = None) -> RunSummary:
    """Summarise a successful run of chapter ``name``: its claims and its figures.

    The figures (``image/png`` outputs) are written to ``<notebook stem>_figures/`` next to the
    notebook, replacing the PNG files of an earlier run there.
    """
    import base64
    import json

    from .claims import all_claims
    from .claims._registry import EXPECTS

    chapter = get_chapter(name, root)
    parameters = parameters or {}
    size = "smoke"
    for key in ("size", "claim_size"):
        if key in chapter.parameters:
            size = parameters.get(key, chapter.parameters[key][0])
            break
    mine = [c for c in all_claims() if c.chapter == chapter.docname]
    counts = {status: sum(EXPECTS[c.expect] == status for c in mine)
              for status in ("verified", "illustration", "erratum", "finding")}
    notebook = Path(notebook)
    folder = notebook.with_name(f"{notebook.stem}_figures")
    if folder.is_dir():
        for old in folder.glob("figure-*.png"):
            old.unlink()
    figures = []
    cells = json.loads(notebook.read_text()).get("cells", [])
    for cell in cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("image/png")
            if data:
                folder.mkdir(exist_ok=True)
                path = folder / f"figure-{len(figures) + 1:02d}.png"
                path.write_bytes(base64.b64decode("".join(data) if isinstance(data, list)
                                                  else data))
                figures.append(path)
    return RunSummary(chapter=chapter.name, size=str(size), counts=counts,
                      controls=sum(len(c.controls) for c in mine), notebook=notebook,
                      figures=tuple(figures))
