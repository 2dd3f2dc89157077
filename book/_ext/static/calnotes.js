// calnotes: added by book/_ext/calnotes_html.py.
//
// sphinx-book-theme hides the right-hand sidebar while a margin or full-width element is on
// screen, and its observer assumes the sidebar exists: on a page without sections it has none,
// and the theme throws "TypeError: Cannot read properties of null (reading 'classList')". Give
// such a page an empty, never shown sidebar for the theme to toggle.
document.addEventListener("DOMContentLoaded", () => {
  if (document.querySelector("div.bd-sidebar-secondary")) return;
  const stub = document.createElement("div");
  stub.className = "bd-sidebar-secondary";
  stub.style.display = "none";
  stub.setAttribute("aria-hidden", "true");
  (document.querySelector(".bd-main") || document.body).append(stub);
});

// Print: a display formula or a table wider than the text (after calnotes.css's print rules let
// code and table cells wrap) is scaled down to the width of the text instead of being cut off at
// the page margin; the scaling is undone when printing ends. Chromium applies the print layout
// before its "change" event for the print media query, in a browser's print dialog and in
// headless printing (scripts/course_pdf.py) alike.
//
// Also: every dropdown of the article prints open (a claim's "why", a
// {dropdown}, a hidden output, a toggled admonition), except the code toggles, which
// calnotes.css leaves out of print with the code they hide; closed again after printing.
(() => {
  const scaled = [];
  const opened = [];
  const shown = [];
  const openAll = () => {
    const article = document.querySelector("article.bd-article") || document.body;
    for (const d of article.querySelectorAll("details:not([open])")) {
      if (d.matches(".hide.above-input")) continue;
      d.open = true;
      opened.push(d);
    }
    for (const el of article.querySelectorAll(".toggle-hidden")) {
      el.classList.remove("toggle-hidden");
      shown.push(el);
    }
  };
  const fit = () => {
    openAll();
    const main = document.querySelector("article.bd-article") || document.body;
    const wide = [];  // measure everything first, then scale: one layout, not one per element
    for (const el of main.querySelectorAll('mjx-container[display="true"] > mjx-math, table')) {
      if (el.matches("table table")) continue;
      const width = el.getBoundingClientRect().width;
      const room = el.parentElement.clientWidth;
      if (width > room + 1 && room > 0) wide.push([el, room / width]);
    }
    for (const [el, factor] of wide) {
      el.style.zoom = factor.toFixed(3);
      scaled.push(el);
    }
  };
  const undo = () => {
    while (scaled.length) scaled.pop().style.zoom = "";
    while (opened.length) opened.pop().open = false;
    while (shown.length) shown.pop().classList.add("toggle-hidden");
  };
  window.matchMedia("print").addEventListener("change", (e) => (e.matches ? fit() : undo()));
  window.addEventListener("beforeprint", openAll);
  window.addEventListener("afterprint", undo);
})();

// Search result snippets. Sphinx's search page (searchtools.js) takes a
// result's snippet from the text of the page's [role="main"] element, which in this theme also
// holds the header's download buttons (".md", ".pdf"), the right-hand contents list and the
// previous/next links: snippets read "....md" and "....pdf Truthful calibration measures
// Contents". The snippet is taken from the article alone, without code cells and their toggles,
// and a formula reads as text ("ℓ_2-QECE"), not as its TeX source ("\(\ell_2\)-QECE").
const calnotesTexToText = (tex) => {
  const symbols = {ell: "ℓ", le: "≤", leq: "≤", ge: "≥", geq: "≥", neq: "≠", cdot: "·",
    times: "×", infty: "∞", to: "→", in: "∈", sum: "Σ", prod: "Π", sqrt: "√", pm: "±",
    alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε", theta: "θ",
    lambda: "λ", mu: "μ", pi: "π", sigma: "σ", tau: "τ", phi: "φ", varphi: "φ", omega: "ω",
    Delta: "Δ", Sigma: "Σ", Omega: "Ω", mid: "|", lVert: "‖", rVert: "‖", lvert: "|",
    rvert: "|", ldots: "…", dots: "…", approx: "≈", sim: "∼", top: "⊤"};
  return tex
    .replace(/\\[()[\]]/g, "")
    .replace(/\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, "$1/$2")
    .replace(/\\(?:mathrm|text|textrm|operatorname|mathbf|mathcal|mathbb|mathit|boldsymbol)\s*\{([^{}]*)\}/g, "$1")
    .replace(/\\([A-Za-z]+)/g, (m, name) => (Object.hasOwn(symbols, name) ? symbols[name] : ""))
    .replace(/\\[,;:! ]/g, " ")
    .replace(/[{}]/g, "")
    .replace(/\s+/g, " ")
    .trim();
};
if (typeof Search !== "undefined" && typeof Search.htmlToText === "function") {
  const sphinxHtmlToText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    const article = doc.querySelector('[role="main"] article.bd-article');
    if (!article) return sphinxHtmlToText(htmlString, anchor);
    for (const el of article.querySelectorAll(
        ".headerlink, script, style, div.cell_input, details.hide > summary, button")) {
      el.remove();
    }
    for (const el of article.querySelectorAll("span.math, div.math")) {
      el.textContent = calnotesTexToText(el.textContent);
    }
    let part = null;
    try { part = anchor ? article.querySelector(anchor) : null; } catch (e) { part = null; }
    return (part || article).textContent;
  };
}
