// The diagram box's palette: each button inserts one Mermaid line (a component with its
// label) at the cursor, for a candidate who does not know the syntax. The live preview and
// the autosave are htmx's (the textarea's hx-post and the answer form's autosave); an
// inserted line fires the same input event as typing, so both follow it.
(function () {
  "use strict";
  const text = document.getElementById("diagram-text");
  const palette = document.getElementById("diagram-palette");
  if (!text || !palette) return;

  function insertLine(line) {
    let value = text.value;
    let start = text.selectionStart;
    let end = text.selectionEnd;
    let prefix = "";
    if (!value.trim()) {
      // An empty diagram starts with its header, so the first component already draws.
      prefix = (text.dataset.diagramHeader || "flowchart LR") + "\n    ";
      value = "";
      start = end = 0;
    } else if (start > 0 && value[start - 1] !== "\n") {
      prefix = "\n    ";
    } else {
      prefix = "    ";
    }
    // The line ends where the next one starts: before text already there, or at the end.
    const suffix = value[end] === "\n" ? "" : "\n";
    const inserted = prefix + line + suffix;
    text.value = value.slice(0, start) + inserted + value.slice(end);
    const cursor = start + inserted.length;
    text.focus();
    text.setSelectionRange(cursor, cursor);
    text.dispatchEvent(new Event("input", { bubbles: true }));
  }

  palette.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-diagram-line]");
    if (button) insertLine(button.dataset.diagramLine);
  });
  // A draft restored from this browser's copy (practice.js) is announced on the form itself:
  // draw the restored diagram too.
  const form = text.form;
  if (form) {
    form.addEventListener("input", (event) => {
      if (event.target === form) text.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }
  // The preview's error says the picture of the last diagram that worked stays on the page:
  // true only while one is there (not the placeholder of a box that has drawn nothing yet).
  document.body.addEventListener("htmx:configRequest", (event) => {
    if (event.detail.elt !== text) return;
    const picture = document.getElementById("diagram-picture");
    if (picture && picture.querySelector("svg")) event.detail.parameters.picture_shown = "1";
  });
  // Without JavaScript the buttons could do nothing: they show only where they work.
  palette.hidden = false;
})();
