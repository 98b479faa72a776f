// Mock interviews: count the server's time left down between polls, copy a link, reset a
// sent form, and scrub through an answer's saved versions. The time always comes from the
// server (each panel carries the seconds left when it was rendered); the browser's clock only
// measures how long ago that was, for the display, and decides nothing.
(function () {
  "use strict";

  // Each countdown runs out at the moment its seconds-left says, reckoned from when this page
  // first saw it; a redraw from the server is a new element with a new deadline. Counting
  // timer ticks instead would stop the clock whenever the browser skips them (a tab in the
  // background fires them once a minute, a laptop asleep not at all), and a poll with
  // nothing new (a 204) does not redraw it.
  const deadlines = new WeakMap();

  function track(root) {
    const now = Date.now();
    (root || document).querySelectorAll("[data-seconds-left]").forEach((el) => {
      if (!deadlines.has(el)) {
        deadlines.set(el, now + Math.max(0, Number(el.dataset.secondsLeft) || 0) * 1000);
      }
    });
  }

  function show(el, now) {
    const left = Math.max(0, Math.ceil((deadlines.get(el) - now) / 1000));
    const m = Math.floor(left / 60);
    const s = String(left % 60).padStart(2, "0");
    el.textContent = m + ":" + s;
  }

  track(document);
  document.addEventListener("htmx:afterSettle", () => track(document));
  setInterval(() => {
    track(document);
    const now = Date.now();
    document.querySelectorAll("[data-seconds-left]").forEach((el) => show(el, now));
  }, 1000);

  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const field = document.querySelector(button.dataset.copy);
    if (!field) return;
    field.select();
    const done = () => { button.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, () => { document.execCommand("copy"); done(); });
    } else {
      document.execCommand("copy");
      done();
    }
  });

  // A nudge or follow-up that was sent leaves an empty box for the next one. One the server
  // refused (a 422 with the reason, which htmx swaps in and counts as "successful") keeps
  // its text as typed, to fix and send again; so does one that failed, the log-in page's 200
  // after the session expired included (requests.js marks it failed and says so).
  document.body.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt;
    const sent = event.detail.successful && event.detail.xhr && event.detail.xhr.status === 200;
    if (form && form.classList && form.classList.contains("mock-reset") && sent) {
      form.querySelectorAll("textarea").forEach((t) => { t.value = ""; });
    }
  });

  const scrubber = document.querySelector("[data-replay]");
  if (scrubber) {
    scrubber.addEventListener("input", () => {
      document.querySelectorAll(".mock-replay-version").forEach((v) => {
        v.hidden = v.dataset.version !== scrubber.value;
      });
    });
  }
})();
