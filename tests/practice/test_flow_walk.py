"""What a candidate met walking the five steps, checked through the test client."""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

from practice.models import StepAnswer, Submission
from practice.services import step_submit, submission_grade
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    attempt,
    candidate,
    client_in,
    step_url,
)


def test_a_step_page_is_fetched_again_on_back_not_taken_from_the_browser_cache(client_in, attempt):
    # Back after an autosave showed the step as first loaded (empty, "Not saved yet"), and
    # its next autosave, at that page's old version, was refused as another tab's.
    response = client_in.get(step_url(attempt, "bottlenecks"))
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    cached = client_in.get(step_url(attempt, "bottlenecks"))  # the server's page cache too
    assert "no-store" in cached["Cache-Control"]


def test_an_empty_slo_card_is_not_submitted(client_in, attempt):
    # The card's peak/mean radio always posts a value; that alone was taken for an answer, so
    # an empty clarify step was submitted and graded with every figure missed.
    card = {name: "" for name in ("model", "gpu", "peak_qps", "ttft_p99_ms")}
    response = client_in.post(
        step_url(attempt, "clarify", "submit"),
        {"base_version": 0, "text": "  ", "qps_kind": "peak", **card},
        htmx=True,
    )
    assert response.status_code == 422
    assert "nothing to submit" in response.content.decode()
    assert not Submission.objects.exists()

    response = client_in.post(
        step_url(attempt, "clarify", "submit"),
        {"base_version": 0, "text": "", "qps_kind": "mean", **card, "peak_qps": "50"},
        htmx=True,
    )
    assert response.status_code == 200
    assert Submission.objects.count() == 1


def test_a_figure_that_is_not_a_number_is_named_in_the_card_review(
    client_in, attempt, django_capture_on_commit_callbacks
):
    # "300ms" in the p99 TTFT box was reviewed as "Missed: p99 TTFT", as if left blank. (A
    # figure with a unit is read now, test_practice_qa_slo_units.py; a size in ms is not.) A
    # candidate's Submit of such a card is refused (test_qa_unread_figures_refuse_submit.py);
    # a mock's end submits the saved card as it stands, and its review names the figure.
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(
            step_url(attempt, "clarify", "draft"),
            {"base_version": 0, "text": "", "qps_kind": "peak", "ttft_p99_ms": "0.3 GB"},
            htmx=True,
        )
        answer = StepAnswer.objects.get(attempt=attempt, step_key="clarify")
        step_submit(
            answer=answer, text=answer.text, fields=answer.fields,
            base_version=answer.version, enforce_limits=False, as_it_stands=True,
        )  # fmt: skip
    submission_grade(submission_id=Submission.objects.get().pk)
    page = client_in.get(step_url(attempt, "clarify")).content.decode()
    review = page.split('class="slo-review"')[1].split("</ul>")[0]
    expected = (
        "Not read: p99 TTFT: you have “0.3 GB”. That is not a figure in ms. Enter a number "
        "in ms, like 50 or 32k."
    )
    assert expected in review
    assert "Missed: p99 TTFT" not in review
    assert "Missed: p99 TPOT" in review


def test_a_checked_value_is_written_as_the_worksheet_writes_it(client_in, attempt):
    # The check said "you have 21.5420 ms" beside a worksheet line showing 21.54 ms, and a
    # tiny value came out as "0.0000".
    def check(expression):
        response = client_in.post(
            f"/attempts/{attempt.pk}/check/",
            {"quantity": "tpot_floor", "expr_tpot_floor": expression, "worksheet": ""},
            htmx=True,
        )
        assert response.status_code == 200
        return response.content.decode()

    assert "(you have 21.54 ms)" in check("15.2 GB / (0.7 * 1008 GB/s) in ms")
    assert "(you have 1e-5 ms)" in check("0.00001 ms")
    page = client_in.get(step_url(attempt, "estimate")).content.decode()
    assert "(you have 1e-5 ms)" in page  # the stored check, on the step page


def test_a_worksheet_past_its_line_limit_says_which_lines_are_worked_out(client_in, attempt):
    # Lines past the 200th vanished from the results without a word.
    worksheet = "\n".join(f"v{i} = {i} GB" for i in range(250))
    response = client_in.post(
        f"/attempts/{attempt.pk}/worksheet/", {"worksheet": worksheet}, htmx=True
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "at most 200 lines: only the first 200 are worked out" in body
    assert body.count('<li class="ws-line') == 200
    client_in.post(
        step_url(attempt, "estimate", "draft"),
        {"base_version": 0, "text": "", "worksheet": worksheet},
        htmx=True,
    )
    page = client_in.get(step_url(attempt, "estimate")).content.decode()
    assert "only the first 200 are worked out" in page

    short = client_in.post(
        f"/attempts/{attempt.pk}/worksheet/", {"worksheet": "W = 15.2 GB"}, htmx=True
    )
    assert "at most" not in short.content.decode()
