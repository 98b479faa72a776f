// A box that scrolls sideways (.scroll-x: a long formula, a wide table on a phone) is a stop
// for the keyboard, and a region named for a screen reader, only while it holds more than it
// shows: a worksheet of 200 short lines would otherwise be 200 stops, each called scrollable.
// Its name waits in data-scroll-label. Without this script no box is a stop; a pointer or a
// finger still scrolls it.
//
// Rendered Markdown (a concept note, a prompt, a reference answer) cannot name its boxes: a
// display formula or a code block wider than the page becomes such a box here, as it is found
// to overflow, named by its kind and shaded over the colour behind it.
(function () {
  "use strict";
  function overflows(box) {
    return box.scrollWidth > box.clientWidth + 1; // + 1: a fraction of a pixel is no more
  }
  function mark(box) {
    if (overflows(box)) {
      box.tabIndex = 0;
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", box.dataset.scrollLabel);
    } else {
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
    }
  }
  const TRANSPARENT = new Set(["transparent", "rgba(0, 0, 0, 0)"]);
  function colourBehind(el) {
    for (let node = el; node; node = node.parentElement) {
      const colour = getComputedStyle(node).backgroundColor;
      if (!TRANSPARENT.has(colour)) return colour;
    }
    return "";
  }
  const NAMES = { pre: "Code (scrolls sideways)", math: "Formula (scrolls sideways)" };
  function boxProse(wide) {
    if (wide.classList.contains("scroll-x") || !overflows(wide)) return;
    wide.dataset.scrollLabel = NAMES[wide.localName];
    // A code block has a background of its own (site.css); a formula sits on a card or on
    // the page, whose colour the covers must be. Set through the CSSOM, which the page's CSP
    // allows where it refuses a style attribute.
    if (wide.localName === "math") wide.style.setProperty("--scroll-bg", colourBehind(wide.parentElement));
    wide.classList.add("scroll-x");
  }
  const BOXES = ".scroll-x[data-scroll-label]";
  const PROSE = '.prose pre, .prose math[display="block"]';
  function look(root) {
    if (root.querySelectorAll) root.querySelectorAll(PROSE).forEach(boxProse);
    if (root.matches && root.matches(PROSE)) boxProse(root);
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
