"""The reviewed page's side-by-side table gives the instructor the reason a grader's verdict
was not awarded in spite of the quote shown under it, as the candidate's feedback does."""

from __future__ import annotations

import re
from html import unescape

from django.urls import reverse

from review.services import review_store

from .conftest import make_submission
from .test_review_flow import ALL_MISS, ANSWER

QUOTE = "an API gateway that handles auth and rate limits"
POINT = (
    "An API gateway in front handles TLS, authentication and rate limiting before requests "
    "reach the router."
)
WHY = (
    "Not awarded: the grader's quote is the sentence that backs another point, and says "
    "nothing of this one that the other does not."
)


def test_the_instructor_reads_why_a_quoted_verdict_is_a_miss(
    content_loaded, client, candidate, instructor
):
    submission = make_submission(
        user=candidate,
        text=ANSWER,
        review_reason="a gap",
        extra_grades={
            "llm": {
                "score": 0.0,
                "model": "test-model",
                "points": [
                    {
                        "id": pid,
                        "verdict": "miss",
                        "evidence": "",
                        "comment": f"{WHY} {POINT}" if pid == "arch-gateway" else "",
                        "quote": QUOTE if pid == "arch-gateway" else "",
                        "quote_found": True if pid == "arch-gateway" else None,
                    }
                    for pid in ALL_MISS
                ],
            }
        },
    )
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    client.force_login(instructor)
    page = client.get(reverse("review:submission", args=[submission.pk])).content.decode()
    table = page.split('class="data-table graders-compared')[1].split("</table>")[0]
    row = next(r for r in table.split("<tr ") if POINT in r)
    cell = unescape(re.sub(r"\s+", " ", row))
    assert f"<q>{QUOTE}</q>" in cell
    # The reason, without the point restated (the row names it), once.
    assert WHY in cell and cell.count("Not awarded") == 1
    assert f"{WHY} {POINT}" not in cell
