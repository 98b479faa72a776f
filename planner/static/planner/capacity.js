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

  document.addEventListener("htmx:afterSwap", (event) => {
    const config = event.detail.requestConfig;
    const form = config && config.elt && config.elt.closest && config.elt.closest("form.pl-form");
    if (!form || event.detail.target.id !== "plan-result") return;
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
