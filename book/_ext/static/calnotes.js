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
(() => {
  const scaled = [];
  const fit = () => {
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
  const undo = () => { while (scaled.length) scaled.pop().style.zoom = ""; };
  window.matchMedia("print").addEventListener("change", (e) => (e.matches ? fit() : undo()));
  window.addEventListener("afterprint", undo);
})();
