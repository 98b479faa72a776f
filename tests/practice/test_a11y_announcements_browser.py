"""What a screen reader hears while a candidate works a step: each result once, in a sentence.

A live region reads out whatever is added inside it (WAI-ARIA 1.2, aria-live): the page's
mutations inside a live region that was already there, or a new role=alert, are what gets
read. The recorder below collects exactly those, so the test reads what a screen reader user
would hear, without a screen reader.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser]

# Records the text each mutation adds inside a live region (aria-live, or role status, alert
# or log) that existed before it, and each role=alert inserted anywhere.
RECORD_ANNOUNCEMENTS = r"""() => {
  window.announced = [];
  const liveRegion = (node) => {
    for (let e = node.nodeType === 1 ? node : node.parentElement; e; e = e.parentElement) {
      const live = e.getAttribute('aria-live'), role = e.getAttribute('role');
      if (live === 'off') return null;
      if (live || ['status', 'alert', 'log'].includes(role)) return e;
    }
    return null;
  };
  const squash = (t) => t.trim().replace(/\s+/g, ' ');
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      const region = liveRegion(m.target);
      if (region) {
        const text = m.type === 'characterData' ? m.target.textContent
          : Array.from(m.addedNodes).map((n) => n.textContent).join(' ');
        if (squash(text)) window.announced.push({region: region.id, text: squash(text)});
        continue;
      }
      for (const n of m.addedNodes) {
        if (n.nodeType !== 1) continue;
        for (const a of [n, ...n.querySelectorAll('[role=alert]')]) {
          if (a.getAttribute('role') === 'alert')
            window.announced.push({region: 'alert', text: squash(a.textContent)});
        }
      }
    }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_typing_checking_and_feedback_are_announced_once_and_briefly(open_step):
    from practice import services as flow
    from practice.models import Submission

    page, attempt = open_step("estimate")
    page.wait_for_selector("html[data-ready]", state="attached")
    page.evaluate(RECORD_ANNOUNCEMENTS)

    # The worksheet: two lines worked out, then a third typed with a pause mid-expression.
    page.locator("#worksheet").focus()
    page.keyboard.type("a = 2 * W\nb = 3 * W\n")
    page.locator("#worksheet-lines .ws-line").nth(1).wait_for()
    page.keyboard.type("c = a +")
    page.locator("#worksheet-lines .ws-error").wait_for()
    page.keyboard.type(" b")
    page.locator("#worksheet-lines .ws-line:nth-child(3) .ws-value").wait_for()
    # The notes: every keystroke changes the text, most change the word count.
    page.locator("#answer-text").focus()
    page.keyboard.type("Ten instances at rho 0.8 cover the peak.")
    # A check, then the submit and (once the step is graded) its feedback.
    page.locator("#q-r_inst").fill("T_out / out_len")
    page.locator("#q-r_inst").press("Enter")
    page.locator("#check-r_inst .verdict").wait_for()
    page.locator("#submit-button").click()
    page.locator("#grade-status").wait_for()
    flow.submission_grade(submission_id=Submission.objects.get(answer__attempt=attempt).pk)
    page.locator("#feedback .reference").wait_for()
    said = page.evaluate("window.announced")

    texts = [s["text"] for s in said]
    # The word count is read with the answer box (aria-describedby), not after each keystroke.
    assert [s for s in said if s["region"] == "word-count"] == []
    # Each result is a sentence, never a whole region re-read: the worksheet's first line
    # ("a", 30.4 GB) is not read again each time a later line is worked out, and the
    # feedback's reference answer and the candidate's own answer are not read out.
    assert sum("30.4" in t for t in texts) <= 1, texts
    assert all(len(t) <= 200 for t in texts), [t[:80] for t in texts if len(t) > 200]
    assert not any("rho 0.8" in t for t in texts), texts
    # ... and each is still said: the line being typed, the check, the grade status.
    assert any("Line 3" in t and "ends too early" in t for t in texts), texts
    assert any(t.startswith("Line 3") and "76 GB" in t for t in texts), texts
    assert any("Not right yet" in t or "Correct" in t for t in texts), texts
    assert any("Queued for grading" in t for t in texts), texts
    assert any("Ready for your self-check" in t for t in texts), texts


def test_a_save_the_server_refuses_is_announced_in_a_sentence(open_step):
    """Another tab saved a newer draft: this tab's autosave is refused, and the refusal comes
    as a new status element, which a screen reader need not read. Its sentence is said in the
    page's own alert line, without the other tab's text."""
    from practice import services as flow
    from practice.models import StepAnswer

    page, attempt = open_step("architecture")
    page.wait_for_selector("html[data-ready]", state="attached")
    answer, _ = StepAnswer.objects.get_or_create(attempt=attempt, step_key="architecture")
    flow.draft_save(
        answer=answer, text="The other tab's secret plan.", fields={}, base_version=answer.version
    )
    page.evaluate(RECORD_ANNOUNCEMENTS)
    page.locator("#answer-text").fill("This tab's text.")
    page.locator("#save-status.is-conflict").wait_for()
    said = [s for s in page.evaluate("window.announced") if s["region"] == "save-said"]
    assert len(said) == 1, said
    assert said[0]["text"].startswith("Not saved.")
    assert "secret plan" not in said[0]["text"]
