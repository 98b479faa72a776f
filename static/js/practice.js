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
    return data;
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
    const restore = document.createElement("button");
    restore.type = "button";
    restore.className = "button button-small";
    restore.textContent = "Restore it";
    const discard = document.createElement("button");
    discard.type = "button";
    discard.className = "button button-secondary button-small";
    discard.textContent = "Discard it";
    box.append(restore, " ", discard);
    form.prepend(box);
    restore.addEventListener("click", () => {
      Object.entries(saved.data).forEach(([name, value]) => {
        if (name === "base_version") return;
        const field = form.elements.namedItem(name);
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
  document.body.addEventListener("htmx:sendError", () => {
    const el = status();
    if (el) {
      el.className = "save-status is-error";
      el.textContent = "Connection lost. Your text is kept in this browser and saves when the connection is back.";
    }
  });
  window.addEventListener("online", () => form.dispatchEvent(new Event("change", { bubbles: true })));
  form.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  wordCount();
  offerRestore();
})();
