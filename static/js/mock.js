// Mock interviews: count the server's time left down between polls, copy a link, reset a
// sent form, save the step's answer and a follow-up's once more before the end (and keep
// them to copy if the end came without them), send a follow-up's answer as the page is left,
// say at the foot of the screen that a nudge or follow-up came, tell a screen reader each
// nudge, time warning and follow-up once as it comes, and scrub through an answer's saved
// versions.
// The time always comes from the server (each panel carries the seconds left when it was
// rendered); the browser's clock only measures how long ago that was, for the display and
// for when to save again, and decides nothing: the server takes a save or refuses it by its
// own clock.
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

  // The answers on the step page as the candidate sees them, against what the server has: the
  // end submits the server's drafts, so an answer whose last autosave failed (or has not run
  // yet) would go in without what is on screen. Two kinds: a follow-up's box (in the panel),
  // and the step's own answer form (its text and every box beside it). In the session's last
  // seconds such an answer is saved again, as often as it takes; if the end comes all the same
  // (no connection, or the interviewer ended it), the ended panel keeps it to copy and says it
  // is not in.
  const FLUSH_SECONDS = 5;
  const confirmed = new WeakMap(); // a follow-up's box -> the text the server last took
  const sending = new WeakMap(); // an answer -> what its request in flight sends

  // The answer that `elt`'s request sends, if it sends one: a follow-up's autosave (the box)
  // or Submit (its form); the step's autosave (#autosave, in the form) or Submit (the form).
  function answerOf(elt) {
    if (!elt || !elt.closest) return null;
    const followUp = elt.closest("form.mock-follow-up");
    if (followUp) return followUp.querySelector("textarea[name=text]");
    const step = elt.closest("#answer-form");
    return step && (elt === step || elt.id === "autosave") ? step : null;
  }
  const isStep = (answer) => answer.tagName === "FORM";

  // What the server has of an answer, and whether the page holds more: the step's answer is
  // practice.js's to follow (window.stepAnswer), a follow-up's box is this script's.
  const held = (box) => (confirmed.has(box) ? confirmed.get(box) : box.defaultValue);
  const unsaved = (answer) => (isStep(answer) ? window.stepAnswer.unsaved() : answer.value !== held(answer));
  const writtenNow = (answer) => (isStep(answer) ? window.stepAnswer.writtenNow() : answer.value.trim() !== "");
  const writtenOnServer = (answer) => (isStep(answer) ? window.stepAnswer.writtenOnServer() : held(answer).trim() !== "");

  // The boxes an answer is made of, for its copy: a follow-up's one, or the step form's own
  // (the napkin-math quantity boxes belong to their check forms, see practice.js).
  function boxesOf(answer) {
    if (!isStep(answer)) return [answer];
    const own = Array.from(answer.elements).filter((el) => el.name && el.matches("textarea, input[type=text], input[type=radio]"));
    return own.concat(Array.from(document.querySelectorAll(".quantity-input input[name]")));
  }

  document.addEventListener("htmx:beforeRequest", (event) => {
    const answer = answerOf(event.detail.elt);
    if (answer) sending.set(answer, isStep(answer) || answer.value);
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    const answer = answerOf(event.detail.elt);
    if (!answer) return;
    const xhr = event.detail.xhr;
    if (!isStep(answer) && event.detail.successful && xhr && xhr.status === 200) {
      confirmed.set(answer, sending.get(answer));
      forgetCopy(answer); // the server has this box's latest as sent: a copy from leaving is behind it
    }
    sending.delete(answer);
  });

  // Leaving the page (a reload, Back, a closed tab) with a follow-up's answer the server does
  // not have: it is sent at once, as its autosave sends it, by a request that outlives the
  // page (requests.js; the step's own answer is practice.js's). The page that comes next may
  // be drawn before that save lands, or it may fail: the browser keeps a copy, with the text
  // the server had, and the next page puts the copy back where its box still comes with that
  // older text (putBack). A box that comes with anything else has the copy's save, or a
  // newer one: the server's draft stands, as the latest text wins there.
  const copyKey = (box) => "mock-follow-up:" + box.getAttribute("hx-post");
  function forgetCopy(box) {
    try { localStorage.removeItem(copyKey(box)); } catch (e) { /* storage disabled */ }
  }
  window.addEventListener("pagehide", () => {
    document.querySelectorAll("form.mock-follow-up textarea[name=text]").forEach((box) => {
      if (!unsaved(box) || !box.form) return;
      try {
        localStorage.setItem(copyKey(box), JSON.stringify({ text: box.value, base: held(box) }));
      } catch (e) { /* storage full or disabled: the save may still land */ }
      window.requests.keepaliveSave(box.getAttribute("hx-post"), new FormData(box.form)); // its CSRF token included
    });
  });
  // Each box once, as it first comes into the page (the panel loads after the page, and its
  // redraws keep the box as it is: hx-preserve).
  const looked = new WeakSet();
  function putBack() {
    document.querySelectorAll("form.mock-follow-up textarea[name=text]").forEach((box) => {
      if (looked.has(box)) return;
      looked.add(box);
      let copy;
      try { copy = JSON.parse(localStorage.getItem(copyKey(box)) || "null"); } catch (e) { copy = undefined; }
      if (copy === null) return;
      if (!copy || typeof copy.text !== "string") { forgetCopy(box); return; } // unreadable: nothing to put back
      if (box.value !== copy.base || copy.text === copy.base) { forgetCopy(box); return; }
      box.value = copy.text;
      box.dispatchEvent(new Event("input", { bubbles: true })); // its autosave, which forgets the copy once it lands
    });
  }

  function answersOnThePage() {
    const step = document.getElementById("answer-form");
    return Array.from(document.querySelectorAll("form.mock-follow-up textarea[name=text]")).concat(step ? [step] : []);
  }

  function flush() {
    answersOnThePage().forEach((answer) => {
      if (!unsaved(answer) || sending.has(answer)) return;
      // A tab behind another one's newer draft is refused every save: it has its own message.
      if (isStep(answer) && document.querySelector("#save-status.is-conflict")) return;
      // Sent as its autosave is: that request's address, target and failure messages.
      const autosave = isStep(answer) ? document.getElementById("autosave") : answer;
      if (autosave) htmx.ajax("POST", autosave.getAttribute("hx-post"), { source: autosave }).catch(() => {});
    });
  }

  // What the end left out: each answer whose latest text the server does not have, as the
  // redraw of the panel to its ended state finds it. A redraw that is the answer to a
  // follow-up's own Submit takes nothing from that box: the Submit sent its text.
  let lost = [];
  let lostFrom = null;
  document.addEventListener("htmx:beforeSwap", (event) => {
    const panel = event.detail.target;
    if (!panel || panel.id !== "mock-panel" || !event.detail.shouldSwap) return;
    const sent = answerOf(event.detail.requestConfig && event.detail.requestConfig.elt);
    const submitted = Boolean(sent) && !isStep(sent) && event.detail.xhr && event.detail.xhr.status === 200;
    lostFrom = panel;
    lost = answersOnThePage()
      .filter((answer) => !(submitted && answer === sent) && unsaved(answer) && writtenNow(answer))
      .map((answer) => ({ step: isStep(answer), text: copyOf(answer), earlier: writtenOnServer(answer) }));
  });
  document.addEventListener("htmx:afterSwap", () => {
    const panel = document.getElementById("mock-panel");
    if (!lost.length || !panel || panel === lostFrom) return;
    if (panel.hasAttribute("data-ended")) lost.forEach((answer, i) => keep(panel, answer, i));
    lost = [];
  });

  // An answer as text to copy: a follow-up's box as it is; the step's boxes each under its
  // label, when more than one holds something.
  function copyOf(answer) {
    const filled = boxesOf(answer).filter((el) => (el.type === "radio" ? el.checked : el.value.trim()));
    if (filled.length === 1 && filled[0].type !== "radio") return filled[0].value;
    return filled.map((el) => {
      const label = el.type === "radio" ? el.closest("fieldset").querySelector("legend") : el.labels && el.labels[0];
      const name = label ? label.textContent.trim().replace(/\s+/g, " ") : el.name;
      return el.type === "radio" ? name + ": " + el.value : name + "\n" + el.value;
    }).join("\n\n");
  }

  function keep(panel, answer, i) {
    const id = answer.step ? "step-answer-not-submitted" : "follow-up-not-submitted-" + i;
    if (document.getElementById(id)) return;
    const what = answer.step ? "this step" : "the follow-up";
    const block = document.createElement("div");
    block.className = "message message-error mock-not-submitted";
    block.setAttribute("role", "alert");
    const say = document.createElement("p");
    const lead = document.createElement("strong");
    lead.textContent = "Not submitted: your latest answer to " + what + ".";
    const report = answer.earlier ? "the report has the version saved before it" : "the report does not have it";
    say.append(lead, " The session ended before the server had it, so " + report + ". It is kept here for you to copy.");
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = "Your latest answer to " + what + " (not submitted)";
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
  document.addEventListener("DOMContentLoaded", putBack); // once htmx has read the page
  document.addEventListener("htmx:afterSettle", () => { track(document); putBack(); });
  setInterval(() => {
    track(document);
    const now = Date.now();
    document.querySelectorAll("[data-seconds-left]").forEach((el) => show(el, now));
    const left = sessionSecondsLeft(now);
    // Past the end the server refuses a save (and says so): the ended panel takes over.
    if (left !== null && left > 0 && left <= FLUSH_SECONDS) flush();
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

  // A nudge or a follow-up arrives in the panel at the top of the step page, which a phone
  // has scrolled far above the answer box being typed in: a notice at the foot of the screen
  // says so and leads there, until the panel comes into view. Only what arrives after the
  // page's first panel: what comes with the page is at its top, where reading starts. The
  // notice is for the eye, no live region: a screen reader hears the message itself, once,
  // from the announcing region below.
  let cueRegion = null;
  let cuePanel = null; // the panel the notice speaks of, watched for coming into view
  let cueSeen = -1; // the newest nudge or follow-up (its event's seq) the page has shown
  let cueTarget = null; // what "show it" focuses (its event's seq): the follow-up's box, or the nudge
  const cueWatch = "IntersectionObserver" in window
    ? new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting && e.target === cuePanel)) cueClear();
    })
    : null;

  function cueClear() {
    if (cueRegion) cueRegion.replaceChildren();
    cueTarget = null;
  }

  function cueShow(text, target) {
    cueTarget = target;
    const box = document.createElement("div");
    box.className = "mock-cue-box";
    const show = document.createElement("button");
    show.type = "button";
    show.className = "button button-small";
    show.textContent = text + " — show it";
    show.addEventListener("click", () => {
      const panel = document.getElementById("mock-panel");
      if (panel) panel.scrollIntoView({ block: "start" });
      // Looked up now: a poll may have redrawn the panel since the notice came. What it
      // spoke of may be gone (answered, ended): focus goes to the panel's heading instead.
      const said = cueTarget === null ? null : document.querySelector('[data-cue-seq="' + cueTarget + '"]');
      let to = said && (said.querySelector("textarea") || said);
      if (!to) {
        to = document.getElementById("mock-panel-h");
        if (to) to.tabIndex = -1;
      }
      if (to) to.focus({ preventScroll: true });
      cueClear();
    });
    const dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "button button-small button-secondary";
    dismiss.setAttribute("aria-label", "Dismiss this notice");
    dismiss.textContent = "×";
    dismiss.addEventListener("click", cueClear);
    box.append(show, dismiss);
    cueRegion.replaceChildren(box);
  }

  function cueCheck() {
    const panel = document.getElementById("mock-panel");
    // The panel's placeholder (a div) holds nothing yet; the panel itself is a section.
    if (!panel || panel.tagName !== "SECTION" || panel === cuePanel) return;
    if (!cueRegion) {
      cueRegion = document.createElement("div");
      cueRegion.className = "mock-cue";
      document.body.append(cueRegion);
    }
    const first = cuePanel === null;
    if (cueWatch && cuePanel) cueWatch.unobserve(cuePanel);
    cuePanel = panel;
    let newest = null;
    panel.querySelectorAll("[data-cue-seq]").forEach((el) => {
      if (!newest || Number(el.dataset.cueSeq) > Number(newest.dataset.cueSeq)) newest = el;
    });
    const seq = newest ? Number(newest.dataset.cueSeq) : -1;
    if (!first && seq > cueSeen && !panel.hasAttribute("data-ended")) cueShow(newest.dataset.cue, seq);
    cueSeen = Math.max(cueSeen, seq);
    if (cueWatch) cueWatch.observe(panel); // in view already: its first report clears the notice
  }
  document.addEventListener("htmx:afterSettle", cueCheck);

  // A screen reader is told each nudge, time warning and follow-up (the panel's
  // data-announce-seq, in the words of its data-announce-text) once, as it comes, in a live
  // region of this script's outside the panel: each poll's redraw replaces the panel whole,
  // and a live region new to the page may say nothing. The region is in the page before
  // anything is said in it. What comes with the page's first panel is not said (it is at the
  // top, where reading starts), nor what a redraw brings again; each redraw's news replaces
  // what the region said before.
  let sayRegion = null;
  let saidSeq = null; // the newest event (its seq) told or in the first panel; null: no panel yet
  let endSaid = false; // the end told, or the page opened on an ended session
  function sayPlace() {
    if (sayRegion) return;
    sayRegion = document.createElement("div");
    sayRegion.id = "mock-announce";
    sayRegion.className = "visually-hidden";
    sayRegion.setAttribute("aria-live", "polite");
    document.body.append(sayRegion);
  }
  function sayText(el) {
    const words = el.querySelector("[data-announce-text]") || el;
    return words.textContent.trim().replace(/\s+/g, " ");
  }
  function sayCheck() {
    const panel = document.getElementById("mock-panel");
    if (!panel || panel.tagName !== "SECTION") return; // not the candidate's step page, or its placeholder
    sayPlace();
    const news = Array.from(panel.querySelectorAll("[data-announce-seq]"))
      .map((el) => ({ seq: Number(el.dataset.announceSeq), text: sayText(el) }))
      .sort((a, b) => a.seq - b.seq);
    if (saidSeq !== null) {
      const texts = news.filter((n) => n.seq > saidSeq).map((n) => n.text);
      // The end, when it comes while the page is open: the ended panel is a new node too.
      const ended = panel.querySelector("[data-ended-message]");
      if (ended && !endSaid) texts.push(sayText(ended));
      const lines = texts.map((text) => {
        const line = document.createElement("p");
        line.textContent = text;
        return line;
      });
      if (lines.length) sayRegion.replaceChildren(...lines);
    }
    endSaid = endSaid || panel.hasAttribute("data-ended");
    saidSeq = news.reduce((newest, n) => Math.max(newest, n.seq), saidSeq === null ? -1 : saidSeq);
  }
  if (document.getElementById("mock-panel")) sayPlace();
  sayCheck();
  document.addEventListener("htmx:afterSettle", sayCheck);

  // The step's Submit refused while a follow-up was open ("Answer the interviewer's
  // follow-up first") stays on the page until a panel with no follow-up open comes: the
  // follow-up answered from this page (its Submit's answer is the panel) or from another tab
  // (a poll's redraw). That panel names the refusal (data-follow-up-settled), and the step page
  // is told it no longer holds by the generic "submit:refusal-lifted" event, with its words:
  // practice.js takes it off wherever it is told (beneath Submit, or in #submit-pending when
  // the Submit went before its draft saved). Other refusals, a conflict, a failed save keep
  // their place. Only a panel new to the page lifts it: one already shown may be older than a
  // follow-up that has just been asked.
  let settledPanel = null;
  function refusalCheck() {
    const panel = document.getElementById("mock-panel");
    if (!panel || panel.tagName !== "SECTION" || panel === settledPanel) return;
    settledPanel = panel;
    const refusal = panel.dataset.followUpSettled;
    if (!refusal) return;
    document.dispatchEvent(new CustomEvent("submit:refusal-lifted", { detail: { refusal } }));
  }
  document.addEventListener("htmx:afterSettle", refusalCheck);

  const scrubber = document.querySelector("[data-replay]");
  if (scrubber) {
    scrubber.addEventListener("input", () => {
      document.querySelectorAll(".mock-replay-version").forEach((v) => {
        v.hidden = v.dataset.version !== scrubber.value;
      });
    });
  }
})();
