// A drill set's answers go by htmx, which swaps what the server says about an answer (a
// verdict, a 409, a 422, a 429) but not a refusal made before the drill's view runs: a 403
// from a CSRF token outdated by signing in again in another tab, a 5xx, no answer at all.
// Check then did nothing. Say so at the answer box, which keeps what was typed; on a 403,
// take the session's current token (or go to the log-in page, which leads back here).
(function () {
  "use strict";

  function answerForm(detail) {
    const elt = (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
    return elt && elt.closest ? elt.closest(".answer-form") : null;
  }

  function say(form, text) {
    let problem = form.querySelector("[data-drill-problem]");
    if (!problem) {
      problem = document.createElement("p");
      problem.className = "field-errors";
      problem.setAttribute("role", "alert");
      problem.dataset.drillProblem = "";
      form.append(problem);
    }
    problem.textContent = text;
  }

  function renewToken(form) {
    const urls = form.closest("[data-session-url]").dataset;
    fetch(urls.sessionUrl, { credentials: "same-origin" })
      .then((r) => r.json())
      .then((session) => {
        if (!session.signed_in) {
          window.location.assign(urls.loginUrl + "?next=" + encodeURIComponent(window.location.pathname));
          return;
        }
        document.querySelectorAll("input[name=csrfmiddlewaretoken]").forEach((i) => { i.value = session.csrf_token; });
        document.body.setAttribute("hx-headers", JSON.stringify({ "x-csrftoken": session.csrf_token }));
        say(form, "Your session changed since this page loaded; it is renewed now: press Check again.");
      })
      .catch(() => say(form, "The server cannot be reached; your answer is still here: press Check again in a moment."));
  }

  document.addEventListener("htmx:responseError", (event) => {
    const form = answerForm(event.detail);
    if (!form) return;
    const code = event.detail.xhr ? event.detail.xhr.status : 0;
    if (code === 403) {
      say(form, "Checking the session…");
      renewToken(form);
    } else {
      say(form, "The server had an error (" + code + "); your answer is still here: press Check again in a moment.");
    }
  });
  for (const name of ["htmx:sendError", "htmx:timeout"]) {
    document.addEventListener(name, (event) => {
      const form = answerForm(event.detail);
      if (form) say(form, "The server cannot be reached; your answer is still here: press Check again in a moment.");
    });
  }
})();
