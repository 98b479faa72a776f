// The practice page's small helpers: word count, time on task, and a browser-side copy of
// the draft so a dropped connection or a crash never loses what the candidate typed.
(function () {
  "use strict";
  const form = document.getElementById("answer-form");
  if (!form) return;
  const text = document.getElementById("answer-text");
  const status = () => document.getElementById("save-status");
  const seconds = document.getElementById("seconds");
  const key = form.dataset.draftKey;
  // Tabs share localStorage: each tab clears only the copy it wrote itself.
  const tabId = Math.random().toString(36).slice(2);
  let activeSeconds = 0;
  let lastInput = 0;

  // Without JavaScript a quantity's box and Check button belong to the answer form, so a check
  // posts (and saves) everything typed. Here each pair belongs to the quantity's own check
  // form: htmx checks that quantity alone, and Enter in the box checks it without submitting
  // the step. This runs before htmx reads the page (scripts are deferred, htmx starts on
  // DOMContentLoaded); the answer form's requests still include the boxes (its hx-include).
  document.querySelectorAll(".quantity-input").forEach((row) => {
    const check = row.querySelector("button[name=quantity]");
    row.querySelectorAll("input, button").forEach((el) => el.setAttribute("form", "check-form-" + check.value));
  });
  // A check's verdict belongs to the box and the worksheet it read: an edit of either leaves
  // it beside another answer, where "Correct" would be read as the new answer's. It gives
  // way, once, to the words the server uses for a stale check (the list's data-stale-words).
  const quantityRows = document.querySelector(".quantity-rows");
  if (quantityRows) {
    const markStale = (result) => {
      if (!result || !result.querySelector(".verdict") || result.querySelector(".verdict-stale")) return;
      const note = document.createElement("p");
      note.className = "verdict verdict-stale";
      note.textContent = quantityRows.dataset.staleWords;
      result.replaceChildren(note);
    };
    quantityRows.addEventListener("input", (event) => {
      const box = event.target.closest(".quantity-input input[name]");
      if (box) markStale(document.getElementById("check-" + box.name.replace(/^expr_/, "")));
    });
    const sheet = document.getElementById("worksheet");
    if (sheet) sheet.addEventListener("input", () => quantityRows.querySelectorAll(".check-result").forEach(markStale));
  }
  // Drafts save as you type only with JavaScript: the page says so only here.
  const autosaveHelp = document.getElementById("autosave-help");
  if (autosaveHelp) autosaveHelp.hidden = false;

  function wordCount() {
    const el = document.getElementById("word-count");
    if (!el || !text) return;
    const words = text.value.trim() ? text.value.trim().split(/\s+/).length : 0;
    el.textContent = words + (words === 1 ? " word" : " words");
  }

  function snapshot() {
    const data = {};
    new FormData(form).forEach((value, name) => {
      if (name !== "csrfmiddlewaretoken" && name !== "seconds") data[name] = value;
    });
    // The quantity boxes belong to their own check forms (so Enter checks, never submits),
    // but they are part of the answer: keep them in the copy too.
    quantityBoxes().forEach((box) => { data[box.name] = box.value; });
    return data;
  }

  const quantityBoxes = () => Array.from(document.querySelectorAll(".quantity-input input[name]"));

  function smallButton(label, className) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = className;
    button.textContent = label;
    return button;
  }

  // `sent`: the copy went to the server as the page was left, and its answer was never read.
  function backup(sent) {
    try {
      localStorage.setItem(key, JSON.stringify({ tab: tabId, at: Date.now(), sent: Boolean(sent), data: snapshot() }));
    } catch (e) { /* storage full or disabled: the server copy still saves */ }
  }

  // The answer as a string to compare: every box, less the version it was loaded at.
  function answerNow() {
    const data = snapshot();
    delete data.base_version;
    return JSON.stringify(data);
  }

  function fill(data) {
    Object.entries(data).forEach(([name, value]) => {
      if (name === "base_version") return;
      const field = form.elements.namedItem(name) || quantityBoxes().find((b) => b.name === name);
      if (field && field.type !== "radio" && field.length === undefined) field.value = value;
      else if (field && field.length) Array.from(field).forEach((r) => { r.checked = r.value === value; });
    });
  }

  function offerRestore() {
    let saved;
    try { saved = JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { saved = null; }
    if (!saved || !saved.data) return;
    const current = snapshot();
    const differs = Object.keys(saved.data).some((n) => n !== "base_version" && saved.data[n] !== current[n]);
    if (!differs) { localStorage.removeItem(key); return; }
    // Sent as the page was left (a reload, Back) and the server is still at the version it
    // was sent against: that save was still on its way when this page was drawn, or it
    // failed. Either way it is the candidate's latest text: put it back and save it now (the
    // same text arriving twice is taken once). A server that has moved on since was written
    // to from elsewhere: that is the candidate's to choose, below.
    if (saved.sent && saved.data.base_version === current.base_version) {
      fill(saved.data);
      backup();
      wordCount();
      // Once htmx has read the page: it starts on DOMContentLoaded, which follows this
      // deferred script.
      const save = () => form.dispatchEvent(new Event("change", { bubbles: true }));
      if (document.readyState === "complete") save();
      else document.addEventListener("DOMContentLoaded", save);
      return;
    }
    const box = document.createElement("div");
    box.className = "message restore";
    box.setAttribute("role", "alert");
    // A copy sent as the page was left may well have landed, and the draft moved on since
    // (another device, another tab): it is not "never received", and may be the older one.
    const said = document.createElement("p");
    const at = new Date(saved.at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    said.textContent = saved.sent
      ? "This browser holds a copy of this step from " + at + ", sent as you left the page. The draft below was saved since that page was loaded, here or elsewhere, and may be newer: compare them, as restoring the copy replaces the draft."
      : "This browser holds text for this step that the server never received.";
    box.append(said);
    const restore = smallButton("Restore it", "button button-small");
    const discard = smallButton("Discard it", "button button-secondary button-small");
    box.append(restore, " ", discard);
    form.prepend(box);
    restore.addEventListener("click", () => {
      fill(saved.data);
      box.remove();
      wordCount();
      form.dispatchEvent(new Event("input", { bubbles: true }));
    });
    discard.addEventListener("click", () => { localStorage.removeItem(key); box.remove(); });
  }

  form.addEventListener("input", () => { lastInput = Date.now(); backup(); wordCount(); });
  setInterval(() => {
    // Time on task: count a second when the page is visible and typed in within a minute.
    if (document.visibilityState === "visible" && Date.now() - lastInput < 60000) activeSeconds += 1;
  }, 1000);

  document.body.addEventListener("htmx:configRequest", (event) => {
    if (event.detail.elt === form || event.detail.elt.id === "autosave") {
      event.detail.parameters.seconds = String(activeSeconds);
      seconds.value = String(activeSeconds);
    }
  });
  // What the server holds of the answer: the boxes as the page came, then what each save it
  // took sent. The answer differs from it from an edit until the save that carries the edit
  // is taken; typing on while a save is on its way leaves it differing.
  let serverHas = answerNow();
  const sentBy = new WeakMap(); // a save's request -> the answer it sends
  const isSave = (elt) => elt === form || elt.id === "autosave";
  document.body.addEventListener("htmx:beforeRequest", (event) => {
    if (isSave(event.detail.elt)) sentBy.set(event.detail.xhr, answerNow());
  });
  // A Submit on its way: the form's hx-disabled-elt disables its button, so a second tap sends
  // nothing, and the status says "Submitting…" until the answer replaces it. A request that
  // ends with nothing told there (a failure told once the session is checked, or none) puts
  // back what the status said, its marks and rank with it. The button, pressed, keeps the
  // focus that disabling it took away.
  let submitting = null;
  document.body.addEventListener("htmx:beforeRequest", (event) => {
    const box = status();
    if (event.detail.elt !== form || !box) return;
    submitting = {
      box,
      nodes: Array.from(box.childNodes),
      className: box.className,
      error: box.dataset.requestError,
      rank: box.dataset.requestRank,
      focused: document.activeElement === document.getElementById("submit-button"),
    };
    const note = document.createElement("span");
    note.dataset.submitting = "";
    note.textContent = "Submitting…";
    box.classList.remove("is-error", "is-conflict");
    delete box.dataset.requestError;
    delete box.dataset.requestRank;
    box.replaceChildren(note);
  });
  const isSubmitting = (box) => Boolean(box) && Boolean(box.querySelector(":scope > [data-submitting]"));
  document.body.addEventListener("htmx:afterRequest", (event) => {
    if (event.detail.elt !== form || !submitting) return;
    const was = submitting;
    submitting = null;
    if (was.box.isConnected && isSubmitting(was.box)) {
      was.box.className = was.className;
      if (was.error !== undefined) was.box.dataset.requestError = was.error;
      if (was.rank !== undefined) was.box.dataset.requestRank = was.rank;
      was.box.replaceChildren(...was.nodes);
    }
    const button = document.getElementById("submit-button");
    const lost = !document.activeElement || document.activeElement === document.body;
    if (was.focused && lost && button) button.focus();
  });
  // Whether the server stored what a save sent: an autosave or a Submit that went through; a
  // Submit refused past the rate limit (429), or refused with its text saved (a 422 whose
  // status says saved: one told in the status leads with "Not saved.").
  function stored(detail) {
    const code = detail.xhr ? detail.xhr.status : 0;
    if (!detail.successful) return false;
    if ((code >= 200 && code < 300) || code === 429) return true;
    const box = status();
    return code === 422 && Boolean(box) && !box.querySelector("strong");
  }
  // What a mock's end asks of this answer (mock.js saves it again in the session's last
  // seconds, and keeps it to copy if the end came without it): whether the server has what
  // the boxes hold, and whether the boxes, or what the server has, hold any writing (a choice
  // alone, peak or mean, is none).
  const choices = new Set(Array.from(form.querySelectorAll("input[type=radio]"), (r) => r.name));
  const writing = (answer) => Object.entries(JSON.parse(answer))
    .some(([name, value]) => !choices.has(name) && String(value).trim() !== "");
  window.stepAnswer = {
    unsaved: () => answerNow() !== serverHas,
    writtenNow: () => writing(answerNow()),
    writtenOnServer: () => writing(serverHas),
  };
  // A save that went through clears this tab's browser copy, unless the candidate typed on
  // while it was sent. One that failed (requests.js says why next to the answer) leaves the
  // text in the page and in that copy, whatever the server said.
  document.body.addEventListener("htmx:afterRequest", (event) => {
    const elt = event.detail.elt;
    if (!isSave(elt)) return;
    const xhr = event.detail.xhr;
    if (stored(event.detail) && sentBy.has(xhr)) serverHas = sentBy.get(xhr);
    if (event.detail.successful && xhr.status >= 200 && xhr.status < 300) {
      activeSeconds = 0;
      try {
        const saved = JSON.parse(localStorage.getItem(key) || "null");
        if (saved && saved.tab === tabId && answerNow() === serverHas) localStorage.removeItem(key);
      } catch (e) { /* ignore */ }
    }
  });

  // Leaving the page (a reload, Back, a closed tab) with typing the server does not have: it
  // is sent at once, as the autosave sends it, by a request that outlives the page. The
  // browser copy is marked sent: the page that comes next (a reload, Back then Forward) may
  // have been drawn before that save landed, and puts the copy back (offerRestore). Nothing
  // is sent from a tab behind another one's newer draft: its saves are refused.
  const conflicted = () => Boolean(document.querySelector("#save-status.is-conflict"));
  let sentOnLeaving = null;
  function sendOnLeaving() {
    const answer = answerNow();
    if (answer === serverHas || answer === sentOnLeaving || conflicted()) return;
    const autosave = document.getElementById("autosave");
    const body = new FormData(form); // multipart: UTF-8 as it is, not percent-encoded
    quantityBoxes().forEach((box) => body.set(box.name, box.value));
    body.set("seconds", String(activeSeconds));
    sentOnLeaving = answer;
    backup(true);
    // One refused (over keepalive's 64 KiB) leaves the copy marked sent, which the page that
    // comes next puts back and saves.
    window.requests.keepaliveSave(autosave.getAttribute("hx-post"), body);
  }
  window.addEventListener("pagehide", sendOnLeaving);
  // A page hidden may not come back (a phone's browser ends a tab in the background): save
  // now. A tab switched away from stays alive, so the autosave's own request does it.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden" && answerNow() !== serverHas && !conflicted()) {
      form.dispatchEvent(new Event("change", { bubbles: true }));
    }
  });
  // Back to this page from the browser's cache, as it was: the save sent on leaving moved the
  // server's version past this page's, and the next autosave would be refused as another
  // tab's. Saving the same answer again is taken as it stands (the same text arriving twice
  // is stored once) and brings the version back.
  window.addEventListener("pageshow", (event) => {
    if (!event.persisted || sentOnLeaving === null) return;
    sentOnLeaving = null;
    if (answerNow() !== serverHas) form.dispatchEvent(new Event("change", { bubbles: true }));
  });
  // Saves that fail (the page says "Not saved.") leave nothing sent that could land: leaving
  // then asks first. Typing merely not yet saved is sent on leaving, with no question.
  window.addEventListener("beforeunload", (event) => {
    const box = status();
    const failed = Boolean(box) && (box.matches(".is-error, .is-conflict") || Boolean(box.querySelector("strong")));
    if (!failed || answerNow() === serverHas) return;
    event.preventDefault();
    event.returnValue = ""; // what older browsers need to ask
  });
  // A Submit that failed (requests.js tells why in the status, with its Submit again) leaves
  // the step not submitted until a Submit goes through; so does one the server refused with
  // its reason in the status (a 422 whose text was not saved: an interviewer's follow-up to
  // answer first, nothing to submit). The autosave's answer replaces that status ("Draft
  // saved at ..."), which must not read as the step being in, nor lose the reason: while
  // the status does not tell it, #submit-pending does, with a Submit again of its own. A
  // refusal told elsewhere keeps its own place: another tab's newer draft (409) stays in the
  // status, since this tab's saves are refused too; a refusal with the text saved (422, 429)
  // is in #submit-refused beside Submit, which the autosave leaves alone.
  const pending = document.getElementById("submit-pending");
  const pendingWhy = document.getElementById("submit-pending-why");
  const submitButton = document.getElementById("submit-button");
  let submitFailed = false;
  let refusal = ""; // the server's reason for refusing the last Submit, as the status told it
  const statusSays = (box) => {
    const copy = box.cloneNode(true);
    copy.querySelectorAll("strong, details").forEach((part) => part.remove());
    return copy.textContent.trim().replace(/\s+/g, " ");
  };
  function showPending() {
    const box = status();
    const told = Boolean(box) && (refusal
      ? statusSays(box).includes(refusal)
      : Array.from(box.querySelectorAll("strong")).some((lead) => lead.textContent === form.dataset.requestFailed));
    const why = refusal ? "The server refused your last Submit: “" + refusal + "”" : pendingWhy.dataset.failed;
    if (pendingWhy.textContent !== why) pendingWhy.textContent = why; // a change is news to the observer below
    // While a Submit is on its way the status says so, and this note waits for its outcome.
    pending.firstElementChild.hidden = !(submitFailed || refusal) || told || isSubmitting(box);
  }
  if (pending && pendingWhy && submitButton) {
    pendingWhy.dataset.failed = pendingWhy.textContent;
    document.body.addEventListener("htmx:afterRequest", (event) => {
      if (event.detail.elt !== form) return;
      const xhr = event.detail.xhr;
      submitFailed = !event.detail.successful;
      // The answer is swapped in by now: read its words, not its class. A 422
      // told in the status leads with "Not saved."; one told beside it leaves "Draft saved.".
      const box = status();
      const inStatus = xhr && xhr.status === 422 && box && box.querySelector("strong");
      refusal = !submitFailed && inStatus ? statusSays(box) : "";
      showPending();
    });
    // requests.js may tell a failure after the request (once it has asked whether the session
    // is still there), and the autosave swaps the status: follow what the status says.
    new MutationObserver(showPending).observe(pending.parentElement, { childList: true, subtree: true, characterData: true });
    pending.querySelector("button").addEventListener("click", () => {
      // The focus waits on Submit: this note goes away when the status tells the outcome.
      submitButton.focus();
      submitButton.click();
    });
  }
  // A refusal of the last Submit that no longer holds (what it asked for is done, as another
  // script on the page tells with "submit:refusal-lifted" and the refusal's words) leaves the
  // page wherever it is told: beside Submit (#submit-refused), or in #submit-pending. Only
  // those words go: any other refusal or failure keeps its place.
  const sameWords = (a, b) => a.trim().replace(/\s+/g, " ") === b.trim().replace(/\s+/g, " ");
  document.addEventListener("submit:refusal-lifted", (event) => {
    const lifted = String((event.detail && event.detail.refusal) || "");
    if (!lifted.trim()) return;
    document.querySelectorAll("#submit-refused > .message-error").forEach((told) => {
      if (sameWords(told.textContent, lifted)) told.remove();
    });
    if (pending && pendingWhy && refusal && sameWords(refusal, lifted)) {
      refusal = "";
      showPending();
    }
  });
  // A refusal told beside Submit is in view as it comes: with the button near the screen's
  // bottom edge, the line below it would otherwise be told to a screen reader only.
  // One that names a field to mend (an SLO card figure not read: its data-focus) moves the
  // focus there instead, in view, where the field says why.
  let toldBeside = document.querySelector("#submit-refused > .message-error");
  document.addEventListener("htmx:afterSettle", () => {
    const told = document.querySelector("#submit-refused > .message-error");
    if (told && told !== toldBeside) {
      const field = told.dataset.focus ? document.getElementById(told.dataset.focus) : null;
      if (field) field.focus();
      else told.scrollIntoView({ block: "nearest" });
    }
    toldBeside = told;
  });
  window.addEventListener("online", () => form.dispatchEvent(new Event("change", { bubbles: true })));
  form.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  // What a screen reader hears of a result: one short sentence, and only when it changes. The
  // places the results land (#worksheet-lines, #submit-result) are not live regions: read
  // whole, they repeated every worksheet line after each pause in typing, and the whole
  // feedback (the answer and the reference answer with it) at each change of status.
  const said = {};
  const squash = (el) => (el ? el.textContent.trim().replace(/\s+/g, " ") : "");
  function say(id, message) {
    const el = document.getElementById(id);
    if (!el || !message || said[id] === message) return;
    said[id] = message;
    el.textContent = message;
  }
  function worksheetLine() {
    // The line the caret is on, while the candidate types in the worksheet.
    const box = document.getElementById("worksheet");
    const lines = document.getElementById("worksheet-lines");
    if (!box || !lines || document.activeElement !== box) return "";
    const lineNo = box.value.slice(0, box.selectionStart).split("\n").length;
    const line = lines.querySelector('.ws-line[value="' + lineNo + '"]');
    if (!line) return squash(lines.querySelector(".message-error"));
    const problem = line.querySelector(".ws-message");
    return problem ? squash(problem) : "Line " + lineNo + ": " + squash(line.querySelector(".ws-value"));
  }
  function feedbackStatus() {
    const status = document.getElementById("grade-status");
    if (!status) return "";
    const score = document.querySelector("#score-line .score");
    return [squash(document.getElementById("feedback-heading")), squash(status), squash(score)]
      .filter(Boolean).join(": ");
  }
  function saveRefusal() {
    // A refusal from the server (another tab's newer draft, a mock's end) comes as a new
    // #save-status, which a screen reader need not read: say its sentence, without the other
    // tab's text in its disclosure. A save that went through says nothing, and neither does a
    // failure requests.js told (marked so): it changed the live region in place, which is read.
    const el = status();
    if (!el || el.hasAttribute("data-request-error") || !/\bis-(conflict|error)\b/.test(el.className)) {
      said["save-said"] = "";
      return "";
    }
    const copy = el.cloneNode(true);
    copy.querySelectorAll("details").forEach((d) => d.remove());
    return squash(copy);
  }
  // An SLO card figure the server cannot read: its sentence, which the autosave's answer (or
  // a Submit's) swaps in beside the field, marks the field as long as it shows. The server is
  // the one judge of a figure: nothing here reads one. A screen reader is told the sentence
  // once the candidate has left the field (not while they type in it), once per sentence.
  const cardTold = {};
  function markCardFigures() {
    const news = [];
    document.querySelectorAll(".card-figure-error").forEach((message) => {
      const field = document.getElementById(message.id.replace(/-error$/, ""));
      if (!field) return;
      const why = message.hidden ? "" : squash(message);
      if (why) {
        field.setAttribute("aria-invalid", "true");
        field.setAttribute("aria-describedby", message.id);
      } else {
        field.removeAttribute("aria-invalid");
        field.removeAttribute("aria-describedby");
      }
      if (field === document.activeElement || cardTold[field.id] === why) return;
      cardTold[field.id] = why;
      if (!why) said["card-said"] = ""; // the same sentence, back later, is news again
      if (why) news.push(squash(field.labels[0]) + ": " + why);
    });
    if (news.length) say("card-said", news.join(" "));
  }
  // The SLO card's load figure is labelled as the peak or the mean, as its radios choose.
  document.body.addEventListener("change", (event) => {
    if (event.target.name !== "qps_kind") return;
    const label = document.querySelector("[data-load-label]");
    if (label) label.textContent = label.dataset[event.target.value] || label.dataset.peak;
  });
  said["feedback-said"] = feedbackStatus(); // the page's own feedback is there to read, not news
  // The card's sentences the page came with are there to read, not news.
  document.querySelectorAll(".card-figure-error").forEach((message) => {
    cardTold[message.id.replace(/-error$/, "")] = message.hidden ? "" : squash(message);
  });
  document.body.addEventListener("htmx:afterSettle", () => {
    markCardFigures();
    say("worksheet-said", worksheetLine());
    say("feedback-said", feedbackStatus());
    say("save-said", saveRefusal());
  });

  wordCount();
  offerRestore();
})();
