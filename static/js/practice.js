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

  function backup() {
    try {
      localStorage.setItem(key, JSON.stringify({ tab: tabId, at: Date.now(), data: snapshot() }));
    } catch (e) { /* storage full or disabled: the server copy still saves */ }
  }

  function offerRestore() {
    let saved;
    try { saved = JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { saved = null; }
    if (!saved || !saved.data) return;
    const current = snapshot();
    const differs = Object.keys(saved.data).some((n) => n !== "base_version" && saved.data[n] !== current[n]);
    if (!differs) { localStorage.removeItem(key); return; }
    const box = document.createElement("div");
    box.className = "message restore";
    box.setAttribute("role", "alert");
    box.innerHTML = "<p>This browser holds text for this step that the server never received.</p>";
    const restore = smallButton("Restore it", "button button-small");
    const discard = smallButton("Discard it", "button button-secondary button-small");
    box.append(restore, " ", discard);
    form.prepend(box);
    restore.addEventListener("click", () => {
      Object.entries(saved.data).forEach(([name, value]) => {
        if (name === "base_version") return;
        const field = form.elements.namedItem(name) || quantityBoxes().find((b) => b.name === name);
        if (field && field.type !== "radio" && field.length === undefined) field.value = value;
        else if (field && field.length) Array.from(field).forEach((r) => { r.checked = r.value === value; });
      });
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
  document.body.addEventListener("htmx:afterRequest", (event) => {
    const elt = event.detail.elt;
    if (elt !== form && elt.id !== "autosave") return;
    const xhr = event.detail.xhr;
    if (xhr && xhr.status >= 200 && xhr.status < 300) {
      activeSeconds = 0;
      try {
        const saved = JSON.parse(localStorage.getItem(key) || "null");
        if (saved && saved.tab === tabId) localStorage.removeItem(key);
      } catch (e) { /* ignore */ }
    }
  });
  // Every way a save can fail says so next to the answer; the text stays in the page and in
  // this browser's copy (cleared only by a 2xx), so nothing is lost whatever the server said.
  const KEPT = " Your text is kept in this page and in this browser.";
  function showProblem(message, extra) {
    const el = status();
    if (!el) return;
    el.className = "save-status is-error";
    el.textContent = "";
    const strong = document.createElement("strong");
    strong.textContent = "Not saved. ";
    el.append(strong, message + KEPT);
    if (extra) el.append(" ", extra);
  }
  // htmx names the element that sent the request in requestConfig; `elt` is where the event
  // fired, which for a swap is the target.
  const ours = (detail) => {
    const elt = (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
    return elt === form || elt.id === "autosave";
  };
  const loginPath = form.dataset.loginUrl || "/accounts/login/";

  function signInAgain() {
    // A new tab signs in without leaving this page; back here, "Save now" fetches the new
    // session's CSRF token (signing in rotates it) and saves.
    const span = document.createElement("span");
    const link = document.createElement("a");
    link.href = loginPath + "?next=" + encodeURIComponent(form.dataset.signedInUrl || "/");
    link.target = "_blank";
    link.rel = "noopener";
    link.textContent = "Sign in again in a new tab";
    const retry = smallButton("Save now", "button button-small");
    retry.addEventListener("click", () => refreshSession(true));
    span.append(link, ", then ", retry);
    return span;
  }

  function refreshSession(save) {
    return fetch(form.dataset.sessionUrl || "/accounts/session/", { credentials: "same-origin" })
      .then((r) => r.json())
      .then((session) => {
        if (!session.signed_in) {
          showProblem("You are still signed out.", signInAgain());
          return;
        }
        document.querySelectorAll("input[name=csrfmiddlewaretoken]").forEach((i) => { i.value = session.csrf_token; });
        document.body.setAttribute("hx-headers", JSON.stringify({ "x-csrftoken": session.csrf_token }));
        if (save) form.dispatchEvent(new Event("change", { bubbles: true }));
      })
      .catch(() => showProblem("The server cannot be reached.", null));
  }

  document.body.addEventListener("htmx:beforeSwap", (event) => {
    const xhr = event.detail.xhr;
    if (!ours(event.detail) || !xhr || !xhr.responseURL) return;
    // An expired session answers with a redirect to the log-in page, which the browser
    // follows: never swap that page into the answer form.
    if (new URL(xhr.responseURL).pathname.startsWith(loginPath)) {
      event.detail.shouldSwap = false;
      event.detail.isError = false;
      showProblem("Your session has expired.", signInAgain());
    }
  });
  document.body.addEventListener("htmx:responseError", (event) => {
    if (!ours(event.detail)) return;
    const code = event.detail.xhr ? event.detail.xhr.status : 0;
    if (code === 403) {
      // Most often a CSRF token from before a sign-in elsewhere: fetch the current one.
      showProblem("Your session changed since this page loaded.", signInAgain());
      refreshSession(false);
    } else if (code === 400 || code === 413) {
      showProblem("This answer is too large to send. Shorten it and it will save.", null);
    } else if (code === 502 || code === 503 || code === 504) {
      showProblem("The server is unavailable right now (" + code + "); it saves on your next edit once it is back.", null);
    } else {
      showProblem("The server had an error (" + code + "); it saves on your next edit.", null);
    }
  });
  document.body.addEventListener("htmx:sendError", (event) => {
    if (ours(event.detail)) showProblem("Connection lost; it saves when the connection is back.", null);
  });
  document.body.addEventListener("htmx:timeout", (event) => {
    if (ours(event.detail)) showProblem("The server took too long to answer; it saves on your next edit.", null);
  });
  // A napkin Check, the worksheet's working-out and the diagram preview each answer into a
  // place of their own. A request of theirs that fails says so there: otherwise Check did
  // nothing at all, and the worksheet or the picture went on showing results for text that is
  // no longer in the box. (Their text is part of the answer form, saved as above.)
  function resultPlace(detail) {
    const elt = (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
    if (!elt || elt === form || elt.id === "autosave") return null;
    if (elt.id === "worksheet") {
      return { el: document.getElementById("worksheet-lines"), what: "Not worked out", className: "message message-error" };
    }
    if (elt.id === "diagram-text") {
      return { el: document.getElementById("diagram-error"), what: "The picture was not updated", inline: true };
    }
    if (elt.classList && elt.classList.contains("check-form")) {
      const target = (elt.getAttribute("hx-target") || "").replace(/^#/, "");
      return { el: document.getElementById(target), what: "Not checked", className: "verdict verdict-error" };
    }
    return null;
  }
  function whyFailed(code) {
    if (code === 0) return "the connection was lost. Try again when it is back.";
    if (code === 400 || code === 413) return "the text is too large to send. Shorten it.";
    if (code === 403) return "your session changed since this page loaded. Sign in again in a new tab, then try again.";
    if (code === 502 || code === 503 || code === 504) return "the server is unavailable right now (" + code + "). Try again shortly.";
    return "the server had an error (" + code + "). Try again.";
  }
  function sayFailed(detail, why) {
    const place = resultPlace(detail);
    if (!place || !place.el) return false;
    const message = place.what + ": " + why;
    if (place.inline) {
      place.el.textContent = message;
      return true;
    }
    const p = document.createElement("p");
    p.className = place.className;
    p.setAttribute("role", "alert");
    p.textContent = message;
    place.el.replaceChildren(p);
    return true;
  }
  document.body.addEventListener("htmx:beforeSwap", (event) => {
    const xhr = event.detail.xhr;
    if (!xhr || !xhr.responseURL || !new URL(xhr.responseURL).pathname.startsWith(loginPath)) return;
    // Signed out: the log-in page the redirect led to is no result to show.
    if (sayFailed(event.detail, "you were signed out. Sign in again in a new tab, then try again.")) {
      event.detail.shouldSwap = false;
      event.detail.isError = false;
    }
  });
  document.body.addEventListener("htmx:responseError", (event) => {
    sayFailed(event.detail, whyFailed(event.detail.xhr ? event.detail.xhr.status : 0));
  });
  document.body.addEventListener("htmx:sendError", (event) => { sayFailed(event.detail, whyFailed(0)); });
  document.body.addEventListener("htmx:timeout", (event) => {
    sayFailed(event.detail, "the server took too long to answer. Try again.");
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
    // tab's text in its disclosure. A save that went through says nothing.
    const el = status();
    if (!el || !/\bis-(conflict|error)\b/.test(el.className)) {
      said["save-said"] = "";
      return "";
    }
    const copy = el.cloneNode(true);
    copy.querySelectorAll("details").forEach((d) => d.remove());
    return squash(copy);
  }
  said["feedback-said"] = feedbackStatus(); // the page's own feedback is there to read, not news
  document.body.addEventListener("htmx:afterSettle", () => {
    say("worksheet-said", worksheetLine());
    say("feedback-said", feedbackStatus());
    say("save-said", saveRefusal());
  });

  wordCount();
  offerRestore();
})();
