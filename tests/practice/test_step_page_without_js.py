"""The step page's forms as a browser without JavaScript posts them, and its markup: every id
once, and one `base_version` that the autosave's answer keeps current."""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

from collections import Counter
from html.parser import HTMLParser

from django.urls import reverse

from practice import services as flow
from practice.models import StepAnswer
from practice.services import submission_grade
from questionbank import STEP_KEYS
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    ARCHITECTURE_ANSWER,
    attempt,
    candidate,
    client_in,
    step_url,
)

WORKSHEET = "r = T_out / out_len\nt = 15.2 GB / (0.7 * 1008 GB/s) in ms"


class _Markup(HTMLParser):
    """Every id on a page, and the names of the answer form's fields."""

    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.answer_fields: list[str] = []
        self._in_answer_form = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids.append(attributes["id"])
        if tag == "form":
            self._in_answer_form = attributes.get("id") == "answer-form"
        if tag in ("input", "textarea", "select") and "name" in attributes and self._in_answer_form:
            self.answer_fields.append(attributes["name"])

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        if tag == "form":
            self._in_answer_form = False


def _markup(html: str) -> _Markup:
    parser = _Markup()
    parser.feed(html)
    return parser


def _answer_form(attempt, **fields) -> dict:
    """The napkin-math answer form as a browser posts it, with `fields` filled in."""
    spec = attempt.revision.question_spec.step("estimate")
    form = {"base_version": "0", "seconds": "0", "worksheet": "", "text": ""}
    form |= {f"expr_{q.id}": "" for q in spec.quantities}
    return form | fields


def test_no_id_appears_twice_on_a_step_page(client_in, attempt):
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    outcome = flow.step_submit(answer=answer, text=ARCHITECTURE_ANSWER, fields={}, base_version=0)
    submission_grade(submission_id=outcome.submission.pk)  # the feedback, self-check included
    follow_up = attempt.revision.question_spec.step("tradeoffs").follow_ups[0].id
    pages = [step_url(attempt, step) for step in STEP_KEYS]
    pages.append(f"/attempts/{attempt.pk}/steps/tradeoffs/follow-ups/{follow_up}/")
    for url in pages:
        ids = Counter(_markup(client_in.get(url).content.decode()).ids)
        assert [name for name, count in ids.items() if count > 1] == [], url


def test_the_answer_form_posts_one_base_version_which_the_autosave_keeps_current(
    client_in, attempt
):
    page = client_in.get(step_url(attempt, "architecture")).content.decode()
    assert _markup(page).answer_fields.count("base_version") == 1
    saved = client_in.post(
        step_url(attempt, "architecture", "draft"),
        {"base_version": "0", "text": "A gateway."},
        htmx=True,
    ).content.decode()
    # Swapped out of band over the form's own input, so the next save names version 1.
    assert (
        '<input type="hidden" name="base_version" id="base-version" value="1" '
        'hx-swap-oob="true">' in saved
    )


def test_a_check_without_javascript_saves_the_whole_answer_form_first(client_in, attempt):
    form = _answer_form(
        attempt,
        worksheet=WORKSHEET,
        text="My notes.",
        quantity="r_inst",
        expr_r_inst="r",
        expr_tpot_floor="t",
    )
    response = client_in.post(reverse("attempt_check", args=[attempt.pk]), form)
    assert response.status_code == 302
    assert response["Location"].endswith("/steps/estimate/#check-r_inst")
    answer = StepAnswer.objects.get(step_key="estimate")
    assert answer.text == "My notes." and answer.fields["worksheet"] == WORKSHEET
    assert answer.fields["answers"] == {"r_inst": "r", "tpot_floor": "t"}
    assert list(answer.fields["checks"]) == ["r_inst"]  # only the quantity whose Check it was
    assert answer.fields["checks"]["r_inst"]["verdict"] == "correct"
    page = client_in.get(response["Location"]).content.decode()
    assert "My notes.</textarea>" in page and 'value="t"' in page


def test_enter_without_javascript_checks_every_box_filled_in(client_in, attempt):
    # The answer form's default button names no quantity.
    form = _answer_form(attempt, worksheet=WORKSHEET, expr_r_inst="r", expr_tpot_floor="t")
    response = client_in.post(reverse("attempt_check", args=[attempt.pk]), form)
    assert response.status_code == 302
    checks = StepAnswer.objects.get(step_key="estimate").fields["checks"]
    assert {q: c["verdict"] for q, c in checks.items()} == {
        "tpot_floor": "correct",
        "r_inst": "correct",
    }


def test_a_check_without_javascript_from_a_stale_tab_overwrites_nothing(client_in, attempt):
    answer = flow.answer_open(attempt=attempt, step_key="estimate")
    flow.draft_save(answer=answer, text="From the other tab.", fields={}, base_version=0)
    form = _answer_form(attempt, text="From this tab.", quantity="r_inst", expr_r_inst="1 req/s")
    response = client_in.post(reverse("attempt_check", args=[attempt.pk]), form)
    assert response.status_code == 409
    assert "changed in another tab" in response.content.decode()
    answer.refresh_from_db()
    assert answer.text == "From the other tab." and "checks" not in answer.fields
