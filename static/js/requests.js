// One answer, for the whole site, to an htmx request that fails: the session expired (the
// request landed on the log-in page, or was refused while signed out), the server erred or is
// unavailable, the text was too large to send, or no answer came at all. Otherwise nothing
// happens (htmx swaps no error), and what was typed would seem sent.
//
// The element that sends the request, or the nearest one around it with data-request-failed,
// says how its failures are told; every setting is read from that one element:
//   data-request-failed  what did not happen: the message's first words ("Not saved.")
//   data-request-status  where the message goes (a selector; without it, that element)
//   data-request-kept    what is kept of what was typed ("Your text is kept in this page.")
//   data-request-again   what happens after a passing failure ("It saves on your next edit.")
//   data-request-retry   a button's name: the page keeps its text, so "Sign in again" opens
//                        a new tab, and this button then sends the request again; it also
//                        follows a passing failure of a request the person made (a Submit),
//                        in place of data-request-again. Without it, "Sign in again" leads
//                        to the log-in page and back to this page.
// Page scripts tell refusals of their own the same way: window.requests.say(element, text).
//
// Two failures told in one box (a Submit and the autosave that the blur of its button fired,
// both signed out) keep the one that matters more: see RANK below.
(function () {
  "use strict";
  const body = document.body;
  const loginPath = new URL(body.dataset.loginUrl, location.href).pathname;

  // A request that no form or box answers for (a live part's poll, a button of its own) is
  // told at the top of the page, once, and the notice goes with the next request that
  // succeeds. Nothing on the page is swapped away: what was typed stays where it was.
  function pageNotice() {
    let notice = document.getElementById("request-problem");
    if (!notice) {
      notice = document.createElement("p");
      notice.id = "request-problem";
      notice.className = "message message-error";
      notice.setAttribute("role", "alert");
      notice.dataset.requestFailed = "This page is not up to date.";
      notice.dataset.requestRetry = "Try again";
      (document.querySelector("main") || body).prepend(notice);
    }
    return notice;
  }

  // Which message a box keeps when a second failure lands on it before the person has read
  // the first (the autosave that the blur of a pressed button fired, say): one that asks
  // them to sign in outranks one that passes by itself, and the answer to a request the
  // person made (a submit, a click, a retry) outranks that of one made for them (an
  // autosave, a poll). A message of lower rank leaves the shown one as it is, and so does one
  // made for them that says the same words (its button, under the pointer maybe, stays put).
  // The rank is forgotten when a request told in the box succeeds or its button is pressed:
  // what comes after that is news.
  const RANK = { signedOut: 2, asked: 1 };

  function askedByThePerson(request) {
    const event = request && request.triggeringEvent;
    return Boolean(event) && (event.type === "submit" || event.type === "click");
  }

  function holderOf(elt) {
    return elt && elt.closest ? elt.closest("[data-request-failed]") : null;
  }

  function failureOf(detail) {
    // htmx names the element that sent the request in requestConfig; `elt` is where the
    // event fired, which for a swap is the target.
    const elt = (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
    const holder = holderOf(elt) || pageNotice();
    const request = detail.requestConfig;
    return { elt, holder, request, asked: askedByThePerson(request) };
  }

  function boxOf(holder) {
    const selector = holder.dataset.requestStatus;
    return selector ? document.querySelector(selector) : holder;
  }

  // Where `box` shows a message told by this script, if it shows one.
  function toldIn(box) {
    if (box.matches("[role=status], [role=alert]")) return box;
    return box.querySelector(":scope > [data-request-problem]");
  }

  function forget(place, atLeast = 0) {
    if (place && Number(place.dataset.requestRank) >= atLeast) delete place.dataset.requestRank;
  }

  document.addEventListener("htmx:afterRequest", (event) => {
    if (!event.detail.successful) return;
    const notice = document.getElementById("request-problem");
    if (notice) notice.remove();
    const holder = holderOf(event.detail.elt);
    const box = holder && boxOf(holder);
    if (box) forget(toldIn(box));
  });

  function landedOnLogIn(xhr) {
    return Boolean(xhr && xhr.responseURL) && new URL(xhr.responseURL).pathname === loginPath;
  }

  // The message replaces the box's content, or, in a form, is added at its end (the box
  // keeps what was typed); a box that is a live region already holds the message itself.
  // `rank` (RANK) decides whether it replaces a message told there before; without one, it
  // always does.
  function tell(holder, parts, rank) {
    const box = boxOf(holder);
    if (!box) return;
    const message = document.createDocumentFragment();
    const lead = document.createElement("strong");
    lead.textContent = holder.dataset.requestFailed;
    message.append(lead);
    parts.filter(Boolean).forEach((part) => {
      if (typeof part !== "string" || !/^[,.;]/.test(part)) message.append(" ");
      message.append(part);
    });
    const shown = toldIn(box);
    if (rank !== undefined && shown && shown.dataset.requestRank) {
      const shownRank = Number(shown.dataset.requestRank);
      if (rank < shownRank) return;
      const asked = rank & RANK.asked;
      if (rank === shownRank && !asked && shown.textContent === message.textContent) return;
    }
    let place = box;
    if (box.matches("[role=status], [role=alert]")) {
      box.classList.add("is-error");
      box.dataset.requestError = "";
    } else {
      place = shown;
      if (!place) {
        place = document.createElement("p");
        place.className = "field-errors";
        place.setAttribute("role", "alert");
        place.dataset.requestProblem = "";
        if (box.tagName === "FORM") box.append(place);
        else box.replaceChildren(place);
      }
    }
    // Whoever was on the message (its retry button, pressed) stays on it when it is told again.
    const hadFocus = place.contains(document.activeElement);
    place.replaceChildren(message);
    if (rank === undefined) delete place.dataset.requestRank;
    else place.dataset.requestRank = String(rank);
    if (hadFocus) {
      const button = place.querySelector("button");
      if (!button) place.tabIndex = -1;
      (button || place).focus();
    }
  }

  function why(status) {
    if (status === 0) return "Connection lost.";
    if (status === 400 || status === 413) return "The text is too large to send; shorten it.";
    if (status >= 502 && status <= 504) return "The server is unavailable right now (" + status + ").";
    return "The server had an error (" + status + ").";
  }

  const kept = (failure) => failure.holder.dataset.requestKept;
  const rankOf = (failure, signedOut) => (signedOut ? RANK.signedOut : 0) + (failure.asked ? RANK.asked : 0);

  // A request the person made (a Submit, a button) is offered again in place by its button,
  // as after a sign-in; one made for them (an autosave) says when it goes again by itself.
  function passing(failure, sentence) {
    const again = failure.asked && failure.holder.dataset.requestRetry ? retryButton(failure) : failure.holder.dataset.requestAgain;
    tell(failure.holder, [sentence, kept(failure), again], rankOf(failure, false));
  }

  function retryButton(failure) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "button button-small";
    button.textContent = failure.holder.dataset.requestRetry;
    button.addEventListener("click", (press) => {
      forget(button.closest("[data-request-rank]"));
      const pressed = { ...failure, asked: true };
      withSession(pressed, "You are still signed out.", () => resend(failure, press));
    });
    return button;
  }

  // The same request again, with what the page holds now, as the person's own (`press`). A
  // form sent by a button (a quantity's Check, which names the quantity) is sent by that
  // button again.
  function resend(failure, press) {
    const event = failure.request.triggeringEvent;
    const button = event && event.type === "submit" ? event.submitter : null;
    if (button && button.isConnected) {
      button.click();
      return;
    }
    const elt = failure.elt.isConnected ? failure.elt : successor(failure);
    if (!elt) {
      tell(failure.holder, ["This form is no longer on the page: reload it to send again."], rankOf(failure, false));
    } else if (elt !== failure.elt && elt.tagName === "FORM") {
      elt.requestSubmit(); // with what its boxes hold now, as a Submit of its own
    } else {
      htmx.ajax(failure.request.verb, failure.request.path, { source: elt, event: press }).catch(() => {});
    }
  }

  // What stands now where the element that sent the request stood: a redraw (a mock panel's
  // poll) replaces a form while the box telling its failure is kept, and htmx sends nothing
  // from an element no longer in the page. The element that sends to the same address.
  function successor(failure) {
    const verb = "hx-" + failure.request.verb.toLowerCase();
    return Array.from(document.querySelectorAll("[" + verb + "]"))
      .find((el) => el.getAttribute(verb) === failure.request.path) || null;
  }

  function signedOut(failure, sentence) {
    const link = document.createElement("a");
    link.href = loginPath + "?next=" + encodeURIComponent(location.pathname + location.search);
    const rank = rankOf(failure, true);
    if (!failure.holder.dataset.requestRetry) {
      link.textContent = "Sign in again";
      tell(failure.holder, [sentence, kept(failure), link, "; it brings you back to this page."], rank);
      return;
    }
    // A new tab signs in without leaving this page; back here, the button fetches the new
    // session's CSRF token (signing in rotates it) and sends again.
    link.target = "_blank";
    link.rel = "noopener";
    link.textContent = "Sign in again in a new tab";
    tell(failure.holder, [sentence, kept(failure), link, ", then", retryButton(failure), "."], rank);
  }

  // Is this browser still signed in? No: say so, with `sentence`. Yes: every form and htmx
  // request of the page takes the session's current CSRF token, then `go` goes on.
  function withSession(failure, sentence, go) {
    fetch(body.dataset.sessionUrl, { credentials: "same-origin" })
      .then((response) => response.json())
      .then((session) => {
        if (!session.signed_in) return signedOut(failure, sentence);
        // Signed in: a message that says otherwise is out of date, whatever its rank.
        const box = boxOf(failure.holder);
        if (box) forget(toldIn(box), RANK.signedOut);
        document.querySelectorAll("input[name=csrfmiddlewaretoken]").forEach((i) => { i.value = session.csrf_token; });
        body.setAttribute("hx-headers", JSON.stringify({ "x-csrftoken": session.csrf_token }));
        return go();
      })
      .catch(() => passing(failure, why(0)));
  }

  // A 404 from a page that hides itself from other users, or a 403 for a CSRF token from
  // before a sign-in in another tab: ask the server which it was.
  function refused(failure, status) {
    withSession(failure, "Your session has expired.", () => {
      if (status !== 403) return passing(failure, why(status));
      const next = failure.holder.dataset.requestRetry ? retryButton(failure) : failure.holder.dataset.requestAgain;
      const renewed = "Your session changed since this page loaded; it is renewed now.";
      tell(failure.holder, [renewed, kept(failure), next], rankOf(failure, false));
    });
  }

  document.addEventListener("htmx:beforeSwap", (event) => {
    if (!landedOnLogIn(event.detail.xhr)) return;
    // The log-in page the redirect led to is no result to show, anywhere; and the request
    // failed (a page script reading `successful` must not count it as saved).
    event.detail.shouldSwap = false;
    event.detail.isError = true;
  });
  document.addEventListener("htmx:responseError", (event) => {
    const failure = failureOf(event.detail);
    const status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (landedOnLogIn(event.detail.xhr)) signedOut(failure, "Your session has expired.");
    else if (status === 403 || status === 404) refused(failure, status);
    // A text too large for the browser's copy may not be in it: only the page holds it.
    else if (status === 400 || status === 413) tell(failure.holder, [why(status)], rankOf(failure, false));
    else passing(failure, why(status));
  });
  for (const [name, sentence] of [["htmx:sendError", why(0)], ["htmx:timeout", "The server took too long to answer."]]) {
    document.addEventListener(name, (event) => {
      passing(failureOf(event.detail), sentence);
    });
  }

  window.requests = {
    // A refusal the page makes itself, before sending: told where `elt`'s failures are.
    say(elt, sentence) {
      const holder = elt.closest("[data-request-failed]");
      if (holder) tell(holder, [sentence]);
    },
    // A save sent as the page is left (a reload, Back, a closed tab), as an autosave sends it,
    // by a request that outlives the page; nobody is left to read its answer. keepalive caps
    // a body at 64 KiB: a longer one is refused at once, and the page that comes next puts
    // back the browser's copy of the text.
    keepaliveSave(url, body) {
      fetch(url, {
        method: "POST", body, keepalive: true, credentials: "same-origin", headers: { "HX-Request": "true" },
      }).catch(() => {});
    },
  };
})();
