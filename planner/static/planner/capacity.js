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

  // The sentence the server refuses a value with (forms.py puts them on the input), for a
  // value the browser will not send: out of range, blank where needed, or not a number.
  function refusal(input) {
    const v = input.validity;
    const says = input.dataset;
    let text = "";
    // Text that is not a number also reads as missing: badInput says which it is.
    if (v.badInput || v.stepMismatch) text = says.messageInvalid;
    else if (v.valueMissing) text = says.messageRequired;
    else if (v.rangeUnderflow) text = says.messageMin;
    else if (v.rangeOverflow) text = says.messageMax;
    return text || input.validationMessage;
  }

  // A change the browser refuses sends no request, so no answer would mark it: each refused
  // field gets its message here, and the plan made from earlier inputs is put away behind the
  // list of what to fix, as the server answers a form it refuses. The next plan replaces both.
  function showRefused(form, refused) {
    const items = [];
    form.querySelectorAll(".field").forEach((field) => {
      const errors = field.querySelector(".field-errors");
      const input = field.querySelector("input, select, textarea");
      if (!errors || !input) return;
      if (refused.includes(input)) {
        const list = document.createElement("ul");
        list.className = "errorlist";
        list.id = `${input.id}_error`;
        const item = document.createElement("li");
        item.textContent = refusal(input);
        list.append(item);
        errors.replaceChildren(list);
        errors.hidden = false;
        errors.dataset.refusedHere = "";
        items.push([input, field.querySelector("label"), item.textContent]);
      } else if ("refusedHere" in errors.dataset) {
        errors.replaceChildren();
        errors.hidden = true;
        delete errors.dataset.refusedHere;
      }
    });
    const plan = document.getElementById("plan-result");
    if (plan) {
      plan.querySelector("#plan-errors")?.remove();
      for (const part of plan.children) part.hidden = true;
      const notice = document.createElement("div");
      notice.className = "message message-error";
      notice.id = "plan-errors";
      notice.setAttribute("role", "alert");
      const lead = document.createElement("p");
      lead.textContent = "Check these inputs:"; // the server's words for a form it refuses
      const list = document.createElement("ul");
      for (const [input, label, text] of items) {
        const item = document.createElement("li");
        const link = document.createElement("a");
        link.href = `#${input.id}`;
        link.textContent = label ? label.textContent : input.name;
        item.append(link, `: ${text}`);
        list.append(item);
      }
      notice.append(lead, list);
      plan.prepend(notice);
    }
    const announce = document.getElementById("plan-announce");
    if (announce) announce.textContent = "";
    return markFields(form);
  }

  document.addEventListener("htmx:validation:halted", (event) => {
    const form = event.target.closest && event.target.closest("form.pl-form");
    if (!form) return;
    // A change (Tab out of a box) halts here. Plan pressed never does: the browser's own
    // check stops that submit before htmx sees it, shows its bubble and focuses the field.
    showRefused(form, (event.detail.errors || []).map((error) => error.elt));
  });

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
