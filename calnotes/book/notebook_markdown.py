r"""The book's MyST markdown as plain Jupyter Markdown, with the glued numbers filled in.

The chapters are MyST markdown notebooks: their prose holds roles (``{glue:text}`key:.3f```,
``{cite:p}`key```, ``{prf:ref}`label```, ``{doc}`path```, ...) and directives (``:::{prf:theorem}``,
````` ```{exercise} `````, ...) that only Jupyter Book renders.  A plain Jupyter front end shows
them as raw text, and a ``{glue:text}`` role as a placeholder instead of its number.
:func:`convert_notebook` rewrites the markdown cells of a notebook for a plain front end:

- glue roles become the glued values, formatted as the role asks (the same rules as myst-nb),
  read from an executed notebook (:func:`glue_from_notebook`) or from the ``.glue.json`` files
  that myst-nb writes next to the executed chapters (:func:`glue_from_json`); a
  ``{glue:figure}`` becomes an image attached to the cell; a key without a value is an error
  naming the key;
- theorem-like directives (``prf:*``) become a block quote headed by their kind and title, a
  proof an italic *Proof.* paragraph, an exercise a ``###`` heading with its label, an
  admonition a block quote with its title; labels (``(name)=``), comment lines and equation
  labels are dropped;
- references become plain text: a citation the authors and year from the bibliography, a
  ``{prf:ref}``/``{ref}``/``{numref}``/``{doc}`` its explicit text or the title of its target,
  an API role the name in code font;
- optionally (``exercise_cells=True``, the course edition's student notebooks) every exercise is
  followed by an empty answer cell and a ready ``calnotes.book.exercises.check`` cell (a note for an
  exercise whose answer is a proof).

Examples
--------
>>> glue = {"x": {"text/plain": "0.123456"}}
>>> render_roles("ECE is {glue:text}`x:.3f` here.", glue, BookIndex())
'ECE is 0.123 here.'
>>> print(convert_markdown(":::{prf:theorem} Main\n:label: thm-main\nIt holds.\n:::", {},
...                        BookIndex()))
> **Theorem** (Main)
>
> It holds.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BookIndex", "book_index", "glue_from_notebook", "glue_from_json", "format_glue",
           "leftover_markup",
           "render_roles", "convert_markdown", "convert_notebook", "exercise_cells",
           "remove_glue", "strip_glue", "add_note_below_title", "MissingGlueError",
           "LEFTOVER_MARKUP"]

#: MyST markup that must not survive the conversion (checked by :func:`leftover_markup`).
LEFTOVER_MARKUP = ("{glue", ":::{prf", "```{exercise}", "{prf:ref}", "{cite:", "{doc}",
                   "{ref}", "{solution")

_GLUE_PREFIX = "application/papermill.record/"
_ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:.-]*)\}`(?P<body>[^`]*)`")
_FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:.-]+)\}"
                         r"[ \t]*(?P<arg>.*?)\s*$")
_CODE_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>[^`{]*)$")
_TARGET = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
_EQ_LABEL = re.compile(r"^(?P<head>\s*\$\$)\s*\([^()\s]+\)\s*$")


class MissingGlueError(KeyError):
    """A glue role names a key that the executed notebook did not glue."""

    def __str__(self) -> str:
        return str(self.args[0])


# ---------------------------------------------------------------------------------------------
# glue values
# ---------------------------------------------------------------------------------------------
def glue_from_notebook(nb) -> dict:
    """``{key: {mime: data}}`` of the values a notebook glued (``myst_nb.glue``) when it ran.

    Reads the ``scrapbook`` metadata that ``glue`` attaches to its outputs; the mime types lose
    the ``application/papermill.record/`` prefix of values glued with ``display=False``.
    """
    out = {}
    for cell in nb["cells"]:
        for output in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            meta = (output.get("metadata") or {}).get("scrapbook")
            if not meta:
                continue
            out[meta["name"]] = {mime.removeprefix(_GLUE_PREFIX): data
                                 for mime, data in (output.get("data") or {}).items()}
    return out


def glue_from_json(path: str | Path) -> dict:
    """``{key: {mime: data}}`` from the ``<chapter>.glue.json`` file myst-nb writes next to an
    executed chapter (``_build/jupyter_execute/...``)."""
    raw = json.loads(Path(path).read_text())
    return {key: {mime.removeprefix(_GLUE_PREFIX): data
                  for mime, data in (value.get("data") or {}).items()}
            for key, value in raw.items()}


def _text(data) -> str:
    return "".join(data) if isinstance(data, list) else str(data)


def format_glue(data: dict, fmt_spec: str = "") -> str:
    """A glued value's ``text/plain`` formatted like myst-nb's ``{glue:text}`` role.

    Examples
    --------
    >>> format_glue({"text/plain": "0.40786"}, ".2f"), format_glue({"text/plain": "'abc'"})
    ('0.41', 'abc')
    """
    if "text/plain" not in data:
        raise ValueError(f"glued value has no text/plain form (mime types {sorted(data)})")
    text = _text(data["text/plain"])
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if fmt_spec == "":
        return str(value)
    kind = fmt_spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, fmt_spec)


# ---------------------------------------------------------------------------------------------
# what references point to
# ---------------------------------------------------------------------------------------------
@dataclass
class BookIndex:
    """Titles of the book's labels and documents and the bibliography, for plain references."""

    labels: dict = field(default_factory=dict)     # label -> text
    docs: dict = field(default_factory=dict)       # docname -> title
    cites: dict = field(default_factory=dict)      # bib key -> (authors, year)


def _bib(text: str) -> dict:
    out = {}
    for m in re.finditer(r"@\w+\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", text, flags=re.DOTALL):
        key, body = m.group(1), m.group(2)
        author = re.search(r"\bauthor\s*=\s*\{(.*?)\}\s*,?\s*$", body, flags=re.M | re.S)
        year = re.search(r"\byear\s*=\s*\{?(\d{4})", body)
        names = []
        for person in re.split(r"\s+and\s+", author.group(1)) if author else []:
            person = person.strip().strip("{}")
            names.append(person.split(",")[0].strip() if "," in person
                         else person.split()[-1] if person else person)
        if len(names) > 2:
            authors = f"{names[0]} et al."
        else:
            authors = " and ".join(names) or key
        out[key] = (authors, year.group(1) if year else "n.d.")
    return out


def book_index(root: str | Path) -> BookIndex:
    """Labels, document titles and the bibliography of the book under ``root`` (the folder
    holding ``_toc.yml``)."""
    root = Path(root)
    index = BookIndex()
    for path in sorted((root / "book").rglob("*")):
        if path.suffix not in (".md", ".ipynb") or "_build" in path.parts \
                or ".ipynb_checkpoints" in path.parts:
            continue
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text())
            text = "\n\n".join(_text(c["source"]) for c in nb["cells"]
                               if c["cell_type"] == "markdown")
        else:
            text = path.read_text()
        docname = path.relative_to(root).with_suffix("").as_posix()
        title = re.search(r"^# (.+)$", text, flags=re.MULTILINE)
        index.docs[docname] = _strip_roles(title.group(1).strip()) if title else docname
        lines = text.split("\n")
        for i, line in enumerate(lines):
            target = _TARGET.match(line)
            if target:
                heading = next((re.sub(r"^#+\s*", "", x) for x in lines[i + 1:i + 3]
                                if x.startswith("#")), None)
                index.labels[target.group("label")] = _strip_roles(heading or
                                                                   target.group("label"))
            opened = _FENCE_OPEN.match(line)
            if opened and opened.group("name").startswith(("prf:", "exercise")):
                kind = opened.group("name").split(":")[-1].replace("-", " ").capitalize()
                for option in lines[i + 1:i + 8]:
                    got = _OPTION.match(option)
                    if not got:
                        break
                    if got.group("key") == "label":
                        arg = _strip_roles(opened.group("arg"))
                        index.labels[got.group("value")] = f"{kind} ({arg})" if arg else kind
        for name, caption in _figure_names(path):
            index.labels[name] = _figure_text(caption)
    for bib in (root / "book").glob("*.bib"):
        index.cites.update(_bib(bib.read_text()))
    return index


def _figure_names(path: Path) -> list:
    """``(name, caption)`` of the numbered figures a chapter declares in its code cells'
    ``mystnb: figure:`` metadata (front matter of a MyST code cell, or an ``.ipynb`` cell's
    metadata)."""
    import yaml

    found = []
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        metas = [c.get("metadata", {}) for c in cells if c["cell_type"] == "code"]
    else:
        metas = []
        for m in re.finditer(r"^```\{code-cell\}[^\n]*\n---\n(.*?)\n---\n", path.read_text(),
                             flags=re.M | re.S):
            try:
                metas.append(yaml.safe_load(m.group(1)) or {})
            except yaml.YAMLError:
                continue
    for meta in metas:
        figure = (meta.get("mystnb") or {}).get("figure") if isinstance(meta, dict) else None
        if isinstance(figure, dict) and figure.get("name"):
            found.append((figure["name"], str(figure.get("caption", ""))))
    return found


def _figure_text(caption: str) -> str:
    """How a reference to a figure reads in plain Markdown: the figure and the first sentence
    of its caption (the book's figure numbers are given by the build)."""
    first = re.split(r"(?<=[.:;])\s", _strip_roles(caption.strip()), maxsplit=1)[0].rstrip(".:;")
    return f"the figure \"{first}\"" if first else "the figure"


def _strip_roles(text: str) -> str:
    return _ROLE.sub(lambda m: m.group("body"), text)


# ---------------------------------------------------------------------------------------------
# roles
# ---------------------------------------------------------------------------------------------
def _explicit(body: str):
    """``text <target>`` -> (text, target); ``target`` -> (None, target)."""
    m = re.match(r"^(.*?)\s*<([^<>]+)>$", body, flags=re.DOTALL)
    return (m.group(1), m.group(2)) if m and m.group(1) else (None, body)


def _resolve_doc(target: str, docname: str | None) -> str:
    if docname and not target.startswith("/"):
        parts = list(Path(docname).parent.parts)
        for piece in target.split("/"):
            if piece == "..":
                parts = parts[:-1]
            elif piece not in (".", ""):
                parts.append(piece)
        return "/".join(parts).removesuffix(".md").removesuffix(".ipynb")
    return target.lstrip("/").removesuffix(".md").removesuffix(".ipynb")


def render_roles(text: str, glue: dict, index: BookIndex, *, docname: str | None = None,
                 where: str = "", missing: str = "raise") -> str:
    """``text`` with every MyST role replaced by plain Markdown (see the module docstring).

    ``missing="mark"`` writes ``[key: no value]`` for a glue key without a value instead.

    Raises
    ------
    MissingGlueError
        A ``{glue...}`` role names a key without a glued value (``missing="raise"``).
    """
    def role(m):
        name, body = m.group("name"), m.group("body")
        if name.startswith("glue"):
            kind = name.partition(":")[2] or "any"
            key, fmt = (body.rsplit(":", 1) + [""])[:2] if kind == "text" else (body, "")
            if kind == "text" and ":" not in body:
                key, fmt = body, ""
            key = key.split("::")[-1]
            if key not in glue and missing == "mark":
                return f"[{key}: no value]"
            if key not in glue:
                raise MissingGlueError(f"{where}glue key {key!r} has no value in the executed"
                                       " notebook")
            data = glue[key]
            if kind == "md" and "text/markdown" in data:
                return _text(data["text/markdown"]).strip()
            return format_glue(data, fmt)
        if name.startswith("cite"):
            keys = [k.strip() for k in body.split(",") if k.strip()]
            found = [index.cites.get(k, (k, "")) for k in keys]
            if name == "cite:t":
                return "; ".join(f"{a} ({y})" if y else a for a, y in found)
            return "(" + "; ".join(f"{a}, {y}" if y else a for a, y in found) + ")"
        if name in ("prf:ref", "ref", "numref", "eq", "term"):
            text_, target = _explicit(body)
            if text_:
                return re.sub(r"%s|\{number\}", "", text_).strip() if name == "numref" \
                    else text_
            return index.labels.get(target, f"({target})" if name == "eq" else target)
        if name == "doc":
            text_, target = _explicit(body)
            return text_ or index.docs.get(_resolve_doc(target, docname), target)
        if name in ("math",):
            return f"${body}$"
        if name.startswith("py:") or name in ("func", "class", "mod", "meth", "attr", "data",
                                               "obj", "exc"):
            text_, target = _explicit(body)
            shown = text_ or (target[1:].rsplit(".", 1)[-1] if target.startswith("~")
                              else target)
            return f"`{shown}`"
        return body
    return _ROLE.sub(role, text)


# ---------------------------------------------------------------------------------------------
# directives
# ---------------------------------------------------------------------------------------------
def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _options(lines: list, i: int):
    """``(options, index of the first content line)`` after a directive's opening line."""
    options = {}
    while i < len(lines):
        m = _OPTION.match(lines[i])
        if not m:
            break
        options[m.group("key")] = m.group("value")
        i += 1
    if i < len(lines) and lines[i].strip() == "---":          # YAML options block
        j = i + 1
        while j < len(lines) and lines[j].strip() != "---":
            key, _, value = lines[j].partition(":")
            options[key.strip()] = value.strip()
            j += 1
        i = j + 1
    return options, i


def _quote(text: str) -> str:
    return "\n".join(("> " + line) if line.strip() else ">" for line in text.split("\n"))


_ADMONITIONS = {"note", "tip", "hint", "important", "warning", "caution", "attention",
                "danger", "error", "seealso", "admonition", "dropdown", "margin", "sidebar",
                "topic", "epigraph"}


@dataclass
class _Context:
    glue: dict
    index: BookIndex
    docname: str | None
    where: str
    missing: str = "raise"
    attachments: dict = field(default_factory=dict)
    exercises: list = field(default_factory=list)      # labels in order


def _glue_image(key: str, ctx: _Context, caption: str) -> str:
    if key not in ctx.glue and ctx.missing == "mark":
        return f"[{key}: no value]"
    if key not in ctx.glue:
        raise MissingGlueError(f"{ctx.where}glue key {key!r} has no value in the executed"
                               " notebook")
    data = ctx.glue[key]
    for mime, ext in (("image/png", "png"), ("image/jpeg", "jpg"), ("image/svg+xml", "svg")):
        if mime in data:
            name = f"{key}.{ext}"
            ctx.attachments[name] = {mime: _text(data[mime])}
            return f"![{caption or key}](attachment:{name})"
    return format_glue(data)


def _directive(name: str, arg: str, options: dict, body: str, ctx: _Context):
    """Plain Markdown for one directive; a list of segments (``("md", text)`` or
    ``("exercise", label)``)."""
    inner = _convert(body, ctx)
    inner_md = "\n\n".join(text for kind, text in inner if kind == "md").strip()
    title = render_roles(arg, ctx.glue, ctx.index, docname=ctx.docname, where=ctx.where,
                         missing=ctx.missing)
    if name == "prf:proof":
        return [("md", f"*Proof.* {inner_md} $\\blacksquare$" if inner_md else "*Proof.*")]
    if name.startswith("prf:"):
        kind = name.split(":", 1)[1].capitalize()
        head = f"**{kind}** ({title})" if title else f"**{kind}**"
        return [("md", _quote(head + ("\n\n" + inner_md if inner_md else "")))]
    if name in ("exercise", "exercise-start"):
        label = options.get("label", "")
        head = f"### Exercise{': ' + title if title else ''}" + (f" (`{label}`)" if label
                                                                  else "")
        if label:
            ctx.exercises.append(label)
        return [("md", head + "\n\n" + inner_md), ("exercise", label)]
    if name in ("solution", "solution-start"):
        return [("md", f"**Solution** (`{arg}`)" + ("\n\n" + inner_md if inner_md else ""))]
    if name in ("solution-end", "exercise-end", "eval-rst", "bibliography",
                "tableofcontents", "raw"):
        return []
    if name in _ADMONITIONS:
        head = title or ("" if name in ("admonition", "dropdown", "margin") else name.capitalize())
        text = (f"**{head}**\n\n" if head else "") + inner_md
        return [("md", _quote(text.strip()))]
    if name in ("math",):
        return [("md", "$$\n" + body.strip() + "\n$$")]
    if name in ("code-block", "code", "sourcecode"):
        return [("md", f"```{arg}\n{body.rstrip()}\n```")]
    if name in ("glue:figure", "glue", "glue:any", "glue:math", "glue:md"):
        return [("md", (_glue_image(arg, ctx, inner_md) + ("\n\n*" + inner_md + "*"
                                                           if inner_md else "")).strip())]
    if name == "figure":
        return [("md", f"![{inner_md or arg}]({arg})" + (f"\n\n*{inner_md}*" if inner_md
                                                          else ""))]
    if name == "image":
        return [("md", f"![{options.get('alt', '')}]({arg})")]
    return [("md", inner_md)] if inner_md else []


def _convert(text: str, ctx: _Context) -> list:
    """Segments of a markdown text: ``("md", plain markdown)`` and ``("exercise", label)``."""
    lines = text.split("\n")
    out, plain = [], []

    def flush():
        if plain:
            chunk = render_roles("\n".join(plain), ctx.glue, ctx.index, docname=ctx.docname,
                                 where=ctx.where, missing=ctx.missing)
            out.append(("md", chunk))
            plain.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        opened = _FENCE_OPEN.match(line)
        code = None if opened else _CODE_FENCE.match(line)
        if opened:
            fence, name = opened.group("fence"), opened.group("name")
            options, start = _options(lines, i + 1)
            end = start
            while end < len(lines) and not _closes(lines[end], fence):
                end += 1
            body = "\n".join(lines[start:end])
            flush()
            out.extend(_directive(name, opened.group("arg"), options, body, ctx))
            i = end + 1
            continue
        if code:
            fence = code.group("fence")
            end = i + 1
            while end < len(lines) and not _closes(lines[end], fence):
                end += 1
            flush()
            out.append(("md", "\n".join(lines[i:end + 1])))     # code is shown as written
            i = end + 1
            continue
        if _TARGET.match(line) or re.match(r"^\s*%", line) or re.match(r"^\s*:{3,}\s*$", line):
            i += 1                  # a label, a comment, or the end of a block split by a cell
            continue
        eq = _EQ_LABEL.match(line)
        plain.append(eq.group("head") if eq else line)
        i += 1
    flush()
    merged = []
    for kind, value in out:                     # join neighbouring markdown pieces
        if kind == "md" and merged and merged[-1][0] == "md":
            merged[-1] = ("md", merged[-1][1].rstrip() + "\n\n" + value.strip())
        else:
            merged.append((kind, value))
    return [(k, re.sub(r"\n{3,}", "\n\n", v).strip() if k == "md" else v) for k, v in merged]


def convert_markdown(text: str, glue: dict, index: BookIndex, *,
                     docname: str | None = None) -> str:
    """One markdown text as plain Jupyter Markdown (exercises stay markdown; no cells added)."""
    ctx = _Context(glue, index, docname, f"{docname}: " if docname else "")
    return "\n\n".join(v for k, v in _convert(text, ctx) if k == "md")


# ---------------------------------------------------------------------------------------------
# exercises: answer and check cells
# ---------------------------------------------------------------------------------------------
def exercise_cells(label: str) -> list:
    """The cells that follow an exercise in a student notebook: a note, an empty answer cell
    and, for an exercise with a checker, a ready ``check`` call with ``...`` for each part."""
    import nbformat

    from . import exercises
    meta = {"calnotes": {"exercise": label}}
    answer = nbformat.v4.new_code_cell(f"# Your work on exercise {label}",
                                       metadata={**copy.deepcopy(meta), "tags": ["answer"]})
    answer.metadata["calnotes"]["role"] = "answer"
    if label in exercises.NO_CHECKER:
        note = nbformat.v4.new_markdown_cell(
            f"*Exercise `{label}` has no checker: its answer is {exercises.NO_CHECKER[label]}."
            " Write it below (a markdown cell for the argument, code for any computation).*")
        return [note, answer]
    parts = [line.split(":", 1) for line in exercises.describe(label).splitlines()]
    width = max(len(name) for name, _ in parts) + 8
    rows = [f'    {(chr(34) + name + chr(34) + ": ...,").ljust(width)}  # {give.strip()}'
            for name, give in parts]
    source = "\n".join([
        "# Replace each ... by your answer and run this cell.",
        "from calnotes.book.exercises import check",
        "",
        f'check("{label}", {{',
        *rows,
        "})",
    ])
    text = ("*Check your answer:* replace each `...` in the cell below and run it. The checker"
            " says *right* or gives a hint; it never shows the solution.")
    note_text = exercises.note(label)
    if note_text:
        text += f" {note_text}"
    check = nbformat.v4.new_code_cell(source, metadata={**copy.deepcopy(meta),
                                                        "tags": ["check"]})
    check.metadata["calnotes"]["role"] = "check"
    return [nbformat.v4.new_markdown_cell(text), answer, check]


# ---------------------------------------------------------------------------------------------
# notebooks
# ---------------------------------------------------------------------------------------------
def _drop_check_box(text: str) -> str:
    """Remove the course edition's "Check your answer" boxes (the notebook has check cells)."""
    return re.sub(r"^(`{4,})\{admonition\} Check your answer\n.*?^\1\s*$\n?", "", text,
                  flags=re.MULTILINE | re.DOTALL)


def convert_notebook(nb, glue: dict, index: BookIndex, *, docname: str | None = None,
                     with_exercise_cells: bool = False, missing: str = "raise"):
    """A copy of ``nb`` whose markdown cells are plain Jupyter Markdown (see the module
    docstring); with ``with_exercise_cells`` each exercise is followed by
    :func:`exercise_cells`.  Code cells are kept as they are.  ``missing``: what a glue key
    without a value does, ``"raise"`` (:class:`MissingGlueError`) or ``"mark"``."""
    if missing not in ("raise", "mark"):
        raise ValueError(f"missing: expected 'raise' or 'mark', got {missing!r}")
    new = copy.deepcopy(nb)
    cells = []
    for cell in new.cells:
        if cell.cell_type != "markdown":
            cells.append(cell)
            continue
        source = _text(cell.source)
        if with_exercise_cells:
            source = _drop_check_box(source)
        ctx = _Context(glue, index, docname, f"{docname}: " if docname else "", missing)
        segments = _convert(source, ctx)
        pending = []
        for kind, value in segments:
            if kind == "md":
                pending.append(value)
                continue
            if with_exercise_cells and value:
                if pending:
                    cells.append(_markdown_cell(cell, "\n\n".join(pending), ctx))
                    pending = []
                cells.extend(exercise_cells(value))
        if pending or not segments:
            cells.append(_markdown_cell(cell, "\n\n".join(pending), ctx))
    new.cells = [c for c in cells if c.cell_type != "markdown" or _text(c.source).strip()]
    _cell_ids(new)
    return new


def _cell_ids(nb) -> None:
    """Unique cell ids from nbformat 4.5 on (new cells have them, old ones may not); none
    before 4.5, where the schema has no such field."""
    import uuid
    if (nb.get("nbformat", 4), nb.get("nbformat_minor", 0)) < (4, 5):
        for cell in nb.cells:
            cell.pop("id", None)
        return
    seen = set()
    for cell in nb.cells:
        if not cell.get("id") or cell["id"] in seen:
            cell["id"] = uuid.uuid4().hex[:8]
        seen.add(cell["id"])


def _markdown_cell(original, text: str, ctx: _Context):
    import nbformat
    cell = nbformat.v4.new_markdown_cell(text, metadata=copy.deepcopy(original.metadata))
    used = {name: data for name, data in ctx.attachments.items() if f"attachment:{name}" in text}
    if used:
        cell.attachments = used
    return cell


# ---------------------------------------------------------------------------------------------
# glue plumbing in the code cells (student notebooks)
# ---------------------------------------------------------------------------------------------
def _is_glue_call(stmt) -> bool:
    """``glue(...)`` as a statement (myst-nb's ``glue``, which the book's prose reads)."""
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "glue")


def _is_glue_import(stmt) -> bool:
    return (isinstance(stmt, ast.ImportFrom) and stmt.module == "myst_nb"
            and all(a.name == "glue" for a in stmt.names))


def _only_glue(stmts: list) -> bool:
    """Do these statements do nothing but glue (so that a loop or ``if`` of them can go)?"""
    for st in stmts:
        if _is_glue_call(st) or _is_glue_import(st) or isinstance(st, ast.Pass):
            continue
        if isinstance(st, (ast.For, ast.If)) and _only_glue(st.body) and _only_glue(st.orelse):
            continue
        return False
    return True


def remove_glue(source: str) -> str:
    """A code cell's source without the book's glue plumbing: ``from myst_nb import glue``,
    every ``glue(...)`` statement, and a ``for`` loop or an ``if`` that did nothing else. The
    glued values only fed the book's prose; the rest of the code runs as before, in plain
    Jupyter without myst-nb. A function left without a statement gets ``pass``. Lines are
    removed whole (comments on them go too); the other lines are kept as written.

    >>> print(remove_glue("from myst_nb import glue\\nx = 2\\nglue('x', x, display=False)\\nx"))
    x = 2
    x
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:                     # IPython magics: left as written
        return source
    lines = source.split("\n")
    drop: set = set()
    pass_at: dict = {}                      # line index -> indentation for a "pass"

    shared = []

    def span(st) -> range:
        before = lines[st.lineno - 1][:st.col_offset]
        after = lines[st.end_lineno - 1][st.end_col_offset:].strip()
        if before.strip() or (after and not after.startswith("#")):
            shared.append(st.lineno)
        return range(st.lineno - 1, st.end_lineno)

    def visit(body: list, owner=None) -> None:
        kept = 0
        for st in body:
            if _is_glue_call(st) or _is_glue_import(st) \
                    or (isinstance(st, (ast.For, ast.If)) and _only_glue([st])):
                drop.update(span(st))
                continue
            kept += 1
            for field_name in ("body", "orelse", "finalbody"):
                inner = getattr(st, field_name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    visit(inner, st)
            for handler in getattr(st, "handlers", []):
                visit(handler.body, handler)
        if owner is not None and body and kept == 0:
            first = body[0]
            pass_at[first.lineno - 1] = " " * first.col_offset

    visit(tree.body)
    if shared:
        raise ValueError(f"remove_glue: glue on line(s) {shared} shares its line with other"
                         f" code:\n{source}")
    out = []
    for i, line in enumerate(lines):
        if i in pass_at:
            out.append(pass_at[i] + "pass")
        if i not in drop:
            out.append(line)
    return "\n".join(out)


def _glue_left(source: str) -> bool:
    """Is a call of the name ``glue`` or an import from myst_nb left in ``source``?"""
    tree = ast.parse(source)
    return any((isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "glue")
               or (isinstance(n, ast.ImportFrom) and n.module == "myst_nb")
               for n in ast.walk(tree))


def strip_glue(nb):
    """A copy of ``nb`` whose code cells have no glue plumbing (:func:`remove_glue`); a cell
    that did nothing but glue (left with nothing but comments and blank lines) is dropped."""
    new = copy.deepcopy(nb)
    cells = []
    for cell in new.cells:
        if cell.cell_type == "code":
            source = remove_glue(_text(cell.source))
            if source != _text(cell.source):
                if not [line for line in source.splitlines()
                        if line.strip() and not line.strip().startswith("#")]:
                    continue
                cell.source = source.strip("\n")
        cells.append(cell)
    new.cells = cells
    return new


def add_note_below_title(nb, note: str):
    """``nb`` with ``note`` as a paragraph right below the title (the first ``#`` heading) of
    its first markdown cell (or a first markdown cell of its own when there is no title)."""
    new = copy.deepcopy(nb)
    import nbformat
    for cell in new.cells:
        if cell.cell_type != "markdown":
            continue
        lines = _text(cell.source).split("\n")
        for i, line in enumerate(lines):
            if line.startswith("# "):
                cell.source = "\n".join(lines[:i + 1] + ["", note, ""] + lines[i + 1:])
                return new
        break
    new.cells.insert(0, nbformat.v4.new_markdown_cell(note))
    _cell_ids(new)
    return new


def leftover_markup(nb) -> list:
    """The pieces of :data:`LEFTOVER_MARKUP` found in a notebook's markdown cells."""
    text = "\n".join(_text(c.source) for c in nb.cells if c.cell_type == "markdown")
    return [piece for piece in LEFTOVER_MARKUP if piece in text]

