"""Find the book's chapters, read their ``parameters`` cells, and rerun one with new values.

A chapter is a MyST markdown notebook listed in ``_toc.yml``; its first code cell tagged
``parameters`` holds ``name = literal  # comment`` lines.  :func:`run_chapter` converts the
chapter with jupytext and executes it with papermill, which injects the new values after
that cell -- the same mechanism as ``papermill in.ipynb out.ipynb -p name value``.

Parameter values
    are checked against the type of the default before anything runs
    (:func:`check_parameter`): an ``int`` default takes integers, a ``float`` default finite
    numbers (an integer is converted; ``1e999``, infinity, is refused), a ``bool`` default
    ``True``/``False``, a ``str`` default any text (on the command line the text as typed:
    ``-p size 5`` is the string ``'5'``), a list default a list (a single value is wrapped:
    ``-p bins 10`` is ``[10]``) whose elements have the type of the default's elements, a
    tuple default a tuple of the same length.  A ``None`` default takes ``None`` or what its
    name and comment declare (:func:`declared_kind`): a file name (``predictions``), a list
    of them (a comment saying "a list of"), a folder name (``report_dir``), a count
    (``subsample``), a positive number (``bandwidth``), a choice (``kind``) or a switch
    (``validate``: ``True``/``False``).  A long value is shortened in the messages.
Ranges
    are checked next, from the parameter's name (:func:`check_range`): ``size`` and
    ``claim_size`` are ``"smoke"`` or ``"full"``, ``dataset`` names a shipped data set,
    ``seed`` is a non-negative integer, counts (``n``, ``k``, ``m``, ``n_*``, ``k_*``, ``m_*``,
    ``sim_*``, ``*_bins``, ``bins``, ...) are positive integers (class counts at least 2),
    ``*_fraction`` lies strictly between 0 and 1, noise levels and probabilities in [0, 1],
    scales (bandwidth, temperature, overconfidence, scale) are positive and biases
    (``bias_in_sd``) non-negative.  A path parameter that names an input file must be a
    regular file (a folder or a FIFO is refused by its type), holding JSON of the default's
    kind where the default is a ``.json`` file; a file-name pattern (``*_files``) must keep
    the default's ``{fields}`` and match such files; an output folder (``*_dir``) must not be
    a file or lie in calnotes' sources.  Then the parameters together
    (:func:`check_together`): at most as many bins as samples, and the Table 1 pages'
    noise levels within the example's limits (``eps1 + eps2 < 1/2``, ``eps3 <= 1/k``).  So a
    bad value fails in a second, before a kernel starts.
Paths
    The chapter runs in its own folder, so parameters that name files are made absolute:
    only parameters documented as paths (:func:`is_path_parameter`: ``predictions``,
    ``labels``, names ending in ``_file``, ``_path``, ``_files`` or ``_dir``), and only
    string values (or the strings of a list) that name an existing file or folder -- except
    ``_dir`` parameters, output folders, which are always made absolute.  Any other string
    is passed as typed.
Outputs
    A run writes ``OUT/<chapter>.ipynb``, its markdown cells rewritten as plain Jupyter
    Markdown with this run's glued numbers filled in (:mod:`calnotes.book.notebook_markdown`); an
    existing one is kept unless ``force=True``.  ``OUT`` may not lie in calnotes' sources
    (the book's chapters, the package, the tests, the repository's root:
    :func:`calnotes._outdir.refuse_source_folder`), even with ``force=True``.  A run
    whose cell fails writes ``OUT/<chapter>.failed.ipynb`` instead (replacing an earlier
    failed run's file) and leaves ``<chapter>.ipynb`` alone, so a rerun needs no ``force``.
    A run holds a lock on ``OUT`` from start to end (a second run into it is refused at
    once) and executes into a hidden partial notebook of its own, removed when the run
    stops (also on Ctrl-C, SIGTERM or SIGHUP); one left by a killed run (``kill -9``) is
    removed by the next run into ``OUT``.
Kernel
    The kernel talks to papermill over IPC sockets (POSIX) rather than TCP, which also keeps
    ipykernel's "running over TCP without encryption" warning off the terminal; the sockets
    live in a private temporary folder, so a read-only chapter folder does not matter.  On
    Windows the default (TCP) transport is used.  A kernel is not interrupted at shutdown
    unless it is still running a cell (:func:`_kernel_manager_class`).
"""

from __future__ import annotations

import ast
import math
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Chapter", "find_book_root", "list_chapters", "get_chapter", "parse_value",
           "check_parameter", "declared_kind", "check_range", "check_together",
           "is_path_parameter", "run_chapter", "RunSummary", "summarize_run", "ProseNumber",
           "ProseNumbers", "prose_numbers", "built_glue"]

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
    candidates.append(Path(__file__).resolve().parents[2])   # calnotes/book/chapters.py
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


def _shown(value, limit: int = 60) -> str:
    """``repr(value)``, shortened in the middle when long (a 5000-digit number is not echoed
    whole).

    Examples
    --------
    >>> _shown(12), _shown("9" * 5000)
    ('12', "'999999999999999999999999...999999999' (5000 characters)")
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, str):
        size = f"{len(value)} characters"
    elif isinstance(value, int) and not isinstance(value, bool):
        size = f"{len(text.lstrip('-'))} digits"
    else:
        size = f"{len(text)} characters"
    return f"{text[:25]}...{text[-10:]} ({size})"


def _scalar_ok(value, kind) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


def _finite(name: str, value, default) -> None:
    """Refuse a non-finite number anywhere in ``value`` (``1e999`` parses as infinity)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if isinstance(item, (list, tuple)):
            _finite(name, item, default)
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"-p {name}: expected a finite number, got {_shown(value)}"
                             f" (the default is {_shown(default)})")


def _converted(name: str, value, kind, default):
    """``value`` (checked to be of ``kind``) as the kernel gets it: an integer for a ``float``
    default becomes a float, which must be finite."""
    if kind is not float:
        return value
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        like = f"like the default {default!r}" if default is not None else \
            "or None (the default)"
        raise ValueError(f"-p {name}: expected a finite number {like}, got {_shown(value)}")
    return number


def _element_kind(default):
    kinds = {type(v) for v in default}
    return kinds.pop() if len(kinds) == 1 and next(iter(kinds)) in _KINDS else None


def declared_kind(name: str, comment: str = ""):
    """What a parameter whose default is ``None`` takes, from its name and its comment.

    ``"folder"`` (one folder name: ``*_dir``), ``"file"`` (one file name: the other path
    parameters, :func:`is_path_parameter`), ``"files"`` (a list of file names: a path
    parameter whose comment says "a list of"), ``str`` (a choice: ``kind``), ``float`` (a
    positive scale: ``bandwidth``), ``int`` (a count: ``subsample``), ``bool`` (a switch:
    ``validate``), or ``None`` (no rule: any value).  ``None`` itself is always accepted for
    such a parameter.

    Examples
    --------
    >>> declared_kind("report_dir"), declared_kind("predictions", "your predictions file")
    ('folder', 'file')
    >>> declared_kind("predictions", "None for the suite, or a list of .npz files")
    'files'
    >>> declared_kind("subsample"), declared_kind("bandwidth"), declared_kind("kind")
    (<class 'int'>, <class 'float'>, <class 'str'>)
    """
    if is_path_parameter(name):
        if name.endswith("_dir"):
            return "folder"
        return "files" if re.search(r"\blist of\b", comment) else "file"
    if name in _CHOICES:
        return str
    if name in _SWITCHES:
        return bool
    if name in _POSITIVE_SCALES:
        return float
    if _is_count(name):
        return int
    return None


def _check_none_default(name: str, value, comment: str):
    """:func:`check_parameter` for a parameter whose default is ``None``."""
    if value is None:
        return None
    kind = declared_kind(name, comment)
    if kind is None:
        _finite(name, value, None)
        return value
    if kind in ("file", "folder"):
        if not isinstance(value, str) or not value:
            what = "the number" if _scalar_ok(value, float) else "the value"
            raise ValueError(f"-p {name}: expected a {kind} name (text) or None (the default),"
                             f" got {what} {_shown(value)}")
        return value
    if kind == "files":
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if not items or any(not isinstance(v, str) or not v for v in items):
            raise ValueError(f"-p {name}: expected a list of file names or None (the"
                             f" default), got {_shown(value)}")
        return items
    if not _scalar_ok(value, kind):
        raise ValueError(f"-p {name}: expected {_KINDS[kind]} or None (the default),"
                         f" got {_shown(value)}")
    return _converted(name, value, kind, None)


def check_parameter(name: str, value, default, comment: str = ""):
    """``value`` checked against the type of the parameter's ``default``; the value to inject.

    See the module docstring for the rules.  Returns the value, converted where the rule says
    so (an integer for a float default becomes a float, a scalar for a list default a
    one-element list, a list for a tuple default a tuple).  ``comment`` is the parameter's
    comment in the chapter (it documents what a ``None`` default takes:
    :func:`declared_kind`).

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
    >>> check_parameter("overconfidence", float("inf"), 2.5)
    Traceback (most recent call last):
    ...
    ValueError: -p overconfidence: expected a finite number like the default 2.5, got inf
    >>> check_parameter("subsample", 5000.5, None)
    Traceback (most recent call last):
    ...
    ValueError: -p subsample: expected an integer or None (the default), got 5000.5
    """
    if default is None:
        return _check_none_default(name, value, comment)
    kind = type(default)
    if kind in _KINDS:
        if not _scalar_ok(value, kind):
            raise ValueError(f"-p {name}: expected {_KINDS[kind]} like the default {default!r},"
                             f" got {_shown(value)}")
        return _converted(name, value, kind, default)
    if kind in (list, tuple):
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif kind is list:
            items = [value]
        else:
            raise ValueError(f"-p {name}: expected a tuple of {len(default)} values like the"
                             f" default {default!r}, got {_shown(value)}")
        if kind is tuple:
            if len(items) != len(default):
                raise ValueError(f"-p {name}: expected {len(default)} values like the default"
                                 f" {default!r}, got {_shown(value)}")
            kinds = [type(v) if type(v) in _KINDS else None for v in default]
        else:
            kinds = [_element_kind(default)] * len(items)
        out = []
        for item, item_kind in zip(items, kinds):
            if item_kind is not None and not _scalar_ok(item, item_kind):
                raise ValueError(f"-p {name}: element {_shown(item)} of {_shown(value)} is not"
                                 f" {_KINDS[item_kind]} like the default's {default!r}")
            out.append(_converted(name, item, item_kind, default) if item_kind is not None
                       else item)
        _finite(name, out, default)
        return tuple(out) if kind is tuple else out
    _finite(name, value, default)
    return value


_CHOICES = {"size": ("smoke", "full"), "claim_size": ("smoke", "full"),
            "coverage_size": ("smoke", "full"),
            "dataset": ("mnist5k", "digits"), "kind": ("logits", "probs")}
#: switches whose default None means "the chapter decides" (``validate``: True or False)
_SWITCHES = ("validate",)
_CLASS_COUNTS = ("k", "n_classes", "k_classes", "k_max", "sim_classes")
_UNIT_INTERVAL = ("q_demo", "eps", "eps1", "eps2", "eps3")
_POSITIVE_SCALES = ("bandwidth", "overconfidence", "saturation", "sim_temperature", "scale")
_NON_NEGATIVE = ("bias_in_sd",)
#: (bins, samples): a chapter with both takes at most as many bins as samples (of the smallest
#: sample size, for a list of them); checked by :func:`check_together`
_AT_MOST_AS_MANY = (("n_bins", "n_samples"), ("m", "n"), ("m", "n_values"), ("m_thm", "n_thm"))


def _is_count(name: str) -> bool:
    return (name in ("n", "k", "m", "bins", "resolutions", "subsample", "milp_grid")
            or name.startswith(("n_", "k_", "m_", "sim_", "prior_", "max_"))
            or name.endswith("_bins"))


def check_range(name: str, value, root: str | Path | None = None, *,
                default=None) -> None:
    """Raise ``ValueError`` when a (type-checked) value is outside its parameter's range.

    The range comes from the parameter's name (see the module docstring); a name without a
    rule takes any value of its type.  ``root`` is where path parameters may also be found
    (the book root: chapter defaults such as ``benchmarks/results.json`` are relative to it).
    ``default`` is the chapter's default: an input file whose default is a ``.json`` file
    must be a JSON file of the same kind, and a file-name pattern (``*_files``) must hold the
    default's ``{fields}``.

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
    >>> import tempfile
    >>> check_range("predictions", tempfile.gettempdir())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: -p predictions: ... is a folder, not a file
    """
    if value is None:
        return
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            choices = ", ".join(repr(c) for c in _CHOICES[name])
            raise ValueError(f"-p {name}: expected one of {choices}, got {_shown(value)}")
        return
    if is_path_parameter(name):
        for item in items:
            if not isinstance(item, str) or not item:
                what = "folder" if name.endswith("_dir") else "file"
                raise ValueError(f"-p {name}: expected a {what} name, got {_shown(item)}")
            if name.endswith("_dir"):
                _check_output_folder(name, item, root)
            elif name.endswith("_files"):
                _check_file_pattern(name, item, root, default)
            else:
                _check_input_file(name, item, _places(item, root), default, root)
        return
    numbers = [v for v in items if isinstance(v, (int, float)) and not isinstance(v, bool)]
    shown = _shown(value)
    if name == "seed":
        if any(not isinstance(v, int) or v < 0 for v in numbers):
            raise ValueError(f"-p seed: expected a non-negative integer, got {shown}")
    elif name in _CLASS_COUNTS:
        if any(v < 2 for v in numbers):
            raise ValueError(f"-p {name}: expected at least 2 classes, got {shown}")
    elif name.endswith("_fraction"):
        if any(not 0 < v < 1 for v in numbers):
            raise ValueError(f"-p {name}: expected a share strictly between 0 and 1, "
                             f"got {shown}")
    elif name in _UNIT_INTERVAL:
        if any(not 0 <= v <= 1 for v in numbers):
            raise ValueError(f"-p {name}: expected a value in [0, 1], got {shown}")
    elif name in _POSITIVE_SCALES:
        if any(not v > 0 for v in numbers):
            raise ValueError(f"-p {name}: expected a positive number, got {shown}")
    elif name in _NON_NEGATIVE:
        if any(not v >= 0 for v in numbers):
            raise ValueError(f"-p {name}: expected non-negative numbers, got {shown}")
    elif _is_count(name):
        if any(v < 1 for v in numbers):
            raise ValueError(f"-p {name}: expected a positive integer"
                             f"{'s' if len(items) > 1 else ''}, got {shown}")


def check_together(values: dict, given=None, caps=()) -> None:
    """Raise ``ValueError`` when parameters that depend on each other do not fit together.

    ``values`` are the chapter's parameters with the new values in place; ``given`` are the
    names set on this run (default: all), and a rule is checked only where one of its
    parameters was given (a chapter's defaults are its own business).  The rule: a chapter
    with a number of bins and a sample size (``n_bins`` and ``n_samples``, ``m`` and ``n`` or
    ``n_values``, ``m_thm`` and ``n_thm``) takes at most as many bins as samples, unless its
    number of bins is only a cap (named in ``caps``: its comment reads "largest number of
    bins", as where a grid of bin counts is cut at it); the Table 1
    pages (``k``, ``m``, ``eps1`` and ``n`` or ``n_values``) take what
    :func:`calnotes.theory.table1.check_table1_params` accepts (``eps1 < 1/2``, ``eps1 + eps2 < 1/2``,
    ``eps3 <= 1/k``), also for the cross-check's ``sim_size = (k, n, m)``.  A message names
    the parameter at fault, and says so where that one is the chapter's default.

    Examples
    --------
    >>> check_together({"n_bins": 15, "n_samples": 2000})
    >>> check_together({"n_bins": 10**8, "n_samples": 1000}, given={"n_bins"})
    Traceback (most recent call last):
    ...
    ValueError: -p n_bins: 100000000 bins for 1000 samples (-p n_samples); use at most as many bins as samples
    >>> table1 = {"k": 10, "n": 2000, "m": 20, "eps1": 0.1, "eps2": 0.02, "eps3": 0.003}
    >>> check_together({**table1, "k": 400}, given={"k"})
    Traceback (most recent call last):
    ...
    ValueError: -p eps3: expected 0 <= eps3 <= 1/k = 0.0025, got 0.003 (eps3 = 0.003 is the chapter's default)
    """
    given = set(values) if given is None else set(given)
    for bins, samples in _AT_MOST_AS_MANY:
        if bins not in values or samples not in values or not {bins, samples} & given \
                or bins in caps:
            continue
        m, n = values[bins], values[samples]
        sizes = list(n) if isinstance(n, (list, tuple)) else [n]
        if not isinstance(m, int) or not sizes or not all(isinstance(v, int) for v in sizes):
            continue
        if m > min(sizes):
            which = f"{min(sizes)} samples" if len(sizes) == 1 else \
                f"{min(sizes)} samples (the smallest of {_shown(n)})"
            hint = "" if bins in given else \
                f" ({bins} = {_shown(m)} is the chapter's default: lower it with -p {bins})"
            raise ValueError(f"-p {bins}: {_shown(m)} bins for {which} (-p {samples}); use at"
                             f" most as many bins as samples{hint}")
    _check_table1(values, given)


#: the Table 1 example's parameters (:func:`calnotes.theory.table1.check_table1_params`): a chapter
#: with ``k``, ``m``, ``eps1`` and a sample size (``n`` or ``n_values``) runs it with them
_TABLE1 = ("k", "n", "n_values", "m", "eps1", "eps2", "eps3", "sim_size")


def _check_table1(values: dict, given: set) -> None:
    """:func:`check_together` for the Table 1 pages: their values pass
    :func:`calnotes.theory.table1.check_table1_params` (``eps1 < 1/2``, ``eps1 + eps2 < 1/2``,
    ``eps3 <= 1/k``), also with the ``(k, n, m)`` of ``sim_size`` where there is one; a missing
    ``eps2``/``eps3`` counts as 0 (the grid page derives them).  Bins against samples are
    checked before (``m`` above ``n`` gets that message)."""
    sizes = values.get("n", values.get("n_values"))
    if not all(name in values for name in ("k", "m", "eps1")) or sizes is None \
            or not set(_TABLE1) & given:
        return
    from ..theory.table1 import check_table1_params

    sizes = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
    if not sizes or not all(isinstance(v, int) for v in sizes) \
            or not isinstance(values["m"], int):
        return
    eps = (values["eps1"], values.get("eps2", 0.0), values.get("eps3", 0.0))
    n = min(sizes)
    cases = [(None, (values["k"], n, min(values["m"], n), *eps))]
    sim = values.get("sim_size")
    if isinstance(sim, (list, tuple)) and len(sim) == 3:
        cases.append(("sim_size", (*sim, *eps)))
    for where, args in cases:
        try:
            check_table1_params(*args)
        except TypeError:                   # a value of another kind: the chapter's business
            continue
        except ValueError as exc:
            named = str(exc).split(":", 1)[0]
            if where is not None:
                k, n, m = sim
                raise ValueError(f"-p {where}: the cross-check's (k, n, m) = ({k}, {n}, {m})"
                                 f" does not fit: {exc}") from None
            hint = "" if named in given or named not in values else \
                f" ({named} = {_shown(values[named])} is the chapter's default)"
            raise ValueError(f"-p {exc}{hint}") from None


def is_path_parameter(name: str) -> bool:
    """Whether a chapter parameter is documented as a path (resolved by :func:`run_chapter`).

    ``predictions``, ``labels`` and names ending in ``_file`` or ``_path`` name input files,
    ``_dir`` an output folder, ``_files`` a file-name pattern whose ``{fields}`` the chapter
    fills in (``benchmarks/grid_t{threads}.json``).

    Examples
    --------
    >>> [is_path_parameter(n) for n in ("predictions", "results_file", "size", "report_dir")]
    [True, True, False, True]
    """
    return name in ("predictions", "labels") or name.endswith(("_file", "_path", "_dir",
                                                               "_files"))


def _places(item: str, root) -> list[Path]:
    """Where an input file named ``item`` is looked for: the current folder, then ``root``."""
    places = [Path(item).expanduser()]
    if root is not None and not Path(item).is_absolute():
        places.append(Path(root) / item)
    return places


def _file_type(path: Path) -> str | None:
    """``None`` for a regular file (after links), else what it is ("a folder", "a FIFO")."""
    import stat

    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


#: JSON inputs larger than this are not parsed up front (the chapter reads them)
_JSON_CHECK_BYTES = 64 * 2 ** 20


def _check_input_file(name: str, item: str, places: list[Path], default, root) -> Path:
    """An input file parameter: it exists and is a regular file (a folder or a FIFO, which
    would hang the chapter, is refused by type); where the default is a ``.json`` file, it
    holds JSON of the same kind (:func:`_check_json_kind`)."""
    found = next((p for p in places if p.exists()), None)
    if found is None:
        raise ValueError(f"-p {name}: no such file: {item} (relative names are read"
                         " from the current folder)")
    what = _file_type(found)
    if what == "a folder":
        raise ValueError(f"-p {name}: {item} is a folder, not a file")
    if what is not None:
        raise ValueError(f"-p {name}: {item} is {what}, not a regular file")
    if isinstance(default, str) and default.endswith(".json"):
        reference = next((p for p in _places(default, root) if p.is_file()), None)
        _check_json_kind(name, item, found, default, reference)
    return found


def _check_json_kind(name: str, item: str, found: Path, default: str,
                     reference: Path | None) -> None:
    """``found`` holds JSON, of the kind of the default's file ``reference`` where there is
    one: an object sharing a top-level key with it, or a list.  A file above
    :data:`_JSON_CHECK_BYTES` is left to the chapter."""
    import json

    if found.stat().st_size > _JSON_CHECK_BYTES:
        return
    try:
        data = json.loads(found.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"-p {name}: {item} is not a JSON file ({str(exc)[:80]}); the"
                         f" chapter reads JSON like the default {default!r}") from None
    if reference is None:
        return
    try:
        expected = json.loads(reference.read_bytes())
    except (OSError, ValueError, UnicodeDecodeError):
        return
    kinds = {dict: "an object", list: "a list"}
    if type(data) is not type(expected):
        raise ValueError(f"-p {name}: {item} holds {kinds.get(type(data), 'a single value')},"
                         f" where the chapter reads {kinds.get(type(expected), 'a value')}"
                         f" like the default {default!r}")
    if isinstance(data, dict) and expected and not set(data) & set(expected):
        raise ValueError(f"-p {name}: {item} holds none of the keys of the default"
                         f" {default!r} ({', '.join(sorted(expected)[:4])}, ...): another"
                         " kind of file")


def _pattern_fields(text: str) -> list[str]:
    """The ``{fields}`` of a file-name pattern (``ValueError`` for a malformed one)."""
    import string

    return [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]


def _pattern_glob(text: str) -> str:
    """A file-name pattern as a glob: each ``{field}`` any text, the rest literal."""
    import glob
    import string

    return "".join(glob.escape(literal) + ("*" if field is not None else "")
                   for literal, field, _, _ in string.Formatter().parse(text))


def _pattern_matches(pattern: str, root) -> list[str]:
    """The files a pattern matches: from the current folder, else from ``root``."""
    import glob

    wildcard = _pattern_glob(str(Path(pattern).expanduser()))
    places = [wildcard]
    if root is not None and not Path(pattern).expanduser().is_absolute():
        places.append(str(Path(glob.escape(str(root))) / wildcard))
    for place in places:
        matches = sorted(glob.glob(place))
        if matches:
            return matches
    return []


def _check_file_pattern(name: str, item: str, root, default) -> None:
    """A file-name pattern (``*_files``): it holds the default's ``{fields}``, and every file
    it matches (any text in each field) is an input file as :func:`_check_input_file`
    checks it, of the kind of the default's files; at least one file matches."""
    try:
        fields = _pattern_fields(item)
    except ValueError as exc:
        raise ValueError(f"-p {name}: {_shown(item)} is not a file-name pattern ({exc})"
                         ) from None
    expected = _pattern_fields(default) if isinstance(default, str) else fields
    if sorted(set(fields)) != sorted(set(expected)):
        wanted = " and ".join("{" + f + "}" for f in dict.fromkeys(expected)) or "no {fields}"
        raise ValueError(f"-p {name}: expected a file-name pattern with {wanted} (filled in by"
                         f" the chapter) like the default {default!r}, got {_shown(item)}")
    matches = _pattern_matches(item, root)
    if not matches:
        raise ValueError(f"-p {name}: no file matches {item} (relative names are read from"
                         " the current folder)")
    references = _pattern_matches(default, root) if isinstance(default, str) else []
    for match in matches:
        found = _check_input_file(name, match, [Path(match)], None, None)
        if isinstance(default, str) and default.endswith(".json"):
            _check_json_kind(name, match, found, default,
                             Path(references[0]) if references else None)


def _check_output_folder(name: str, item: str, root) -> None:
    """An output folder parameter (``*_dir``): not a file, and not in calnotes' sources."""
    from .._outdir import refuse_source_folder

    path = Path(item).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"-p {name}: {item} exists and is not a folder")
    refuse_source_folder(path, f"-p {name}", root=root)


def _resolve_paths(name: str, value):
    if not is_path_parameter(name):
        return value
    always = name.endswith("_dir")
    pattern = name.endswith("_files")

    def resolve(v):
        if not isinstance(v, str) or not v:
            return v
        if pattern:
            here = _pattern_matches(v, None)
            return str(Path(v).expanduser().absolute()) if here else v
        if always or Path(v).expanduser().exists():
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


#: seconds a kernel gets to end after a shutdown request before jupyter_client's own wait
#: (then SIGTERM, then SIGKILL) begins; it is never interrupted (SIGINT) at shutdown unless a
#: run is stopped in a cell: with an interrupt after 1 s, an idle kernel slow to exit on a
#: loaded machine was sent SIGINT
_QUIET_SHUTDOWN_S = 5.0
#: seconds between interrupting a running cell and the shutdown request (Ctrl-C, SIGTERM)
_INTERRUPT_SETTLE_S = 0.5


def _bindable(folder: str) -> bool:
    """Whether IPC sockets ``folder/kernel-1``, ``-2``, ... fit a socket path (107 bytes)."""
    return len(os.fsencode(os.path.join(folder, "kernel-999"))) <= 107


def _socket_folder() -> str | None:
    """A private temporary folder for a kernel's IPC sockets: in the temporary folder, or in
    ``/tmp`` where that path is too long for a socket; ``None`` where neither works."""
    import shutil
    import tempfile

    for parent in (None, "/tmp"):
        try:
            made = tempfile.mkdtemp(prefix="calnotes-kernel-", dir=parent)
        except OSError:
            continue
        if _bindable(made):
            return made
        shutil.rmtree(made, ignore_errors=True)
    return None


def _kernel_manager_class(folder: str | os.PathLike | None = None):
    """A kernel manager that uses IPC sockets on POSIX (``None``: nbclient's default).

    The sockets are created in a private temporary folder made for each kernel and removed
    with its resources (at the latest when the interpreter exits), never in the working
    folder: the kernel runs in the chapter's (or a submission's) folder, which may be
    read-only.  ``folder`` puts them in that folder instead (the caller removes it).  Where
    no temporary folder short enough for a socket path can be made (:func:`_socket_folder`),
    the kernel talks over TCP on the loopback interface.

    A kernel being shut down is not sent an interrupt (SIGINT) first, as jupyter_client
    does, unless the class attribute ``interrupt_at_shutdown`` is set (by
    :func:`run_chapter` when Ctrl-C or SIGTERM stops a run in a cell): after its last cell
    the kernel ends on the shutdown request alone, and an interrupt arriving while it
    finishes a reply printed "KeyboardInterrupt caught in kernel" after a run that went
    well.  A kernel still there :data:`_QUIET_SHUTDOWN_S` seconds after the request is not
    interrupted either (on a loaded machine an idle kernel can take that long to exit): it
    is left to jupyter_client, which terminates it (SIGTERM, then SIGKILL) silently.

    Examples
    --------
    >>> manager = _kernel_manager_class()
    >>> km = manager(kernel_name="python3")
    >>> km.transport, os.path.basename(os.path.dirname(km.ip)).startswith("calnotes-kernel-")
    ('ipc', True)
    """
    if os.name != "posix":  # pragma: no cover - IPC transport is POSIX only
        return None
    import asyncio
    import shutil
    import weakref

    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        interrupt_at_shutdown = False

        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            owned = None
            if kwargs["transport"] == "ipc" and "ip" not in kwargs:
                place = os.fspath(folder) if folder is not None else None
                if place is None:
                    place = owned = _socket_folder()
                if place is None or not _bindable(place):
                    kwargs["transport"] = "tcp"
                else:
                    kwargs["ip"] = os.path.join(place, "kernel")
            super().__init__(**kwargs)
            self._calnotes_socket_folder = owned
            if owned is not None:
                weakref.finalize(self, shutil.rmtree, owned, True)

        async def _async_interrupt_kernel(self):
            if not self.shutting_down:
                await super()._async_interrupt_kernel()
            elif type(self).interrupt_at_shutdown:
                await super()._async_interrupt_kernel()
                # let the stopped cell send its reply before the shutdown request closes the
                # kernel's sockets (else the kernel prints a zmq "non-socket" traceback)
                await asyncio.sleep(_INTERRUPT_SETTLE_S)

        async def _async_finish_shutdown(self, waittime=None, pollinterval=0.1,
                                         restart=False):
            if self.has_kernel and not type(self).interrupt_at_shutdown:
                try:
                    await asyncio.wait_for(self._async_wait(pollinterval=pollinterval),
                                           timeout=_QUIET_SHUTDOWN_S)
                except asyncio.TimeoutError:         # slow to exit: SIGTERM, SIGKILL below
                    pass
            await super()._async_finish_shutdown(waittime=waittime,
                                                 pollinterval=pollinterval, restart=restart)

        async def _async_cleanup_resources(self, restart=False):
            await super()._async_cleanup_resources(restart=restart)
            if not restart and self._calnotes_socket_folder is not None:
                shutil.rmtree(self._calnotes_socket_folder, ignore_errors=True)

        cleanup_resources = _async_cleanup_resources

    return IPCKernelManager


def _python_translator():
    """papermill's Python translator with two changes: a tuple is injected as a tuple
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


class _OutLock:
    """An exclusive, non-blocking lock on the output folder for a whole run (``flock`` on the
    folder itself, so no lock file is left behind; none where the platform or file system
    has no ``flock``).  ``held`` says whether the lock is held."""

    def __init__(self, folder: Path):
        self.folder, self.fd, self.held = folder, None, False

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # pragma: no cover - POSIX only
            return self
        try:
            self.fd = os.open(self.folder, os.O_RDONLY)
        except OSError:
            return self
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            self.fd = None
            raise BlockingIOError(f"--out: another calnotes run is writing into {self.folder};"
                                  " wait for it to finish, or choose another folder") from None
        except OSError:                     # no flock here (some network file systems)
            os.close(self.fd)
            self.fd = None
            return self
        self.held = True
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)               # releases the lock
            self.fd = None
        return False


#: a run's partial notebook: ``.CHAPTER.PID-RANDOM.partial.ipynb`` (``.CHAPTER.partial.ipynb``
#: from earlier versions)
_PARTIAL = re.compile(r"^\.(?P<chapter>.+?)\.(?:(?P<pid>\d+)-[0-9a-f]+\.)?partial\.ipynb$")


def _partial_name(chapter: str) -> str:
    """A partial notebook name of its own for this run (the writer's pid in it)."""
    import secrets

    return f".{chapter}.{os.getpid()}-{secrets.token_hex(4)}.partial.ipynb"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def _remove_stale_partials(out_dir: Path, locked: bool) -> list[Path]:
    """Remove partial notebooks left in ``out_dir`` by runs that were killed (``kill -9``).

    With the folder's lock held no other run writes there, so every partial notebook is
    stale; without a lock only those whose writer (the pid in the name) is gone."""
    removed = []
    try:
        entries = list(os.scandir(out_dir))
    except OSError:
        return removed
    for entry in entries:
        match = _PARTIAL.match(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        pid = match.group("pid")
        if not locked and (pid is None or _pid_alive(int(pid))):
            continue
        try:
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


class _StopOnSignal:
    """While a chapter runs, turn SIGTERM and SIGHUP (whose default ends the process at once)
    into ``KeyboardInterrupt``, so that the run stops as on Ctrl-C: the kernel is shut down
    and the partial notebook removed.  The process then ends by the same signal, as it would
    have.  On each of these and on Ctrl-C (SIGINT), ``on_stop`` is called first (the kernel
    is then interrupted as it is shut down).  Only in the main thread, and only for a signal
    left at its default."""

    def __init__(self, on_stop=None):
        self.on_stop = on_stop

    def __enter__(self):
        import signal
        import threading

        self.saved, self.received = {}, None
        if threading.current_thread() is threading.main_thread():
            for name in ("SIGTERM", "SIGHUP"):
                number = getattr(signal, name, None)
                if number is not None and signal.getsignal(number) is signal.SIG_DFL:
                    self.saved[number] = signal.signal(number, self._stop)
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                self.saved[signal.SIGINT] = signal.signal(signal.SIGINT, self._interrupt)
        return self

    def _interrupt(self, number, frame):
        if self.on_stop is not None:
            self.on_stop()
        raise KeyboardInterrupt

    def _stop(self, number, frame):
        self.received = number
        if self.on_stop is not None:
            self.on_stop()
        raise KeyboardInterrupt(f"signal {number}")

    def __exit__(self, kind, exc, tb):
        import signal

        for number, handler in self.saved.items():
            signal.signal(number, handler)
        if self.received is not None:
            sys.stderr.flush()
            os.kill(os.getpid(), self.received)     # default handler again: the process ends
        return False


def run_chapter(name: str, parameters: dict, out_dir: str | Path, *, force: bool = False,
                root: str | Path | None = None, kernel: str = "python3") -> Path:
    """Execute one chapter with new parameter values; return the executed notebook's path.

    Parameters
    ----------
    name : str
        Chapter short name or docname (see :func:`list_chapters`).
    parameters : dict
        New values; every name must exist in the chapter's parameters cell, and every value
        must fit the type of its default (:func:`check_parameter`), its range
        (:func:`check_range`) and the other parameters (:func:`check_together`).  Path
        parameters are made absolute (:func:`is_path_parameter`).
    out_dir : path
        Folder for ``<name>.ipynb`` (created if missing); not in calnotes' sources
        (:func:`calnotes._outdir.refuse_source_folder`).
    force : bool
        Overwrite an existing output notebook.

    Returns
    -------
    pathlib.Path
        ``out_dir/<name>.ipynb``.

    Raises
    ------
    ValueError
        Unknown chapter or parameter name, a value of the wrong type or out of range, or an
        ``out_dir`` in calnotes' sources (before running).
    FileExistsError
        The output exists and ``force`` is false.
    NotADirectoryError, PermissionError
        ``out_dir`` is a file or cannot be written (before running).
    BlockingIOError
        Another run is writing into ``out_dir`` (its lock is held; before running).
    RuntimeError
        A cell of the chapter failed (the message names the cell, the error and the notebook
        up to the failure, ``out_dir/<name>.failed.ipynb``).
    """
    from .._outdir import refuse_source_folder

    chapter = get_chapter(name, root)
    unknown = sorted(set(parameters) - set(chapter.parameters))
    if unknown:
        raise ValueError(
            f"-p: chapter {chapter.name!r} has no parameter(s) {unknown};"
            f" its parameters are {sorted(chapter.parameters)}"
        )
    parameters = {key: check_parameter(key, value, *chapter.parameters[key])
                  for key, value in parameters.items()}
    book_root = chapter.path.parent
    while not (book_root / "_toc.yml").is_file() and book_root != book_root.parent:
        book_root = book_root.parent
    for key, value in parameters.items():
        check_range(key, value, book_root, default=chapter.parameters[key][0])
    check_together({**{key: value for key, (value, _) in chapter.parameters.items()},
                    **parameters}, given=parameters,
                   caps={key for key, (_, comment) in chapter.parameters.items()
                         if (comment or "").startswith("largest number of bins")})
    out_dir = Path(out_dir)
    refuse_source_folder(out_dir, "--out", root=book_root)
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
    engine = {}
    manager = _kernel_manager_class()
    if manager is not None:
        engine["kernel_manager_class"] = manager

    def stopping():                             # Ctrl-C, SIGTERM: stop the running cell too
        if manager is not None:
            manager.interrupt_at_shutdown = True

    with _OutLock(out_dir) as lock, _StopOnSignal(stopping):
        if target.exists() and not force:       # written by a run that ended meanwhile
            raise FileExistsError(f"--out: {target} exists; pass --force to overwrite it")
        _remove_stale_partials(out_dir, locked=lock.held)
        notebook = _read_notebook(chapter.path)
        notebook.metadata["kernelspec"] = {"name": kernel, "display_name": "Python 3",
                                           "language": "python"}
        # Executed into a hidden file of this run's own, renamed when done: a failed run
        # never replaces target.
        partial = out_dir / _partial_name(chapter.name)
        _register_translator(kernel)
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
                f"chapter {chapter.name!r} failed in cell {exc.exec_count}: {exc.ename}:"
                f" {exc.evalue} ({where})") from None
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        try:
            _plain_markdown(partial, chapter, book_root)
        except Exception as exc:  # noqa: BLE001 - the run succeeded: keep it, as executed
            import warnings
            warnings.warn(f"{target}: the markdown was left as MyST ({type(exc).__name__}:"
                          f" {exc})", RuntimeWarning, stacklevel=2)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
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
    (:mod:`calnotes.book.notebook_markdown`).  A glue key without a value (none in a successful
    run of the book's chapters) is marked in the text instead of failing the finished run."""
    import nbformat

    from . import notebook_markdown as nm
    nb = nbformat.read(notebook, as_version=4)
    glue = nm.glue_from_notebook(nb)
    new = nm.convert_notebook(nb, glue, nm.book_index(book_root), docname=chapter.docname,
                              missing="mark")
    nbformat.write(new, notebook)


# ---------------------------------------------------------------------------------------------
# the prose numbers of a run against the book's
# ---------------------------------------------------------------------------------------------

#: a glue role of the prose: ``{glue:text}`key:.3f```, ``{glue:md}`key```, ``{glue}`key```
_GLUE_ROLE = re.compile(r"\{glue(?::(?P<kind>[\w-]+))?\}`(?P<body>[^`]*)`")
_CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n.*?^```\s*$", re.MULTILINE | re.DOTALL)


def _glue_key(kind: str, body: str) -> str:
    """The key of a glue role's body, as myst-nb reads it (``key:.3f`` for ``glue:text``)."""
    key = body.rsplit(":", 1)[0] if kind == "text" and ":" in body else body
    return key.split("::")[-1]


def _prose_roles(chapter: Chapter) -> dict:
    """``{key: [role, ...]}``: the glue roles of the chapter's prose (markdown cells), keys in
    the order they first appear."""
    if chapter.path.suffix == ".ipynb":
        import json
        cells = json.loads(chapter.path.read_text()).get("cells", [])
        text = "\n\n".join(_join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = _CODE_CELL.sub("", chapter.path.read_text())
    roles: dict = {}
    for match in _GLUE_ROLE.finditer(text):
        key = _glue_key(match.group("kind") or "any", match.group("body"))
        if match.group(0) not in roles.setdefault(key, []):
            roles[key].append(match.group(0))
    return roles


def _shown_in_prose(role: str, glue: dict) -> str | None:
    """What the prose shows for ``role`` with the glued values ``glue`` (None: no value)."""
    from . import notebook_markdown as nm

    match = _GLUE_ROLE.fullmatch(role)
    if _glue_key(match.group("kind") or "any", match.group("body")) not in glue:
        return None
    try:
        return nm.render_roles(role, glue, nm.BookIndex())
    except (ValueError, TypeError):           # a value its format does not take: as stored
        data = glue[_glue_key(match.group("kind") or "any", match.group("body"))]
        return nm._text(data.get("text/markdown", data.get("text/plain", ""))).strip()


def _book_root(chapter: Chapter) -> Path:
    """The folder holding ``_toc.yml`` above a chapter."""
    root = chapter.path.parent
    while not (root / "_toc.yml").is_file() and root != root.parent:
        root = root.parent
    return root


def built_glue(chapter: Chapter) -> Path:
    """Where the book's build keeps the values ``chapter`` glued when it ran with its
    defaults: the ``.glue.json`` that myst-nb writes next to the executed chapter, in
    ``_build/jupyter_execute`` (``make book``)."""
    return _book_root(chapter) / "_build" / "jupyter_execute" / f"{chapter.docname}.glue.json"


@dataclass(frozen=True)
class ProseNumber:
    """One glued number of a chapter's prose, as the prose shows it (its format applied)."""

    key: str               #: the glue key
    default: str | None    #: in the built book (the defaults); None: not there
    this_run: str | None   #: in this run; None: the run glued no such value

    @property
    def changed(self) -> bool:
        return self.default != self.this_run


@dataclass(frozen=True)
class ProseNumbers:
    """The glued numbers of a run's prose against the built book's (:func:`prose_numbers`).

    Attributes
    ----------
    numbers : tuple of ProseNumber
        Each glue key of the chapter's prose, in order of first appearance.
    defaults : pathlib.Path
        The built book's ``.glue.json`` of the chapter (:func:`built_glue`).
    available : bool
        Whether ``defaults`` exists (else every ``default`` is None: the book is not built).
    stale : bool
        The chapter's file changed after the book was built: a number may differ for that
        reason too.
    csv : pathlib.Path or None
        Where the table was written (every number, a ``changed`` column).
    """

    numbers: tuple
    defaults: Path
    available: bool
    stale: bool = False
    csv: Path | None = None

    @property
    def changed(self) -> list:
        return [n for n in self.numbers if n.changed] if self.available else []

    def text(self, limit: int = 40) -> str:
        """The changed numbers as a table (name, default, this run), or why there is none.

        Examples
        --------
        >>> numbers = (ProseNumber("ece", "0.041", "0.052"), ProseNumber("n", "1000", "1000"))
        >>> print(ProseNumbers(numbers, Path("b.glue.json"), True).text())
        prose numbers that differ from the book's (1 of 2):
          name  default  this run
          ece   0.041    0.052
        >>> print(ProseNumbers(numbers, Path("b.glue.json"), False).text())
        prose numbers: no defaults to compare with (the book is not built: no b.glue.json; make book builds it)
        """
        if not self.numbers:
            return ""
        where = f"; all {len(self.numbers)} in {self.csv}" if self.csv is not None else ""
        if not self.available:
            return (f"prose numbers: no defaults to compare with (the book is not built: no"
                    f" {self.defaults}; make book builds it){where}")
        stale = (" (the chapter changed after the book was built: a number may differ for"
                 " that reason too)") if self.stale else ""
        changed = self.changed
        if not changed:
            return (f"prose numbers: all {len(self.numbers)} as in the book{stale}")
        rows = [("name", "default", "this run")] + [
            (n.key, _cut(n.default), _cut(n.this_run)) for n in changed[:limit]]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines = [f"prose numbers that differ from the book's ({len(changed)} of"
                 f" {len(self.numbers)}{where}){stale}:"]
        lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                  for row in rows]
        if len(changed) > limit:
            lines.append(f"  ... and {len(changed) - limit} more")
        return "\n".join(lines)

    def write_csv(self, path: Path) -> "ProseNumbers":
        """Write every number (``name,default,this_run,changed``) to ``path``; ``changed`` is
        empty where there are no defaults."""
        import csv

        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["name", "default", "this_run", "changed"])
            for n in self.numbers:
                writer.writerow([n.key, "" if n.default is None else n.default,
                                 "" if n.this_run is None else n.this_run,
                                 ("yes" if n.changed else "no") if self.available else ""])
        return ProseNumbers(self.numbers, self.defaults, self.available, self.stale, path)


def _cut(text: str | None, limit: int = 40) -> str:
    if text is None:
        return "(none)"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def prose_numbers(chapter: Chapter, glue: dict) -> ProseNumbers:
    """The glued numbers of ``chapter``'s prose, as the prose shows them, in a run (``glue``:
    :func:`calnotes.book.notebook_markdown.glue_from_notebook` of its executed notebook) and in
    the built book (:func:`built_glue`, where the book is built)."""
    from . import notebook_markdown as nm

    source = built_glue(chapter)
    available = source.is_file()
    defaults = nm.glue_from_json(source) if available else {}
    stale = available and chapter.path.stat().st_mtime > source.stat().st_mtime
    numbers = []
    for key, roles in _prose_roles(chapter).items():
        pairs = [(_shown_in_prose(r, defaults) if available else None,
                  _shown_in_prose(r, glue)) for r in roles]
        default, this_run = next((p for p in pairs if p[0] != p[1]), pairs[0])
        numbers.append(ProseNumber(key, default, this_run))
    return ProseNumbers(tuple(numbers), source, available, stale)


def _count(n: int, one: str, many: str) -> str:
    """``1 erratum``, ``8 errata``.

    Examples
    --------
    >>> _count(1, "erratum", "errata"), _count(8, "erratum", "errata")
    ('1 erratum', '8 errata')
    """
    return f"{n} {one if n == 1 else many}"


#: status -> (one, many) in a run's summary
_STATUS_WORDS = {"verified": ("verified", "verified"),
                 "illustration": ("illustration", "illustrations"),
                 "erratum": ("erratum", "errata"),
                 "finding": ("finding on our data", "findings on our data")}


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
    given : tuple of str
        The parameters set on this run (``-p``).
    size_parameter : str or None
        The chapter's parameter that sets the claims' size, where it was given on this run.
    prose : ProseNumbers or None
        The glued numbers of the prose against the built book's (:func:`prose_numbers`).

    Examples
    --------
    >>> summary = RunSummary("table1", "smoke", {"verified": 13, "erratum": 1}, 28,
    ...                      Path("runs/table1.ipynb"), (), given=("m",))
    >>> print(summary.text())
    claims do not depend on your parameters: they ran at their registered size ('smoke'): 13 verified, 1 erratum
      every claim came out as registered and all 28 negative controls were rejected
    notebook: runs/table1.ipynb
    """

    chapter: str
    size: str
    counts: dict
    controls: int
    notebook: Path
    figures: tuple
    given: tuple = ()
    size_parameter: str | None = None
    prose: ProseNumbers | None = None

    def _claims_line(self) -> str:
        held = ", ".join(_count(n, *_STATUS_WORDS.get(s, (s, s)))
                         for s, n in self.counts.items() if n)
        if not held:
            return ("claims: none registered to this chapter (any claim it runs came out as"
                    " registered: the run would have stopped otherwise)")
        others = [p for p in self.given if p != self.size_parameter]
        if self.size_parameter is not None:
            rest = " and do not depend on your other parameters" if others else ""
            return (f"claims ran at size {self.size!r} (-p {self.size_parameter}){rest}:"
                    f" {held}")
        ran = f"at their registered size ({self.size!r})"
        if others:
            return f"claims do not depend on your parameters: they ran {ran}: {held}"
        return f"claims ran {ran}: {held}"

    def text(self) -> str:
        lines = [self._claims_line()]
        if self.controls == 1:
            lines.append("  every claim came out as registered and its negative control was"
                         " rejected")
        elif self.controls:
            lines.append(f"  every claim came out as registered and all {self.controls} "
                         "negative controls were rejected")
        elif sum(self.counts.values()):
            lines.append("  every claim came out as registered")
        if self.prose is not None and self.prose.text():
            lines.append(self.prose.text())
        lines.append(f"notebook: {self.notebook}")
        if self.figures:
            lines.append(f"figures: {_count(len(self.figures), 'PNG file', 'PNG files')} in"
                         f" {self.figures[0].parent}")
        return "\n".join(lines)


def summarize_run(name: str, notebook: str | Path, parameters: dict | None = None,
                  root: str | Path | None = None) -> RunSummary:
    """Summarise a successful run of chapter ``name``: its claims, its prose numbers against
    the built book's, and its figures.

    The claims are the chapter's registered ones: they run at their registered size (the
    chapter's ``size``/``claim_size`` parameter, ``'smoke'`` by default), whatever the other
    parameters.  The prose numbers are the values the run's notebook glued, as the prose
    shows them, against those of the built book (:func:`prose_numbers`); the table of all of
    them is written to ``<notebook stem>_numbers.csv`` next to the notebook (none for a
    chapter without glued numbers).  The figures (``image/png`` outputs) are written to
    ``<notebook stem>_figures/``.  Both replace the files of an earlier run there.
    """
    import base64
    import json

    from . import notebook_markdown as nm
    from .claims import all_claims
    from .claims._registry import EXPECTS

    chapter = get_chapter(name, root)
    parameters = parameters or {}
    size, size_parameter = "smoke", None
    for key in ("size", "claim_size"):
        if key in chapter.parameters:
            size = parameters.get(key, chapter.parameters[key][0])
            size_parameter = key if key in parameters else None
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
    nb = json.loads(notebook.read_text())
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("image/png")
            if data:
                folder.mkdir(exist_ok=True)
                path = folder / f"figure-{len(figures) + 1:02d}.png"
                path.write_bytes(base64.b64decode("".join(data) if isinstance(data, list)
                                                  else data))
                figures.append(path)
    prose = prose_numbers(chapter, nm.glue_from_notebook(nb))
    table = notebook.with_name(f"{notebook.stem}_numbers.csv")
    if prose.numbers:
        prose = prose.write_csv(table)
    else:
        table.unlink(missing_ok=True)
    return RunSummary(chapter=chapter.name, size=str(size), counts=counts,
                      controls=sum(len(c.controls) for c in mine), notebook=notebook,
                      figures=tuple(figures), given=tuple(parameters),
                      size_parameter=size_parameter, prose=prose)
