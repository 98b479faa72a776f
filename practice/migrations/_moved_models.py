"""The models that 0012_split_apps_by_domain moves out of this app, as they stand at the split.

Two migrations describe them at that moment: this app's squashed migration, which builds their
tables, and each new app's 0001_initial, which takes them over in state only (the tables keep
their names). Both build their operations here, so the two cannot disagree about a field.

Migrations are frozen: this module imports no models, and it never changes. A moved model's
later changes are migrations of its new app. The migration loader passes over modules whose
names start with "_", so this one is not a migration itself.
"""

from collections.abc import Callable

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# The app each moved model belongs to after the split.
NEW_APP = {
    "concept": "questions",
    "question": "questions",
    "questionrevision": "questions",
    "gradedispute": "review",
    "calibrationlabel": "review",
    "calibrationrun": "review",
    "mocksession": "mocks",
    "mockevent": "mocks",
}

CASCADE = django.db.models.deletion.CASCADE
SET_NULL = django.db.models.deletion.SET_NULL
Target = Callable[[str], str]  # a moved model's name -> "app_label.model_name"


def _id() -> tuple[str, models.Field]:
    return (
        "id",
        models.BigAutoField(
            auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
        ),
    )


def _questions(to: Target) -> list:
    return [
        migrations.CreateModel(
            name="Concept",
            fields=[
                _id(),
                ("slug", models.SlugField(unique=True)),
                ("title", models.CharField(max_length=200)),
                ("summary", models.CharField(max_length=500)),
                ("related", models.JSONField(default=list)),
                ("body_markdown", models.TextField()),
                ("body_html", models.TextField()),
                ("content_hash", models.CharField(max_length=64)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("source_text", models.TextField(blank=True, default="")),
            ],
            options={"db_table": "interview_concept", "ordering": ["title"]},
        ),
        migrations.CreateModel(
            name="Question",
            fields=[
                _id(),
                ("slug", models.SlugField(unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={"db_table": "interview_question", "ordering": ["slug"]},
        ),
        migrations.CreateModel(
            name="QuestionRevision",
            fields=[
                _id(),
                ("number", models.PositiveIntegerField()),
                ("content_hash", models.CharField(max_length=64)),
                ("source_text", models.TextField()),
                ("source_path", models.CharField(blank=True, max_length=500)),
                ("title", models.CharField(max_length=200)),
                ("summary", models.CharField(max_length=500)),
                ("difficulty", models.CharField(max_length=20)),
                ("tags", models.JSONField(default=list)),
                (
                    "spec",
                    models.JSONField(
                        help_text="The parsed front matter: brief and the five steps."
                    ),
                ),
                ("scenario_markdown", models.TextField(blank=True)),
                (
                    "rendered",
                    models.JSONField(help_text="HTML of every Markdown field, rendered on load."),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("is_published", models.BooleanField(default=True)),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=CASCADE, related_name="revisions", to=to("question")
                    ),
                ),
            ],
            options={
                "db_table": "interview_questionrevision",
                "ordering": ["question", "-number"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("is_published", True)),
                        fields=("question", "number"),
                        name="unique_revision_number",
                    )
                ],
            },
        ),
        # A question and its revisions point at each other: one link comes after both tables.
        migrations.AddField(
            model_name="question",
            name="current_revision",
            field=models.ForeignKey(
                null=True, on_delete=SET_NULL, related_name="+", to=to("questionrevision")
            ),
        ),
    ]


def _review(to: Target) -> list:
    return [
        migrations.CreateModel(
            name="GradeDispute",
            fields=[
                _id(),
                ("reason", models.TextField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "submission",
                    models.ForeignKey(
                        on_delete=CASCADE, related_name="disputes", to="interview.submission"
                    ),
                ),
            ],
            options={
                "db_table": "interview_gradedispute",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("submission",), name="one_dispute_per_submission"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="CalibrationLabel",
            fields=[
                _id(),
                ("step_key", models.CharField(max_length=20)),
                ("follow_up_id", models.CharField(blank=True, default="", max_length=64)),
                ("answer", models.TextField()),
                ("answer_hash", models.CharField(max_length=64)),
                ("labels", models.JSONField(help_text='{point id: "hit" | "partial" | "miss"}')),
                (
                    "source",
                    models.CharField(
                        choices=[("review", "Instructor review"), ("import", "Labels file")],
                        default="import",
                        max_length=10,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "labelled_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=CASCADE, related_name="calibration_labels", to=to("question")
                    ),
                ),
                (
                    "submission",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=SET_NULL,
                        related_name="calibration_labels",
                        to="interview.submission",
                    ),
                ),
            ],
            options={
                "db_table": "interview_calibrationlabel",
                "ordering": ["question", "step_key", "created_at"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("question", "step_key", "follow_up_id", "answer_hash"),
                        name="one_label_per_answer",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="CalibrationRun",
            fields=[
                _id(),
                ("step_key", models.CharField(max_length=20)),
                ("grader", models.CharField(max_length=20)),
                ("model", models.CharField(blank=True, max_length=200)),
                ("prompt_version", models.CharField(blank=True, max_length=40)),
                ("n", models.PositiveIntegerField(default=0)),
                ("kappa", models.FloatField(blank=True, null=True)),
                ("agreement", models.FloatField(blank=True, null=True)),
                ("points", models.JSONField(default=list)),
                ("disagreements", models.JSONField(default=list)),
                ("warnings", models.JSONField(default=list)),
                ("created_at", models.DateTimeField(auto_now=True)),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=CASCADE, related_name="calibration_runs", to=to("question")
                    ),
                ),
            ],
            options={
                "db_table": "interview_calibrationrun",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("question", "step_key", "grader"), name="one_run_per_step_grader"
                    )
                ],
            },
        ),
    ]


def _mocks(to: Target) -> list:
    return [
        migrations.CreateModel(
            name="MockSession",
            fields=[
                _id(),
                (
                    "mode",
                    models.CharField(
                        choices=[("human", "A person, by invite link"), ("app", "The app")],
                        max_length=10,
                    ),
                ),
                ("started_at", models.DateTimeField()),
                ("total_minutes", models.FloatField()),
                ("step_minutes", models.JSONField(default=dict)),
                ("ended_at", models.DateTimeField(blank=True, null=True)),
                ("invite_nonce", models.CharField(blank=True, max_length=32)),
                ("invite_expires_at", models.DateTimeField(blank=True, null=True)),
                ("invite_used_at", models.DateTimeField(blank=True, null=True)),
                ("invite_revoked_at", models.DateTimeField(blank=True, null=True)),
                ("share_nonce", models.CharField(blank=True, max_length=32)),
                ("last_seq", models.PositiveIntegerField(default=0)),
                (
                    "attempt",
                    models.OneToOneField(
                        on_delete=CASCADE, related_name="mock", to="interview.attempt"
                    ),
                ),
                (
                    "interviewer",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=SET_NULL,
                        related_name="mocks_interviewed",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"db_table": "interview_mocksession", "ordering": ["-started_at"]},
        ),
        migrations.CreateModel(
            name="MockEvent",
            fields=[
                _id(),
                ("seq", models.PositiveIntegerField()),
                ("kind", models.CharField(max_length=30)),
                ("step_key", models.CharField(blank=True, default="", max_length=20)),
                ("payload", models.JSONField(blank=True, default=dict)),
                ("at", models.DateTimeField()),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=CASCADE, related_name="events", to=to("mocksession")
                    ),
                ),
            ],
            options={
                "db_table": "interview_mockevent",
                "ordering": ["session", "seq"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("session", "seq"), name="one_mock_event_per_seq"
                    )
                ],
            },
        ),
    ]


_BY_APP = {"questions": _questions, "review": _review, "mocks": _mocks}


def created_in_interview(app: str) -> list:
    """The operations that create the models bound for `app` in this app, where they start."""
    return _BY_APP[app](lambda model: f"interview.{model}")


def taken_over_by(app: str) -> migrations.SeparateDatabaseAndState:
    """The same models as `app` holds them after the split, in state only: the tables stay, and
    only Django's idea of which app owns them changes. Links between moved models point at their
    new apps; links to the models that stay (attempts, submissions) are unchanged."""
    return migrations.SeparateDatabaseAndState(
        state_operations=_BY_APP[app](lambda model: f"{NEW_APP[model]}.{model}")
    )
