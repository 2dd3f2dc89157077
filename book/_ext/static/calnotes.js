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
