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
