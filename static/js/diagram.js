// The diagram box's palette: each button inserts one Mermaid line (a component with its
// label) at the cursor, for a candidate who does not know the syntax. The live preview and
// the autosave are htmx's (the textarea's hx-post and the answer form's autosave); an
// inserted line fires the same input event as typing, so both follow it.
(function () {
  "use strict";
  const text = document.getElementById("diagram-text");
  const palette = document.getElementById("diagram-palette");
  if (!text || !palette) return;

  // Where the header line ends (flowchart LR, graph TD): the first line that is neither blank
  // nor a %% comment. -1 when there is none.
  function headerEnd(value) {
    let at = 0;
    while (at <= value.length) {
      let stop = value.indexOf("\n", at);
      if (stop < 0) stop = value.length;
      const line = value.slice(at, stop).trim();
      if (line && !line.startsWith("%%")) return stop;
      at = stop + 1;
    }
    return -1;
  }

  // Where the component is already declared on a line of its own (a double-click, or a second
  // press of the same button), as the offset of that declaration; -1 when it is not.
  function declaredAt(value, line) {
    let at = 0;
    for (const l of value.split("\n")) {
      if (l.trim() === line) return at + l.indexOf(line);
      at += l.length + 1;
    }
    return -1;
  }

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
    } else {
      const at = declaredAt(value, line);
      if (at >= 0) {
        // The text keeps one copy; the one there is selected, so the press visibly did
        // something.
        text.focus();
        text.setSelectionRange(at, at + line.length);
        return;
      }
      // A caret on or above the header (where a reload leaves it, at 0) would put the line
      // before `flowchart LR` and break the diagram: such a line goes at the end instead.
      const header = headerEnd(value);
      if (header >= 0 && start <= header) {
        start = end = value.length;
      }
      prefix = start > 0 && value[start - 1] !== "\n" ? "\n    " : "    ";
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
