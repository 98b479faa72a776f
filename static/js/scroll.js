// A box that scrolls sideways (.scroll-x: a long formula, a wide table on a phone) is a stop
// for the keyboard, and a region named for a screen reader, only while it holds more than it
// shows: a worksheet of 200 short lines would otherwise be 200 stops, each called scrollable.
// Its name waits in data-scroll-label. Without this script no box is a stop; a pointer or a
// finger still scrolls it.
(function () {
  "use strict";
  function mark(box) {
    if (box.scrollWidth > box.clientWidth + 1) { // + 1: a fraction of a pixel is no more
      box.tabIndex = 0;
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", box.dataset.scrollLabel);
    } else {
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
    }
  }
  const BOXES = ".scroll-x[data-scroll-label]";
  function look(root) {
    if (root.matches && root.matches(BOXES)) mark(root);
    if (root.querySelectorAll) root.querySelectorAll(BOXES).forEach(mark);
  }
  look(document);
  document.addEventListener("htmx:load", (event) => look(event.detail.elt));
  // Once a frame at most while a window is dragged wider or narrower.
  let looking = false;
  window.addEventListener("resize", () => {
    if (looking) return;
    looking = true;
    requestAnimationFrame(() => { looking = false; look(document); });
  });
})();
