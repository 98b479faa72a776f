"""The napkin-math worksheet's help example ("One line each: …") is there to be copied. It
read `W = 15.2 GB`, and in vision-language-api (among others) `W` is a given: a copied
example redefined the given and shifted every later line that used it. The example's names
are no question's given and no name from the SLO card, and its lines work out as they stand."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.test import Client

from practice import services as flow
from practice.napkin import worksheet_lines
from practice.slo import NUMBER_FIELDS

pytestmark = pytest.mark.django_db


def _example_lines(html: str) -> list[str]:
    help_ = re.search(r'<p class="help" id="worksheet-help">(.*?)</p>', html, re.S)
    assert help_, "the worksheet has no help"
    return [unescape(c) for c in re.findall(r"<code>(.*?)</code>", help_.group(1))]


def test_the_worksheet_example_redefines_no_given_of_any_question(bank_loaded):
    from questions.models import Question

    user = User.objects.create_user("example-reader", password="a-long-Passphrase-42")
    client = Client()
    client.force_login(user)
    revision = Question.objects.get(slug="vision-language-api").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    page = client.get(f"/attempts/{attempt.pk}/steps/estimate/")
    assert page.status_code == 200
    lines = _example_lines(page.content.decode())
    assert lines, "the help shows no example line"
    defined = {line.split("=", 1)[0].strip() for line in lines}

    taken = {f.worksheet_name for f in NUMBER_FIELDS if f.worksheet_name}
    for question in Question.objects.all():
        spec = question.current_revision.question_spec
        givens = {g.name for g in spec.step("estimate").givens}
        assert not defined & givens, (question.slug, defined & givens)
    assert not defined & taken, defined & taken

    # Copied into this question's worksheet, each line works out.
    results = worksheet_lines(attempt=attempt, text="\n".join(lines))
    assert [r.error for r in results] == [None] * len(lines), results
    assert [r.name for r in results] == [line.split("=", 1)[0].strip() for line in lines]
