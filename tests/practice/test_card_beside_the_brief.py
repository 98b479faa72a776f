"""The napkin-math step says where the SLO card it computes with departs from the brief: a
card figure the question gives no value for (ctx_len in long-context-rag) is the one the
worksheet uses, and the page said nothing when it contradicted the brief."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from practice.models import Attempt, StepAnswer
from questions.models import Question

pytestmark = pytest.mark.django_db


def test_a_card_figure_the_worksheet_uses_is_told_where_it_departs_from_the_brief(bank_loaded):
    user = User.objects.create_user("carder", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="long-context-rag").current_revision
    assert "ctx_len" not in {g.name for g in revision.question_spec.step("estimate").givens}
    attempt = Attempt.objects.create(user=user, revision=revision)
    StepAnswer.objects.create(
        attempt=attempt, step_key="clarify", text="", version=1,
        fields={"context_length": "128000"},
    )  # fmt: skip
    client = Client()
    client.force_login(user)
    page = " ".join(client.get(f"/attempts/{attempt.pk}/steps/estimate/").content.decode().split())
    assert (
        "Your SLO card has <code>ctx_len</code> = <code>128000 tok</code>; the worksheet has no "
        "given of this name, so it uses your card's. The brief says 32768 tokens."
    ) in page
    # The brief's figure is named: the sentence must not then say the question gives none.
    assert "gives no value" not in page
