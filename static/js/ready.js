// The page's ready signal: <html data-ready> once the page has loaded and no htmx request is
// in flight, removed while one is. A test (or a person's own script) waits for it instead of
// for a stretch of network quiet, which costs at least half a second on every page.
(function () {
  "use strict";
  const root = document.documentElement;
  let inFlight = 0;
  let loaded = false;
  function mark() {
    if (loaded && inFlight === 0) root.dataset.ready = "";
    else delete root.dataset.ready;
  }
  document.addEventListener("htmx:beforeRequest", () => { inFlight += 1; mark(); });
  document.addEventListener("htmx:afterRequest", () => { inFlight = Math.max(0, inFlight - 1); mark(); });
  window.addEventListener("load", () => { loaded = true; mark(); });
})();
