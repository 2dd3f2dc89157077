"""Sphinx extension: fixes for what the browser check (scripts/browser_check.py) found.

1. Inline scripts added by extensions after the builder is initialised appeared twice on every
   page. Sphinx 7.4 keeps such a script in the builder as ``_JavaScript(None, body=...)`` and, in
   ``StandaloneHTMLBuilder.prepare_writing``, adds every registered script again as
   ``_JavaScript(filename or '', ...)``; ``None != ''``, so the de-duplication misses it.
   sphinx-thebe (``env-before-read-docs``) and sphinx-togglebutton (``builder-inited``) add their
   configuration that way, and sphinx-thebe's ``const THEBE_JS_URL = ...`` declared twice is a
   ``SyntaxError`` on every page. :func:`_dedupe_inline_scripts` drops the second copy, keeping
   the order of the first, before each page is rendered.
2. static/calnotes.css: wide HTML tables and outputs scroll inside their own box instead of
   running off the page (the verification ledger's table at 1280-1400 px).
3. static/calnotes.js: sphinx-book-theme's script hides the right-hand sidebar while a margin or
   full-width element is on screen, and throws ``TypeError: Cannot read properties of null``
   on pages that have no right-hand sidebar (no sections, e.g. the ledger); the script gives
   such pages an empty, hidden one.
4. Each executed chapter as a notebook a reader can download and run in plain Jupyter:
   after the build, :func:`_write_notebooks` converts the executed
   notebooks myst-nb left in ``_build/jupyter_execute`` with
   :func:`calnotes.book.notebook_markdown.convert_notebook` (glued numbers filled in, directives and
   roles as plain Markdown, outputs kept) to ``_notebooks/<docname>.ipynb`` in the HTML output;
   each chapter's box (:func:`calnotes.book.claims.status.chapter_status`) links to its file.
5. search_scorer.js (Sphinx's ``html_search_scorer``, set here with an absolute path, since
   Sphinx opens it relative to the working directory and the course build runs from another):
   pages whose title names the query first, API entries after the chapters.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
SEARCH_SCORER = Path(__file__).resolve().parent / "search_scorer.js"


def _key(script) -> tuple:
    """What makes two script tags the same, with ``None`` and ``''`` both meaning inline."""
    return (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))


def _dedupe_inline_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique  # the builder's own list: the page is rendered from it


def _add_static_path(app) -> None:
    app.config.html_static_path.append(str(STATIC))
    app.config.html_search_scorer = str(SEARCH_SCORER)


def _write_notebooks(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import nbformat

    from calnotes.book import notebook_markdown as nm

    executed = Path(app.outdir).parent / "jupyter_execute"
    if not executed.is_dir():
        return
    index = nm.book_index(app.srcdir)
    written = 0
    for path in sorted(executed.rglob("*.ipynb")):
        docname = path.relative_to(executed).with_suffix("").as_posix()
        if docname not in app.env.found_docs:
            continue
        glue_file = path.with_suffix(".glue.json")
        nb = nbformat.read(path, as_version=4)
        glue = nm.glue_from_json(glue_file) if glue_file.exists() else nm.glue_from_notebook(nb)
        new = nm.convert_notebook(nb, glue, index, docname=docname, missing="mark")
        new.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}
        target = Path(app.outdir) / "_notebooks" / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(new, target)
        written += 1
    from sphinx.util import logging
    logging.getLogger(__name__).info(f"calnotes: {written} chapters written as notebooks "
                                     "to _notebooks/")


def setup(app):
    app.connect("build-finished", _write_notebooks)
    app.connect("builder-inited", _add_static_path)
    # last, after every handler that may add a page-specific script
    app.connect("html-page-context", _dedupe_inline_scripts, priority=900)
    app.add_css_file("calnotes.css")
    app.add_js_file("calnotes.js", loading_method="defer")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
