// The load-test panel: a scenario button says it is running while the server simulates, and
// a prediction left empty is caught before the request (the server refuses it too).
document.addEventListener("htmx:beforeRequest", (event) => {
  const form = event.target.closest ? event.target.closest("#sim-form") : null;
  if (!form) return;
  const prediction = form.querySelector("textarea[name=prediction]");
  if (prediction && !prediction.value.trim()) {
    event.preventDefault();
    prediction.reportValidity();
  }
});
// A run swaps the whole panel, the pressed button with it: focus would fall to the page's top.
// It goes to what the run found (or why it was refused), which a screen reader then reads.
document.addEventListener("htmx:afterSwap", (event) => {
  const config = event.detail.requestConfig;
  if (!config || !config.elt || config.elt.id !== "sim-form") return;
  const panel = document.getElementById("simulator-panel"); // the new one
  if (!panel) return;
  const where = panel.querySelector("#sim-error") || panel.querySelector(".sim-result h3");
  if (!where) return;
  where.setAttribute("tabindex", "-1");
  where.focus();
});
