"""Without JavaScript the step page is all the candidate has of what they typed: a Check or a
Submit whose save is refused (another tab saved a newer version first, or the answer is too
long) comes back with the refusal and with every box as posted, at the version that page was
loaded at, so a stale page stays stale and its next post is refused again. The stored draft is
never touched."""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

from html.parser import HTMLParser

import pytest
from django.conf import settings
from django.urls import reverse

from practice import services as flow
from practice.models import StepAnswer
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    attempt,
    candidate,
    client_in,
    step_url,
)

WORKSHEET = "r = T_out / out_len\nt = 15.2 GB / (0.7 * 1008 GB/s) in ms"
DIAGRAM = "flowchart LR\n  gw[API gateway] --> router[Router]\n  router --> vllm[vLLM x10]"
OTHER_TAB = "From the other tab."

# What each step's answer form posts, filled in as a candidate would (the page's base_version
# and seconds are added per test).
TYPED = {
    "clarify": {
        "text": "Is the 50 QPS a peak or a daily mean?",
        "peak_qps": "50",
        "qps_kind": "mean",
        "ttft_p99_ms": "800",
        "tpot_p99_ms": "60",
        "model": "Qwen2.5-7B-Instruct",
        "quality": "no worse than the current model",
    },
    "estimate": {
        "text": "The knee throughput is measured, so the fleet size follows from it.",
        "worksheet": WORKSHEET,
        "expr_r_inst": "r",
        "expr_tpot_floor": "t",
    },
    "architecture": {
        "text": "An API gateway, then a prefix-aware router in front of ten vLLM replicas.",
        "diagram": DIAGRAM,
    },
}


class _AnswerForm(HTMLParser):
    """The answer form's fields as the browser would post them next: name -> value (text
    boxes, text areas, hidden inputs and the checked radio button)."""

    def __init__(self):
        super().__init__()
        self.values: dict[str, str] = {}
        self._in_form = False
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._in_form = a.get("id") == "answer-form"
        if not self._in_form or "name" not in a:
            return
        if tag == "textarea":
            self._textarea = a["name"]
            self.values[a["name"]] = ""
        elif tag == "input" and (a.get("type") != "radio" or "checked" in a):
            self.values[a["name"]] = a.get("value") or ""

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        if self._textarea:
            self.values[self._textarea] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        if tag == "form":
            self._in_form = False


def _boxes(response) -> dict[str, str]:
    parser = _AnswerForm()
    parser.feed(response.content.decode())
    return parser.values


def _draft(attempt, step: str) -> StepAnswer:
    """The step's draft saved once, at version 1: the version the candidate's page loaded."""
    answer = flow.answer_open(attempt=attempt, step_key=step)
    return flow.draft_save(answer=answer, text="My first draft.", fields={}, base_version=0)


def _refuse(answer: StepAnswer, refusal: str, typed: dict) -> dict:
    """Set up `refusal` for the page at version 1; returns what that page posts."""
    if refusal == "stale":  # another tab saves version 2
        flow.draft_save(answer=answer, text=OTHER_TAB, fields={}, base_version=1)
    else:  # the answer is too long
        sentence = "A prefix-aware router keeps each shared prefix on one replica. "
        typed = typed | {"text": sentence * (settings.ANSWER_MAX_CHARS // len(sentence) + 1)}
    return typed | {"base_version": "1", "seconds": "0"}


def _assert_refused_with_the_boxes_as_posted(response, refusal, form, answer, stored):
    expected_status = 409 if refusal == "stale" else 422
    assert response.status_code == expected_status
    boxes = _boxes(response)
    # Every box as posted, base_version included: the version the page was loaded at.
    assert {name: boxes.get(name) for name in form if name != "quantity"} == {
        name: value for name, value in form.items() if name != "quantity"
    }
    assert boxes["base_version"] == "1"
    page = response.content.decode()
    if refusal == "stale":
        assert "changed in another tab" in page
        assert "Open the newer version</a> once you have copied your text" in page
    else:
        assert f"the limit is {settings.ANSWER_MAX_CHARS:,}" in page
    assert "<strong>Not saved.</strong> What you typed is still in the boxes" in page
    answer.refresh_from_db()
    assert (answer.text, answer.fields, answer.version) == stored
    assert not answer.submissions.exists()
    return boxes


@pytest.mark.parametrize("refusal", ["stale", "too long"])
def test_a_refused_check_without_javascript_keeps_every_box_as_posted(client_in, attempt, refusal):
    answer = _draft(attempt, "estimate")
    form = _refuse(answer, refusal, TYPED["estimate"]) | {"quantity": "r_inst"}
    answer.refresh_from_db()
    stored = (answer.text, answer.fields, answer.version)
    url = reverse("attempt_check", args=[attempt.pk])

    response = client_in.post(url, form)  # no HX-Request header: a browser without JavaScript
    boxes = _assert_refused_with_the_boxes_as_posted(response, refusal, form, answer, stored)
    assert "checks" not in answer.fields  # nothing was checked either

    # The page still names the version it was loaded at: posting it again is refused again.
    again = client_in.post(url, boxes | {"quantity": "r_inst"})
    assert again.status_code == response.status_code
    answer.refresh_from_db()
    assert (answer.text, answer.fields, answer.version) == stored


@pytest.mark.parametrize("refusal", ["stale", "too long"])
@pytest.mark.parametrize("step", ["clarify", "estimate", "architecture"])
def test_a_refused_submit_without_javascript_keeps_every_box_as_posted(
    client_in, attempt, step, refusal
):
    answer = _draft(attempt, step)
    form = _refuse(answer, refusal, TYPED[step])
    answer.refresh_from_db()
    stored = (answer.text, answer.fields, answer.version)
    url = step_url(attempt, step, "submit")

    response = client_in.post(url, form)  # no HX-Request header: a browser without JavaScript
    boxes = _assert_refused_with_the_boxes_as_posted(response, refusal, form, answer, stored)

    again = client_in.post(url, boxes)
    assert again.status_code == response.status_code
    answer.refresh_from_db()
    assert (answer.text, answer.fields, answer.version) == stored
    assert not answer.submissions.exists()


@pytest.mark.parametrize("step", ["clarify", "estimate", "architecture"])
def test_a_step_opened_with_nothing_refused_does_not_say_not_saved(client_in, attempt, step):
    """The napkin-math page said "Not saved." on every load: its quantity loop's variable
    stood for the refused form's boxes too."""
    _draft(attempt, step)
    page = client_in.get(step_url(attempt, step)).content.decode()
    assert "<strong>Not saved.</strong>" not in page
    assert "Draft saved" in page
