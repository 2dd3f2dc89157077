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
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"


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


def setup(app):
    app.connect("builder-inited", _add_static_path)
    # last, after every handler that may add a page-specific script
    app.connect("html-page-context", _dedupe_inline_scripts, priority=900)
    app.add_css_file("calnotes.css")
    app.add_js_file("calnotes.js", loading_method="defer")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
