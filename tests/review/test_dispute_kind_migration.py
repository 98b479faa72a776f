"""The migration that records, for disputes stored before it, whether each was sent on the
candidate's own self-check: a self-check grade and no model grade (an instructor's aside)."""

import importlib

import pytest
from django.apps import apps

from review.models import GradeDispute

from .conftest import make_submission

pytestmark = pytest.mark.django_db

migration = importlib.import_module("review.migrations.0002_dispute_asks_for_grade")


def test_stored_disputes_are_marked_as_requests_where_a_self_check_is_the_grade(
    content_loaded, candidate, instructor
):
    miss = {"arch-gateway": "miss"}
    on_self = make_submission(user=candidate, grades={"self": (0.2, miss)})
    on_model = make_submission(user=candidate, grades={"self": (0.2, miss), "llm": (0.1, miss)})
    reviewed = make_submission(
        user=candidate, grades={"self": (0.2, miss), "instructor": (0.9, miss)}
    )
    for submission in (on_self, on_model, reviewed):
        GradeDispute.objects.create(submission=submission, user=candidate, reason="Look here.")

    migration.sent_on_self_check(apps, None)

    asks = dict(GradeDispute.objects.values_list("submission_id", "asks_for_grade"))
    assert asks == {on_self.pk: True, on_model.pk: False, reviewed.pk: True}
