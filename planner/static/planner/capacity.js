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

  // What a number box holds when the browser cannot read it as a number (badInput): its value
  // is then "", and only a selection of the box's text gives that text back (Chromium; other
  // browsers give "" and the box is told it holds no number). It is read while the box has the
  // focus, just before a Tab, an Enter or a click takes the focus on.
  const typed = new WeakMap();
  function readTyped(input) {
    if (!input || input.type !== "number" || !input.validity.badInput) return;
    if (document.activeElement !== input) return;
    input.select();
    const selection = window.getSelection();
    typed.set(input, selection ? selection.toString() : "");
    if (selection && selection.rangeCount) selection.collapseToEnd();
  }

  // A number written in full that the browser still cannot read overflows a double: 1e400, or
  // ten thousand digits. It is a number, only out of range, as the server says of it.
  const NUMBER = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;
  function outOfRange(input) {
    const text = typed.get(input) || "";
    if (!NUMBER.test(text) || Number.isFinite(Number(text))) return "";
    return Number(text) > 0 ? input.dataset.messageMax : input.dataset.messageMin;
  }

  // The sentence the server refuses a value with (forms.py puts them on the input), for a
  // value the browser will not send: out of range, blank where needed, or not a number.
  function refusal(input) {
    const v = input.validity;
    const says = input.dataset;
    let text = "";
    // Text that is not a number also reads as missing: badInput says which it is.
    if (v.badInput) text = outOfRange(input) || says.messageInvalid;
    else if (v.stepMismatch) text = says.messageInvalid;
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

  function refusedIn(form) {
    return Array.from(form.elements).filter((el) => el.willValidate && !el.validity.valid);
  }

  document.addEventListener(
    "keydown",
    (event) => {
      if (event.key !== "Tab" && event.key !== "Enter") return;
      if (event.target.closest && event.target.closest("form.pl-form")) readTyped(event.target);
    },
    true,
  );
  document.addEventListener(
    "pointerdown",
    () => {
      const box = document.activeElement;
      if (box && box.closest && box.closest("form.pl-form")) readTyped(box);
    },
    true,
  );
  document.addEventListener("input", (event) => typed.delete(event.target), true);

  // A box the browser cannot read that was blank before (an optional one) stays "" to the
  // page: no change fires and htmx never halts. Leaving it tells it here instead; and leaving
  // it cleared, which fires no change either, plans again.
  document.addEventListener("focusout", (event) => {
    const box = event.target;
    const form = box.closest && box.closest("form.pl-form");
    if (!form || !box.validity) return;
    if (box.validity.badInput) {
      showRefused(form, refusedIn(form));
      return;
    }
    const errors = box.closest(".field")?.querySelector(".field-errors");
    if (box.validity.valid && errors && "refusedHere" in errors.dataset) {
      box.dispatchEvent(new Event("change", { bubbles: true }));
    }
  });

  // Enter or Plan with a box the browser refuses: its check stops the submit with a bubble
  // and fires "invalid" at each such box; each gets its message beside it too.
  let invalidPending = false;
  document.addEventListener(
    "invalid",
    (event) => {
      const form = event.target.closest && event.target.closest("form.pl-form");
      if (!form || invalidPending) return;
      invalidPending = true;
      queueMicrotask(() => {
        invalidPending = false;
        showRefused(form, refusedIn(form));
      });
    },
    true,
  );

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
