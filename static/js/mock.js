// Mock interviews: count the server's time left down between polls, copy a link, reset a
// sent form, save a follow-up's answer once more before the end (and keep it to copy if the
// end came without it), and scrub through an answer's saved versions. The time always comes
// from the server (each panel carries the seconds left when it was rendered); the browser's
// clock only measures how long ago that was, for the display and for when to save again,
// and decides nothing: the server takes a save or refuses it by its own clock.
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

  // The answer to a follow-up as the candidate sees it, against the text the server has: the
  // end submits the server's draft, so a box whose last autosave failed (or has not run yet)
  // would go in without what is on screen. In the session's last seconds such a box is
  // saved again, as often as it takes; if the end comes all the same (no connection, or the
  // interviewer ended it), the ended panel keeps the text to copy and says it is not in.
  const FLUSH_SECONDS = 5;
  const confirmed = new WeakMap(); // a follow-up's box -> the text the server last took
  const sending = new WeakMap(); // a follow-up's box -> the text of its request in flight

  const followUpBox = (elt) => {
    if (!elt || !elt.closest) return null;
    const form = elt.closest("form.mock-follow-up");
    return form ? form.querySelector("textarea[name=text]") : null;
  };
  const unsaved = (box) => box.value !== (confirmed.has(box) ? confirmed.get(box) : box.defaultValue);

  // Its autosave (the box's own request) and its Submit (the form's) both send the text.
  document.addEventListener("htmx:beforeRequest", (event) => {
    const box = followUpBox(event.detail.elt);
    if (box) sending.set(box, box.value);
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    const box = followUpBox(event.detail.elt);
    if (!box) return;
    const xhr = event.detail.xhr;
    if (event.detail.successful && xhr && xhr.status === 200) confirmed.set(box, sending.get(box));
    sending.delete(box);
  });

  function flushFollowUps() {
    document.querySelectorAll("form.mock-follow-up textarea[name=text]").forEach((box) => {
      if (!unsaved(box) || sending.has(box)) return;
      // Sent as its autosave is: the box's own address, target and failure messages.
      htmx.ajax("POST", box.getAttribute("hx-post"), { source: box }).catch(() => {});
    });
  }

  // What a redraw of the panel takes away: the text of each box the server does not have.
  // A redraw that is the answer to the box's own Submit is not one: that sent the text.
  let lost = [];
  let lostFrom = null;
  document.addEventListener("htmx:beforeSwap", (event) => {
    const panel = event.detail.target;
    if (!panel || panel.id !== "mock-panel" || !event.detail.shouldSwap) return;
    const sent = followUpBox(event.detail.requestConfig && event.detail.requestConfig.elt);
    const submitted = Boolean(sent) && event.detail.xhr && event.detail.xhr.status === 200;
    lostFrom = panel;
    lost = submitted ? [] : Array.from(panel.querySelectorAll("form.mock-follow-up textarea[name=text]"))
      .filter((box) => unsaved(box) && box.value.trim())
      .map((box) => ({ text: box.value, earlier: (confirmed.has(box) ? confirmed.get(box) : box.defaultValue).trim() !== "" }));
  });
  document.addEventListener("htmx:afterSwap", () => {
    const panel = document.getElementById("mock-panel");
    if (!lost.length || !panel || panel === lostFrom) return;
    if (panel.hasAttribute("data-ended")) lost.forEach((answer, i) => keep(panel, answer, i));
    lost = [];
  });

  function keep(panel, answer, i) {
    const id = "follow-up-not-submitted-" + i;
    if (document.getElementById(id)) return;
    const block = document.createElement("div");
    block.className = "message message-error mock-not-submitted";
    block.setAttribute("role", "alert");
    const say = document.createElement("p");
    const lead = document.createElement("strong");
    lead.textContent = "Not submitted: your latest answer to the follow-up.";
    const report = answer.earlier ? "the report has the version saved before it" : "the report does not have it";
    say.append(lead, " The session ended before the server had it, so " + report + ". It is kept here for you to copy.");
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = "Your latest answer to the follow-up (not submitted)";
    const copy = document.createElement("textarea");
    copy.id = id;
    copy.rows = 4;
    copy.readOnly = true;
    copy.value = answer.text;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "button button-small";
    button.dataset.copy = "#" + id;
    button.textContent = "Copy the answer";
    block.append(say, label, copy, button);
    panel.append(block);
  }

  function sessionSecondsLeft(now) {
    const clock = document.querySelector("[data-session-clock]");
    return clock && deadlines.has(clock) ? (deadlines.get(clock) - now) / 1000 : null;
  }

  track(document);
  document.addEventListener("htmx:afterSettle", () => track(document));
  setInterval(() => {
    track(document);
    const now = Date.now();
    document.querySelectorAll("[data-seconds-left]").forEach((el) => show(el, now));
    const left = sessionSecondsLeft(now);
    // Past the end the server refuses a save (and says so): the ended panel takes over.
    if (left !== null && left > 0 && left <= FLUSH_SECONDS) flushFollowUps();
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
