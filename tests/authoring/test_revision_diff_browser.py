"""In a real browser: the revision page's diff reads as one block of lines, not as a stack of
separate code boxes (each line is a <pre>, which the site styles with padding and corners)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from accounts.instructors import instructor_grant
from authoring import services
from tests.authoring.conftest import written
from tests.conftest import signed_in_context, watched_page

pytestmark = pytest.mark.browser


def test_diff_lines_sit_one_under_the_next_like_a_file(browser, live_server_url):
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    text = written(
        services.QUESTION_TEMPLATE.read_text(encoding="utf-8").replace(
            services.TEMPLATE_SLUG_LINE, "slug: diff-look", 1
        )
    )
    services.question_publish(slug="diff-look", text=text)
    services.question_publish(
        slug="diff-look", text=text.replace("difficulty: core", "difficulty: advanced", 1)
    )
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, instructor)
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/author/questions/diff-look/revisions/2/")
    boxes = page.eval_on_selector_all(
        ".diff-line",
        """lines => lines.map(l => {
            const r = l.getBoundingClientRect(), s = getComputedStyle(l);
            return {top: r.top, bottom: r.bottom, height: r.height,
                    lineHeight: parseFloat(s.lineHeight) || parseFloat(s.fontSize) * 1.6};
        })""",
    )
    assert len(boxes) >= 3
    for box in boxes:
        assert box["height"] < 1.6 * box["lineHeight"], box  # one text line, no padding box
    for above, below in zip(boxes, boxes[1:], strict=False):
        assert below["top"] - above["bottom"] < 2, (above, below)  # no gap between lines
    assert errors == []
    context.close()
