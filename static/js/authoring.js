// The question editor's small helpers: a click on a problem puts the cursor on its line, and
// a browser-side copy of the text so a failed autosave never loses what the instructor typed.
(function () {
  "use strict";
  const form = document.getElementById("editor-form");
  const source = document.getElementById("source");
  if (!form || !source) return;
  const key = form.dataset.draftKey;

  // Line N (1-based) of the textarea: select it, focus, and scroll it into view.
  function goToLine(line) {
    const lines = source.value.split("\n");
    const n = Math.max(1, Math.min(line, lines.length));
    let start = 0;
    for (let i = 0; i < n - 1; i += 1) start += lines[i].length + 1;
    source.focus();
    source.setSelectionRange(start, start + lines[n - 1].length);
    const lineHeight = parseFloat(getComputedStyle(source).lineHeight) || 20;
    source.scrollTop = Math.max(0, (n - 3) * lineHeight);
  }
  document.addEventListener("click", (event) => {
    const link = event.target.closest(".problem-line[data-line]");
    if (!link) return;
    event.preventDefault();
    goToLine(parseInt(link.dataset.line, 10));
  });

  function backup() {
    try {
      localStorage.setItem(key, JSON.stringify({ at: Date.now(), text: source.value }));
    } catch (e) { /* storage full or disabled: the server copy still saves */ }
  }
  function clearBackup() {
    try { localStorage.removeItem(key); } catch (e) { /* ignore */ }
  }
  function status(message, kept) {
    const el = document.getElementById("save-status");
    if (!el) return;
    el.className = "save-status is-error";
    el.textContent = "";
    const strong = document.createElement("strong");
    strong.textContent = "Not saved. ";
    el.append(strong, message + " " + (kept || "Your text is kept in this page and in this browser."));
  }

  // A text past the file limit is refused by the server; one past the request limit (2.5 MB)
  // never reaches a view, and a plain Save or Publish would leave the page for an error. Say
  // so here instead, before sending, with the text still in the box.
  const maxBytes = parseInt(form.dataset.maxBytes, 10) || Infinity;
  function tooLarge() {
    const size = new Blob([source.value]).size;
    if (size <= maxBytes) return "";
    return "This text is " + Math.ceil(size / 1024) + " KiB; a question file holds at most "
      + Math.floor(maxBytes / 1024) + " KiB. Shorten it, then save.";
  }
  form.addEventListener("submit", (event) => {
    const problem = tooLarge();
    if (!problem) return;
    event.preventDefault();
    status(problem, "Your text is kept in this page.");
  });
  source.addEventListener("input", backup);

  // A copy the server never got (a crash, a lost connection): offer it back.
  let saved = null;
  try { saved = JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { saved = null; }
  if (saved && typeof saved.text === "string") {
    if (saved.text === source.value) {
      clearBackup();
    } else {
      const box = document.createElement("div");
      box.className = "message restore";
      box.setAttribute("role", "alert");
      const p = document.createElement("p");
      p.textContent = "This browser holds text for this question that the server never received.";
      const restore = document.createElement("button");
      restore.type = "button";
      restore.className = "button button-small";
      restore.textContent = "Restore it";
      const discard = document.createElement("button");
      discard.type = "button";
      discard.className = "button button-secondary button-small";
      discard.textContent = "Discard it";
      box.append(p, restore, " ", discard);
      form.prepend(box);
      restore.addEventListener("click", () => {
        source.value = saved.text;
        box.remove();
        source.dispatchEvent(new Event("input", { bubbles: true }));
      });
      discard.addEventListener("click", () => { clearBackup(); box.remove(); });
    }
  }

  const isAutosave = (detail) => {
    const elt = (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
    return elt && elt.id === "autosave";
  };
  document.body.addEventListener("htmx:afterRequest", (event) => {
    if (!isAutosave(event.detail)) return;
    const xhr = event.detail.xhr;
    if (xhr && xhr.status >= 200 && xhr.status < 300) clearBackup();
  });
  document.body.addEventListener("htmx:responseError", (event) => {
    const code = event.detail.xhr ? event.detail.xhr.status : 0;
    if (event.detail.target && event.detail.target.id === "live-preview") {
      // The preview shown was checked against older text: say it no longer stands.
      const note = document.createElement("p");
      note.className = "message message-error";
      note.setAttribute("role", "alert");
      note.textContent = tooLarge()
        || "Not checked: the preview failed (" + code + "). It checks again on your next edit.";
      event.detail.target.replaceChildren(note);
      return;
    }
    if (!isAutosave(event.detail)) return;
    if (code === 400 || code === 413) {
      status(tooLarge() || "The text is too large to send.", "Your text is kept in this page.");
    } else {
      status(code === 403 ? "Your session changed since this page loaded; sign in again in a new tab."
        : "The server had an error (" + code + "); it saves on your next edit.");
    }
  });
  // An upload replaces the draft the autosave has been advancing: send the latest version.
  const uploadVersion = document.getElementById("upload-base-version");
  if (uploadVersion) {
    uploadVersion.form.addEventListener("submit", () => {
      const current = document.getElementById("base-version");
      if (current) uploadVersion.value = current.value;
    });
  }
  document.body.addEventListener("htmx:sendError", (event) => {
    if (isAutosave(event.detail)) status("Connection lost; it saves on your next edit.");
  });
})();
