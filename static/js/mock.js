// Mock interviews: count the server's time left down between polls, copy a link, reset a
// sent form, and scrub through an answer's saved versions. The time always comes from the
// server (each panel carries the seconds left when it was rendered); nothing here reads the
// browser's clock to decide anything.
(function () {
  "use strict";

  function show(el) {
    const left = Math.max(0, Number(el.dataset.secondsLeft) || 0);
    const m = Math.floor(left / 60);
    const s = String(left % 60).padStart(2, "0");
    el.textContent = m + ":" + s;
  }

  setInterval(() => {
    document.querySelectorAll("[data-seconds-left]").forEach((el) => {
      el.dataset.secondsLeft = String(Math.max(0, (Number(el.dataset.secondsLeft) || 0) - 1));
      show(el);
    });
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
  // its text as typed, to fix and send again.
  document.body.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt;
    const sent = event.detail.xhr && event.detail.xhr.status === 200;
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
