// The capacity planner after an htmx plan. The form stays in place while #plan-result is
// swapped, so the messages beside the fields arrive out of band and this marks the fields they
// name (aria-invalid, aria-describedby), as the server marks them on a full page. A plan the
// candidate asked for (Enter in a field, or Plan at the bottom of a long form) may land a
// screen away from where they are: focus goes to the first field at fault, or else to what the
// plan says (its headline, or why it could not be planned). A plan made on a change only marks
// the fields: the candidate is still moving through the form.
(function () {
  "use strict";

  function markFields(form) {
    let first = null;
    form.querySelectorAll(".field").forEach((field) => {
      const errors = field.querySelector(".field-errors");
      const input = field.querySelector("input, select, textarea");
      if (!errors || !input) return;
      const list = errors.querySelector(".errorlist");
      const invalid = !errors.hidden && Boolean(list);
      field.classList.toggle("has-error", invalid);
      if (invalid) {
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-describedby", list.id || errors.id);
        if (!first) first = input;
      } else {
        input.removeAttribute("aria-invalid");
        input.removeAttribute("aria-describedby");
      }
    });
    return first;
  }

  // A formula wider than its column scrolls in its own row (.pl-step-math); a keyboard reaches
  // a box that scrolls only if it takes focus, so each one that overflows does, named after its
  // step, and one that fits again (a wider window) is no tab stop.
  function reachWideFormulas() {
    document.querySelectorAll("#plan-steps .pl-step-math").forEach((box) => {
      const overflows = box.scrollWidth > box.clientWidth + 1;
      if (overflows && !box.hasAttribute("tabindex")) {
        const step = box.closest("tr").querySelector("th[scope=row]");
        box.tabIndex = 0;
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", "Formula: " + (step ? step.textContent.trim() : "") + " (scrollable)");
      } else if (!overflows && box.hasAttribute("tabindex")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    });
  }

  window.addEventListener("load", () => {
    reachWideFormulas();
    const plan = document.getElementById("plan-result");
    if (plan && window.ResizeObserver) new ResizeObserver(reachWideFormulas).observe(plan);
  });

  document.addEventListener("htmx:afterSwap", (event) => {
    const config = event.detail.requestConfig;
    const form = config && config.elt && config.elt.closest && config.elt.closest("form.pl-form");
    if (!form || event.detail.target.id !== "plan-result") return;
    reachWideFormulas();
    const firstInvalid = markFields(form);
    const trigger = config.triggeringEvent;
    if (!trigger || trigger.type !== "submit") return;
    const plan = event.detail.target;
    if (firstInvalid) {
      // The field's own message sits under it: both in view.
      firstInvalid.focus({ preventScroll: true });
      firstInvalid.closest(".field").scrollIntoView({ block: "center" });
      return;
    }
    const answer = plan.querySelector("#plan-problem, #plan-heading") || plan.querySelector("#plan-errors");
    if (!answer) return;
    if (!answer.hasAttribute("tabindex")) answer.setAttribute("tabindex", "-1");
    answer.focus({ preventScroll: true });
    answer.scrollIntoView({ block: "start" });
  });
})();
