"""A database at the schema before the apps were split by domain (question content, mock
interviews and review all in the `interview` app) migrates to the split with every row kept,
the content types following their models, and a grading task queued under the old import path
still naming a task that runs.

The test database is moved back to that schema, filled through the historical models, and
moved forward again: on SQLite and on PostgreSQL alike (CI runs it on both).

The app's migrations up to then are one squashed migration now. Its schema is compared with
the one the original migrations built (`pre_split_schema.<vendor>.json`, taken from a database
they made, before they were removed): a database they made is what an upgrade meets."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.config.schema import schema_of

pytestmark = pytest.mark.django_db(transaction=True)

# The split's migrations, and the last ones before it.
SPLIT_APPS = ("interview", "authoring", "questions", "mocks", "review")
BEFORE = [
    ("interview", "0001_squashed_0011_miscon_grade_misconceptions"),
    ("authoring", "0001_initial"),
    ("questions", None),
    ("mocks", None),
    ("review", None),
]
OLD_TASK = "interview.flow.grade_submission"
# Each squashed migration, and the migrations it replaces as databases made by older releases
# record them.
SQUASHED = {
    ("interview", "0001_squashed_0011_miscon_grade_misconceptions"): [
        "0001_initial", "0002_attempts", "0003_attempt_state_version",
        "0004_stepanswer_row_version", "0005_drop_version_triggers", "0006_grading_review",
        "0007_attempt_is_preview", "0008_author_revision_published", "0009_review_trust",
        "0010_mock_sessions", "0011_miscon_grade_misconceptions",
    ],
    ("drills", "0001_squashed_0002_assignment"): ["0001_initial", "0002_assignment"],
    ("mocks", "0001_squashed_0002_alter_mocksession_started_at"): [
        "0001_initial", "0002_alter_mocksession_started_at",
    ],
}  # fmt: skip
SPLIT_TABLES = tuple(f"{app}_" for app in SPLIT_APPS)


def _pre_split_schema(vendor: str) -> dict:
    path = Path(__file__).with_name(f"pre_split_schema.{vendor}.json")
    return json.loads(path.read_text())


def _migrate(targets):
    """Migrate to `targets`; the historical models at that point."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state([t for t in targets if t[1] is not None]).apps


def _latest():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _rows_at_old_schema(apps) -> dict[str, int]:
    """One or two rows in every table the split touches; returns {table: primary key}."""
    old = lambda name: apps.get_model("interview", name)  # noqa: E731
    user = apps.get_model("auth", "User").objects.create(username="before-split")
    now = timezone.now()
    concept = old("Concept").objects.create(
        slug="kv-wall", title="KV wall", summary="s", body_markdown="b", body_html="<p>b</p>",
        content_hash="c",
    )  # fmt: skip
    question = old("Question").objects.create(slug="chat-api-50qps")
    revision = old("QuestionRevision").objects.create(
        question=question, number=1, content_hash="h", source_text="---", title="t",
        summary="s", difficulty="core", spec={}, rendered={},
    )  # fmt: skip
    old("Question").objects.filter(pk=question.pk).update(current_revision=revision)
    attempt = old("Attempt").objects.create(user=user, revision=revision)
    answer = old("StepAnswer").objects.create(attempt=attempt, step_key="clarify", text="a")
    submission = old("Submission").objects.create(
        answer=answer, number=1, text="a", draft_version=1
    )
    grade = old("Grade").objects.create(submission=submission, grader="rubric", score=0.5)
    dispute = old("GradeDispute").objects.create(submission=submission, user=user, reason="r")
    label = old("CalibrationLabel").objects.create(
        question=question, step_key="clarify", answer="a", answer_hash="x",
        labels={"p": "hit"}, submission=submission, labelled_by=user,
    )  # fmt: skip
    run = old("CalibrationRun").objects.create(
        question=question, step_key="clarify", grader="rubric"
    )
    session = old("MockSession").objects.create(
        attempt=attempt, mode="human", started_at=now, total_minutes=45, interviewer=user
    )
    event = old("MockEvent").objects.create(session=session, seq=1, kind="joined", at=now)
    authoring = lambda name: apps.get_model("authoring", name)  # noqa: E731
    draft = authoring("Draft").objects.create(slug="chat-api-50qps", text="---", updated_by=user)
    report = authoring("ProblemReport").objects.create(
        question=question, revision=revision, step_key="clarify", message="m", reporter=user,
        fixed_in=revision,
    )  # fmt: skip
    return {
        "concept": concept.pk, "question": question.pk, "questionrevision": revision.pk,
        "attempt": attempt.pk, "stepanswer": answer.pk, "submission": submission.pk,
        "grade": grade.pk, "gradedispute": dispute.pk, "calibrationlabel": label.pk,
        "calibrationrun": run.pk, "mocksession": session.pk, "mockevent": event.pk,
        "draft": draft.pk, "problemreport": report.pk,
    }  # fmt: skip


def test_a_populated_database_migrates_to_the_apps_by_domain_with_every_row_kept():
    latest = _latest()
    # The other apps at their latest, except those built after the split (e.g. the
    # simulator's runs point at answers): they start unmigrated, as on a database of then.
    graph = MigrationExecutor(connection).loader.graph
    split = ("interview", "0012_split_apps_by_domain")
    others = [
        node if split not in graph.forwards_plan(node) else (node[0], None)
        for node in latest
        if node[0] not in SPLIT_APPS
    ]
    new_install = schema_of(connection)
    apps = _migrate(others + BEFORE)
    try:
        # The squashed migration builds the tables the original migrations built.
        assert schema_of(connection, SPLIT_TABLES) == _pre_split_schema(connection.vendor)
        content_type = apps.get_model("contenttypes", "ContentType")
        for model in ("question", "mocksession", "calibrationrun"):
            content_type.objects.get_or_create(app_label="interview", model=model)
        rows = _rows_at_old_schema(apps)
        task = apps.get_model("django_tasks_database", "DBTaskResult").objects.create(
            status="READY", args_kwargs={"args": [rows["submission"]], "kwargs": {}},
            priority=0, task_path=OLD_TASK, queue_name="grading", backend_name="default",
            run_after=timezone.now() + timedelta(hours=1),
        )  # fmt: skip
    finally:
        _migrate(latest)

    # The upgraded database has the schema of a new install.
    assert schema_of(connection) == new_install

    from django.contrib.contenttypes.models import ContentType
    from django_tasks_db.models import DBTaskResult

    from authoring.models import Draft, ProblemReport
    from mocks.models import MockEvent, MockSession
    from practice.models import Attempt, Grade, StepAnswer, Submission
    from questions.models import Concept, Question, QuestionRevision
    from review.models import CalibrationLabel, CalibrationRun, GradeDispute

    models = [
        Concept, Question, QuestionRevision, Attempt, StepAnswer, Submission, Grade,
        GradeDispute, CalibrationLabel, CalibrationRun, MockSession, MockEvent, Draft,
        ProblemReport,
    ]  # fmt: skip
    for model in models:
        assert model.objects.filter(pk=rows[model._meta.model_name]).exists(), model
    # The relations across the new app boundaries still join.
    session = MockSession.objects.select_related("attempt__revision__question").get()
    assert session.attempt.revision.question.current_revision_id == rows["questionrevision"]
    label = CalibrationLabel.objects.select_related("submission__answer").get()
    assert label.submission.answer.attempt_id == rows["attempt"]
    assert ProblemReport.objects.get().fixed_in.question.slug == "chat-api-50qps"
    # Content types (and so permissions) follow their models to the new apps.
    moved = set(
        ContentType.objects.filter(
            model__in=["question", "mocksession", "calibrationrun"]
        ).values_list("app_label", "model")
    )
    assert moved == {
        ("questions", "question"),
        ("mocks", "mocksession"),
        ("review", "calibrationrun"),
    }
    # The queued task names a task that exists and runs.
    path = DBTaskResult.objects.get(pk=task.pk).task_path
    assert path == "practice.services.grade_submission"
    from django.utils.module_loading import import_string

    assert import_string(path).func.__name__ == "grade_submission"


@pytest.mark.django_db
def test_a_database_part_way_through_the_squashed_migrations_is_told_which_release_to_use():
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError
    from django.db.migrations.recorder import MigrationRecorder

    from practice.checks import LAST_RELEASE_WITH_THEM, part_way_through_a_squash

    assert part_way_through_a_squash(databases=["default"]) == []
    # As a database migrated by an older release up to 0008 records it.
    later = ["0009_review_trust", "0010_mock_sessions", "0011_miscon_grade_misconceptions"]
    MigrationRecorder.Migration.objects.filter(app="interview", name__in=later).delete()
    [error] = part_way_through_a_squash(databases=["default"])
    assert "applied 8 of the 11 migrations" in error.msg
    assert ", ".join(f"interview.{name}" for name in later) in error.msg
    assert LAST_RELEASE_WITH_THEM in error.hint
    # `migrate` stops on it before touching the database.
    with pytest.raises(SystemCheckError, match="practice.E001"):
        call_command("migrate", verbosity=0, skip_checks=False)


def _record_as_an_older_release(originals_applied) -> None:
    """The applied migrations as an older release's `migrate` recorded them: the originals, and
    no squashed migration (in place of what this release's `migrate` recorded for them)."""
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.recorder import MigrationRecorder

    recorder = MigrationRecorder(connection)
    replacements = MigrationLoader(connection).replacements
    for (app, squash), originals in SQUASHED.items():
        recorded_now = [name for _, name in replacements[app, squash].replaces]
        recorder.migration_qs.filter(app=app, name__in=[squash, *recorded_now]).delete()
        for name in originals_applied(originals):
            recorder.record_applied(app, name)


@pytest.mark.django_db
def test_a_database_that_applied_the_replaced_migrations_has_nothing_left_to_migrate():
    from io import StringIO

    from django.core.management import call_command
    from django.db.migrations.loader import MigrationLoader

    _record_as_an_older_release(lambda originals: originals)

    applied = MigrationLoader(connection).applied_migrations
    assert [key for key in SQUASHED if key not in applied] == []
    out = StringIO()
    call_command("migrate", plan=True, stdout=out)
    assert "No planned migration operations." in out.getvalue()


@pytest.mark.django_db
def test_a_database_that_applied_only_the_first_replaced_migration_is_part_way():
    from practice.checks import part_way_through_a_squash

    _record_as_an_older_release(lambda originals: originals[:1])

    messages = [error.msg for error in part_way_through_a_squash(databases=["default"])]
    assert len(messages) == len(SQUASHED)
    for app, squash in SQUASHED:
        assert any(f"migrations that {app}.{squash} replaces" in msg for msg in messages), squash
