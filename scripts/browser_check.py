#!/usr/bin/env python3
"""Browser check of the built book: open every page in headless Chromium and look at it.

    python scripts/browser_check.py --html _build/html --screenshots _build/screenshots

The pages are served from a local HTTP server on 127.0.0.1 (a thread of this process) and
opened one after another in Debian's Chromium, driven by Selenium through the installed
/usr/bin/chromedriver (Selenium never downloads a driver; everything stays offline). Every
host name other than 127.0.0.1 fails to resolve inside the browser, so a page that tries to
fetch something from the internet fails fast, and the request is still seen and reported.

For every page (``--pages`` restricts the set), at a window 1280 px wide (``--width``):

math          MathJax has typeset every formula: no raw TeX (``$...$``, an unpaired ``$\\cmd``,
              a bare TeX command such as ``\\mathbb``, ``$$``, ``\\(``,
              ``\\[``, ``\\begin{``) is left in the text of the main column outside code
              (``code``, ``pre``, ``.highlight``, API signatures) and typeset math
              (``mjx-container``), MathJax started wherever the page loads it, and there is no
              MathJax error node (``mjx-merror``).
markup        no Markdown or MyST markup is left as text in the main column (outside code): a
              MyST role (``{doc}`...```, ``{cite:p}`...```, ``{prf:ref}`...```), the delimiter
              row of a pipe table (``|---|--:|``, dashes possibly turned into en/em dashes) or
              a directive fence (``:::{prf:theorem}``). A ``Markdown(...)`` output that myst-nb
              renders as CommonMark (a page without ``render_markdown_format: myst``) shows all
              three, and its ``$...$`` as raw TeX. Both this check and
              the raw TeX part of ``math`` run in :func:`raw_markup`, on each block's text.
table         no raw pandas table is shown in the main column: a ``<table border="1"
              class="dataframe">``, pandas' default ``DataFrame.to_html()`` (what a notebook cell
              whose last expression is a DataFrame, or ``display(df)``, puts on the page): code
              names for headers, numbers with five or six digits, a header row of its own for
              the index's name and no caption. The book shows every table through
              ``calnotes.book.tables.styled_table`` (a pandas Styler: ``<table id="T_...">``); its
              own hand-built tables (the ledger's ``class="dataframe ledger-summary"``, without
              ``border``) are not pandas' default either. The failure names the table's first
              header cells, to find its cell.
request       no resource is requested from outside the book's own files (anything but the
              local server, ``data:`` and ``blob:``), and no local file is missing (HTTP >= 400).
console       no JavaScript error (console level SEVERE: uncaught exceptions,
              ``console.error``, failed loads).
image         every image has loaded (``naturalWidth > 0``).
overflow      the main column does not overflow horizontally: the page has no horizontal
              scroll bar, and no element of the main column sticks out of its containing box:
              its nearest theme "wide" element (sphinx-book-theme's margin and full-width
              content, which may reach into the right margin by design, up to the edge of the
              content area), else the main column itself. Content inside a box that scrolls or
              clips horizontally (``overflow-x`` other than ``visible``) is fine: the page keeps
              its width and the content scrolls in its own box; unless that box is taller than
              the window and its content wider than it (code blocks excepted): its scroll bar is
              then out of sight and a table looks cut off at the right edge. (A display formula
              in a scroll box is a math-width failure instead; see below.)
narrow        at a window NARROW_WIDTH (400) px wide (``--narrow-width``), the page does not scroll
              horizontally either (the first elements of the main column that run past the
              right edge are named). The other checks run at the full width only.
print         under print media at a window PRINT_WIDTH (718) px wide (A4 less Chromium's default
              margins; ``--print-width``), every display formula, table, code block and image of
              the main column lies within the column and shows all its content (no scroll box
              hiding part of it): on paper nothing scrolls, and what sticks out is cut off. The
              book's print rules (calnotes.css: boxes unclipped, code and cells wrap) and
              calnotes.js (a formula or table still too wide is scaled to fit) make this hold.
math-width    every display formula (``mjx-container[display]``) fits its column at this width:
              the typeset formula is at most as wide as its container. A formula never scrolls:
              its right-hand part, off-screen without a cue, is lost on screen and in print, so
              long chains are broken over lines (``aligned``, ``multline``) in the source.
scroll-cue    content wider than its box (tables, code, outputs) may only scroll in a box that
              shows it scrolls: ``overflow-x`` ``auto``/``scroll``, a scroll bar that takes room
              (at least 4 px; not hidden by ``scrollbar-width: none``) and a cue from the book's
              CSS (book/_ext/static/calnotes.css): a ``scrollbar-color``, which keeps the bar
              drawn where the system overlays and fades scroll bars (macOS, phones), or an edge
              shadow drawn as a ``background-image`` gradient. Unstyled scroll boxes fail even
              though headless Chromium on Linux draws their bar: a reader on macOS sees none.
              Content that overflows by less than ``MARGINAL_PX`` (16 px, two characters of
              14 px code) fails whatever its cue: Chromium lays such a box out without its
              scroll bar on some loads (measured 2026-11-26: two code boxes 6 px too wide had
              no bar on 8 of 30 loads of their pages, idle or busy; boxes 9-15 px too wide
              had theirs on all 56 loads), so the check would pass or fail by chance; and a
              scroll bar for a sliver of a line is no use to a reader. Make such content fit.
caption       every image of the main column (icons excepted: Sphinx's ``img.toggler`` and images
              shown at most 32 x 32 px) is a numbered figure: it sits in a ``<figure>``
              whose ``<figcaption>`` has Sphinx's number span (``.caption-number``, "Fig. N" or
              "Fig. N.M") and caption text besides the number.
alt           every image of the main column has alt text that is not empty and not a file name
              (no spaces and a ``/``, ``\\`` or image suffix; the src's file name;
              matplotlib's ``<Figure size ...>`` repr).
figure-text   the smallest text of every image is at least MIN_FIGURE_TEXT_PX (9) CSS px high as
              shown: ``calnotes:min_font_px`` (the smallest font size in the image's own pixels,
              ``fontsize_pt * dpi / 72``, a PNG text chunk the book's figure code writes:
              calnotes.core.plotting.PNG_MIN_FONT_KEY) times displayed width / natural width. An
              image without that chunk (or not a PNG) fails: its text size is unknown. Images
              without a layout box (display: none, e.g. in a collapsed toggle) are not measured.
link          every link to a local page resolves to an existing file and, with a ``#anchor``,
              to an element with that id (or an ``<a name>``) on the target page (with
              ``--partial``, for a reduced build, a link to a page not built is let pass).

A page that only redirects (``<meta http-equiv="refresh">``, the book's index.html) is checked
for its redirect target only. Screenshots of a few key pages (``--screenshot-pages``) are
written to ``--screenshots``. The exit status is 1 when a check fails, listing every failing
page and the reason; 2 when the browser cannot be started.

Requires /usr/bin/chromium and /usr/bin/chromedriver (Debian packages ``chromium`` and
``chromium-driver``; scripts/ensure_chromium.sh installs them) and ``selenium`` (the ``browser``
extra of pyproject.toml). Independent of the calnotes package.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import functools
import html.parser
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WIDTH, HEIGHT = 1280, 1000
NARROW_WIDTH = 400  # a phone held upright: the page must not scroll sideways there either
PRINT_WIDTH = 718  # A4 (794 CSS px) less Chromium's default print margins (about 1 cm a side)
# Key pages for a person to look at: the front page, a chapter full of mathematics, one with
# figures, and the verification ledger's wide table. Pages missing from the build are skipped.
SCREENSHOT_PAGES = (
    "book/intro.html",
    "book/truthfulness/table1.html",
    "book/proper/sharpness_diagrams.html",
    "book/appendix/ledger.html",
)
SCREENSHOT_MAX_HEIGHT = 8000
# Figures: the smallest text of a figure, at the size the figure is shown, in CSS px. The theme's
# body text is 16 px and its smallest (footnotes, code) about 14 px; under 9 px a label needs a
# zoom to be read (the reader found 4-6 px labels unreadable). A 9 pt label of a figure drawn at
# the column's width (7 in at 150 dpi, shown 688 px wide) is shown 12.3 px high, so 9 px leaves
# room for a figure shown somewhat smaller. Text height in the PNG is fontsize_pt * dpi / 72;
# the figure-saving code writes the smallest into the PNG under PNG_FONT_KEY
# (calnotes.core.plotting.PNG_MIN_FONT_KEY).
MIN_FIGURE_TEXT_PX = 9.0
PNG_FONT_KEY = "calnotes:min_font_px"
# "Fig. 3", "Fig. 3.2", "Figure 12": the number Sphinx puts in a numbered figure's caption.
FIGURE_NUMBER = re.compile(r"^(Fig\.?|Figure)\s*\d+(\.\d+)*[.:]?$")
IMAGE_SUFFIX = re.compile(r"\.(png|jpe?g|gif|svg|webp|pdf|bmp|tiff?)$", re.I)
PAGE_TIMEOUT = 60  # seconds for one page to load, typeset and settle

# Runs after the load event: waits for MathJax's first typesetting, every image and font, and two
# animation frames (IntersectionObserver callbacks and similar run by then), then a short settle.
WAIT_JS = r"""
const done = arguments[arguments.length - 1];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  const t0 = Date.now();
  while (document.readyState !== "complete" && Date.now() - t0 < 20000) await sleep(50);
  const wantsMathJax = !!document.querySelector('script[src*="mathjax" i]');
  let mathjax = "absent";
  if (wantsMathJax) {
    // a deferred MathJax has run by the load event; give an async one five more seconds
    const t1 = Date.now();
    const started = () => window.MathJax && MathJax.startup && MathJax.startup.promise;
    while (!started() && Date.now() - t1 < 5000) await sleep(50);
    if (started()) {
      try { await MathJax.startup.promise; mathjax = "typeset"; }
      catch (e) { mathjax = "failed: " + e; }
    } else {
      mathjax = "did not start";
    }
  }
  for (const img of document.images) if (img.loading === "lazy") img.loading = "eager";
  await Promise.all([...document.images].map((img) => img.complete ? null : Promise.race([
    new Promise((r) => { img.addEventListener("load", r); img.addEventListener("error", r); }),
    sleep(10000)])));
  if (document.fonts) await Promise.race([document.fonts.ready, sleep(5000)]);
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  await sleep(300);
  done({mathjax: mathjax, wantsMathJax: wantsMathJax});
})().catch((e) => done({mathjax: "wait failed: " + e, wantsMathJax: true}));
"""

# Raw TeX and Markdown left in the text of the main column (code, typeset math and the like
# excluded: SKIP in COLLECT_JS), judged by raw_markup on the text of each block.
# $...$ by pandoc's rule (opening $ not followed by a space, closing $ not preceded by a space
# nor followed by a digit), so "costs $5 and $10" is prose; $$, \(, \[ and \begin{ anywhere.
# A formula cut in half (a source line inside it that starts with "+ " becomes a list item)
# leaves an unpaired "$\cmd" or bare TeX commands in the prose: caught as well.
RAW_TEX = re.compile(
    r"\$\$|\\\(|\\\[|\\begin\{|(?<![\\$])\$(?![\s$])[^$]*?[^\s\\$]\$(?!\d)|\$\\[A-Za-z]"
    r"|\\(?:mathbb|mathrm|mathcal|mathbf|operatorname|frac|sqrt|sum|prod|int|lVert|rVert|lvert"
    r"|rvert|bigl|bigr|Bigl|Bigr|left|right|mid|cdot|le|ge|leq|geq|neq|infty|top|hat|bar|tilde"
    r"|varphi|phi|pi|sigma|lambda|alpha|beta|gamma|delta|epsilon|varepsilon|partial|nabla|in"
    r"|subseteq|implies|iff|Rightarrow|Leftrightarrow|text|ell)(?![A-Za-z])")
# A MyST role left as text ({prf:ref}`...`, {doc}`...`, {glue:text}`...`): the markup leaked.
RAW_ROLE = re.compile(r"\{(?:prf:ref|ref|doc|eq|numref|cite:[pt]|cite|glue:text|glue:md|glue"
                      r"|term|download|py:[a-z]+|func|class|mod|meth|attr)\}`")
# A Markdown pipe table left as text (a Markdown(...) output rendered as CommonMark, which has
# no tables): its delimiter row, "|---|--:|" (markdown-it's typographer may have turned the
# dashes into en and em dashes). Rows alone are not looked for: prose has "P(Y = k | f = z)"
# and signatures "x: str | None = None", which a row pattern cannot tell from table cells.
RAW_PIPE_TABLE = re.compile(r"\|(?:[ \t]*:?[-\u2013\u2014]+:?[ \t]*\|){2,}")
# A MyST directive fence left as text (```{note}, :::{prf:theorem}).
RAW_DIRECTIVE = re.compile(r"(?:```|:::)\{[a-z][\w:-]*\}")
RAW_MARKUP = (  # (check, what, pattern)
    ("math", "raw TeX left untypeset", RAW_TEX),
    ("markup", "MyST role left as text", RAW_ROLE),
    ("markup", "Markdown pipe table left as text", RAW_PIPE_TABLE),
    ("markup", "MyST directive left as text", RAW_DIRECTIVE),
)


def raw_markup(text: str) -> list[tuple[str, str]]:
    """``(check, reason)`` for each kind of raw TeX or Markdown in one block's text (its first
    occurrence, with 40 characters of context either side).

    >>> raw_markup("it costs $5 and $10")
    []
    >>> raw_markup("| a | b |\n|---|---|\n| 1 | 2 |")[0][0]
    'markup'
    """
    text = re.sub(r"\s+", " ", text)
    found = []
    for check, what, pattern in RAW_MARKUP:
        m = pattern.search(text)
        if m:
            snippet = text[max(0, m.start() - 40):m.end() + 40].strip()
            found.append((check, f'{what}: "{snippet}"'))
    return found


def raw_table_reason(headers: list[str], shown: int = 6) -> str:
    """Why a raw pandas table fails, naming its first ``shown`` header cells.

    >>> raw_table_reason(["n", "R_n", "R_n_se"]).split(", headers ")[1]
    '"n | R_n | R_n_se": show it through calnotes.book.tables.styled_table'
    """
    named = " | ".join(headers[:shown]) + (" | \u2026" if len(headers) > shown else "")
    return ("raw pandas table (DataFrame.to_html: code names for headers, unformatted numbers,"
            f" no caption), headers \"{named or 'none'}\": show it through"
            " calnotes.book.tables.styled_table")


MARGINAL_PX = 16  # the scroll-cue rule: content this little too wide must fit instead

# Collects everything the checks need from the rendered page in one call.
COLLECT_JS = f"const MARGINAL_PX = {MARGINAL_PX};\n" + r"""
// (dt.sig: an API signature, code set in spans: "x: str | None = None", default values)
const SKIP = 'code, pre, .highlight, mjx-container, mjx-assistive-mml, script, style, textarea, '
  + 'noscript, template, kbd, samp, svg, math, dt.sig';
// sphinx-book-theme's margin and full-width content (the list its own script uses)
const WIDE = ['marginnote', 'sidenote', 'margin', 'margin-caption', 'full-width', 'sidebar',
  'popout'].flatMap((n) => [n, n.replace('-', '_')]).flatMap((n) => [`.${n}`, `.tag_${n}`])
  .join(', ');
const main = document.querySelector('article.bd-article') || document.querySelector('[role="main"]')
  || document.querySelector('main') || document.querySelector('article') || document.body;
const area = document.querySelector('.bd-main') || document.body;
const out = {texts: [], merror: [], images: [], overflow: [], links: [], ids: [], scrollWidth: 0,
             figures: [], wideMath: [], noCue: [],
             clientWidth: 0, formulas: document.querySelectorAll('mjx-container').length,
             imageCount: document.images.length};

// --- the text of the main column (raw TeX and Markdown are looked for in it) ----------
const BLOCK = 'p, li, dd, dt, td, th, h1, h2, h3, h4, h5, h6, figcaption, caption, blockquote, '
  + 'div, section, article, span.math, div.math';
const texts = new Map();
const codeSeen = new Set();
const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const parent = node.parentElement;
  if (!parent) continue;
  const skipped = parent.closest(SKIP);
  if (skipped) {
    // inline code stands in its block's text as `…`: a role that myst-nb rendered as
    // CommonMark is the text "{doc}" and then the code "ledger", and is still seen as a role
    if (skipped.matches('code') && !codeSeen.has(skipped)
        && !(skipped.parentElement && skipped.parentElement.closest(SKIP))) {
      codeSeen.add(skipped);
      const block = skipped.closest(BLOCK) || main;
      texts.set(block, (texts.get(block) || '') + '`\u2026`');
    }
    continue;
  }
  const block = parent.closest(BLOCK) || main;
  texts.set(block, (texts.get(block) || '') + node.data);
}
// judged in Python (raw_markup): the text of each block, whitespace collapsed
for (const raw of texts.values()) {
  const text = raw.replace(/\s+/g, ' ').trim();
  if (text) out.texts.push(text);
}

// --- raw pandas tables: DataFrame.to_html()'s <table border="1" class="dataframe"> -------
// (a Styler has id="T_..." and no border; the ledger's own table has no border): the first
// header row's non-empty cells, to name the table
out.rawTables = [];
for (const t of main.querySelectorAll('table.dataframe[border="1"]')) {
  const row = t.querySelector('thead tr') || t.rows[0];
  const cells = row ? [...row.cells] : [];
  out.rawTables.push(cells.map((c) => c.textContent.replace(/\s+/g, ' ').trim())
    .filter((text) => text));
}

// --- MathJax error nodes --------------------------------------------------------------------
for (const e of document.querySelectorAll('mjx-merror')) {
  out.merror.push((e.getAttribute('data-mjx-error') || e.textContent || '').slice(0, 120));
}

// --- images ---------------------------------------------------------------------------------
for (const img of document.images) {
  if (!img.complete || img.naturalWidth === 0) {
    out.images.push(img.getAttribute('src') || img.currentSrc);
  }
}

// --- figures: caption and number, alt text, displayed size ---------------------------------
for (const img of main.querySelectorAll('img')) {
  // icons, not figures: Sphinx's expand/collapse toggles (module index), anything shown at most
  // 32 x 32 px
  const box = img.getBoundingClientRect();
  if (img.matches('.toggler') || (box.width > 0 && box.width <= 32 && box.height <= 32)) continue;
  const fig = img.closest('figure');
  const cap = fig ? fig.querySelector('figcaption') : null;
  const num = cap ? cap.querySelector('.caption-number') : null;
  const text = cap ? cap.querySelector('.caption-text') : null;
  out.figures.push({
    src: img.currentSrc || img.src, attr: img.getAttribute('src') || '',
    alt: img.getAttribute('alt'), shown: box.width,
    natural: img.naturalWidth, figure: !!fig,
    number: num ? num.textContent.replace(/\s+/g, ' ').trim() : null,
    caption: (text || cap) ? (text || cap).textContent.replace(/\s+/g, ' ').trim() : null,
  });
}

// --- display formulas wider than their column -----------------------------------------------
for (const c of main.querySelectorAll('mjx-container[display="true"]')) {
  const m = c.querySelector('mjx-math');
  if (!m) continue;
  const w = m.getBoundingClientRect().width;
  if (w === 0) continue;  // not displayed (a collapsed solution)
  if (w > c.clientWidth + 1) {
    const tex = (c.parentElement.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 60);
    out.wideMath.push({width: Math.round(w), column: c.clientWidth, text: tex});
  }
}

// --- horizontal overflow --------------------------------------------------------------------
out.scrollWidth = document.documentElement.scrollWidth;
out.clientWidth = document.documentElement.clientWidth;
const clips = (el) => getComputedStyle(el).overflowX !== 'visible';
function describe(el) {
  let s = el.tagName.toLowerCase();
  if (el.id) s += '#' + el.id;
  if (typeof el.className === 'string' && el.className.trim())
    s += '.' + el.className.trim().split(/\s+/).slice(0, 3).join('.');
  const text = (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 50);
  return text ? `${s} ("${text}")` : s;
}
function box(el) {  // the box el must stay inside; null inside a box that clips or scrolls
  for (let a = el.parentElement; a; a = a.parentElement) {
    if (a === main) return main;
    if (clips(a)) return null;
    if (a.matches(WIDE)) return a;
  }
  return main;
}
const reported = [];
for (const el of main.querySelectorAll('*')) {
  // of MathJax's output only the container and the formula box: the rest lies inside them
  if (/^MJX-/.test(el.tagName) && !/^MJX-(CONTAINER|MATH)$/.test(el.tagName)) continue;
  if (el.closest('mjx-assistive-mml, script, style, template, noscript')) continue;
  if (reported.some((r) => r.contains(el))) continue;
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) continue;
  const style = getComputedStyle(el);
  if (style.position === 'fixed' || style.visibility === 'hidden') continue;
  if (style.clip !== 'auto' && style.clip !== '') continue;  // visually hidden helpers
  const scrolls = /^(auto|scroll)$/.test(style.overflowX) && el.scrollWidth > el.clientWidth + 1;
  // a display formula must fit its column (checked above), not scroll
  if (scrolls && el.matches('mjx-container')) { reported.push(el); continue; }
  // content wider than its box scrolls in a box that shows it does: a scroll bar that takes room
  // (not hidden by scrollbar-width: none or ::-webkit-scrollbar) and a cue that the book's CSS
  // gives (a scroll bar colour, which also shows where scroll bars overlay and fade, or an
  // edge shadow drawn with a background gradient)
  if (scrolls && el.scrollWidth - el.clientWidth < MARGINAL_PX) {
    reported.push(el);
    out.noCue.push(`${describe(el)}: ${el.scrollWidth} px of content scroll in a `
      + `${el.clientWidth} px box, only ${el.scrollWidth - el.clientWidth} px too wide (under `
      + `${MARGINAL_PX} px: Chromium shows no scroll bar for it on some loads; make it fit)`);
    continue;
  }
  if (scrolls) {
    const bar = el.offsetHeight - el.clientHeight - parseFloat(style.borderTopWidth)
      - parseFloat(style.borderBottomWidth);
    const cue = style.scrollbarColor !== 'auto' || /gradient/.test(style.backgroundImage);
    if (bar < 4 || style.scrollbarWidth === 'none' || !cue) {
      reported.push(el);
      out.noCue.push(`${describe(el)}: ${el.scrollWidth} px of content scroll in a `
        + `${el.clientWidth} px box without a visible scroll cue (`
        + (bar < 4 || style.scrollbarWidth === 'none' ? 'no scroll bar shown'
           : 'scroll bar not styled visible, no edge shadow') + ')');
      continue;
    }
  }
  // a horizontal scroll box taller than the window has its scroll bar out of sight: a table cut
  // off at its right edge looks like a table running off the page (code blocks excepted: a
  // long code line scrolling in its block is the convention, and visibly cut mid-line)
  if (/^(auto|scroll)$/.test(style.overflowX) && el.scrollWidth > el.clientWidth + 1
      && r.height > window.innerHeight && !el.matches('pre, .highlight, .highlight *')) {
    reported.push(el);
    out.overflow.push(`${describe(el)} is cut off at the right edge: ${el.scrollWidth} px of `
      + `content in a ${el.clientWidth} px scroll box ${Math.round(r.height)} px tall, taller `
      + `than the window, so its scroll bar is out of sight`);
    continue;
  }
  const container = el.matches(WIDE) ? area : box(el);
  if (container === null) continue;
  const c = container.getBoundingClientRect();
  const over = Math.max(r.right - c.right, c.left - r.left);
  if (over > 1) {
    reported.push(el);
    out.overflow.push(`${describe(el)} sticks out of ${describe(container).split(' (')[0]} by `
      + `${Math.round(over)} px (element ${Math.round(r.left)}-${Math.round(r.right)}, box `
      + `${Math.round(c.left)}-${Math.round(c.right)})`);
  }
}

// --- links and anchors ----------------------------------------------------------------------
for (const a of document.querySelectorAll('a[href]')) {
  out.links.push([a.getAttribute('href'), a.href]);
}
for (const e of document.querySelectorAll('[id]')) out.ids.push(e.id);
for (const e of document.querySelectorAll('a[name]')) out.ids.push(e.getAttribute('name'));
return out;
"""


# Run at the narrow width: does the page scroll sideways, and which element of the main column
# runs past the window's right edge (its box, or its text: scrollWidth past its own box)?
NARROW_JS = r"""
const done = arguments[arguments.length - 1];
requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
  const W = document.documentElement.clientWidth;
  const scrollWidth = document.documentElement.scrollWidth;
  if (scrollWidth <= W + 1) {
    done({scrollWidth: scrollWidth, clientWidth: W, culprits: []});
    return;
  }
  const main = document.querySelector('article.bd-article') || document.querySelector('main')
    || document.body;
  const culprits = [];
  const inScrollBox = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== 'visible') return true;
    return false;
  };
  for (const el of main.querySelectorAll('*')) {
    if (culprits.length >= 3) break;
    if (/^MJX-/.test(el.tagName) && el.tagName !== 'MJX-CONTAINER') continue;
    if (culprits.some((c) => c.contains(el)) || inScrollBox(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0) continue;
    const textOut = getComputedStyle(el).overflowX === 'visible'
      && r.left + el.scrollWidth > W + 1;
    if (r.right > W + 1 || textOut) culprits.push(el);
  }
  done({scrollWidth: scrollWidth, clientWidth: W,
        culprits: culprits.map((el) => el.tagName.toLowerCase() + (el.className && typeof
          el.className === 'string' ? '.' + el.className.trim().split(/\s+/)[0] : '') + ' ("'
          + (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 40) + '")')});
}, 100)));
"""


# Run under print media at PRINT_WIDTH: every formula, table, code block and image of the main
# column lies within the column (a scroll box on paper shows only its first part, and what
# sticks out past the margin is cut off), and no code block or table hides part of its content.
PRINT_JS = r"""
const done = arguments[arguments.length - 1];
requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
  const main = document.querySelector('article.bd-article') || document.querySelector('main')
    || document.body;
  const m = main.getBoundingClientRect();
  const out = [];
  for (const el of main.querySelectorAll(
      'mjx-container[display="true"] > mjx-math, table, pre, img')) {
    if (el.matches('table table, table pre, table img')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;  // not printed (noprint, a closed dropdown)
    const over = Math.max(r.right - m.right, m.left - r.left);
    const clipped = getComputedStyle(el).overflowX !== 'visible'
      && el.scrollWidth > el.clientWidth + 1;
    if (over > 1 || clipped) {
      const text = (el.closest('mjx-container') || el).textContent.replace(/\s+/g, ' ').trim();
      const name = el.tagName.toLowerCase().replace('mjx-math', 'display formula');
      out.push(`${name} ("${text.slice(0, 50)}") ` + (over > 1
        ? `runs ${Math.round(over)} px past the ${Math.round(m.width)} px wide text: cut off`
        : `shows ${el.clientWidth} px of its ${el.scrollWidth} px content: the rest is cut off`));
    }
    if (out.length >= 5) break;
  }
  done(out);
}, 100)));
"""


@dataclass
class PageResult:
    page: str
    failures: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)  # what was looked at

    def fail(self, check: str, reason: str) -> None:
        if (check, reason) not in self.failures:
            self.failures.append((check, reason))


class _IdCollector(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is not None and (name == "id" or (tag == "a" and name == "name")):
                self.ids.add(value)


@functools.lru_cache(maxsize=None)
def _static_ids(path: Path) -> frozenset[str]:
    parser = _IdCollector()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return frozenset(parser.ids)


_REFRESH = re.compile(
    r"""<meta\s+http-equiv=["']?refresh["']?\s+content=["']?\s*\d+\s*;\s*url=([^"'>\s]+)""", re.I)


def _redirect_target(path: Path) -> str | None:
    """The target of a page that is only a ``<meta http-equiv="refresh">`` redirect."""
    text = path.read_text(encoding="utf-8", errors="replace")
    match = _REFRESH.search(text)
    if match and "<body" not in text.lower():
        return match.group(1)
    return None


def find_pages(root: Path, patterns: list[str] | None) -> list[str]:
    """Every HTML page under root (folders starting with ``_`` excluded), or those matching."""
    pages = sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*.html")
        if not any(part.startswith("_") for part in p.relative_to(root).parts[:-1])
    )
    if not patterns:
        return pages
    chosen = [p for p in pages if any(fnmatch.fnmatch(p, pat) for pat in patterns)]
    missing = [pat for pat in patterns if not any(fnmatch.fnmatch(p, pat) for p in pages)]
    if missing:
        raise SystemExit(f"browser check: no page matches {', '.join(missing)} under {root}")
    return chosen


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def send_head(self):
        # Chromium asks every host for /favicon.ico when a page declares no icon; that request is
        # the browser's own, not the book's, so a missing one is answered "no content".
        favicon = Path(self.directory) / "favicon.ico"
        if self.path.split("?")[0] == "/favicon.ico" and not favicon.exists():
            self.send_response(204)
            self.end_headers()
            return None
        return super().send_head()


def serve(root: Path) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="browser-check-http", daemon=True).start()
    return server


def start_browser(width: int):
    """Headless Chromium through /usr/bin/chromedriver (Selenium downloads nothing)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        raise RuntimeError(
            f"{' and '.join(missing)} not found: install Debian's chromium and chromium-driver "
            "(as root: scripts/ensure_chromium.sh, or apt-get install chromium chromium-driver)")
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager, should it ever run: no network
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise RuntimeError(f"{exc}: install the browser extra (pip install -e '.[browser]')") \
            from exc

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        f"--window-size={width},{HEIGHT}",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--disable-extensions", "--no-first-run",
        "--disable-features=Translate,OptimizationHints,MediaRouter",
        # offline: every host but the local server fails to resolve (the request is still logged)
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    except WebDriverException as exc:
        raise RuntimeError(f"cannot start {CHROMIUM}: {exc.msg}") from exc
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    driver.set_script_timeout(PAGE_TIMEOUT)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    return driver


def reset_emulation(driver, width: int) -> None:
    """Back to screen media and the full window width (after the narrow and print checks)."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})


def _drain_logs(driver) -> None:
    driver.get("about:blank")
    driver.get_log("browser")
    driver.get_log("performance")


def _requests(driver) -> tuple[list[str], dict[str, str], dict[str, int]]:
    """URLs the page requested, failed requests (url -> error) and HTTP statuses (url -> code)."""
    urls: list[str] = []
    failed: dict[str, str] = {}
    status: dict[str, int] = {}
    by_id: dict[str, str] = {}
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            by_id[params["requestId"]] = url
            if url not in urls:
                urls.append(url)
        elif method == "Network.responseReceived":
            status[params["response"]["url"]] = int(params["response"]["status"])
        elif method == "Network.loadingFailed" and params["requestId"] in by_id:
            if not params.get("canceled"):
                failed[by_id[params["requestId"]]] = params.get("errorText", "failed")
    return urls, failed, status


def _is_local(url: str, base: str) -> bool:
    return url.startswith(base) or url.split(":", 1)[0] in ("data", "blob", "about")


def _local_path(root: Path, base: str, url: str) -> tuple[Path, str]:
    """The file under root an URL of the local server points at, and the URL's fragment."""
    parsed = urllib.parse.urlsplit(url[len(base) - 1:])  # keep the leading '/'
    rel = urllib.parse.unquote(parsed.path).lstrip("/")
    path = root / rel
    if rel == "" or rel.endswith("/") or path.is_dir():
        path = path / "index.html"
    return path, urllib.parse.unquote(parsed.fragment)


def png_text(data: bytes) -> dict[str, str]:
    """The text chunks (tEXt, zTXt, iTXt) of a PNG file's bytes; {} for anything else.

    >>> png_text(b"not a png")
    {}
    """
    import struct
    import zlib

    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return {}
    texts: dict[str, str] = {}
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        try:
            if kind == b"tEXt":
                key, _, value = body.partition(b"\0")
                texts[key.decode("latin-1")] = value.decode("latin-1")
            elif kind == b"zTXt":
                key, _, rest = body.partition(b"\0")
                texts[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
            elif kind == b"iTXt":
                key, _, rest = body.partition(b"\0")
                compressed, rest = rest[0], rest[2:]
                _lang, _, rest = rest.partition(b"\0")
                _translated, _, value = rest.partition(b"\0")
                value = zlib.decompress(value) if compressed else value
                texts[key.decode("latin-1")] = value.decode("utf-8")
            elif kind == b"IEND":
                break
        except (ValueError, zlib.error, IndexError):
            continue  # a damaged chunk: as if absent
    return texts


def _image_bytes(root: Path, base: str, url: str) -> bytes | None:
    if url.startswith("data:"):
        header, _, payload = url.partition(",")
        if header.endswith(";base64"):
            return base64.b64decode(payload)
        return urllib.parse.unquote_to_bytes(payload)
    if url.startswith(base):
        path, _ = _local_path(root, base, url)
        if path.is_file():
            return path.read_bytes()
    return None


def _is_path_like(alt: str, src: str) -> bool:
    """Alt text that names a file rather than saying what the image shows."""
    text = alt.strip()
    name = urllib.parse.unquote(src.split("?")[0].rstrip("/").rsplit("/", 1)[-1])
    if text == name or text.lower().startswith(("<figure size", "<matplotlib")):
        return True
    return " " not in text and ("/" in text or "\\" in text or bool(IMAGE_SUFFIX.search(text)))


def check_figures(result: PageResult, figures: list[dict], root: Path, base: str) -> None:
    """Caption and number, alt text, and the displayed size of the smallest text of each image."""
    for fig in figures:
        name = urllib.parse.unquote(fig["attr"].rsplit("/", 1)[-1])[:60] or "(no src)"
        if not fig["figure"]:
            result.fail("caption", f"image {name} is not in a <figure> with a numbered caption")
        elif not fig["number"] or not FIGURE_NUMBER.match(fig["number"]):
            result.fail("caption", f"figure {name} has no number in its caption (a "
                                   f"'Fig. N' caption-number span): caption {fig['caption']!r}")
        elif not fig["caption"] or fig["caption"] == fig["number"]:
            result.fail("caption", f"figure {name} ({fig['number']}) has a number but no "
                                   "caption text")
        alt = fig["alt"]
        if alt is None or not alt.strip():
            result.fail("alt", f"image {name} has {'no' if alt is None else 'empty'} alt text")
        elif _is_path_like(alt, fig["attr"]):
            result.fail("alt", f"image {name} has a file name for alt text: {alt[:80]!r}")
        if fig["natural"] == 0 or fig["shown"] == 0:
            continue  # not loaded (the image check reports it) or not shown (a closed dropdown)
        data = _image_bytes(root, base, fig["src"])
        value = png_text(data).get(PNG_FONT_KEY) if data is not None else None
        try:
            font_px = float(value) if value is not None else None
        except ValueError:
            font_px = None
        if font_px is None:
            what = "not a PNG" if data is None or not data.startswith(b"\x89PNG") else \
                f"no valid {PNG_FONT_KEY} text chunk ({value!r})" if value else \
                f"no {PNG_FONT_KEY} text chunk"
            result.fail("figure-text", f"image {name}: the size of its smallest text is unknown "
                                       f"({what}; the figure-saving code writes it)")
            continue
        shown_px = font_px * fig["shown"] / fig["natural"]
        if shown_px < MIN_FIGURE_TEXT_PX - 0.05:
            result.fail("figure-text", f"image {name}: its smallest text is shown {shown_px:.1f} "
                                       f"px high, under {MIN_FIGURE_TEXT_PX:g} px ({font_px:g} px "
                                       f"in the image, shown at {fig['shown']:.0f} of "
                                       f"{fig['natural']} px)")
    result.counts["figures"] = len(figures)


def check_links(result: PageResult, links: list[list[str]], root: Path, base: str,
                live_ids: dict[str, set[str]], partial: bool = False) -> None:
    """Every local link resolves to a file and its anchor; with ``partial`` (a reduced build of
    some pages only), a link to an HTML page that is not in the build is let pass."""
    checked = 0
    for href, absolute in links:
        scheme = urllib.parse.urlsplit(absolute).scheme.lower()
        if scheme in ("mailto", "javascript", "tel", "data"):
            continue
        if scheme == "file":
            result.fail("link", f"{href!r} points at a local file outside the book")
            continue
        if not absolute.startswith(base):
            continue  # a link to another site: reading it is the reader's choice, not a request
        path, fragment = _local_path(root, base, absolute)
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            result.fail("link", f"{href!r} points outside the book")
            continue
        checked += 1
        if not path.is_file():
            if partial and path.suffix == ".html":
                continue
            result.fail("link", f"{href!r}: no file {rel}")
            continue
        if fragment and path.suffix == ".html":
            ids = live_ids.get(rel)
            if ids is None:
                ids = _static_ids(path)
            if fragment not in ids:
                result.fail("link", f"{href!r}: {rel} has no element with id {fragment!r}")
    result.counts["internal links"] = checked


def check_page(driver, base: str, page: str, root: Path, width: int = WIDTH,
               narrow_width: int | None = NARROW_WIDTH,
               print_width: int | None = PRINT_WIDTH) -> tuple[PageResult, dict, set[str]]:
    result = PageResult(page)
    start = time.monotonic()
    _drain_logs(driver)
    reset_emulation(driver, width)
    driver.get(base + urllib.parse.quote(page))
    waited = driver.execute_async_script(WAIT_JS)
    data = driver.execute_script(COLLECT_JS)
    # the narrow window, then print media: each change lays the (long) page out again, so the
    # full width and screen media come back only on the next blank page (reset_emulation)
    narrow, printed = None, []
    metrics = {"height": HEIGHT, "deviceScaleFactor": 1, "mobile": False}
    if narrow_width:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {**metrics, "width": narrow_width})
        narrow = driver.execute_async_script(NARROW_JS)
    if print_width:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {**metrics, "width": print_width})
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        printed = driver.execute_async_script(PRINT_JS)

    if waited["wantsMathJax"] and waited["mathjax"] != "typeset":
        result.fail("math", f"MathJax {waited['mathjax']}")
    for text in data["texts"]:
        for check, reason in raw_markup(text):
            result.fail(check, reason)
    for error in data["merror"]:
        result.fail("math", f"MathJax error node: \"{error}\"")
    for headers in data["rawTables"]:
        result.fail("table", raw_table_reason(headers))

    for src in data["images"]:
        result.fail("image", f"image did not load: {src}")

    if data["scrollWidth"] > data["clientWidth"] + 1:
        result.fail("overflow", f"the page scrolls horizontally: {data['scrollWidth']} px wide "
                                f"in a {data['clientWidth']} px window")
    for text in data["overflow"]:
        result.fail("overflow", text)
    if narrow and narrow["scrollWidth"] > narrow["clientWidth"] + 1:
        result.fail("narrow", f"at {narrow_width} px the page scrolls horizontally: "
                              f"{narrow['scrollWidth']} px wide in a {narrow['clientWidth']} px "
                              f"window; running past the edge: "
                              f"{', '.join(narrow['culprits']) or 'no element of the main column'}")
    for text in printed:
        result.fail("print", f"printed {print_width} px wide: {text}")
    for text in data["noCue"]:
        result.fail("scroll-cue", text)
    for formula in data["wideMath"]:
        result.fail("math-width", f"display formula {formula['width']} px wide in a "
                                  f"{formula['column']} px column (break it over lines): "
                                  f"\"{formula['text']}\"")

    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            message = entry.get("message", "").replace(base, "/")
            result.fail("console", f"JavaScript console error: {message}")

    urls, failed, status = _requests(driver)
    for url in urls:
        if not _is_local(url, base):
            result.fail("request", f"resource requested from outside the book: {url}")
        elif url.startswith(base) and (status.get(url, 200) >= 400 or url in failed):
            reason = f"HTTP {status[url]}" if url in status else failed[url]
            result.fail("request", f"local resource missing: /{url[len(base):]} ({reason})")

    result.counts = {"formulas": data["formulas"], "images": data["imageCount"],
                     "requests": len(urls)}
    check_figures(result, data["figures"], root, base)
    result.seconds = time.monotonic() - start
    return result, data, set(data["ids"])


def screenshot(driver, path: Path, width: int) -> None:
    """The page from the top, as tall as the page (at most SCREENSHOT_MAX_HEIGHT px)."""
    height = driver.execute_script(
        "return Math.max(document.documentElement.scrollHeight, document.body.scrollHeight)")
    height = max(HEIGHT, min(int(height), SCREENSHOT_MAX_HEIGHT))
    metrics = {"width": width, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": height})
    try:
        driver.execute_script("window.scrollTo(0, 0)")
        driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 200)));")
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    finally:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": HEIGHT})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


def run(root: Path, pages: list[str], screenshots: Path | None, screenshot_pages: list[str],
        width: int, out=sys.stdout, narrow_width: int | None = NARROW_WIDTH,
        print_width: int | None = PRINT_WIDTH, partial: bool = False) -> list[PageResult]:
    server = serve(root)
    base = f"http://127.0.0.1:{server.server_port}/"
    driver = start_browser(width)
    results: list[PageResult] = []
    live_ids: dict[str, set[str]] = {}
    links: dict[str, list] = {}
    try:
        for page in pages:
            target = _redirect_target(root / page)
            if target is not None:
                result = PageResult(page)
                links[page] = [[target, urllib.parse.urljoin(base + page, target)]]
                results.append(result)
                continue
            try:
                result, data, ids = check_page(driver, base, page, root, width, narrow_width,
                                               print_width)
            except Exception as exc:  # a page that hangs or crashes the tab is a failure too
                result = PageResult(page)
                first_line = (str(exc).splitlines() or [""])[0]
                result.fail("browser", f"{type(exc).__name__}: {first_line}")
                results.append(result)
                continue
            live_ids[page] = ids
            links[page] = data["links"]
            results.append(result)
            status = "ok" if not result.failures else f"{len(result.failures)} failure(s)"
            print(f"  {page}: {status} ({result.seconds:.1f} s)", file=out, flush=True)
            if screenshots is not None and page in screenshot_pages:
                name = page.removesuffix(".html").replace("/", "__") + ".png"
                reset_emulation(driver, width)
                screenshot(driver, screenshots / name, width)
                print(f"    screenshot {screenshots / name}", file=out, flush=True)
        for result in results:  # after all pages, so anchors can be checked on the live pages
            check_links(result, links.get(result.page, []), root, base, live_ids, partial)
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=Path("_build/html"),
                        help="the built book (default: _build/html)")
    parser.add_argument("--screenshots", type=Path, default=None,
                        help="folder for screenshots of the key pages (default: none taken)")
    parser.add_argument("--screenshot-pages", nargs="*", default=list(SCREENSHOT_PAGES),
                        help="pages to screenshot, relative to --html")
    parser.add_argument("--pages", nargs="*", default=None,
                        help="check only these pages (paths relative to --html, globs allowed)")
    parser.add_argument("--width", type=int, default=WIDTH,
                        help="window width in px (default 1280)")
    parser.add_argument("--narrow-width", type=int, default=NARROW_WIDTH,
                        help="also check for sideways page scrolling at this width "
                             f"(default {NARROW_WIDTH}; 0: skip)")
    parser.add_argument("--print-width", type=int, default=PRINT_WIDTH,
                        help="also check the print layout at this width "
                             f"(default {PRINT_WIDTH}; 0: skip)")
    parser.add_argument("--partial", action="store_true",
                        help="the HTML is a reduced build of some pages (make course-smoke): a"
                             " link to a page not in it is let pass (links into the pages it"
                             " has, and their anchors, are still checked)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    args = parser.parse_args(argv)

    root = args.html.resolve()
    if not (root / "index.html").is_file() and not args.pages:
        print(f"browser check: {args.html} has no index.html; build the book first (make book)",
              file=sys.stderr)
        return 2
    pages = find_pages(root, args.pages)
    print(f"browser check: {len(pages)} page(s) of {args.html} at {args.width} px", flush=True)
    start = time.monotonic()
    try:
        results = run(root, pages, args.screenshots, args.screenshot_pages, args.width,
                      narrow_width=args.narrow_width or None,
                      print_width=args.print_width or None, partial=args.partial)
    except RuntimeError as exc:
        print(f"browser check: {exc}", file=sys.stderr)
        return 2
    failing = [r for r in results if r.failures]
    if args.json is not None:
        report = [{"page": r.page, "failures": [{"check": c, "reason": m} for c, m in r.failures],
                   "seconds": round(r.seconds, 2), "counts": r.counts} for r in results]
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    elapsed = time.monotonic() - start
    totals: dict[str, int] = {}
    for result in results:
        for name, n in result.counts.items():
            totals[name] = totals.get(name, 0) + n
    print("browser check: looked at " + ", ".join(f"{n} {name}" for name, n in totals.items()))
    if not failing:
        print(f"browser check: all {len(results)} page(s) pass ({elapsed:.0f} s)")
        return 0
    print(f"browser check: {len(failing)} of {len(results)} page(s) FAIL ({elapsed:.0f} s)",
          file=sys.stderr)
    for result in failing:
        for check, reason in result.failures:
            print(f"FAIL {result.page}: [{check}] {reason}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
