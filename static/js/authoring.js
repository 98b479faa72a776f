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

  // Each page keeps its own copy, under the question's key and its own id: tabs open on the
  // same question never overwrite or clear each other's, so text one tab could not save (a
  // stale tab) survives another tab's saves, and a reload offers it back.
  const tabKey = key + ":" + Math.random().toString(36).slice(2);
  function backup() {
    try {
      localStorage.setItem(tabKey, JSON.stringify({ at: Date.now(), text: source.value }));
    } catch (e) { /* storage full or disabled: the server copy still saves */ }
  }
  function clearBackup(which) {
    try { localStorage.removeItem(which || tabKey); } catch (e) { /* ignore */ }
  }
  // Every copy of this question's text in this browser, newest first, with its storage key.
  function copies() {
    const found = [];
    try {
      for (let i = 0; i < localStorage.length; i += 1) {
        const name = localStorage.key(i);
        if (name !== key && !name.startsWith(key + ":")) continue;
        let saved = null;
        try { saved = JSON.parse(localStorage.getItem(name) || "null"); } catch (e) { saved = null; }
        if (saved && typeof saved.text === "string") found.push({ name, at: saved.at || 0, text: saved.text });
      }
    } catch (e) { /* storage disabled: nothing to offer */ }
    found.sort((a, b) => b.at - a.at);
    // Copies left by closed tabs would fill the browser's storage until every backup failed
    // unseen: the three newest of a week are kept, the rest go.
    const weekAgo = Date.now() - 7 * 24 * 3600 * 1000;
    return found.filter((copy, i) => {
      if (i < 3 && copy.at >= weekAgo) return true;
      clearBackup(copy.name);
      return false;
    });
  }
  // A text past the file limit is refused by the server; one past the request limit (2.5 MB)
  // never reaches a view, and a plain Save or Publish would leave the page for an error. Say
  // so here instead, without sending, with the text still in the box.
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
    requests.say(form, problem);
  });
  // The autosave and the preview are not sent either: each says so where its answer goes.
  document.body.addEventListener("htmx:configRequest", (event) => {
    const problem = form.contains(event.detail.elt) && tooLarge();
    if (!problem) return;
    event.preventDefault();
    requests.say(event.detail.elt, problem);
  });
  source.addEventListener("input", backup);

  // A file past the limit is told at the upload field without sending it: one past the
  // request limit (4 MiB) would never reach the view and would leave the page for an error.
  const upload = document.getElementById("upload-file");
  if (upload && upload.form) {
    upload.form.addEventListener("submit", (event) => {
      const file = upload.files && upload.files[0];
      if (!file || file.size <= maxBytes) return;
      event.preventDefault();
      const said = document.getElementById("upload-error");
      said.hidden = false;
      said.textContent = "The file is " + Math.ceil(file.size / 1024) + " KiB; a question file "
        + "holds at most " + Math.floor(maxBytes / 1024) + " KiB. Choose a smaller file.";
      upload.closest(".field").classList.add("has-error");
      upload.setAttribute("aria-invalid", "true");
      upload.setAttribute("aria-describedby", "upload-error");
      upload.focus();
    });
  }

  // A copy the server never got (a crash, a lost connection, a stale tab): offer it back.
  // Copies of the text the page holds are spent, where the server holds that text too; the
  // newest other one is offered. A page whose text the server refused (a stale tab's Save,
  // shown beside the newer draft) holds text the server never got: its copies stay, so the
  // newer draft's page offers them back.
  const unsaved = form.hasAttribute("data-unsaved");
  function offerBackup() {
    const others = copies().filter((copy) => {
      if (copy.text !== source.value) return true;
      if (!unsaved) clearBackup(copy.name);
      return false;
    });
    const saved = others[0];
    if (saved) {
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
        clearBackup(saved.name); // this page's own copy holds it from here on
        source.dispatchEvent(new Event("input", { bubbles: true }));
      });
      discard.addEventListener("click", () => { clearBackup(saved.name); box.remove(); });
    }
  }

  // Back then Forward loads the page again, and the browser then puts back what the box
  // held when the instructor left, after the load event: text the server may never have
  // received, under a status and a preview of the server's text. The page holds the
  // server's text as the box's default value; a box that differs from it on the first
  // pageshow is such text, and is checked and saved as an edit is. The offer of the
  // browser's copy waits for it too, so it never offers what the box already holds.
  // (A page kept whole in the back-forward cache shows again as it was: nothing to do.)
  let shown = false;
  window.addEventListener("pageshow", () => {
    if (shown) return;
    shown = true;
    offerBackup();
    if (source.value === source.defaultValue) return;
    const status = document.getElementById("save-status");
    if (status) {
      status.classList.remove("is-error", "is-conflict");
      status.textContent = "Not saved yet: this browser put back text you typed before leaving "
        + "the page. It saves in a moment.";
    }
    source.dispatchEvent(new Event("input", { bubbles: true }));
  });

  // A save that went through clears this page's copy when it holds the text that was sent
  // (typing since then keeps it for the next save); one that failed keeps it, and requests.js
  // says why next to the text. A save that landed on the log-in page (the session ended)
  // answers 200 too, from another address: it saved nothing.
  document.body.addEventListener("htmx:afterRequest", (event) => {
    const xhr = event.detail.xhr;
    if (event.detail.elt.id !== "autosave" || !event.detail.successful) return;
    if (xhr.status < 200 || xhr.status >= 300) return;
    if (!xhr.responseURL || new URL(xhr.responseURL).pathname !== new URL(form.action).pathname) return;
    const sent = event.detail.requestConfig && event.detail.requestConfig.formData;
    const text = sent && typeof sent.get === "function" ? sent.get("text") : null;
    let saved = null;
    try { saved = JSON.parse(localStorage.getItem(tabKey) || "null"); } catch (e) { saved = null; }
    if (!saved || text === null || saved.text === text) clearBackup();
    // The draft now holds edits an upload would replace: the upload offers the box that
    // lets it (the server refuses it unticked).
    const replaceField = document.getElementById("upload-replace-field");
    if (replaceField) replaceField.hidden = false;
  });
  // An upload replaces the draft the autosave has been advancing: send the latest version.
  const uploadVersion = document.getElementById("upload-base-version");
  if (uploadVersion) {
    uploadVersion.form.addEventListener("submit", () => {
      const current = document.getElementById("base-version");
      if (current) uploadVersion.value = current.value;
    });
  }
})();
